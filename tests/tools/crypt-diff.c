// SPDX-License-Identifier: GPL-2.0
/*
 * crypt-diff: seeded, reproducible table lines drawn from dm-crypt's whole
 * grammar, each loaded as "crypt" and as "veil" (the same text after the
 * target name) on the same kernel, through libdevmapper.
 *
 *   crypt-diff --seed N --count N --dev /dev/loopX
 *              [--integrity PATH:TUPLE:BLOCK]... [--refusals FILE]
 *              [--first K] [--show N] [--verbose] [--dry-run]
 *              [--watchdog SECS]
 *   crypt-diff --keys
 *
 * A line is cipher[:keycount]-chainmode-ivmode[:ivopts] or a capi: name
 * (skciphers, templates, AEADs), a key (hex of the right length or not,
 * "-", keyring references to the keys --keys lists), an iv_offset, the
 * device by path or major:minor (--dev, or a dm-integrity device given
 * with its tuple size and block size for integrity:<bytes>:<type>), an
 * offset, and dm-crypt's optional parameters, with wrong counts and
 * duplicates; some lines are mutated at the token level.
 *
 * Each line is loaded into "vdiff-crypt" as crypt and into "vdiff-veil"
 * as veil (load, then resume: a resume that fails refuses the line too),
 * and classified:
 *   - both accept: the kernel must print the same table for both (keys
 *     and keyring references alike), and a write of up to 4 KiB
 *     (O_DIRECT) through dm-crypt must read back through veil, and one
 *     through veil through dm-crypt;
 *   - both refuse;
 *   - crypt accepts, veil refuses: listed with veil's message; a problem
 *     unless a documented refusal covers it: --refusals names them, one
 *     "<veil's message>\t<extended regex>" a line (the regex matches the
 *     line after the target name; empty: any line);
 *   - veil accepts, crypt refuses: listed with dm-crypt's message.
 * The messages come from the kernel log (/dev/kmsg).
 *
 * Lines that would make dm-crypt itself oops or WARN are given to veil
 * alone (the kernel log shows whether it stood them) and counted apart: an option "integrity:<n>" with no
 * second colon (dm-crypt dereferences strchr()'s NULL), integrity_key_size
 * with an AEAD other than authenc() (6.12: a NULL authenc key), a keyring
 * key size of a MiB or more (dm-crypt allocates it before it reads the
 * key).
 * Nor is data written through dm-crypt where its write would oops: before
 * 6.12, a line with integrity:<bytes> whose IV keeps nothing there (not
 * random, not an AEAD), which dm-crypt accepts over any device unchecked.
 *
 * Every case seeds its own PRNG from the seed and the case number: "--seed
 * S --first K --count 1" replays case K alone; the same seed and devices
 * give the same lines on any machine.
 *
 * Exit status: 0 if every case behaved, 1 if one did not (an undocumented
 * refusal, tables or data that differ, a device that cannot be removed),
 * 2 on bad arguments or setup failure, 3 if the watchdog saw a step take
 * too long (kernel hang suspected).
 */
#define _GNU_SOURCE
#include <regex.h>
#include <sys/utsname.h>

#include "fuzz-lib.h"

#define CRYPT_DEV	"vdiff-crypt"
#define VEIL_DEV	"vdiff-veil"
#define MAX_INT_DEVS	4
#define MAX_RULES	64
#define MAX_GROUPS	128
#define IO_SIZE		4096
#define KMSG_MAX	256
/* A keyring key size from which dm-crypt's allocation would WARN. */
#define CRYPT_KEY_SIZE_UNSAFE	(1u << 20)

enum target { T_CRYPT, T_VEIL };
static const char * const target_name[] = { "crypt", "veil" };
static const char * const dev_name[] = { CRYPT_DEV, VEIL_DEV };

/* ---- where the lines point ---- */

struct bdev {
	const char *path;
	char majmin[32];
	dev_t rdev;
	uint64_t sectors;
	unsigned int tuple, block;	/* dm-integrity's; 0 for the loop device */
};

struct env {
	struct bdev dev[1 + MAX_INT_DEVS];	/* [0]: the loop device */
	int ndev;
};

/* The keyring keys the lines name: the test makes them (--keys). */
struct ring_key {
	const char *type, *desc;
	unsigned int bytes;
};

static const struct ring_key ring_keys[] = {
	{ "logon", "veiltest:cd16", 16 },
	{ "logon", "veiltest:cd32", 32 },
	{ "logon", "veiltest:cd64", 64 },
	{ "logon", "veiltest:cd96", 96 },
	{ "user", "veiltest:cdu32", 32 },
	{ "user", "veiltest:cdu64", 64 },
	{ "encrypted", "veiltest:cde32", 32 },
	{ "encrypted", "veiltest:cde64", 64 },
};

/* ---- the grammar ---- */

struct blk_cipher {
	const char *name;
	unsigned int block;
	unsigned char keys[6];	/* valid key sizes; 0 ends the list */
	unsigned int weight;
};

static const struct blk_cipher blk_ciphers[] = {
	{ "aes",	 16, { 16, 24, 32 },		10 },
	{ "serpent",	 16, { 16, 24, 32 },		2 },
	{ "twofish",	 16, { 16, 24, 32 },		2 },
	{ "cast6",	 16, { 16, 20, 24, 32 },	1 },
	{ "blowfish",	 8,  { 4, 8, 16, 32, 56 },	2 },
	{ "des3_ede",	 8,  { 24 },			1 },
	{ "cipher_null", 1,  { 0 },			1 },
};

struct weighted {
	const char *name;
	unsigned int weight;
};

static const struct weighted chain_modes[] = {
	{ "xts", 8 }, { "cbc", 8 }, { "ctr", 5 }, { "ecb", 2 }, { "lrw", 1 },
	{ "pcbc", 1 }, { "cfb", 1 }, { "ofb", 1 },
};

static const struct weighted iv_modes[] = {
	{ "plain64", 8 }, { "plain", 3 }, { "plain64be", 2 }, { "essiv", 4 },
	{ "benbi", 2 }, { "null", 2 }, { "lmk", 3 }, { "tcw", 3 },
	{ "random", 1 }, { "eboiv", 3 }, { "elephant", 2 }, { "", 1 },
	{ "plain65", 1 },
};

static const char * const essiv_hashes[] = {
	"sha256", "sha256", "sha256", "sha1", "sha512", "nosuch",
};

/* Specs that are not made of parts above: other shapes, other names. */
struct fixed_spec {
	const char *spec;
	unsigned int keylen;
};

static const struct fixed_spec fixed_specs[] = {
	{ "capi:cryptd(cbc(aes))-eboiv", 32 },
	{ "capi:cryptd(cbc(aes))-elephant", 64 },
	{ "capi:cryptd(cbc(aes))-lmk", 1024 },
	{ "capi:cryptd(cbc(aes))-tcw", 64 },
	{ "capi:cryptd(xts(aes))-plain64", 64 },
	{ "capi:rfc3686(ctr(aes))-plain64", 36 },
	{ "capi:rfc3686(ctr(aes))-null", 20 },
	{ "capi:chacha20-plain64", 32 },
	{ "capi:xctr(aes)-plain64", 32 },
	{ "capi:ctr(aes)-plain64be", 32 },
	{ "capi:adiantum(xchacha12,aes)-plain64", 32 },
	{ "xchacha12,aes-adiantum-plain64", 32 },
	{ "capi:hctr2(aes)-plain64", 32 },
	{ "capi:xts(aes)", 64 },
	{ "capi:ecb(aes)", 32 },
	{ "capi:ecb(aes)-plain64", 32 },
	{ "capi:xts(aes)-", 64 },
	{ "capi:xts(aes)-plain64:sha256", 64 },
	{ "capi:cbc(aes)-essiv", 32 },
	{ "capi:nosuch(aes)-plain64", 32 },
	{ "capi:-plain64", 32 },
	{ "capi:cbc(aes)-lmk", 1040 },
	{ "aes", 16 },
	{ "aes-plain", 32 },
	{ "aes-cbc", 32 },
	{ "aes-ecb-", 32 },
	{ "aes-xts-", 64 },
	{ "aes--plain64", 32 },
	{ "-xts-plain64", 64 },
	{ "xts(aes)-plain64", 64 },
	{ "nosuch-xts-plain64", 64 },
	{ "aes-nosuch-plain64", 32 },
	{ "AES-XTS-PLAIN64", 64 },
	{ "aes-xts-plain64-", 64 },
	{ "aes:2:2-cbc-plain64", 32 },
	{ "aes-cbc-essiv:sha256:sha256", 32 },
	{ "cipher_null-ecb", 0 },
	{ "cipher_null-ecb-null", 0 },
	{ "capi:ecb(cipher_null)", 0 },
};

struct aead_seed {
	const char *name;
	unsigned char keys[3];		/* the cipher's part */
	unsigned int iv_size;
	unsigned char tags[4];		/* tag sizes the AEAD takes */
	unsigned int mac;		/* authenc: the MAC key (digest) size */
};

static const struct aead_seed aeads[] = {
	{ "gcm(aes)",			{ 16, 24, 32 }, 12, { 16, 12, 8, 4 }, 0 },
	{ "rfc4106(gcm(aes))",		{ 20, 28, 36 }, 8, { 16, 12, 8 }, 0 },
	{ "rfc7539(chacha20,poly1305)",	{ 32 }, 12, { 16 }, 0 },
	{ "ccm(aes)",			{ 16, 24, 32 }, 16, { 16, 8, 12 }, 0 },
	{ "authenc(hmac(sha256),xts(aes))", { 64, 32 }, 16, { 32, 16 }, 32 },
	{ "authenc(hmac(sha256),cbc(aes))", { 32, 16 }, 16, { 32 }, 32 },
	{ "authenc(hmac(sha1),xts(aes))", { 64 }, 16, { 20 }, 20 },
	{ "authenc(hmac(sha512),xts(aes))", { 64 }, 16, { 32 }, 64 },
	{ "authenc(hmac(nosuch),xts(aes))", { 64 }, 16, { 32 }, 32 },
};

static const char * const aead_other_ivs[] = {
	"plain64", "essiv:sha256", "null", "plain64be", "eboiv", "lmk", "tcw",
	"elephant", "benbi", "",
};

/* dm-crypt's optional parameters that stand alone. */
static const char * const flag_opts[] = {
	"allow_discards", "same_cpu_crypt", "submit_from_crypt_cpus",
	"no_read_workqueue", "no_write_workqueue", "high_priority",
	"iv_large_sectors",
};

static const char * const bad_integrity[] = {
	"integrity:28:hmac", "integrity:28:", "integrity:0:aead",
	"integrity:481:none", "integrity:28:aead:x", "integrity::aead",
	"INTEGRITY:28:aead", "integrity:28:AEAD", "integrity:28x:aead",
	"integrity:4294967324:aead", "integrity:+28:aead", "integrity:16:None",
};

static const char * const bad_sector_sizes[] = {
	"0", "256", "511", "513", "768", "8192", "66048", "4294967808",
	"+512", "0512", "512x", "",
};

static const char * const junk_tokens[] = {
	"-", ":", "0", "crypt", "veil", "allow_discards", "ALLOW_DISCARDS",
	"Same_Cpu_Crypt", "sector_size:4096", "sector_size:", "iv_large_sectors",
	"integrity:28:aead", "integrity_key_size:16", "high_priority",
	"fanout_chunk:65536", "no_fanout", "x",
};

/* ---- a line ---- */

struct spec {
	char *text;
	unsigned int keylen;		/* the right key length; 0: none ("-") */
	bool aead, random_iv;
	unsigned int int_bytes;		/* integrity:<bytes> it needs, or 0 */
	unsigned int mac;		/* authenc: the MAC's digest size */
	bool only512;			/* lmk and tcw: 512-byte sectors only */
};

struct line {
	struct toks tk;
	uint64_t len;
	char *params;			/* the tokens joined */
	bool mutated;
};

static const void *pick(const void *base, size_t size, size_t n,
			unsigned int (*weight)(const void *))
{
	unsigned int total = 0, r;
	size_t i;

	for (i = 0; i < n; i++)
		total += weight((const char *)base + i * size);
	r = rnd(total);
	for (i = 0; i < n; i++) {
		unsigned int w = weight((const char *)base + i * size);

		if (r < w)
			return (const char *)base + i * size;
		r -= w;
	}
	return base;
}

static unsigned int weight_of(const void *p)
{
	return ((const struct weighted *)p)->weight;
}

static unsigned int blk_weight_of(const void *p)
{
	return ((const struct blk_cipher *)p)->weight;
}

static const char *pick_weighted(const struct weighted *w, size_t n)
{
	return ((const struct weighted *)pick(w, sizeof(*w), n, weight_of))->name;
}

/* One of @max sizes, a 0 ending the list unless it is the only one. */
static unsigned int pick_size(const unsigned char *sizes, size_t max)
{
	size_t n = 1;

	while (n < max && sizes[n])
		n++;
	return sizes[rnd(n)];
}

/* dm-crypt's IV size for a chain mode of a cipher: at least 8 if any. */
static unsigned int iv_size_of(const char *mode, unsigned int block)
{
	unsigned int iv;

	if (!strcmp(mode, "ecb"))
		return 0;
	iv = !strcmp(mode, "xts") || !strcmp(mode, "lrw") ? 16 : block;
	return iv < 8 ? 8 : iv;
}

/* A key count: none (most lines), a power of two, or something else. */
static unsigned int pick_keycount(char *text, size_t size, bool lmk)
{
	static const char * const odd[] = {
		"0", "3", "", "x", "+2", "02", "4294967297", "-1",
	};
	static const unsigned int counts[] = { 1, 2, 4, 8, 64, 128, 256, 512 };
	unsigned int n;

	text[0] = '\0';
	if (!chance(lmk ? 60 : 25))
		return 1;
	if (chance(8)) {
		const char *s = odd[rnd(ARRAY_SIZE(odd))];

		snprintf(text, size, ":%s", s);
		return strcmp(s, "02") ? 1 : 2;
	}
	n = lmk && chance(50) ? 64 : counts[rnd(ARRAY_SIZE(counts))];
	snprintf(text, size, ":%u", n);
	return n;
}

/*
 * cipher[:keycount]-chainmode-ivmode[:ivopts], or the same transform named
 * directly: capi:chainmode(cipher)-ivmode[:ivopts].
 */
static void gen_parts_spec(struct spec *s, bool capi)
{
	const struct blk_cipher *c = pick(blk_ciphers, sizeof(*blk_ciphers),
					  ARRAY_SIZE(blk_ciphers), blk_weight_of);
	const char *mode = pick_weighted(chain_modes, ARRAY_SIZE(chain_modes));
	const char *iv = pick_weighted(iv_modes, ARRAY_SIZE(iv_modes));
	unsigned int k = pick_size(c->keys, sizeof(c->keys));
	unsigned int per, n = 1, ivsize = iv_size_of(mode, c->block);
	char kc[32] = "", ivtext[64];
	const char *dash;

	if (!strcmp(mode, "xts"))
		per = 2 * k;
	else if (!strcmp(mode, "lrw"))
		per = k + 16;
	else
		per = k;
	if (!capi)
		n = pick_keycount(kc, sizeof(kc), !strcmp(iv, "lmk"));
	else if (!strcmp(iv, "lmk"))
		n = 64;		/* loop-AES's 64 keys, in the capi: format too */
	s->keylen = per * n;

	if (!strcmp(iv, "essiv"))
		snprintf(ivtext, sizeof(ivtext), "essiv%s%s",
			 chance(90) ? ":" : "",
			 essiv_hashes[rnd(ARRAY_SIZE(essiv_hashes))]);
	else if (*iv && chance(5))
		snprintf(ivtext, sizeof(ivtext), "%s:%s", iv,
			 chance(50) ? "sha256" : "");
	else
		snprintf(ivtext, sizeof(ivtext), "%s", iv);

	if (!strcmp(iv, "lmk")) {
		/* loop-AES v3: a seed after the keys, as long as one of them */
		if (n > 1 && chance(50))
			s->keylen = per * (n + 1);
		s->only512 = true;
	} else if (!strcmp(iv, "tcw")) {
		s->keylen += ivsize + 16;
		s->only512 = true;
	} else if (!strcmp(iv, "elephant")) {
		s->keylen = 2 * per;
	} else if (!strcmp(iv, "random")) {
		s->random_iv = true;
		s->int_bytes = ivsize;
	}
	/* no ivmode at all, sometimes */
	dash = !*iv && chance(capi ? 50 : 3) ? "" : "-";
	if (capi)
		s->text = xasprintf("capi:%s(%s)%s%s", mode, c->name, dash, ivtext);
	else
		s->text = xasprintf("%s%s-%s%s%s", c->name, kc, mode, dash, ivtext);
}

static void gen_fixed_spec(struct spec *s)
{
	const struct fixed_spec *f = &fixed_specs[rnd(ARRAY_SIZE(fixed_specs))];

	s->text = xstrdup(f->spec);
	s->keylen = f->keylen;
	s->only512 = strstr(f->spec, "-lmk") || strstr(f->spec, "-tcw");
}

/* capi:<AEAD>-ivmode with integrity:<bytes>:aead */
static void gen_aead_spec(struct spec *s, unsigned int *tag)
{
	const struct aead_seed *a = &aeads[rnd(ARRAY_SIZE(aeads))];
	const char *iv = "random";

	if (chance(25))
		iv = aead_other_ivs[rnd(ARRAY_SIZE(aead_other_ivs))];
	s->aead = true;
	s->random_iv = !strcmp(iv, "random");
	s->mac = a->mac;
	s->keylen = pick_size(a->keys, sizeof(a->keys)) + a->mac;
	*tag = pick_size(a->tags, sizeof(a->tags));
	/* the tag, then the random IV (at least 8 bytes in dm-crypt) */
	s->int_bytes = *tag + (s->random_iv ? (a->iv_size < 8 ? 8 : a->iv_size) : 0);
	s->only512 = !strcmp(iv, "lmk") || !strcmp(iv, "tcw");
	s->text = xasprintf("capi:%s%s%s", a->name, *iv ? "-" : "", iv);
}

static void gen_spec(struct spec *s, unsigned int *tag)
{
	unsigned int r = rnd(100);

	*tag = 0;
	if (r < 50)
		gen_parts_spec(s, false);
	else if (r < 68)
		gen_parts_spec(s, true);
	else if (r < 80)
		gen_fixed_spec(s);
	else
		gen_aead_spec(s, tag);
}

/* ---- keys ---- */

static const struct ring_key *ring_key_of(unsigned int bytes)
{
	const struct ring_key *found[ARRAY_SIZE(ring_keys)];
	size_t i, n = 0;

	for (i = 0; i < ARRAY_SIZE(ring_keys); i++)
		if (ring_keys[i].bytes == bytes)
			found[n++] = &ring_keys[i];
	return n ? found[rnd(n)] : NULL;
}

static char *gen_key(unsigned int bytes)
{
	static const char * const odd_refs[] = {
		":32", ":", "::logon:veiltest:cd32", ":+32:logon:veiltest:cd32",
		":032:logon:veiltest:cd32", ":4294967328:logon:veiltest:cd32",
		":32:logon:", ":32::veiltest:cd32", ":32:LOGON:veiltest:cd32",
		":32:trusted:veiltest:cd32", ":32:logon:veiltest:missing",
		":64:logon:veiltest:cd32", ":32:user:veiltest:cd32",
		":32:logon:veiltest:cd32:x", ":0:logon:veiltest:cd32",
		":2147483648:logon:veiltest:cd32",
	};
	const struct ring_key *rk;
	unsigned int r = rnd(100), wrong;
	char *h;

	if (!bytes && chance(80))
		return xstrdup("-");
	if (r < 52)
		return hexkey(bytes, false);
	if (r < 56)
		return hexkey(bytes, true);
	if (r < 70) {
		rk = ring_key_of(bytes);
		if (rk)
			return xasprintf(":%u:%s:%s", rk->bytes, rk->type, rk->desc);
		return hexkey(bytes, false);
	}
	if (r < 79) {
		static const int deltas[] = { -16, -8, -1, 1, 8, 16 };

		wrong = chance(30) ? bytes * 2 :
			chance(30) ? bytes / 2 : bytes + deltas[rnd(6)];
		return hexkey((int)wrong > 0 ? wrong : 1, false);
	}
	if (r < 84) {
		/* an odd number of digits, the last one hex or not */
		h = hexkey(bytes + 1, false);
		h[2 * bytes + 1] = '\0';
		if (chance(50))
			h[2 * bytes] = 'z';
		return h;
	}
	if (r < 88)
		return xstrdup("-");
	if (r < 96)
		return xstrdup(odd_refs[rnd(ARRAY_SIZE(odd_refs))]);
	/* not hexadecimal */
	h = hexkey(bytes ? bytes : 16, false);
	h[rnd(strlen(h))] = 'g';
	return h;
}

/* ---- the whole line ---- */

/* The device a line points at: the loop device, or a dm-integrity one. */
static const struct bdev *pick_dev(const struct env *e, const struct spec *s)
{
	const struct bdev *fit[MAX_INT_DEVS];
	int i, n = 0;

	if (!s->int_bytes || e->ndev == 1 || chance(5))
		return &e->dev[chance(s->int_bytes ? 0 : 90) ? 0 : rnd(e->ndev)];
	/* exactly the tuple (6.1's dm-crypt wants that), or room for it */
	for (i = 1; i < e->ndev; i++)
		if (e->dev[i].tuple == s->int_bytes)
			fit[n++] = &e->dev[i];
	if (!n || chance(20))
		for (i = 1, n = 0; i < e->ndev; i++)
			if (e->dev[i].tuple >= s->int_bytes)
				fit[n++] = &e->dev[i];
	return n ? fit[rnd(n)] : &e->dev[1 + rnd(e->ndev - 1)];
}

/*
 * An AEAD line fits a device best with a tag that fills its tuple: try
 * the tags the AEAD takes for one that does.
 */
static void fit_aead_tag(const struct env *e, struct spec *s, unsigned int tag)
{
	unsigned int iv = s->int_bytes - tag;
	int i;

	if (chance(30))
		return;
	for (i = 1; i < e->ndev; i++) {
		if (e->dev[i].tuple > iv && e->dev[i].tuple - iv <= 16 &&
		    chance(60)) {
			s->int_bytes = e->dev[i].tuple;
			return;
		}
	}
}

static char *gen_sector_size(unsigned int *unit)
{
	*unit = 1;
	if (chance(88)) {
		*unit = 1u << rnd(4);
		return xasprintf("sector_size:%u", *unit * 512);
	}
	return xasprintf("sector_size:%s", bad_sector_sizes[rnd(ARRAY_SIZE(bad_sector_sizes))]);
}

/*
 * The fields of a line as tokens: cipher key iv_offset device offset
 * [count options...]; its length in sectors to *len.
 */
static void gen_line(const struct env *e, struct line *l)
{
	struct toks opt = { 0 };
	struct spec s = { 0 };
	const struct bdev *d;
	unsigned int unit = 1, tag, nflags, i, keylen;
	uint64_t off, ivoff;
	bool ssize = false;
	int count;

	gen_spec(&s, &tag);
	if (s.aead)
		fit_aead_tag(e, &s, tag);
	d = pick_dev(e, &s);

	/* What the spec asks of the device: integrity, its sector size. */
	if (s.int_bytes && chance(92)) {
		if (chance(92))
			tok_add(&opt, xasprintf("integrity:%u:%s", s.int_bytes,
						s.aead ? "aead" : "none"));
		else
			tok_add(&opt, xstrdup(bad_integrity[rnd(ARRAY_SIZE(bad_integrity))]));
	} else if (chance(4)) {
		/* integrity "none" with an IV that keeps nothing there */
		tok_add(&opt, xasprintf("integrity:%u:none", 1 + rnd(48)));
	}
	if (d->block > 512 && chance(90)) {
		unit = d->block / 512;
		tok_add(&opt, xasprintf("sector_size:%u", d->block));
		ssize = true;
	}
	keylen = s.keylen;
	if (s.mac && chance(30)) {
		static const char * const kvals[] = {
			"16", "32", "64", "20", "0", "5000", "4294967312", "+16",
		};
		const char *v = kvals[rnd(ARRAY_SIZE(kvals))];
		unsigned long n = strtoul(v, NULL, 10);

		tok_add(&opt, xasprintf("integrity_key_size:%s", v));
		if (n && n <= 64 && isdigit((unsigned char)v[0]))
			keylen = keylen - s.mac + n;
	}

	/* The options anyone may give. */
	nflags = chance(45) ? 1 + rnd(4) : 0;
	for (i = 0; i < nflags; i++) {
		char *f;

		if (!ssize && !s.only512 && chance(25)) {
			f = gen_sector_size(&unit);
			ssize = true;
		} else if (chance(4)) {
			f = xasprintf("integrity_key_size:%u", 1 + rnd(64));
		} else {
			f = xstrdup(flag_opts[rnd(ARRAY_SIZE(flag_opts))]);
		}
		if (chance(4)) {
			char *p;

			for (p = f; *p && *p != ':'; p++)
				*p = toupper((unsigned char)*p);
		}
		tok_insert(&opt, rnd(opt.n + 1), f);
	}
	if (opt.n && chance(5))		/* a duplicate */
		tok_insert(&opt, rnd(opt.n + 1), xstrdup(opt.t[rnd(opt.n)]));
	if (ssize && s.only512 && chance(70)) {
		/* lmk and tcw refuse other sector sizes: mostly leave it out */
		for (i = 0; i < (unsigned int)opt.n; i++)
			if (!strncmp(opt.t[i], "sector_size:", 12))
				tok_del(&opt, i--);
		unit = 1;
	}

	/* Geometry inside the device, the length a whole number of sectors. */
	gen_geometry(d->sectors, unit, &off, &l->len, &ivoff);
	off = off / unit * unit;	/* dm-integrity's 4 KiB blocks want it */
	if (chance(3))
		l->len += chance(50) ? 1 : d->sectors;
	if (chance(4))
		ivoff = 1 + rnd(7);

	tok_add(&l->tk, s.text);
	tok_add(&l->tk, gen_key(keylen));
	tok_add(&l->tk, xasprintf("%" PRIu64, ivoff));
	if (chance(3))
		tok_add(&l->tk, xstrdup(chance(50) ? "/dev/null" : "/dev/loop250"));
	else
		tok_add(&l->tk, xstrdup(chance(50) ? d->path : d->majmin));
	tok_add(&l->tk, xasprintf("%" PRIu64, off));
	count = opt.n;
	if (chance(8)) {
		static const int deltas[] = { -1, 1, 2, -2, 9, 10, 15 };
		int c = rnd(7);

		count = c < 4 ? count + deltas[c] : deltas[c];
		if (count < 0)
			count = 0;
	}
	if (opt.n || count || chance(5)) {
		tok_add(&l->tk, xasprintf("%d", count));
		for (i = 0; i < (unsigned int)opt.n; i++)
			tok_add(&l->tk, opt.t[i]);
		opt.n = 0;
	}
}

/* ---- mutations at the token level ---- */

enum mut_op {
	M_DROP, M_DUP, M_SWAP, M_DIGITS, M_CASE, M_FEATCOUNT, M_ADD_OPT,
	M_TRAIL, M_SPEC_PART, M_EDGE, M_NOPS
};

/* Take the cipher spec apart at '-' and ':' and change one piece. */
static char *mutate_spec(const char *spec)
{
	static const char * const pieces[] = {
		"", "-", ":", "plain64", "xts", "cbc", "aes", "essiv:sha256", "64",
		"capi:", "(", ")",
	};
	size_t len = strlen(spec), at = rnd(len + 1);

	switch (rnd(3)) {
	case 0:		/* cut it short */
		return xasprintf("%.*s", (int)at, spec);
	case 1:		/* insert a piece */
		return xasprintf("%.*s%s%s", (int)at, spec,
				 pieces[rnd(ARRAY_SIZE(pieces))], spec + at);
	default:	/* add an ivopts or another IV part */
		return xasprintf("%s%s", spec, chance(50) ? ":" : "-plain64");
	}
}

static void mutate_tokens(struct line *l, enum mut_op op)
{
	static const enum tok_op basic[M_NOPS] = {
		[M_DROP] = TOK_DROP, [M_DUP] = TOK_DUP, [M_SWAP] = TOK_SWAP,
		[M_DIGITS] = TOK_DIGITS, [M_EDGE] = TOK_EDGE,
	};
	struct toks *tk = &l->tk;
	int i = tk->n ? (int)rnd(tk->n) : 0;
	char *p;

	switch (op) {
	case M_DROP:
	case M_DUP:
	case M_SWAP:
	case M_DIGITS:
	case M_EDGE:
		tok_mutate(tk, i, basic[op]);
		break;
	case M_CASE:
		if (tk->n) {
			p = xstrdup(tk->t[i]);
			for (char *q = p; *q; q++)
				if (chance(50))
					*q = toupper((unsigned char)*q);
			tok_set(tk, i, p);
		}
		break;
	case M_FEATCOUNT:
		if (tk->n > 5)
			tok_set(tk, 5, xasprintf("%d", atoi(tk->t[5]) + (chance(50) ? 1 : -1)));
		else
			tok_add(tk, xstrdup(edge_number()));
		break;
	case M_ADD_OPT:
		p = chance(50) ? xstrdup(flag_opts[rnd(ARRAY_SIZE(flag_opts))]) :
		    chance(50) ? xstrdup(bad_integrity[rnd(ARRAY_SIZE(bad_integrity))]) :
		    xasprintf("sector_size:%s", bad_sector_sizes[rnd(ARRAY_SIZE(bad_sector_sizes))]);
		if (tk->n > 5) {
			tok_insert(tk, 6 + rnd(tk->n - 5), p);
			if (chance(70))
				tok_set(tk, 5, xasprintf("%d", atoi(tk->t[5]) + 1));
		} else {
			tok_add(tk, xstrdup("1"));
			tok_add(tk, p);
		}
		break;
	case M_TRAIL:
		tok_add(tk, xstrdup(junk_tokens[rnd(ARRAY_SIZE(junk_tokens))]));
		break;
	case M_SPEC_PART:
		if (tk->n)
			tok_set(tk, 0, mutate_spec(tk->t[0]));
		break;
	default:
		break;
	}
}

static void make_line(const struct env *e, struct line *l)
{
	int n = 0, i;

	gen_line(e, l);
	if (chance(30))
		n = chance(75) ? 1 : 2;
	for (i = 0; i < n; i++)
		mutate_tokens(l, rnd(M_NOPS));
	l->mutated = n > 0;
	l->params = tok_join(&l->tk);
}

/*
 * Lines dm-crypt must not see: "integrity:<n>" with no second colon makes
 * it dereference strchr()'s NULL (an oops); 6.12's integrity_key_size
 * with an AEAD other than authenc() makes crypt_setkey() copy the key
 * into an authenc key it never allocated (an oops); a keyring key size of
 * a MiB or more is allocated before the key is looked at, and sizes past
 * the page allocator's largest order WARN. Returns why, or NULL.
 */
static const char *crypt_unsafe(const struct line *l)
{
	bool aead = false, key_size = false;
	const char *k;
	int i;

	for (i = 5; i < l->tk.n; i++) {
		const char *t = l->tk.t[i];

		if (!strncmp(t, "integrity:", 10) && isdigit((unsigned char)t[10]) &&
		    !strchr(t + 10, ':'))
			return "integrity:<n> without a second colon oopses dm-crypt";
		if (!strncmp(t, "integrity:", 10) && strchr(t + 10, ':'))
			aead |= !strcasecmp(strchr(t + 10, ':') + 1, "aead");
		key_size |= !strncmp(t, "integrity_key_size:", 19) &&
			    isdigit((unsigned char)t[19]);
	}
	if (aead && key_size && !strstr(l->tk.t[0], "authenc("))
		return "integrity_key_size with an AEAD but authenc() oopses dm-crypt (6.12)";
	k = l->tk.n > 1 ? l->tk.t[1] : "";
	if (k[0] == ':' && isdigit((unsigned char)k[1])) {
		/* dm-crypt's sscanf("%u"): digits, wrapping at 32 bits */
		uint32_t v = 0;

		for (k++; isdigit((unsigned char)*k); k++)
			v = v * 10 + (*k - '0');
		if (v >= CRYPT_KEY_SIZE_UNSAFE && (int32_t)v > 0)
			return "a keyring key size of a MiB or more WARNs in dm-crypt";
	}
	return NULL;
}

/* ---- the kernel's word on a refused line ---- */

static int kmsg_fd = -1;

static void kmsg_open(void)
{
	kmsg_fd = open("/dev/kmsg", O_RDONLY | O_NONBLOCK);
	if (kmsg_fd < 0)
		die("cannot open /dev/kmsg: %s", strerror(errno));
	lseek(kmsg_fd, 0, SEEK_END);
}

/*
 * Read the kernel log since the last call; keep in @msg the device-mapper
 * line that says why @target refused: "device-mapper: table: 254:0:
 * <target>: <message> (-EINVAL)" gives "<message>", another table line
 * (the core's checks at resume) its text. NULL @msg: just skip ahead.
 */
static void kmsg_reason(const char *target, char *msg, size_t size)
{
	char rec[8192], pat[64];
	int best = 0;
	ssize_t n;

	if (msg)
		snprintf(msg, size, "(no message)");
	snprintf(pat, sizeof(pat), ": %s: ", target);
	for (;;) {
		char *text, *p, *e;
		int rank;

		n = read(kmsg_fd, rec, sizeof(rec) - 1);
		if (n < 0 && errno == EPIPE)
			continue;	/* overwritten records: go on after them */
		if (n <= 0)
			break;
		rec[n] = '\0';
		text = strchr(rec, ';');
		if (!msg || !text)
			continue;
		text++;
		e = strchr(text, '\n');
		if (e)
			*e = '\0';
		p = strstr(text, "device-mapper: table: ");
		rank = p && strstr(p, pat) ? 3 : p ? 2 :
		       strstr(text, "device-mapper: ") ? 1 : 0;
		if (rank <= best)
			continue;
		best = rank;
		if (rank == 3) {
			p = strstr(p, pat) + strlen(pat);
			e = strstr(p, " (-");
			if (e)
				*e = '\0';
		} else {
			p = strstr(text, "device-mapper: ");
		}
		snprintf(msg, size, "%s", p);
	}
}

/* ---- documented refusals ---- */

struct rule {
	char *msg, *re_text;
	regex_t re;
};

static struct rule rules[MAX_RULES];
static int nrules;

/* "<veil's message>\t<extended regex>" a line, from the doc. */
static void read_rules(const char *path)
{
	char buf[4096];
	FILE *f = fopen(path, "r");

	if (!f)
		die("cannot read %s: %s", path, strerror(errno));
	while (fgets(buf, sizeof(buf), f)) {
		char *tab = strchr(buf, '\t'), *nl = strchr(buf, '\n');
		struct rule *r = &rules[nrules];

		if (nl)
			*nl = '\0';
		if (!buf[0])
			continue;
		if (nrules == MAX_RULES)
			die("more than %d refusal rules in %s", MAX_RULES, path);
		if (tab)
			*tab++ = '\0';
		r->msg = xstrdup(buf);
		r->re_text = xstrdup(tab && *tab ? tab : ".");
		if (regcomp(&r->re, r->re_text, REG_EXTENDED | REG_NOSUB))
			die("%s: bad regex: %s", path, r->re_text);
		nrules++;
	}
	fclose(f);
	if (!nrules)
		die("no refusal rules in %s", path);
}

/* The rule that covers veil's refusal @msg of @params, or -1. */
static int covering_rule(const char *msg, const char *params)
{
	int i;

	for (i = 0; i < nrules; i++)
		if (!strcmp(rules[i].msg, msg) &&
		    !regexec(&rules[i].re, params, 0, NULL, 0))
			return i;
	return -1;
}

/* ---- what the run saw ---- */

enum kind {
	K_CRYPT_ONLY_DOC, K_CRYPT_ONLY_UNDOC, K_VEIL_ONLY,
	K_SKIPPED, K_NO_CRYPT_IO, K_NKINDS
};

static const char * const kind_title[] = {
	"crypt accepts, veil refuses, a documented refusal",
	"crypt accepts, veil refuses, NOT DOCUMENTED",
	"veil accepts, crypt refuses",
	"not given to dm-crypt",
	"both accept, no data written through dm-crypt",
};

/* Lines of one kind with one message: counted, the first few kept. */
struct group {
	enum kind kind;
	char *msg;
	unsigned long n;
	unsigned long idx[64];
	char *text[64];
};

static struct group groups[MAX_GROUPS];
static int ngroups;
static unsigned int show_max = 20;

static struct {
	unsigned long cases, both_accept, both_refuse, crypt_only, veil_only;
	unsigned long skipped, doc, undoc, mismatches, data_checked;
	unsigned long data_skipped, data_unsafe, crypt_io_failed, mutated;
	unsigned long problems;
} st;

/*
 * The line as a report shows it: a key longer than 64 characters cut to
 * its first 16 and its length, so that the options after it show (the
 * case number replays the whole line).
 */
static char *line_text(const struct line *l, const char *target)
{
	const char *key = l->tk.n > 1 ? l->tk.t[1] : "";
	size_t len = strlen(key), i;
	struct toks tk = { 0 };
	char *s, *p;

	if (len <= 64)
		return xasprintf("0 %" PRIu64 " %s %s", l->len, target, l->params);
	for (i = 0; i < (size_t)l->tk.n; i++)
		tok_add(&tk, i == 1 ? xasprintf("%.16s...(%zu characters)", key, len) :
			xstrdup(l->tk.t[i]));
	p = tok_join(&tk);
	s = xasprintf("0 %" PRIu64 " %s %s", l->len, target, p);
	free(p);
	tok_free(&tk);
	return s;
}

static void record(enum kind kind, const char *msg, const struct line *l,
		   const char *target)
{
	struct group *g = NULL;
	int i;

	for (i = 0; i < ngroups; i++)
		if (groups[i].kind == kind && !strcmp(groups[i].msg, msg))
			g = &groups[i];
	if (!g) {
		if (ngroups == MAX_GROUPS)
			g = &groups[MAX_GROUPS - 1];	/* the rest share the last */
		else
			g = &groups[ngroups++];
		if (!g->msg) {
			g->kind = kind;
			g->msg = xstrdup(msg);
		}
	}
	if (g->n < show_max && g->n < ARRAY_SIZE(g->idx)) {
		g->idx[g->n] = cur_case;
		g->text[g->n] = line_text(l, target);
	}
	g->n++;
}

static void problem(const char *what, const struct line *l, const char *more)
{
	char *t = line_text(l, "crypt|veil");

	st.problems++;
	printf("PROBLEM: case %lu (reproduce: --seed %" PRIu64
	       " --first %lu --count 1): %s\n  line: ", cur_case, g_seed,
	       cur_case, what);
	print_escaped(stdout, t, 600);
	printf("\n");
	if (more)
		printf("  %s\n", more);
	fflush(stdout);
	free(t);
}

/* ---- devices ---- */

static bool have_dev[2], stuck;

static void problem(const char *what, const struct line *l, const char *more);

static bool remove_dev(enum target t, const struct line *l)
{
	int err;

	step("remove");
	err = run_simple_of(dev_name[t], DM_DEVICE_REMOVE);
	if (err) {
		problem("cannot remove the device", l, dev_name[t]);
		stuck = true;
		return false;
	}
	have_dev[t] = false;
	return true;
}

/*
 * Load @params as @t into its device and resume: 0, or the errno. An
 * accepted table stays live until the next accepted one replaces it at
 * its resume: swapping tables costs far less than removing the device
 * and making it again (a remove takes 0.1 s on 6.12 in the guest).
 */
static int load(const struct line *l, enum target t, char *msg, size_t size)
{
	struct dm_task *dmt;
	int err;

	kmsg_reason(target_name[t], NULL, 0);
	if (!have_dev[t]) {
		step("create");
		err = run_simple_of(dev_name[t], DM_DEVICE_CREATE);
		if (err)
			die("cannot create %s: %s", dev_name[t], errname(err));
		have_dev[t] = true;
	}
	step(t == T_CRYPT ? "load crypt" : "load veil");
	dmt = task_of(dev_name[t], DM_DEVICE_RELOAD);
	dm_task_secure_data(dmt);
	dm_task_add_target(dmt, 0, l->len, target_name[t], l->params);
	err = run(dmt);
	dm_task_destroy(dmt);
	if (!err) {
		step(t == T_CRYPT ? "resume crypt" : "resume veil");
		err = run_simple_of(dev_name[t], DM_DEVICE_RESUME);
		/* A table refused at resume leaves the device suspended. */
		if (err)
			remove_dev(t, l);
	}
	if (err)
		kmsg_reason(target_name[t], msg, size);
	return err;
}

/* The table the kernel prints for @t's device: the text after the type. */
static char *table_of(enum target t)
{
	struct dm_task *dmt = task_of(dev_name[t], DM_DEVICE_TABLE);
	uint64_t start, length;
	char *type, *params, *s = NULL;

	step("table");
	if (!run(dmt)) {
		dm_get_next_target(dmt, NULL, &start, &length, &type, &params);
		if (type && params)
			s = xstrdup(params);
	}
	dm_task_destroy(dmt);
	return s;
}

/* The device of this run that @t's device lies on, or NULL. */
static const struct bdev *dep_of(const struct env *e, enum target t)
{
	struct dm_task *dmt = task_of(dev_name[t], DM_DEVICE_DEPS);
	const struct bdev *d = NULL;
	struct dm_deps *deps;
	int j;

	deps = run(dmt) ? NULL : dm_task_get_deps(dmt);
	for (j = 0; deps && deps->count == 1 && j < e->ndev; j++)
		if (deps->device[0] == e->dev[j].rdev)
			d = &e->dev[j];
	dm_task_destroy(dmt);
	return d;
}

/*
 * dm-crypt takes integrity:<bytes>:none with an IV that keeps nothing in
 * the metadata over any device, unchecked (it checks the device only for
 * an AEAD or the random IV), and before 6.12 still gives every bio
 * <bytes> of metadata per sector: on 6.1 its first write oopses, over the
 * loop driver (a NULL integrity profile in blk_mq_start_request()) and
 * over dm-integrity with another tuple size (a general protection fault
 * in dm_integrity_rw_tag()). 6.12's gives metadata only to a device it
 * checked (its tuple_size).
 */
static bool crypt_io_guard;

static bool crypt_io_unsafe(const struct line *l)
{
	const char *iv = strrchr(l->tk.t[0], '-'), *kind;
	bool has = false, checked;
	int i;

	checked = iv && !strncmp(iv, "-random", 7) && (!iv[7] || iv[7] == ':');
	for (i = 5; i < l->tk.n; i++) {
		if (strncmp(l->tk.t[i], "integrity:", 10) ||
		    !isdigit((unsigned char)l->tk.t[i][10]))
			continue;
		has = true;
		kind = strchr(l->tk.t[i] + 10, ':');
		checked |= kind && !strcasecmp(kind + 1, "aead");
	}
	return has && !checked;
}

static unsigned char *wbuf, *rbuf;

static int open_dev(enum target t)
{
	char path[256];

	if (!dev_node_of(dev_name[t], path, sizeof(path)))
		return -1;
	return open(path, O_RDWR | O_DIRECT);
}

static bool io_ok(ssize_t r, size_t n)
{
	return r >= 0 && (size_t)r == n;
}

/*
 * Up to 4 KiB written through dm-crypt must read back through veil, and
 * the other way round. Where dm-crypt cannot write or read back its own
 * data, there is nothing to compare (counted).
 */
static void check_data(const struct env *e, const struct line *l)
{
	const struct bdev *d = dep_of(e, T_CRYPT);
	uint64_t size = 0;
	int fd[2], lbs = 512;
	size_t n, i;
	off_t pos = 0;

	if (!d) {
		st.data_skipped++;
		return;
	}
	if (crypt_io_guard && crypt_io_unsafe(l)) {
		st.data_unsafe++;
		record(K_NO_CRYPT_IO, "integrity:<bytes> with an IV that keeps nothing there: dm-crypt's writes oops before 6.12", l, "crypt");
		return;
	}
	fd[T_CRYPT] = open_dev(T_CRYPT);
	fd[T_VEIL] = open_dev(T_VEIL);
	if (fd[T_CRYPT] < 0 || fd[T_VEIL] < 0) {
		problem("cannot open the mapped devices", l, strerror(errno));
		goto out;
	}
	if (ioctl(fd[T_CRYPT], BLKGETSIZE64, &size) ||
	    ioctl(fd[T_CRYPT], BLKSSZGET, &lbs) || lbs <= 0) {
		problem("cannot read the mapped device's size", l, strerror(errno));
		goto out;
	}
	n = (size < IO_SIZE ? size : IO_SIZE) / lbs * lbs;
	if (!n) {
		st.data_skipped++;
		goto out;
	}
	if (size > n && chance(50))
		pos = (off_t)(rnd64() % ((size - n) / lbs + 1)) * lbs;

	for (i = 0; i < n; i++)
		wbuf[i] = rnd(256);
	step("write crypt");
	if (!io_ok(pwrite(fd[T_CRYPT], wbuf, n, pos), n)) {
		st.crypt_io_failed++;
		goto out;
	}
	step("read crypt");
	if (!io_ok(pread(fd[T_CRYPT], rbuf, n, pos), n) || memcmp(rbuf, wbuf, n)) {
		st.crypt_io_failed++;
		goto out;
	}
	st.data_checked++;
	step("read veil");
	memset(rbuf, 0, n);
	if (!io_ok(pread(fd[T_VEIL], rbuf, n, pos), n)) {
		problem("veil cannot read what dm-crypt wrote", l, strerror(errno));
		goto out;
	}
	if (memcmp(rbuf, wbuf, n)) {
		problem("veil reads other data than dm-crypt wrote", l, NULL);
		goto out;
	}
	for (i = 0; i < n; i++)
		wbuf[i] = rnd(256);
	step("write veil");
	if (!io_ok(pwrite(fd[T_VEIL], wbuf, n, pos), n)) {
		problem("veil cannot write where dm-crypt wrote", l, strerror(errno));
		goto out;
	}
	step("read crypt");
	memset(rbuf, 0, n);
	if (!io_ok(pread(fd[T_CRYPT], rbuf, n, pos), n) || memcmp(rbuf, wbuf, n))
		problem("dm-crypt reads other data than veil wrote", l, NULL);
out:
	if (fd[T_CRYPT] >= 0)
		close(fd[T_CRYPT]);
	if (fd[T_VEIL] >= 0)
		close(fd[T_VEIL]);
}

/* What the lines both accept are made of: "iv:plain64", "key:logon"... */
static struct {
	char name[32];
	unsigned long n;
} coverage[96];

static void cover(const char *kind, const char *name, size_t len)
{
	char key[32];
	size_t i;

	snprintf(key, sizeof(key), "%s:%.*s", kind, (int)len, name);
	for (i = 0; i < ARRAY_SIZE(coverage) && coverage[i].name[0]; i++)
		if (!strcmp(coverage[i].name, key))
			break;
	if (i == ARRAY_SIZE(coverage))
		return;
	snprintf(coverage[i].name, sizeof(coverage[i].name), "%s", key);
	coverage[i].n++;
}

static void cover_line(const struct line *l)
{
	const char *spec = l->tk.t[0], *key = l->tk.t[1], *iv, *p, *dash;
	int i;

	iv = strrchr(spec, '-');
	iv = iv ? iv + 1 : "(none)";
	cover("iv", iv, strcspn(iv, ":"));
	cover("form", strncmp(spec, "capi:", 5) ? "cipher-mode-iv" : "capi", 14);
	p = strchr(spec, ':');
	dash = strchr(spec, '-');
	if (p && dash && p < dash && strncmp(spec, "capi:", 5))
		cover("keycount", p + 1, dash - p - 1);
	if (key[0] == ':' && (p = strchr(key + 1, ':')))
		cover("key", p + 1, strcspn(p + 1, ":"));
	else
		cover("key", key[0] == '-' ? "none" : "hex", 4);
	for (i = 6; i < l->tk.n; i++) {
		p = l->tk.t[i];
		if (!strncmp(p, "integrity:", 10) && strrchr(p, ':') > p + 10)
			cover("integrity", strrchr(p, ':') + 1, 8);
		else if (!strncmp(p, "sector_size:", 12))
			cover("sector", p + 12, 20);
		else if (!strchr(p, ':'))
			cover("opt", p, 31);
	}
}

static void check_both(const struct env *e, const struct line *l)
{
	char *tc = table_of(T_CRYPT), *tv = table_of(T_VEIL);

	if (!tc || !tv || strcmp(tc, tv)) {
		char *more = xasprintf("crypt prints: %s\n  veil prints:  %s",
				       tc ? tc : "(nothing)", tv ? tv : "(nothing)");

		st.mismatches++;
		problem("the two targets print different tables", l, more);
		free(more);
	}
	free(tc);
	free(tv);
	check_data(e, l);
}

/* Returns false if the run cannot go on (a device is stuck). */
static bool run_case(const struct env *e, unsigned long idx)
{
	char msg[2][KMSG_MAX];
	struct line l = { 0 };
	const char *unsafe;
	int err[2];

	cur_case = idx;
	step("generate");
	seed_case(g_seed, idx);
	make_line(e, &l);
	snprintf(cur_desc, sizeof(cur_desc), "0 %" PRIu64 " crypt|veil %s",
		 l.len, l.params);
	st.cases++;
	st.mutated += l.mutated;
	unsafe = crypt_unsafe(&l);
	if (verbose || dry_run) {
		printf("case %lu%s: ", idx,
		       unsafe ? " (not given to dm-crypt)" : "");
		print_escaped(stdout, cur_desc, dry_run ? 100000 : 400);
		printf("\n");
	}
	if (dry_run)
		goto out;
	if (unsafe) {
		/* veil gets it alone: accepted or refused, never an oops. */
		char *why;

		st.skipped++;
		err[T_VEIL] = load(&l, T_VEIL, msg[T_VEIL], KMSG_MAX);
		why = xasprintf("%s; veil: %s", unsafe,
				err[T_VEIL] ? msg[T_VEIL] : "accepted");
		record(K_SKIPPED, why, &l, "crypt");
		free(why);
		goto out;
	}

	err[T_CRYPT] = load(&l, T_CRYPT, msg[T_CRYPT], KMSG_MAX);
	err[T_VEIL] = load(&l, T_VEIL, msg[T_VEIL], KMSG_MAX);
	if (verbose)
		printf("  crypt: %s, veil: %s\n",
		       err[T_CRYPT] ? msg[T_CRYPT] : "accepted",
		       err[T_VEIL] ? msg[T_VEIL] : "accepted");

	if (!err[T_CRYPT] && !err[T_VEIL]) {
		st.both_accept++;
		cover_line(&l);
		check_both(e, &l);
	} else if (err[T_CRYPT] && err[T_VEIL]) {
		st.both_refuse++;
	} else if (!err[T_CRYPT]) {
		int r = covering_rule(msg[T_VEIL], l.params);

		st.crypt_only++;
		if (r >= 0) {
			st.doc++;
			record(K_CRYPT_ONLY_DOC, msg[T_VEIL], &l, "crypt");
		} else {
			st.undoc++;
			record(K_CRYPT_ONLY_UNDOC, msg[T_VEIL], &l, "crypt");
		}
	} else {
		st.veil_only++;
		record(K_VEIL_ONLY, msg[T_CRYPT], &l, "veil");
	}
out:
	tok_free(&l.tk);
	free(l.params);
	return !stuck;
}

static void print_report(void)
{
	enum kind k;
	unsigned long i;
	int g;

	printf("crypt-diff: seed %" PRIu64 ": %lu cases (%lu mutated): "
	       "%lu both accept, %lu both refuse, %lu crypt only "
	       "(%lu documented refusals, %lu NOT documented), %lu veil only, "
	       "%lu not given to dm-crypt\n", g_seed,
	       st.cases, st.mutated, st.both_accept, st.both_refuse,
	       st.crypt_only, st.doc, st.undoc, st.veil_only, st.skipped);
	printf("crypt-diff: both accept: %lu tables differ; data compared for "
	       "%lu (not for %lu where dm-crypt could not write and read back "
	       "its own 4 KiB, %lu where its write would oops, %lu on other "
	       "devices or too short)\n", st.mismatches, st.data_checked,
	       st.crypt_io_failed, st.data_unsafe, st.data_skipped);
	printf("crypt-diff: what the lines both accept are made of:");
	for (g = 0; g < (int)ARRAY_SIZE(coverage) && coverage[g].name[0]; g++)
		printf(" %s=%lu", coverage[g].name, coverage[g].n);
	printf("\n");
	for (k = 0; k < K_NKINDS; k++) {
		for (g = 0; g < ngroups; g++) {
			struct group *gr = &groups[g];

			if (gr->kind != k)
				continue;
			printf("%s: %s: %lu line%s\n", kind_title[k], gr->msg,
			       gr->n, gr->n == 1 ? "" : "s");
			for (i = 0; i < gr->n && i < show_max && i < ARRAY_SIZE(gr->idx); i++) {
				printf("  case %lu: ", gr->idx[i]);
				print_escaped(stdout, gr->text[i], 300);
				printf("\n");
			}
			if (gr->n > i)
				printf("  (and %lu more)\n", gr->n - i);
		}
	}
}

/* ---- setup ---- */

static void bdev_init(struct bdev *d, const char *path)
{
	struct stat sb;
	uint64_t bytes = 0;
	int fd;

	d->path = path;
	if (stat(path, &sb) || !S_ISBLK(sb.st_mode))
		die("%s is not a block device", path);
	d->rdev = sb.st_rdev;
	fd = open(path, O_RDONLY);
	if (fd < 0 || ioctl(fd, BLKGETSIZE64, &bytes))
		die("cannot read the size of %s", path);
	close(fd);
	d->sectors = bytes >> 9;
	if (d->sectors < 64)
		die("%s is too small", path);
	snprintf(d->majmin, sizeof(d->majmin), "%u:%u", major(d->rdev),
		 minor(d->rdev));
}

/* --integrity PATH:TUPLE:BLOCK */
static void add_integrity(struct env *e, char *arg)
{
	char *block = strrchr(arg, ':'), *tuple;
	struct bdev *d;

	if (!block || block == arg)
		die("--integrity wants PATH:TUPLE:BLOCK, not %s", arg);
	*block++ = '\0';
	tuple = strrchr(arg, ':');
	if (!tuple)
		die("--integrity wants PATH:TUPLE:BLOCK");
	*tuple++ = '\0';
	if (e->ndev == 1 + MAX_INT_DEVS)
		die("at most %d dm-integrity devices", MAX_INT_DEVS);
	d = &e->dev[e->ndev++];
	d->tuple = strtoul(tuple, NULL, 10);
	d->block = strtoul(block, NULL, 10);
	if (!d->tuple || !d->block)
		die("bad tuple or block size for %s", arg);
	if (dry_run) {
		d->path = arg;
		d->sectors = 8192;
		snprintf(d->majmin, sizeof(d->majmin), "254:%d", e->ndev);
		return;
	}
	bdev_init(d, arg);
}

static void usage(void)
{
	fprintf(stderr,
		"usage: crypt-diff --seed N --count N --dev DEVICE\n"
		"                  [--integrity PATH:TUPLE:BLOCK]... [--refusals FILE]\n"
		"                  [--first K] [--show N] [--verbose] [--dry-run]\n"
		"                  [--watchdog SECS]\n"
		"       crypt-diff --keys\n");
	exit(2);
}

int main(int argc, char **argv)
{
	unsigned long count = 100, first = 0, idx, report;
	const char *refusals = NULL, *dev = NULL;
	struct env e = { .ndev = 1 };
	char *ints[MAX_INT_DEVS + 1];
	struct utsname uts;
	int i, nints = 0;
	pthread_t wd;
	double t0;

	for (i = 1; i < argc; i++) {
		const char *a = argv[i];

		if (common_arg(argc, argv, &i, &count, &first))
			continue;
		if (!strcmp(a, "--keys")) {
			size_t k;

			for (k = 0; k < ARRAY_SIZE(ring_keys); k++)
				printf("%s %s %u\n", ring_keys[k].type,
				       ring_keys[k].desc, ring_keys[k].bytes);
			return 0;
		}
		if (i + 1 >= argc)
			usage();
		if (!strcmp(a, "--dev"))
			dev = argv[++i];
		else if (!strcmp(a, "--integrity") && nints <= MAX_INT_DEVS)
			ints[nints++] = argv[++i];
		else if (!strcmp(a, "--refusals"))
			refusals = argv[++i];
		else if (!strcmp(a, "--show"))
			show_max = strtoul(argv[++i], NULL, 0);
		else
			usage();
	}
	if (dry_run) {
		e.dev[0].path = dev ? dev : "/dev/loop0";
		e.dev[0].sectors = 16384;
		snprintf(e.dev[0].majmin, sizeof(e.dev[0].majmin), "7:0");
	} else {
		if (!dev || !refusals)
			usage();
		bdev_init(&e.dev[0], dev);
		read_rules(refusals);
	}
	for (i = 0; i < nints; i++)
		add_integrity(&e, ints[i]);
	if (!uname(&uts)) {
		unsigned int major = 0, minor = 0;

		sscanf(uts.release, "%u.%u", &major, &minor);
		crypt_io_guard = major < 6 || (major == 6 && minor < 12);
	}

	if (posix_memalign((void **)&wbuf, 4096, IO_SIZE) ||
	    posix_memalign((void **)&rbuf, 4096, IO_SIZE))
		die("out of memory");
	dm_log_with_errno_init(quiet_log);
	dm_udev_set_sync_support(0);

	printf("crypt-diff: seed %" PRIu64 ", cases %lu..%lu, %s (%s, %" PRIu64
	       " sectors)", g_seed, first, first + count - 1, e.dev[0].path,
	       e.dev[0].majmin, e.dev[0].sectors);
	for (i = 1; i < e.ndev; i++)
		printf(", %s (%s, %u-byte tuples, %u-byte blocks)",
		       e.dev[i].path, e.dev[i].majmin, e.dev[i].tuple,
		       e.dev[i].block);
	printf("; %d documented refusals\n", nrules);
	fflush(stdout);
	if (!dry_run) {
		for (i = 0; i < 2; i++) {
			struct dm_task *dmt = task_of(dev_name[i], DM_DEVICE_INFO);
			struct dm_info info;

			if (!run(dmt) && dm_task_get_info(dmt, &info) && info.exists)
				die("%s exists already", dev_name[i]);
			dm_task_destroy(dmt);
		}
		kmsg_open();
		if (watchdog_secs && pthread_create(&wd, NULL, watchdog, NULL))
			die("cannot start the watchdog");
	}

	t0 = now();
	step_t0 = t0;
	report = count >= 10 ? count / 10 : 1;
	for (idx = first; idx < first + count; idx++) {
		if (!run_case(&e, idx)) {
			printf("crypt-diff: stopping: a device cannot be removed\n");
			break;
		}
		if (!dry_run && (idx - first + 1) % report == 0) {
			printf("crypt-diff: %lu/%lu cases, %.1fs\n",
			       idx - first + 1, count, now() - t0);
			fflush(stdout);
		}
	}
	for (i = 0; i < 2; i++)
		if (have_dev[i] && run_simple_of(dev_name[i], DM_DEVICE_REMOVE)) {
			printf("crypt-diff: %s cannot be removed\n", dev_name[i]);
			st.problems++;
		}

	if (!dry_run) {
		print_report();
		printf("crypt-diff: %.1fs; seconds by step:", now() - t0);
		for (i = 0; i < 40 && prof[i].name; i++)
			printf(" %s=%.1f/%lu", prof[i].name, prof[i].secs, prof[i].n);
		printf("; remove retried %lu times\n", remove_retries);
	}
	st.problems += st.undoc;
	if (st.problems)
		printf("crypt-diff: %lu PROBLEMS (%lu undocumented refusals)\n",
		       st.problems, st.undoc);
	fflush(stdout);
	dm_lib_release();
	return st.problems ? 1 : 0;
}
