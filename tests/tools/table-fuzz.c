// SPDX-License-Identifier: GPL-2.0
/*
 * table-fuzz: seeded, reproducible fuzzing of veil table lines and target
 * messages through libdevmapper, without a fork or exec per case.
 *
 *   table-fuzz --seed N --count N --dev /dev/loopX [--sectors S]
 *              [--first K] [--create-each] [--verbose] [--dry-run]
 *              [--watchdog SECS]
 *
 * Each case builds a valid table line from a seed (cipher spec, key, IV
 * offset, device as path or major:minor, offset, optional features), then
 * maybe mutates it at the token and byte level, and loads it into the
 * device "vfuzz" (create, load, resume: what DM_DEVICE_CREATE with a table
 * does, one ioctl at a time so that each errno is seen). A refused line
 * must fail with an ordinary errno and leave no table behind; the empty
 * device then serves the next case (--create-each: removed and made
 * again, as dmsetup create would). An accepted one gets a
 * 4 KiB O_DIRECT write and read at sector 0 (the write only if the device
 * below is --dev), STATUS, IMA and TABLE queries, a reload of its own
 * TABLE output (which must be accepted and print back the same), and one
 * to three messages, some mutated, with suspend/resume around key
 * messages; then it is resumed if need be and removed.
 *
 * Every case seeds its own PRNG (splitmix64) from the seed and the case
 * number, so "--seed S --first K --count 1" replays case K alone, on any
 * machine.
 *
 * Exit status: 0 if every case behaved, 1 if one did not (an unexpected
 * errno, data that did not read back, a table that does not reload, a
 * device that cannot be removed), 2 on bad arguments or setup failure,
 * 3 if the watchdog saw a step take too long (kernel hang suspected).
 */
#define _GNU_SOURCE
#include "fuzz-lib.h"

#include "veil-options.h"

#define DEV_NAME	"vfuzz"
#define KEYRING_KEY	":32:logon:veiltest:fuzz"
#define MAX_TARGETS	2
#define IO_SIZE		4096
#define MAX_EXAMPLES	4

/* ---- what the lines are built from ---- */

struct cipher_seed {
	const char *spec;
	unsigned char keysizes[4];	/* valid sizes; 0 ends the list */
};

static const struct cipher_seed ciphers[] = {
	{ "aes-xts-plain64",		{ 32, 48, 64 } },
	{ "aes-ctr-plain64",		{ 16, 24, 32 } },
	{ "serpent-cbc-essiv:sha256",	{ 16, 24, 32 } },
	{ "twofish-xts-plain64",	{ 32, 48, 64 } },
	{ "blowfish-ctr-plain64",	{ 8, 16, 32, 56 } },
	{ "capi:xts(aes)-plain64",	{ 32, 48, 64 } },
	{ "aes-cbc-plain",		{ 16, 24, 32 } },
	{ "aes-xts-plain64be",		{ 32, 48, 64 } },
	/* dm-crypt's other spellings */
	{ "aes",			{ 16, 24, 32 } },
	{ "aes:1-ctr-plain64",		{ 16, 24, 32 } },
	{ "capi:cbc(aes)-essiv:sha256",	{ 16, 24, 32 } },
	{ "aes-cbc-null",		{ 16, 24, 32 } },
	{ "capi:ctr(aes)-plain",	{ 16, 24, 32 } },
	/* IV generators and modes of other volume formats */
	{ "aes-ecb",			{ 16, 24, 32 } },
	{ "aes-cbc-benbi",		{ 16, 24, 32 } },
	{ "aes-cbc-eboiv",		{ 16, 24, 32 } },
	{ "aes-cbc-elephant",		{ 32, 64 } },
	{ "aes-cbc-lmk",		{ 16, 24, 32 } },
	{ "aes-cbc-tcw",		{ 48, 56, 64 } },
	{ "aes:2-cbc-plain64",		{ 32, 48, 64 } },
};

#define NCIPHERS ARRAY_SIZE(ciphers)

/* Specs one step from valid, each refused for its own reason (or not). */
static const char * const near_ciphers[] = {
	"aes-ctr-null", "capi:ctr(aes)-null", "aes-xts-null",
	"aes-xts-plain64:sha256", "aes-cbc-essiv", "aes-cbc-essiv:nosuch",
	"capi:ecb(aes)-plain64", "capi:xts(aes)", "aes-xts", "aes-ecb-plain64",
	"blowfish-xts-plain64", "aes:2-xts-plain64", "xts(aes)-plain64",
	"capi:-plain64", "-xts-plain64", "nosuch-xts-plain64", "aes-xts-benbi",
	"capi:nosuch(aes)-plain64", "cast6-xts-plain64", "capi:cbc(twofish)-essiv:sha256",
	"aes-cbc-plain64be", "AES-XTS-PLAIN64", "aes-xts-plain64-", "aes--plain64",
	"capi:xts(aes)-plain64:", "capi:cbc(aes)-essiv:sha256:sha256",
};

static const unsigned int wrong_keysizes[] = {
	1, 4, 8, 15, 16, 17, 24, 31, 32, 33, 48, 56, 57, 63, 64, 65, 96, 128, 129,
};

static const char * const keyring_variants[] = {
	":64:logon:veiltest:fuzz", ":16:logon:veiltest:fuzz",
	":32:user:veiltest:fuzz", ":32:logon:veiltest:missing",
	":32:logon:veiltest:fuzz:x", ":32:trusted:veiltest:fuzz",
	":32:logon:", ":32::veiltest:fuzz", "::logon:veiltest:fuzz",
	":32", ":", ":032:logon:veiltest:fuzz", ":+32:logon:veiltest:fuzz",
};

static const uint64_t edge_u64[] = {
	0, 1, 7, 8, 9, 511, 512, 4096, 65535, 4294967295ULL, 4294967296ULL,
	9223372036854775807ULL, 9223372036854775808ULL, 18446744073709551615ULL,
	18446744073709551608ULL,
};

#define NEDGE64 ARRAY_SIZE(edge_u64)

static const char * const flag_features[] = {
	VEIL_OPT_ALLOW_DISCARDS, VEIL_OPT_SAME_CPU, VEIL_OPT_HIGH_PRIORITY,
	VEIL_OPT_SUBMIT_FROM_CRYPT,
	VEIL_OPT_NO_READ_WQ, VEIL_OPT_NO_WRITE_WQ, VEIL_OPT_IV_LARGE_SECTORS,
	VEIL_OPT_NO_FANOUT, VEIL_OPT_NO_KS_AHEAD,
};

#define NFLAGS ARRAY_SIZE(flag_features)
/*
 * The options with a value: sector_size, fanout_chunk, keystream_ahead_max,
 * aead_masks, integrity, integrity_key_size.
 */
#define NVALUED 6
_Static_assert(NFLAGS + NVALUED == VEIL_MAX_OPTS,
	       "a table option of veil-options.h is missing here");

static const char * const junk_tokens[] = {
	"-", ":", "::", "\\", "\\\\", "0", "veil", "crypt", "capi:", "(", ")",
	"%s%n%x", "\xff\xfe", "allow_discards", "ALLOW_DISCARDS",
	"sector_size:", "sector_size:4096", "sector_size:512:1", "sector_size",
	"fanout_chunk:", "fanout_chunk:4096", "keystream_ahead_max:",
	"keystream_ahead_max:1048576", "no_fanout", "iv_large_sectors",
	"integrity:", "integrity:28:aead", "integrity:0:none", "integrity:481:none",
	"integrity:16:", "integrity_key_size:", "integrity_key_size:0",
	"same_cpu_crypt", "no_keystream_ahead", "no_fanout_please",
	KEYRING_KEY, ":32:user:veiltest:fuzz", "7:0", "0:0", "/dev/null",
	"/dev/loop0", "/dev/mapper/control", "/dev/mapper/" DEV_NAME,
	"aes-xts-plain64", "aes-ctr-null", "blowfish-xts-plain64",
	"capi:xts(aes)-essiv:sha256", "aes-xts-essiv:", "aes-cbc-essiv:nosuch",
};

#define NJUNK ARRAY_SIZE(junk_tokens)

static const char junk_chars[] =
	" \t\\:-()[],.%#!$0123456789abcdefxyzXYZ_\x01\x7f\x80\xff\n";

struct env {
	const char *dev_path;
	char dev_majmin[32];
	dev_t dev_rdev;
	uint64_t sectors;
};

/* ---- a valid table line ---- */

static unsigned int pick_keysize(const struct cipher_seed *c)
{
	unsigned int n = 0;

	while (n < 4 && c->keysizes[n])
		n++;
	return c->keysizes[rnd(n)];
}

static char *gen_key(const struct cipher_seed *c)
{
	unsigned int r = rnd(100);

	if (r < 55)
		return hexkey(pick_keysize(c), false);
	if (r < 70)
		return xstrdup(KEYRING_KEY);	/* 32 bytes suit every seed */
	if (r < 80)
		return hexkey(wrong_keysizes[rnd(ARRAY_SIZE(wrong_keysizes))],
			      false);
	if (r < 90)
		return xstrdup(keyring_variants[rnd(ARRAY_SIZE(keyring_variants))]);
	return hexkey(pick_keysize(c), true);
}

static char *pow2_value(const char *name)
{
	return xasprintf("%s:%u", name, 4096u << rnd(9));
}

/*
 * The fields of a valid line, as tokens: cipher key iv_offset device
 * offset [count features...]. The target length goes to *len.
 */
static void gen_seed(const struct env *e, struct toks *tk, uint64_t *len)
{
	const struct cipher_seed *c = &ciphers[rnd(NCIPHERS)];
	bool used[NFLAGS + NVALUED] = { false };
	struct toks feat = { 0 };
	unsigned int unit = 1, nfeat = 0, i;
	uint64_t off, ivoff;

	/* Features first: the sector size decides the alignments. */
	if (chance(50))
		nfeat = 1 + rnd(5);
	for (i = 0; i < nfeat; i++) {
		unsigned int k = rnd(NFLAGS + NVALUED);
		char *f;

		if (used[k])
			continue;
		used[k] = true;
		if (k < NFLAGS) {
			f = xstrdup(flag_features[k]);
		} else if (k == NFLAGS) {
			unit = 1u << rnd(4);
			f = xasprintf(VEIL_OPTV_SECTOR_SIZE ":%u", unit * 512);
		} else if (k == NFLAGS + 1) {
			f = pow2_value(VEIL_OPTV_FANOUT_CHUNK);
		} else if (k == NFLAGS + 2) {
			f = pow2_value(VEIL_OPTV_KS_AHEAD_MAX);
		} else if (k == NFLAGS + 3) {
			f = xasprintf(VEIL_OPTV_AEAD_MASKS ":%u", rnd(5000));
		} else if (k == NFLAGS + 4) {
			/* No dm-integrity below: refused unless "none". */
			f = xasprintf(VEIL_OPTV_INTEGRITY ":%u:%s", 1 + rnd(480),
				      chance(50) ? VEIL_INTEGRITY_NONE :
						   VEIL_INTEGRITY_AEAD);
		} else {
			f = xasprintf(VEIL_OPTV_INTEGRITY_KEY_SIZE ":%u",
				      1 + rnd(64));
		}
		if (chance(5)) {
			char *p;

			for (p = f; *p && *p != ':'; p++)
				*p = toupper((unsigned char)*p);
		}
		tok_insert(&feat, rnd(feat.n + 1), f);
	}

	/* Geometry inside the device, the length a whole number of sectors. */
	gen_geometry(e->sectors, unit, &off, len, &ivoff);

	tok_add(tk, xstrdup(c->spec));
	tok_add(tk, gen_key(c));
	tok_add(tk, xasprintf("%" PRIu64, ivoff));
	tok_add(tk, xstrdup(chance(50) ? e->dev_path : e->dev_majmin));
	tok_add(tk, xasprintf("%" PRIu64, off));
	if (feat.n) {
		tok_add(tk, xasprintf("%d", feat.n));
		for (i = 0; i < (unsigned int)feat.n; i++)
			tok_add(tk, feat.t[i]);
		feat.n = 0;
	}
}

/* ---- mutations ---- */

enum mut_op {
	M_DROP, M_DUP, M_SWAP, M_EDGE_TOKEN, M_EDGE_DIGITS, M_EDGE_DIGITS2,
	M_FEATCOUNT, M_INSERT_FEAT, M_EMPTY, M_OVERLONG, M_CROSS, M_JUNK_TOKEN,
	M_STARTLEN, M_STARTLEN2,
	/* byte level, on the joined line */
	M_TRUNC, M_BYTE_SET, M_BYTE_INS, M_BYTE_DEL,
	M_NOPS
};

/* @n copies of @c, then @suffix, all after @prefix. */
static char *run_of(const char *prefix, char c, size_t n, const char *suffix)
{
	char *s = xmalloc(n + 1), *p;

	memset(s, c, n);
	s[n] = '\0';
	p = xasprintf("%s%s%s", prefix, s, suffix);
	free(s);
	return p;
}

static char *overlong(void)
{
	char *s;

	switch (rnd(6)) {
	case 0:		/* a huge number */
		s = run_of("", '0', 20 + rnd(400), "");
		for (char *p = s; *p; p++)
			*p = (p == s ? '1' : '0') + rnd(p == s ? 9 : 10);
		return s;
	case 1:
		return run_of("", 'a', 100 + rnd(8000), "");
	case 2:		/* a hex key far over the limit */
		return hexkey(VEIL_MAX_KEY_SIZE + 1 + rnd(600), false);
	case 3:
		return run_of("sector_size:", '9', 50 + rnd(300), "");
	case 4:		/* a keyring description past the key API's limit */
		return run_of(":32:logon:veiltest:", 'x', 4000 + rnd(200), "");
	default:	/* a path past PATH_MAX */
		return run_of("/dev/", 'd', 4000 + rnd(1000), "");
	}
}

static char *random_feature(void)
{
	switch (rnd(6)) {
	case 0:
		return xasprintf(VEIL_OPTV_SECTOR_SIZE ":%s", edge_number());
	case 4:
		return xasprintf(VEIL_OPTV_AEAD_MASKS ":%s", edge_number());
	case 1:
		return xasprintf(VEIL_OPTV_FANOUT_CHUNK ":%s", edge_number());
	case 2:
		return xasprintf(VEIL_OPTV_KS_AHEAD_MAX ":%s", edge_number());
	case 3:
		return xstrdup(junk_tokens[rnd(NJUNK)]);
	default:
		return xstrdup(flag_features[rnd(NFLAGS)]);
	}
}

struct line {
	uint64_t start, len;
	struct toks tk;
	char *params;
};

static void mutate_tokens(const struct env *e, struct line *l, enum mut_op op)
{
	static const enum tok_op basic[M_NOPS] = {
		[M_DROP] = TOK_DROP, [M_DUP] = TOK_DUP, [M_SWAP] = TOK_SWAP,
		[M_EDGE_TOKEN] = TOK_EDGE, [M_EDGE_DIGITS] = TOK_DIGITS,
		[M_EDGE_DIGITS2] = TOK_DIGITS,
	};
	struct toks *tk = &l->tk;
	int i = tk->n ? (int)rnd(tk->n) : 0;

	switch (op) {
	case M_DROP:
	case M_DUP:
	case M_SWAP:
	case M_EDGE_TOKEN:
	case M_EDGE_DIGITS:
	case M_EDGE_DIGITS2:
		tok_mutate(tk, i, basic[op]);
		break;
	case M_FEATCOUNT:
		if (tk->n > 5) {
			long n = atol(tk->t[5]);

			switch (rnd(4)) {
			case 0:
				tok_set(tk, 5, xasprintf("%ld", n + 1));
				break;
			case 1:
				tok_set(tk, 5, xasprintf("%ld", n - 1));
				break;
			case 2:
				tok_set(tk, 5, xasprintf("%ld", n + 1 + rnd(20)));
				break;
			default:
				tok_set(tk, 5, xstrdup(edge_number()));
				break;
			}
		} else {
			tok_add(tk, xstrdup(edge_number()));
		}
		break;
	case M_INSERT_FEAT:
		if (tk->n > 5) {
			tok_insert(tk, 6 + rnd(tk->n - 5), random_feature());
			if (chance(60))
				tok_set(tk, 5, xasprintf("%d", atoi(tk->t[5]) + 1));
		} else if (chance(80)) {
			tok_add(tk, xstrdup("1"));
			tok_add(tk, random_feature());
		} else {
			tok_insert(tk, rnd(tk->n + 1), random_feature());
		}
		break;
	case M_EMPTY:
		if (tk->n)
			tok_set(tk, i, xstrdup(chance(50) ? "" : "-"));
		break;
	case M_OVERLONG:
		if (tk->n)
			tok_set(tk, i, overlong());
		break;
	case M_CROSS: {
		/* The same field from another seed: mismatched keys, sizes... */
		struct toks other = { 0 };
		uint64_t len;

		gen_seed(e, &other, &len);
		if (tk->n && i == 0 && chance(50))
			tok_set(tk, 0, xstrdup(near_ciphers[rnd(ARRAY_SIZE(near_ciphers))]));
		else if (tk->n && i < other.n)
			tok_set(tk, i, xstrdup(other.t[i]));
		else
			l->len = len;
		tok_free(&other);
		break;
	}
	case M_JUNK_TOKEN:
		tok_insert(tk, rnd(tk->n + 1), xstrdup(junk_tokens[rnd(NJUNK)]));
		break;
	case M_STARTLEN:
	case M_STARTLEN2:
		switch (rnd(8)) {
		case 0:
			l->start = chance(50) ? 1 + rnd(16) : edge_u64[rnd(NEDGE64)];
			break;
		case 1:
			l->len = edge_u64[rnd(NEDGE64)];
			break;
		case 2:
			l->len += 1;
			break;
		case 3:
			l->len -= 1;
			break;
		case 4:
			l->len *= 2;
			break;
		case 5:
			l->len = e->sectors + rnd(16);
			break;
		case 6:
			l->len = 1 + rnd(16);
			break;
		default:
			l->len = rnd64() >> rnd(64);
			break;
		}
		break;
	default:
		break;
	}
}

static void mutate_bytes(struct line *l, enum mut_op op)
{
	size_t len = strlen(l->params), pos = len ? rnd(len) : 0, n, i;
	char *s;

	switch (op) {
	case M_TRUNC:
		l->params[pos] = '\0';
		break;
	case M_BYTE_SET:
		if (len)
			l->params[pos] = junk_chars[rnd(sizeof(junk_chars) - 1)];
		break;
	case M_BYTE_INS:
		n = 1 + rnd(8);
		s = xmalloc(len + n + 1);
		memcpy(s, l->params, pos);
		for (i = 0; i < n; i++)
			s[pos + i] = junk_chars[rnd(sizeof(junk_chars) - 1)];
		memcpy(s + pos + n, l->params + pos, len - pos + 1);
		free(l->params);
		l->params = s;
		break;
	case M_BYTE_DEL:
		n = 1 + rnd(16);
		if (pos + n > len)
			n = len - pos;
		memmove(l->params + pos, l->params + pos + n, len - pos - n + 1);
		break;
	default:
		break;
	}
}

/*
 * Up to three mutations; the token-level ones before the line is joined.
 * A fifth of the lines stay valid: an accepted line costs ten refused ones
 * (removing a device is the slowest step).
 */
static int mutate_line(const struct env *e, struct line *l)
{
	enum mut_op ops[3];
	int n = 0, i;

	if (chance(20))
		n = 0;
	else
		n = 1 + (chance(60) ? 0 : chance(60) ? 1 : 2);
	for (i = 0; i < n; i++)
		ops[i] = rnd(M_NOPS);
	for (i = 0; i < n; i++)
		if (ops[i] < M_TRUNC)
			mutate_tokens(e, l, ops[i]);
	l->params = tok_join(&l->tk);
	for (i = 0; i < n; i++)
		if (ops[i] >= M_TRUNC)
			mutate_bytes(l, ops[i]);
	return n;
}

/* ---- messages ---- */

struct msg {
	char *text;
	uint64_t sector;
};

static const char * const near_messages[] = {
	"key", "key set", "key wipe now", "key wipe wipe", "stats",
	"stats reset now", "KEY WIPE", "Stats Reset", "key set -",
	"key set :0:logon:veiltest:fuzz", "key set zz", "key set 0",
	"key set :64:logon:veiltest:fuzz", "key set :32:user:veiltest:fuzz",
	"key set :32:logon:veiltest:missing", "key set :32:logon:",
	"key reset", "stats wipe", "key set " KEYRING_KEY " extra",
	"wipe key", "set key", "key\tset\t" KEYRING_KEY,
};

static void gen_message(struct msg *m, unsigned int keysize, uint64_t len)
{
	struct line l = { 0 };
	char *key = NULL, *p;
	unsigned int r = rnd(100), i, n;

	if (r < 20) {
		m->text = xstrdup("stats reset");
	} else if (r < 40) {
		m->text = xstrdup("key wipe");
	} else if (r < 65) {
		key = hexkey(keysize, chance(10));
		m->text = xasprintf("key set %s", key);
	} else if (r < 75) {
		m->text = xstrdup("key set " KEYRING_KEY);
	} else if (r < 82) {
		key = hexkey(wrong_keysizes[rnd(ARRAY_SIZE(wrong_keysizes))], false);
		m->text = xasprintf("key set %s", key);
	} else {
		m->text = xstrdup(near_messages[rnd(ARRAY_SIZE(near_messages))]);
	}
	free(key);

	if (chance(35)) {
		tok_split(&l.tk, m->text);
		free(m->text);
		n = 1 + rnd(2);
		l.len = len;
		for (i = 0; i < n; i++) {
			enum mut_op op = rnd(M_NOPS);

			/* start/len and the table's fields mean nothing here */
			if (op == M_STARTLEN || op == M_STARTLEN2 ||
			    op == M_CROSS || op == M_FEATCOUNT)
				op = M_JUNK_TOKEN;
			if (op < M_TRUNC)
				mutate_tokens(NULL, &l, op);
		}
		l.params = tok_join(&l.tk);
		for (i = 0; i < n; i++)
			if (chance(30))
				mutate_bytes(&l, M_TRUNC + rnd(4));
		tok_free(&l.tk);
		m->text = l.params;
	}
	/* '@' messages are dm core's (dm-stats), not the target's. */
	for (p = m->text; *p == ' ' || *p == '\t' || *p == '\n'; p++)
		;
	if (*p == '@')
		*p = '#';

	m->sector = 0;
	if (chance(4))
		m->sector = chance(50) ? len + rnd(4) : edge_u64[rnd(NEDGE64)];
}

/* ---- libdevmapper ---- */

static struct dm_task *task(int type)
{
	return task_of(DEV_NAME, type);
}

static int run_simple(int type)
{
	return run_simple_of(DEV_NAME, type);
}

/*
 * What a refused table may fail with: a bad field (EINVAL), a missing
 * cipher (ENOENT), a key not in the keyring or unusable (ENOKEY,
 * EKEY*), and whatever opening an arbitrary block device can give, since
 * mutated paths and major:minor pairs name other devices: none there
 * (ENODEV, ENXIO, ENOENT), numbers too big for a dev_t (EOVERFLOW), a
 * CD drive without a disc (ENOMEDIUM) or read-only (EROFS, EACCES),
 * held (EBUSY), a path too long (ENAMETOOLONG). ENOMEM for absurd sizes.
 * Anything else (EFAULT, EIO, EPERM, ENOTTY, EAGAIN...) is reported.
 */
static bool normal_load_errno(int e)
{
	switch (e) {
	case EINVAL: case ENOENT: case ENODEV: case ENXIO: case ENOTBLK:
	case EOVERFLOW: case ENOMEDIUM: case EROFS: case EACCES: case EBUSY:
	case ENAMETOOLONG: case ENOMEM: case ENOKEY: case EKEYREVOKED:
	case EKEYEXPIRED: case EKEYREJECTED: case EOPNOTSUPP:
		return true;
	}
	return false;
}

/* A refused message: bad words (EINVAL) or a key set whose key is not there. */
static bool normal_msg_errno(int e)
{
	switch (e) {
	case EINVAL: case ENOKEY: case EKEYREVOKED: case EKEYEXPIRED:
	case EKEYREJECTED: case EACCES: case ENOMEM:
		return true;
	}
	return false;
}

/* ---- the state of the run ---- */

static struct {
	unsigned long cases, accepted, refused, io_errors, messages;
	unsigned long mutated_accepted, problems, resume_refused;
	unsigned long by_errno[160];
} st;

struct example {
	char *text;
	int err;
};

static struct example ex_refused[MAX_EXAMPLES], ex_accepted[MAX_EXAMPLES],
		      ex_mut_accepted[MAX_EXAMPLES];

static char *table_text(const struct line *l, int n)
{
	char *s = xstrdup(""), *t;
	int i;

	for (i = 0; i < n; i++) {
		t = xasprintf("%s%s%" PRIu64 " %" PRIu64 " veil %s", s,
			      i ? " ; " : "", l[i].start, l[i].len,
			      l[i].params);
		free(s);
		s = t;
	}
	return s;
}

/* The first few of each kind; refused ones one per errno. */
static void keep_example(struct example *ex, const char *text, int err)
{
	int i;

	for (i = 0; i < MAX_EXAMPLES; i++) {
		if (!ex[i].text) {
			ex[i].text = xstrdup(text);
			ex[i].err = err;
			return;
		}
		if (err && ex[i].err == err)
			return;
	}
}

static void problem(const char *what, const char *text, int err)
{
	st.problems++;
	printf("PROBLEM: case %lu (reproduce: --seed %" PRIu64
	       " --first %lu --count 1): %s", cur_case, g_seed, cur_case, what);
	if (err)
		printf(": %s", errname(err));
	if (lastlog[0])
		printf(" [libdm: %s]", lastlog);
	printf("\n  table: ");
	print_escaped(stdout, text, 600);
	printf("\n");
	fflush(stdout);
}

/* ---- one case ---- */

static unsigned char *wbuf, *rbuf;

static bool deps_only(const struct env *e)
{
	struct dm_task *dmt = task(DM_DEVICE_DEPS);
	struct dm_deps *deps;
	bool ok = false;
	uint32_t i;

	deps = run(dmt) ? NULL : dm_task_get_deps(dmt);
	if (deps && deps->count) {
		ok = true;
		for (i = 0; i < deps->count; i++)
			if (major(deps->device[i]) != major(e->dev_rdev) ||
			    minor(deps->device[i]) != minor(e->dev_rdev))
				ok = false;
	}
	dm_task_destroy(dmt);
	return ok;
}

static bool dev_exists(void)
{
	struct dm_task *dmt = task(DM_DEVICE_INFO);
	struct dm_info info;
	bool exists;

	exists = !run(dmt) && dm_task_get_info(dmt, &info) && info.exists;
	dm_task_destroy(dmt);
	return exists;
}

/* The node of vfuzz: /dev/mapper/vfuzz, made here if nobody made it. */
static bool dev_node(char *path, size_t size)
{
	return dev_node_of(DEV_NAME, path, size);
}

/*
 * Whether two targets map overlapping stretches of one device, as the
 * kernel prints the table: then a write through one shows through the
 * other, and what reads back is not what was written.
 */
static bool targets_alias(void)
{
	struct dm_task *dmt = task(DM_DEVICE_TABLE);
	unsigned long long off[MAX_TARGETS], len[MAX_TARGETS];
	char dev[MAX_TARGETS][32], *type, *params;
	uint64_t start, length;
	void *next = NULL;
	bool alias = false;
	int n = 0, i, j;

	if (run(dmt)) {
		dm_task_destroy(dmt);
		return true;
	}
	do {
		next = dm_get_next_target(dmt, next, &start, &length, &type,
					  &params);
		if (!type || n == MAX_TARGETS ||
		    sscanf(params, "%*s %*s %*s %31s %llu", dev[n], &off[n]) != 2) {
			alias = true;
			break;
		}
		len[n++] = length;
	} while (next);
	for (i = 0; i < n; i++)
		for (j = i + 1; j < n; j++)
			if (!strcmp(dev[i], dev[j]) && off[i] < off[j] + len[j] &&
			    off[j] < off[i] + len[i])
				alias = true;
	dm_task_destroy(dmt);
	return alias;
}

/* 4 KiB (or the device, if smaller) written and read back at sector 0. */
static void do_io(const struct env *e, int nt, const char *text)
{
	char path[256];
	uint64_t size = 0;
	ssize_t n, w = 0, r;
	bool write_ok;
	size_t i;
	int fd;

	step("open");
	if (!dev_node(path, sizeof(path))) {
		problem("no device node", text, errno);
		return;
	}
	write_ok = deps_only(e);	/* never write to a device not ours */
	fd = open(path, (write_ok ? O_RDWR : O_RDONLY) | O_DIRECT);
	if (fd < 0) {
		problem("cannot open the mapped device", text, errno);
		return;
	}
	if (ioctl(fd, BLKGETSIZE64, &size) || !size) {
		close(fd);
		return;
	}
	n = size < IO_SIZE ? size : IO_SIZE;
	for (i = 0; i < (size_t)n; i++)
		wbuf[i] = rnd(256);
	if (write_ok) {
		step("write");
		w = pwrite(fd, wbuf, n, 0);
		if (w != n)
			st.io_errors++;
	}
	step("read");
	memset(rbuf, 0, n);
	r = pread(fd, rbuf, n, 0);
	if (r != n)
		st.io_errors++;
	if (verbose && (w < 0 || r < 0))
		printf("  I/O error: %s\n", strerror(errno));
	if (write_ok && w == n && r == n && memcmp(wbuf, rbuf, n) &&
	    (nt == 1 || !targets_alias()))
		problem("data read back differs from data written", text, 0);
	close(fd);
}

static unsigned int table_keysize(const char *params)
{
	const char *k = strchr(params, ' '), *end;

	if (!k)
		return 32;
	k++;
	if (*k == ':')
		return strtoul(k + 1, NULL, 10);
	end = strchr(k, ' ');
	return (end ? (size_t)(end - k) : strlen(k)) / 2;
}

/*
 * The table as the kernel prints it must load again and print the same:
 * docs/table-line.md promises "a line that the target accepts unchanged".
 */
static unsigned int check_round_trip(const char *text)
{
	struct dm_task *dmt = task(DM_DEVICE_TABLE), *re, *q;
	uint64_t start, length;
	char *type, *params, *first = NULL;
	void *next = NULL;
	unsigned int keysize = 32;
	int err;

	step("table");
	err = run(dmt);
	if (err) {
		problem("TABLE query failed", text, err);
		dm_task_destroy(dmt);
		return keysize;
	}
	re = task(DM_DEVICE_RELOAD);
	dm_task_secure_data(re);
	do {
		next = dm_get_next_target(dmt, next, &start, &length, &type,
					  &params);
		if (!type)
			break;
		if (!first) {
			first = xstrdup(params);
			keysize = table_keysize(params);
		}
		dm_task_add_target(re, start, length, type, params);
	} while (next);

	step("reload own table");
	err = run(re);
	if (err) {
		char *t = xasprintf("%s\n  printed: %s", text, first ? first : "");

		problem("the table the kernel printed does not load again", t, err);
		free(t);
		goto out;
	}
	q = task(DM_DEVICE_TABLE);
	dm_task_query_inactive_table(q);
	step("table inactive");
	err = run(q);
	if (err) {
		problem("TABLE query of the inactive table failed", text, err);
	} else {
		void *n1 = NULL, *n2 = NULL;
		uint64_t s1, l1, s2, l2;
		char *t1, *p1, *t2, *p2;

		do {
			n1 = dm_get_next_target(dmt, n1, &s1, &l1, &t1, &p1);
			n2 = dm_get_next_target(q, n2, &s2, &l2, &t2, &p2);
			if (s1 != s2 || l1 != l2 || !t1 != !t2 ||
			    (t1 && (strcmp(t1, t2) || strcmp(p1, p2)))) {
				char *t = xasprintf("%s\n  first:  %s\n  second: %s",
						    text, p1 ? p1 : "", p2 ? p2 : "");

				problem("the reloaded table prints differently", t, 0);
				free(t);
				break;
			}
		} while (n1 && n2);
	}
	dm_task_destroy(q);
	step("clear");
	err = run_simple(DM_DEVICE_CLEAR);
	if (err)
		problem("clearing the inactive table failed", text, err);
out:
	dm_task_destroy(re);
	dm_task_destroy(dmt);
	free(first);
	return keysize;
}

static void check_status(const char *text)
{
	struct dm_task *dmt;
	int err, ima;

	for (ima = 0; ima < 2; ima++) {
		step(ima ? "status ima" : "status");
		dmt = task(DM_DEVICE_STATUS);
		if (ima)
			dm_task_ima_measurement(dmt);
		err = run(dmt);
		if (err)
			problem(ima ? "IMA status query failed" :
				"STATUS query failed", text, err);
		dm_task_destroy(dmt);
	}
}

enum key_state { KEY_VALID, KEY_WIPED, KEY_UNKNOWN };

static bool is_hex_key(const char *s, unsigned int keysize)
{
	size_t len = strlen(s), i;

	if (len != 2 * keysize)
		return false;
	for (i = 0; i < len; i++)
		if (!isxdigit((unsigned char)s[i]))
			return false;
	return true;
}

/*
 * Words we split as dm_split_args() does: no escapes, and no byte the
 * kernel's isspace() takes for a space but ours does not (it counts 0xa0).
 */
static bool plain_words(const char *s)
{
	for (; *s; s++)
		if (*s == '\\' ||
		    (*s != ' ' && *s != '\t' && !isgraph((unsigned char)*s)))
			return false;
	return true;
}

/*
 * Send one message and check what the target must do with the clean ones;
 * *ks is the key state of the target the message goes to.
 */
static void send_message(struct msg *m, bool suspended, enum key_state *ks,
			 unsigned int keysize, uint64_t total, const char *text)
{
	struct dm_task *dmt = task(DM_DEVICE_TARGET_MSG);
	struct toks w = { 0 };
	bool clean, is_key, is_wipe, is_set, set_ok_expected = false;
	char *desc;
	int err;

	dm_task_set_sector(dmt, m->sector);
	dm_task_set_message(dmt, m->text);
	dm_task_secure_data(dmt);
	step("message");
	err = run(dmt);
	dm_task_destroy(dmt);
	st.messages++;

	tok_split(&w, m->text);
	clean = plain_words(m->text) && m->sector < total;
	is_key = w.n >= 1 && !strcasecmp(w.t[0], "key");
	is_wipe = w.n == 2 && is_key && !strcasecmp(w.t[1], "wipe");
	is_set = w.n == 3 && is_key && !strcasecmp(w.t[1], "set");
	if (is_set)
		set_ok_expected = is_hex_key(w.t[2], keysize) ||
				  (keysize == 32 && !strcmp(w.t[2], KEYRING_KEY));

	desc = xasprintf("%s\n  message (sector %" PRIu64 ", %s): %s", text,
			 m->sector, suspended ? "suspended" : "active", m->text);
	if (verbose)
		printf("  message %s -> %s\n", m->text, err ? errname(err) : "ok");
	if (err && !normal_msg_errno(err))
		problem("message failed with an unexpected errno", desc, err);
	if (clean) {
		if (w.n == 2 && !strcasecmp(w.t[0], "stats") &&
		    !strcasecmp(w.t[1], "reset") && err)
			problem("stats reset refused", desc, err);
		if (is_key && !suspended && !err)
			problem("key message accepted on an active device", desc, 0);
		if (is_key && !suspended && err && err != EINVAL)
			problem("key message on an active device not EINVAL", desc, err);
		if (suspended && is_wipe && err)
			problem("key wipe refused on a suspended device", desc, err);
		if (suspended && set_ok_expected && err)
			problem("key set of a right-sized key refused", desc, err);
	}
	/* A failed key set may leave the target without a key. */
	if (suspended && is_key) {
		if (!clean)
			*ks = KEY_UNKNOWN;
		else if (err && (is_set || is_wipe))
			*ks = KEY_UNKNOWN;
		else if (!err && is_wipe)
			*ks = KEY_WIPED;
		else if (!err && is_set)
			*ks = KEY_VALID;
	}
	free(desc);
	tok_free(&w);
}

/*
 * Resume and check it against the key states of the targets: refused
 * (EAGAIN) exactly when one has no key; then every target gets a key and
 * the resume must work. Returns true if the device runs again.
 */
static bool resume_checked(enum key_state *ks, const struct line *l, int nt,
			   unsigned int keysize, const char *text)
{
	bool all_valid = true, one_wiped = false;
	struct msg m = { 0 };
	char *key;
	int err, i;

	for (i = 0; i < nt; i++) {
		all_valid &= ks[i] == KEY_VALID;
		one_wiped |= ks[i] == KEY_WIPED;
	}
	step("resume");
	err = run_simple(DM_DEVICE_RESUME);
	if (!err) {
		if (one_wiped)
			problem("resumed after key wipe, without a key", text, 0);
		goto valid;
	}
	if (err != EAGAIN || all_valid) {
		problem("resume failed", text, err);
		return false;
	}
	for (i = 0; i < nt; i++) {
		key = hexkey(keysize, false);
		m.text = xasprintf("key set %s", key);
		m.sector = l[i].start;
		free(key);
		send_message(&m, true, &ks[i], keysize, UINT64_MAX, text);
		free(m.text);
	}
	step("resume after key set");
	err = run_simple(DM_DEVICE_RESUME);
	if (err) {
		problem("resume after key set failed", text, err);
		return false;
	}
valid:
	for (i = 0; i < nt; i++)
		ks[i] = KEY_VALID;
	return true;
}

static void run_messages(const struct env *e, const struct line *l, int nt,
			 unsigned int keysize, const char *text)
{
	enum key_state ks[MAX_TARGETS] = { KEY_VALID, KEY_VALID };
	bool suspended = false, keymsg = false;
	uint64_t total = l[nt - 1].start + l[nt - 1].len;
	unsigned int n = 1 + rnd(3), i;
	int err;

	for (i = 0; i < n; i++) {
		struct msg m;
		bool is_key;
		char *p;

		gen_message(&m, keysize, total);
		if (nt > 1 && chance(30))
			m.sector = l[1].start;
		for (p = m.text; *p == ' ' || *p == '\t'; p++)
			;
		is_key = !strncasecmp(p, "key", 3);
		keymsg |= is_key;
		if (is_key && !suspended && chance(85)) {
			step("suspend");
			err = run_simple(DM_DEVICE_SUSPEND);
			if (err)
				problem("suspend failed", text, err);
			else
				suspended = true;
		} else if (!is_key && suspended && chance(30)) {
			suspended = !resume_checked(ks, l, nt, keysize, text);
		}
		send_message(&m, suspended,
			     &ks[nt > 1 && m.sector >= l[1].start ? 1 : 0],
			     keysize, total, text);
		free(m.text);
	}
	if (suspended && !resume_checked(ks, l, nt, keysize, text))
		return;
	/* After a key change the device must still read what it writes. */
	if (keymsg)
		do_io(e, nt, text);
}

static bool remove_device(const char *text)
{
	int err;

	step("remove");
	err = run_simple(DM_DEVICE_REMOVE);
	if (err) {
		problem("cannot remove the device", text, err);
		return false;
	}
	if (dev_exists()) {
		problem("device still there after remove", text, 0);
		return false;
	}
	return true;
}

static bool have_dev, create_each;

/* The device exists and has neither a live nor an inactive table. */
static bool dev_empty(const char *text)
{
	struct dm_task *dmt = task(DM_DEVICE_INFO);
	struct dm_info info;
	bool empty;

	step("info");
	empty = !run(dmt) && dm_task_get_info(dmt, &info) && info.exists &&
		!info.live_table && !info.inactive_table;
	dm_task_destroy(dmt);
	if (!empty)
		problem("a refused table left a table behind", text, 0);
	return empty;
}

/* Returns false if the run cannot go on (a device is stuck). */
static bool run_case(const struct env *e, unsigned long idx)
{
	struct line l[MAX_TARGETS] = { 0 };
	struct dm_task *dmt;
	int nt = 1, nmut, err, i;
	unsigned int keysize;
	bool ok = true, at_resume = false;
	char *text;

	cur_case = idx;
	step("generate");
	seed_case(g_seed, idx);
	gen_seed(e, &l[0].tk, &l[0].len);
	nmut = mutate_line(e, &l[0]);
	/*
	 * Sometimes a second target after the first (start > 0 for veil),
	 * on the next stretch of the device: the halves of the old length,
	 * multiples of 8 sectors so that any sector size divides them.
	 */
	if (chance(4) && l[0].len >= 16 && l[0].tk.n > 4) {
		unsigned long long off = strtoull(l[0].tk.t[4], NULL, 10);

		l[0].len = l[0].len / 16 * 8;
		l[1].start = l[0].start + l[0].len;
		l[1].len = l[0].len;
		tok_set(&l[0].tk, 4, xasprintf("%llu", off + l[0].len));
		l[1].params = tok_join(&l[0].tk);
		nt = 2;
	}
	text = table_text(l, nt);
	snprintf(cur_desc, sizeof(cur_desc), "%s", text);
	st.cases++;
	if (verbose || dry_run) {
		printf("case %lu: ", idx);
		print_escaped(stdout, text, dry_run ? 100000 : 300);
		printf("\n");
	}
	if (dry_run) {
		struct msg m;

		gen_message(&m, 32, l[0].len);
		printf("  message (sector %" PRIu64 "): ", m.sector);
		print_escaped(stdout, m.text, 300);
		printf("\n");
		free(m.text);
		goto out;
	}

	/*
	 * A refused table never reaches a device of its own, so refused
	 * lines share one empty device: creating and removing it costs more
	 * than the load itself (--create-each does it anyway).
	 */
	if (!have_dev) {
		step("create");
		err = run_simple(DM_DEVICE_CREATE);
		if (err) {
			problem("cannot create the empty device", text, err);
			ok = false;
			goto out;
		}
		have_dev = true;
	}

	step("load");
	dmt = task(DM_DEVICE_RELOAD);
	dm_task_secure_data(dmt);
	for (i = 0; i < nt; i++)
		dm_task_add_target(dmt, l[i].start, l[i].len, "veil", l[i].params);
	err = run(dmt);
	dm_task_destroy(dmt);
	if (!err) {
		step("resume new");
		err = run_simple(DM_DEVICE_RESUME);
		at_resume = err;
		st.resume_refused += at_resume;
	}
	if (err) {
		if (!normal_load_errno(err))
			problem("table refused with an unexpected errno", text, err);
		st.refused++;
		st.by_errno[err > 0 && err < 160 ? err : 0]++;
		keep_example(ex_refused, text, err);
		if (verbose)
			printf("  refused: %s\n", errname(err));
		/* Nothing of a refused table may stay. */
		if (create_each || at_resume || !dev_empty(text)) {
			ok = remove_device(text);
			have_dev = !ok;
		}
		goto out;
	}

	st.accepted++;
	if (nmut) {
		st.mutated_accepted++;
		keep_example(ex_mut_accepted, text, 0);
	} else {
		keep_example(ex_accepted, text, 0);
	}
	if (verbose)
		printf("  accepted\n");
	do_io(e, nt, text);
	check_status(text);
	keysize = check_round_trip(text);
	run_messages(e, l, nt, keysize, text);
	ok = remove_device(text);
	have_dev = !ok;
out:
	for (i = 0; i < nt; i++) {
		tok_free(&l[i].tk);
		free(l[i].params);
	}
	free(text);
	return ok;
}

static void print_examples(const char *what, struct example *ex)
{
	int i;

	for (i = 0; i < MAX_EXAMPLES && ex[i].text; i++) {
		printf("  %s", what);
		if (ex[i].err)
			printf(" (%s)", errname(ex[i].err));
		printf(": ");
		print_escaped(stdout, ex[i].text, 240);
		printf("\n");
	}
}

static void usage(void)
{
	fprintf(stderr,
		"usage: table-fuzz --seed N --count N --dev DEVICE [--sectors S]\n"
		"                  [--first K] [--create-each] [--verbose] [--dry-run]\n"
		"                  [--watchdog SECS]\n");
	exit(2);
}

int main(int argc, char **argv)
{
	unsigned long count = 1000, first = 0, idx, report;
	struct env e = { .dev_path = NULL };
	struct stat sb;
	pthread_t wd;
	double t0;
	int i, fd;

	for (i = 1; i < argc; i++) {
		const char *a = argv[i];

		if (common_arg(argc, argv, &i, &count, &first))
			continue;
		if (!strcmp(a, "--create-each")) {
			create_each = true;
			continue;
		}
		if (i + 1 >= argc)
			usage();
		if (!strcmp(a, "--dev"))
			e.dev_path = argv[++i];
		else if (!strcmp(a, "--sectors"))
			e.sectors = strtoull(argv[++i], NULL, 0);
		else
			usage();
	}
	if (!e.dev_path) {
		if (!dry_run)
			usage();
		e.dev_path = "/dev/loop0";
		e.dev_rdev = makedev(7, 0);
		if (!e.sectors)
			e.sectors = 16384;
	} else {
		if (stat(e.dev_path, &sb) || !S_ISBLK(sb.st_mode))
			die("%s is not a block device", e.dev_path);
		e.dev_rdev = sb.st_rdev;
		if (!e.sectors) {
			uint64_t bytes = 0;

			fd = open(e.dev_path, O_RDONLY);
			if (fd < 0 || ioctl(fd, BLKGETSIZE64, &bytes))
				die("cannot read the size of %s", e.dev_path);
			close(fd);
			e.sectors = bytes >> 9;
		}
	}
	if (e.sectors < 16)
		die("device too small");
	snprintf(e.dev_majmin, sizeof(e.dev_majmin), "%u:%u",
		 major(e.dev_rdev), minor(e.dev_rdev));

	if (posix_memalign((void **)&wbuf, 4096, IO_SIZE) ||
	    posix_memalign((void **)&rbuf, 4096, IO_SIZE))
		die("out of memory");
	dm_log_with_errno_init(quiet_log);
	dm_udev_set_sync_support(0);
	if (!dry_run && watchdog_secs &&
	    pthread_create(&wd, NULL, watchdog, NULL))
		die("cannot start the watchdog");

	printf("table-fuzz: seed %" PRIu64 ", cases %lu..%lu, %s (%s), %" PRIu64
	       " sectors\n", g_seed, first, first + count - 1, e.dev_path,
	       e.dev_majmin, e.sectors);
	fflush(stdout);
	/* A leftover from an earlier run would make every case fail. */
	if (!dry_run && dev_exists())
		die("%s exists already", DEV_NAME);

	t0 = now();
	step_t0 = t0;
	report = count >= 10 ? count / 10 : 1;
	for (idx = first; idx < first + count; idx++) {
		if (!run_case(&e, idx)) {
			printf("table-fuzz: stopping: %s cannot be created or removed\n",
			       DEV_NAME);
			break;
		}
		if (!dry_run && (idx - first + 1) % report == 0) {
			printf("table-fuzz: %lu/%lu cases, %lu accepted, %.1fs\n",
			       idx - first + 1, count, st.accepted, now() - t0);
			fflush(stdout);
		}
	}

	if (have_dev && !remove_device("(the empty device, at the end)"))
		printf("table-fuzz: %s cannot be removed\n", DEV_NAME);

	printf("table-fuzz: seed %" PRIu64 ": %lu cases, %lu accepted, %lu refused, "
	       "%lu I/O errors, %lu messages\n", g_seed, st.cases, st.accepted,
	       st.refused, st.io_errors, st.messages);
	if (!dry_run) {
		printf("table-fuzz: %.1fs; %lu accepted after mutation; %lu refused at resume;"
		       " refused by errno:", now() - t0, st.mutated_accepted,
		       st.resume_refused);
		for (i = 0; i < 160; i++)
			if (st.by_errno[i])
				printf(" %s=%lu", errname(i ? i : -1), st.by_errno[i]);
		printf("\n");
		printf("table-fuzz: seconds by step:");
		for (i = 0; i < 40 && prof[i].name; i++)
			printf(" %s=%.1f/%lu(max %.2f)", prof[i].name,
			       prof[i].secs, prof[i].n, prof[i].max);
		printf("; remove retried %lu times\n", remove_retries);
		print_examples("refused", ex_refused);
		print_examples("accepted", ex_accepted);
		print_examples("accepted after mutation", ex_mut_accepted);
	}
	if (st.problems)
		printf("table-fuzz: %lu PROBLEMS\n", st.problems);
	fflush(stdout);
	dm_lib_release();
	return st.problems ? 1 : 0;
}
