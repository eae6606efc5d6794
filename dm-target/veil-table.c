// SPDX-License-Identifier: GPL-2.0
/*
 * dm-veil table-line parsing: the cipher spec and the optional features.
 *
 * The syntax is dm-crypt's, so that a table line written for one target
 * maps the same bytes through the other:
 *
 *   cipher[:keycount]-chainmode-ivmode[:ivopts]
 *   capi:<crypto API name>-ivmode[:ivopts]
 *   [<#opts> <opt>...]   dm-crypt's options and the engine's own
 *
 * With integrity:<bytes>:aead the capi: name is an AEAD's.
 */
#include <linux/crypto.h>
#include <linux/kernel.h>
#include <linux/slab.h>
#include <linux/string.h>
#include <crypto/hash.h>

#include "dm-veil.h"
#include "veil-crypt.h"
#include "veil-integrity.h"
#include "veil-masks.h"
#include "veil-table.h"

#define VEIL_CAPI_PREFIX	"capi:"
/* The keys of an lmk table in the capi: format: loop-AES's multi-key. */
#define VEIL_LMK_KEYS		64
#define VEIL_XTS_BLOCK_SIZE	16

/*
 * Find out why "chainmode(cipher)" could not be allocated, so that the
 * table line is refused with a message that names the bad part: an unknown
 * cipher, a 64-bit block cipher under XTS, an unknown ESSIV hash, or a
 * chain mode the kernel does not have for this cipher.
 */
static char *veil_tfm_error(const char *cipher, const char *mode,
			    enum veil_iv_mode iv_mode, const char *ivopts)
{
	char probe[CRYPTO_MAX_ALG_NAME];
	struct crypto_skcipher *tfm;
	unsigned int bsize;

	if (!cipher)
		return "Error allocating crypto tfm";

	snprintf(probe, sizeof(probe), "ecb(%s)", cipher);
	tfm = crypto_alloc_skcipher(probe, 0, 0);
	if (IS_ERR(tfm))
		return "Unknown cipher";
	bsize = crypto_skcipher_blocksize(tfm);
	crypto_free_skcipher(tfm);

	if (!strcmp(mode, "xts") && bsize != VEIL_XTS_BLOCK_SIZE)
		return "XTS needs a cipher with a 128-bit block";
	if (iv_mode == VEIL_IV_ESSIV && !crypto_has_ahash(ivopts, 0, 0))
		return "Unknown ESSIV digest algorithm";
	snprintf(probe, sizeof(probe), "%s(%s)", mode, cipher);
	if (!crypto_has_skcipher(probe, 0, 0))
		return "Unsupported cipher mode";
	return "Error allocating crypto tfm";
}

/*
 * A stream cipher (block size 1: CTR under any name, ChaCha20, XCTR) XORs
 * the data with a keystream made from the key and the IV alone: sectors
 * whose keystreams share a block give away the XOR of their plaintexts.
 * CTR counts up the whole IV as one big-endian number, so the IVs that
 * keep sectors apart are those that leave the low half of the block to
 * the counter: plain and plain64 (little endian, in the high half), ESSIV
 * (a pseudo-random block per sector), and benbi, whose count of one-byte
 * blocks puts neighbouring IV sectors 512 apart, more than the 256 counter
 * blocks of a 4096-byte sector. plain64be puts the sector in the low half,
 * and ChaCha20 and XCTR take the sector as their block counter:
 * neighbouring sectors share blocks. null repeats one keystream on every
 * sector, and plain (32 bits of the sector) on a device of more than 2^32
 * IV sectors. iv_offset is a whole number of sectors, so only
 * the length decides how many IVs there are. A transform that takes no
 * key (the null cipher, block size 1 too) passes the data through: it
 * has no keystream.
 */
static int veil_check_stream_iv(struct dm_target *ti,
				const struct veil_c *vc)
{
	const char *name = crypto_tfm_alg_name(crypto_skcipher_tfm(vc->tfm));
	unsigned int shift = vc->iv_large_sectors ? vc->sector_shift : 0;
	bool ctr = strstarts(name, "ctr(") ||
		   strstarts(name, "rfc3686(ctr(") ||
		   strstarts(name, "essiv(ctr(");

	/* A transform with no key (the null cipher) hides nothing to share. */
	if (crypto_skcipher_blocksize(vc->tfm) != 1 ||
	    !crypto_skcipher_max_keysize(vc->tfm))
		return 0;
	if (vc->iv_mode == VEIL_IV_NULL) {
		ti->error = "IV null repeats one keystream on every sector of a stream cipher";
		return -EINVAL;
	}
	if (!ctr || vc->iv_mode == VEIL_IV_PLAIN64BE) {
		ti->error = "Stream cipher IV overlaps the keystream of neighbouring sectors";
		return -EINVAL;
	}
	if (vc->iv_mode == VEIL_IV_PLAIN &&
	    (ti->len - 1) >> shift > U32_MAX) {
		ti->error = "IV plain repeats the keystream beyond 2^32 sectors: use plain64";
		return -EINVAL;
	}
	return 0;
}

/*
 * An AEAD that is a stream cipher (GCM, ChaCha20-Poly1305, CCM: block size
 * one) gives away its authentication key and the XOR of two plaintexts
 * when one IV encrypts twice: a sector rewritten under an IV made from its
 * number does that. Only a random IV is new for every write.
 */
static int veil_check_aead_iv(struct dm_target *ti, const struct veil_c *vc)
{
	if (crypto_aead_blocksize(vc->aead) == 1 &&
	    vc->iv_mode != VEIL_IV_RANDOM) {
		ti->error = "AEAD stream cipher needs the random IV";
		return -EINVAL;
	}
	return 0;
}

/*
 * One skcipher per key of a multi-key table into vc->tfms. As dm-crypt: no
 * driver that allocates memory on the I/O path. The keys after the first
 * take the first one's driver by its unique name, so that all share its
 * request size and whether it completes later (a driver registered
 * meanwhile would otherwise win the name).
 */
static int veil_alloc_skciphers(struct dm_target *ti, struct veil_c *vc,
				const char *api, const char *cipher,
				const char *mode, const char *ivopts,
				u32 tfm_mask)
{
	struct crypto_skcipher *tfm;
	unsigned int i;

	vc->tfms = kcalloc(vc->tfms_count, sizeof(*vc->tfms), GFP_KERNEL);
	if (!vc->tfms) {
		ti->error = "Cannot allocate transforms";
		return -ENOMEM;
	}
	for (i = 0; i < vc->tfms_count; i++) {
		tfm = crypto_alloc_skcipher(api, 0, tfm_mask);
		if (IS_ERR(tfm)) {
			ti->error = i ? "Error allocating crypto tfm" :
				veil_tfm_error(cipher, mode, vc->iv_mode, ivopts);
			return PTR_ERR(tfm);
		}
		vc->tfms[i] = tfm;
		if (!i)
			api = crypto_tfm_alg_driver_name(crypto_skcipher_tfm(tfm));
	}
	vc->tfm = vc->tfms[0];
	return 0;
}

/* dm-crypt's refusals of IV generators that cannot work with an AEAD. */
static int veil_check_aead_iv_mode(struct dm_target *ti, const char *iv)
{
	static const char * const refused[] = { "lmk", "eboiv", "tcw",
						"elephant" };
	unsigned int i;

	for (i = 0; iv && i < ARRAY_SIZE(refused); i++) {
		if (!strcmp(iv, refused[i])) {
			ti->error = "AEAD transforms not supported for this IV mode";
			return -EINVAL;
		}
	}
	return 0;
}

/**
 * veil_parse_cipher() - parse a cipher spec and allocate its transform
 * @ti: the target; ti->error is set on failure.
 * @vc: receives the cipher string, transform, IV mode and IV size.
 * @spec: the cipher field of the table line.
 *
 * Return: 0 or a negative errno.
 */
int veil_parse_cipher(struct dm_target *ti, struct veil_c *vc,
		      const char *spec)
{
	char base[CRYPTO_MAX_ALG_NAME], api[CRYPTO_MAX_ALG_NAME];
	char *buf, *tmp, *cipher = NULL, *mode = NULL, *keycount, *iv, *ivopts;
	u32 tfm_mask = CRYPTO_ALG_ALLOCATES_MEMORY;
	unsigned int alignmask;
	int ret;

	vc->cipher_string = kstrdup(spec, GFP_KERNEL);
	buf = kstrdup(spec, GFP_KERNEL);
	if (!vc->cipher_string || !buf) {
		ti->error = "Cannot allocate cipher strings";
		ret = -ENOMEM;
		goto out;
	}

	vc->tfms_count = 1;
	ret = -EINVAL;
	if (strstarts(buf, VEIL_CAPI_PREFIX)) {
		tmp = buf + strlen(VEIL_CAPI_PREFIX);
		/* The hash in ivopts may itself contain '-': split at the last ':'. */
		ivopts = strrchr(tmp, ':');
		if (ivopts)
			*ivopts++ = '\0';
		iv = strrchr(tmp, '-');
		if (iv)
			*iv++ = '\0';
		if (!*tmp || strscpy(base, tmp, sizeof(base)) < 0) {
			ti->error = "Bad cipher specification";
			goto out;
		}
	} else {
		if (strchr(buf, '(')) {
			ti->error = "Bad cipher specification";
			goto out;
		}
		tmp = buf;
		cipher = strsep(&tmp, "-");
		mode = strsep(&tmp, "-");
		iv = strsep(&tmp, ":");
		ivopts = tmp;

		keycount = strchr(cipher, ':');
		if (keycount) {
			*keycount++ = '\0';
			if (kstrtouint(keycount, 10, &vc->tfms_count) ||
			    !is_power_of_2(vc->tfms_count) ||
			    vc->tfms_count > VEIL_MAX_KEYCOUNT) {
				ti->error = "Bad cipher key count specification";
				goto out;
			}
		}
		if (!*cipher) {
			ti->error = "Bad cipher specification";
			goto out;
		}
		/* dm-crypt's original format: a bare cipher means cbc-plain. */
		if (!mode || (!strcmp(mode, "plain") && !iv)) {
			mode = "cbc";
			iv = "plain";
		}
		/* Any chain mode the kernel has for the cipher, as dm-crypt. */
		if (!*mode) {
			ti->error = "Unsupported cipher mode";
			goto out;
		}
		if (snprintf(base, sizeof(base), "%s(%s)", mode, cipher) >=
		    sizeof(base)) {
			ti->error = "Bad cipher specification";
			goto out;
		}
	}

	/* As dm-crypt: only ecb goes without an IV in the old format. */
	if (!iv && mode && strcmp(mode, "ecb")) {
		ti->error = "IV mechanism required";
		goto out;
	}
	/*
	 * The IV is looked up once the transform says whether it takes one:
	 * a transform without (ecb) ignores the IV named, as in dm-crypt.
	 * ESSIV wraps the transform, so it is known first.
	 */
	vc->iv_mode = VEIL_IV_NULL;
	if (iv && !strcmp(iv, "essiv")) {
		ret = veil_iv_parse(iv, ivopts, &vc->iv_mode, &ti->error);
		if (ret)
			goto out;
	}
	ret = veil_iv_cipher_api(vc->iv_mode, base, ivopts, api, sizeof(api));
	if (ret) {
		ti->error = "Bad cipher specification";
		goto out;
	}

	/*
	 * lmk: loop-AES's 64 keys in the capi: format too, as in dm-crypt.
	 * lmk, tcw and elephant finish each sector after the cipher
	 * (veil_iv_post()), so their transforms must complete in the call:
	 * synchronous ones.
	 */
	if (iv && !strcmp(iv, "lmk") && !cipher)
		vc->tfms_count = VEIL_LMK_KEYS;
	if (iv && (!strcmp(iv, "lmk") || !strcmp(iv, "tcw") ||
		   !strcmp(iv, "elephant")))
		tfm_mask |= CRYPTO_ALG_ASYNC;

	if (vc->integrity_kind &&
	    !strcmp(vc->integrity_kind, VEIL_INTEGRITY_AEAD)) {
		/* An AEAD is named in the capi: format only, as in dm-crypt. */
		if (cipher) {
			ti->error = "Bad cipher specification";
			ret = -EINVAL;
			goto out;
		}
		ret = veil_check_aead_iv_mode(ti, iv);
		if (ret)
			goto out;
		vc->tfms_count = 1;
		ret = veil_aead_alloc(ti, vc, base, api);
		if (ret)
			goto out;
		vc->iv_size = crypto_aead_ivsize(vc->aead);
		alignmask = crypto_aead_alignmask(vc->aead);
	} else {
		ret = veil_alloc_skciphers(ti, vc, api, cipher, mode, ivopts,
					   tfm_mask);
		if (ret)
			goto out;
		vc->iv_size = crypto_skcipher_ivsize(vc->tfm);
		alignmask = crypto_skcipher_alignmask(vc->tfm);
	}
	if (!vc->iv_size) {
		if (iv)
			DMWARN("Selected cipher does not support IVs");
	} else if (!iv) {
		/* dm-crypt would use whatever its IV buffer held. */
		ti->error = "IV mechanism required";
		ret = -EINVAL;
		goto out;
	} else {
		ret = veil_iv_parse(iv, ivopts, &vc->iv_mode, &ti->error);
		if (ret)
			goto out;
	}
	if (vc->iv_size > VEIL_MAX_IV_SIZE ||
	    (vc->iv_mode != VEIL_IV_NULL && vc->iv_size < sizeof(u64))) {
		ti->error = "IV size of cipher not supported";
		ret = -EINVAL;
		goto out;
	}
	ret = veil_iv_setup(vc, &ti->error);
	if (ret)
		goto out;
	ret = vc->aead ? veil_check_aead_iv(ti, vc) :
			 veil_check_stream_iv(ti, vc);
	if (ret)
		goto out;
	/*
	 * CTR: the keystream depends on key and IV only (veil-keystream.c),
	 * unless the IV generator works on the data too (tcw) or the IV is
	 * known only once the read brought it (random).
	 */
	if (((mode && !strcmp(mode, "ctr")) || strstarts(base, "ctr(")) &&
	    !veil_iv_uses_data(vc->iv_mode) && vc->iv_mode != VEIL_IV_RANDOM)
		set_bit(VEIL_CTR, &vc->flags);
	/* A request's IV buffer has room to align to this much only. */
	if (alignmask > VEIL_MAX_IV_ALIGNMASK) {
		ti->error = "IV alignment of cipher not supported";
		ret = -EINVAL;
		goto out;
	}
	vc->iv_align = alignmask + 1;
	/* The IV is eboiv's output too: aligned for both transforms. */
	if (vc->iv_tfm)
		vc->iv_align = max(vc->iv_align,
				   crypto_skcipher_alignmask(&vc->iv_tfm->base) + 1);
out:
	kfree(buf);
	return ret;
}

static int veil_parse_sector_size(struct dm_target *ti, struct veil_c *vc,
				  const char *val)
{
	unsigned int size;
	char dummy;

	if (sscanf(val, "%u%c", &size, &dummy) != 1 || size < SECTOR_SIZE ||
	    size > VEIL_MAX_SECTOR_SIZE || !is_power_of_2(size)) {
		ti->error = "Invalid feature value for " VEIL_OPTV_SECTOR_SIZE;
		return -EINVAL;
	}
	vc->sector_size = size;
	vc->sector_shift = __ffs(size) - SECTOR_SHIFT;
	if (ti->len & ((size >> SECTOR_SHIFT) - 1)) {
		ti->error = "Device size is not multiple of " VEIL_OPTV_SECTOR_SIZE " feature";
		return -EINVAL;
	}
	return 0;
}

/* On/off options, in the order status prints them. */
struct veil_flag_opt {
	const char *name;
	enum veil_flag bit;
};

static const struct veil_flag_opt veil_crypt_flag_opts[] = {
	{ VEIL_OPT_SAME_CPU,		VEIL_SAME_CPU },
	{ VEIL_OPT_HIGH_PRIORITY,	VEIL_HIGH_PRIORITY },
	{ VEIL_OPT_SUBMIT_FROM_CRYPT,	VEIL_SUBMIT_FROM_CRYPT },
	{ VEIL_OPT_NO_READ_WQ,		VEIL_NO_READ_WQ },
	{ VEIL_OPT_NO_WRITE_WQ,		VEIL_NO_WRITE_WQ },
};

static const struct veil_flag_opt veil_engine_flag_opts[] = {
	{ VEIL_OPT_NO_FANOUT,		VEIL_NO_FANOUT },
	{ VEIL_OPT_NO_KS_AHEAD,		VEIL_NO_KS_AHEAD },
};

static bool veil_parse_flag(struct veil_c *vc, const char *opt,
			    const struct veil_flag_opt *opts, size_t n)
{
	size_t i;

	for (i = 0; i < n; i++) {
		if (!strcasecmp(opt, opts[i].name)) {
			set_bit(opts[i].bit, &vc->flags);
			return true;
		}
	}
	return false;
}

/* A size option's value: a power of two from 4 KiB to 1 MiB. */
static int veil_parse_size(struct dm_target *ti, const char *val,
			   char *error, unsigned int *size)
{
	unsigned int v;
	char dummy;

	if (sscanf(val, "%u%c", &v, &dummy) != 1 ||
	    v < VEIL_FANOUT_CHUNK_MIN || v > VEIL_FANOUT_CHUNK_MAX ||
	    !is_power_of_2(v)) {
		ti->error = error;
		return -EINVAL;
	}
	*size = v;
	return 0;
}

/*
 * integrity:<bytes>:<kind>: metadata bytes per sector on a dm-integrity
 * device below, for an AEAD's tag ("aead") or the random IV alone
 * ("none").
 */
static int veil_parse_integrity(struct dm_target *ti, struct veil_c *vc,
				const char *val)
{
	const char *kind = strchr(val, ':');
	char num[16];
	unsigned int n;

	if (!kind || kind == val || kind - val >= sizeof(num))
		goto invalid;
	memcpy(num, val, kind - val);
	num[kind - val] = '\0';
	if (kstrtouint(num, 10, &n) || !n || n > VEIL_MAX_TAG_SIZE)
		goto invalid;
	kind++;
	if (!strcasecmp(kind, VEIL_INTEGRITY_AEAD)) {
		vc->integrity_kind = VEIL_INTEGRITY_AEAD;
	} else if (!strcasecmp(kind, VEIL_INTEGRITY_NONE)) {
		vc->integrity_kind = VEIL_INTEGRITY_NONE;
	} else {
		ti->error = "Unknown integrity profile";
		return -EINVAL;
	}
	vc->tag_size_used = n;
	return 0;
invalid:
	ti->error = "Invalid integrity arguments";
	return -EINVAL;
}

/* "name:value" options: the value after the colon, or NULL. */
static const char *veil_opt_value(const char *opt, const char *name)
{
	size_t len = strlen(name);

	if (strncasecmp(opt, name, len) || opt[len] != ':')
		return NULL;
	return opt + len + 1;
}

static int veil_parse_option(struct dm_target *ti, struct veil_c *vc,
			     const char *opt)
{
	const char *val;
	char dummy;

	if (!strcasecmp(opt, VEIL_OPT_ALLOW_DISCARDS)) {
		ti->num_discard_bios = 1;
		return 0;
	}
	if (!strcasecmp(opt, VEIL_OPT_IV_LARGE_SECTORS)) {
		vc->iv_large_sectors = true;
		return 0;
	}
	val = veil_opt_value(opt, VEIL_OPTV_SECTOR_SIZE);
	if (val)
		return veil_parse_sector_size(ti, vc, val);
	val = veil_opt_value(opt, VEIL_OPTV_INTEGRITY);
	if (val)
		return veil_parse_integrity(ti, vc, val);
	val = veil_opt_value(opt, VEIL_OPTV_INTEGRITY_KEY_SIZE);
	if (val) {
		if (kstrtouint(val, 10, &vc->mac_key_size) ||
		    !vc->mac_key_size || vc->mac_key_size > VEIL_MAX_KEY_SIZE) {
			ti->error = "Invalid " VEIL_OPTV_INTEGRITY_KEY_SIZE " argument";
			return -EINVAL;
		}
		vc->mac_key_size_set = true;
		return 0;
	}
	val = veil_opt_value(opt, VEIL_OPTV_AEAD_MASKS);
	if (val) {
		if (sscanf(val, "%u%c", &vc->aead_masks, &dummy) != 1 ||
		    vc->aead_masks > VEIL_AEAD_MASKS_MAX) {
			ti->error = "Invalid feature value for " VEIL_OPTV_AEAD_MASKS;
			return -EINVAL;
		}
		return 0;
	}
	val = veil_opt_value(opt, VEIL_OPTV_FANOUT_CHUNK);
	if (val)
		return veil_parse_size(ti, val,
				       "Invalid feature value for " VEIL_OPTV_FANOUT_CHUNK,
				       &vc->fanout_chunk);
	val = veil_opt_value(opt, VEIL_OPTV_KS_AHEAD_MAX);
	if (val)
		return veil_parse_size(ti, val,
				       "Invalid feature value for " VEIL_OPTV_KS_AHEAD_MAX,
				       &vc->ks_ahead_max);
	if (veil_parse_flag(vc, opt, veil_crypt_flag_opts,
			    ARRAY_SIZE(veil_crypt_flag_opts)) ||
	    veil_parse_flag(vc, opt, veil_engine_flag_opts,
			    ARRAY_SIZE(veil_engine_flag_opts)))
		return 0;

	ti->error = "Invalid feature arguments";
	return -EINVAL;
}

/**
 * veil_parse_options() - parse the optional feature group of a table line
 * @ti: the target; ti->error is set on failure.
 * @vc: receives sector size, fan-out chunk size and flags.
 * @argc: number of arguments from the feature count on.
 * @argv: the feature count followed by the features.
 *
 * Return: 0 or -EINVAL.
 */
int veil_parse_options(struct dm_target *ti, struct veil_c *vc,
		       unsigned int argc, char **argv)
{
	static const struct dm_arg group[] = {
		{ 0, VEIL_MAX_OPTS, "Invalid number of feature args" },
	};
	struct dm_arg_set as = { .argc = argc, .argv = argv };
	const char *opt;
	unsigned int n;
	int ret;

	vc->sector_size = SECTOR_SIZE;
	vc->sector_shift = 0;
	vc->fanout_chunk = VEIL_FANOUT_CHUNK_DEFAULT;
	vc->ks_ahead_max = VEIL_KS_AHEAD_MAX_DEFAULT;
	vc->aead_masks = VEIL_AEAD_MASKS_DEFAULT;
	if (!argc)
		return 0;

	ret = dm_read_arg_group(group, &as, &n, &ti->error);
	if (ret)
		return ret;

	while (n--) {
		opt = dm_shift_arg(&as);
		ret = veil_parse_option(ti, vc, opt);
		if (ret)
			return ret;
	}

	if (as.argc) {
		ti->error = "Unexpected arguments after the features";
		return -EINVAL;
	}
	return 0;
}

static void veil_emit_flags(struct veil_c *vc, const struct veil_flag_opt *opts,
			    size_t n, char *result, unsigned int maxlen,
			    unsigned int *szp)
{
	unsigned int sz = *szp;
	size_t i;

	for (i = 0; i < n; i++)
		if (test_bit(opts[i].bit, &vc->flags))
			DMEMIT(" %s", opts[i].name);
	*szp = sz;
}

static unsigned int veil_count_flags(struct veil_c *vc,
				     const struct veil_flag_opt *opts, size_t n)
{
	unsigned int i, count = 0;

	for (i = 0; i < n; i++)
		count += test_bit(opts[i].bit, &vc->flags);
	return count;
}

/**
 * veil_emit_options() - print the optional feature group of the table line
 * @ti: the target.
 * @vc: the target instance.
 * @result: output buffer.
 * @maxlen: size of @result.
 *
 * dm-crypt's options come first, in dm-crypt's order, then the engine's;
 * defaults are left out. The output is accepted by veil_parse_options().
 *
 * Return: the number of characters written.
 */
unsigned int veil_emit_options(struct dm_target *ti, struct veil_c *vc,
			       char *result, unsigned int maxlen)
{
	unsigned int sz = 0, n;

	n = !!ti->num_discard_bios + (vc->sector_size != SECTOR_SIZE) +
	    !!vc->integrity_kind + vc->mac_key_size_set +
	    vc->iv_large_sectors +
	    (vc->fanout_chunk != VEIL_FANOUT_CHUNK_DEFAULT) +
	    (vc->ks_ahead_max != VEIL_KS_AHEAD_MAX_DEFAULT) +
	    (vc->aead_masks != VEIL_AEAD_MASKS_DEFAULT) +
	    veil_count_flags(vc, veil_crypt_flag_opts,
			     ARRAY_SIZE(veil_crypt_flag_opts)) +
	    veil_count_flags(vc, veil_engine_flag_opts,
			     ARRAY_SIZE(veil_engine_flag_opts));
	if (!n)
		return 0;

	DMEMIT(" %u", n);
	if (ti->num_discard_bios)
		DMEMIT(" " VEIL_OPT_ALLOW_DISCARDS);
	veil_emit_flags(vc, veil_crypt_flag_opts,
			ARRAY_SIZE(veil_crypt_flag_opts), result, maxlen, &sz);
	if (vc->integrity_kind)
		DMEMIT(" " VEIL_OPTV_INTEGRITY ":%u:%s", vc->tag_size_used,
		       vc->integrity_kind);
	if (vc->sector_size != SECTOR_SIZE)
		DMEMIT(" " VEIL_OPTV_SECTOR_SIZE ":%u", vc->sector_size);
	if (vc->iv_large_sectors)
		DMEMIT(" " VEIL_OPT_IV_LARGE_SECTORS);
	/* Last, after iv_large_sectors, as 6.12's dm-crypt prints it. */
	if (vc->mac_key_size_set)
		DMEMIT(" " VEIL_OPTV_INTEGRITY_KEY_SIZE ":%u", vc->mac_key_size);
	if (vc->fanout_chunk != VEIL_FANOUT_CHUNK_DEFAULT)
		DMEMIT(" " VEIL_OPTV_FANOUT_CHUNK ":%u", vc->fanout_chunk);
	if (vc->ks_ahead_max != VEIL_KS_AHEAD_MAX_DEFAULT)
		DMEMIT(" " VEIL_OPTV_KS_AHEAD_MAX ":%u", vc->ks_ahead_max);
	if (vc->aead_masks != VEIL_AEAD_MASKS_DEFAULT)
		DMEMIT(" " VEIL_OPTV_AEAD_MASKS ":%u", vc->aead_masks);
	veil_emit_flags(vc, veil_engine_flag_opts,
			ARRAY_SIZE(veil_engine_flag_opts), result, maxlen, &sz);
	return sz;
}
