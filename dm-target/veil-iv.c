// SPDX-License-Identifier: GPL-2.0
/*
 * dm-veil IV generation.
 *
 * Each encryption sector gets an IV made from its sector number, in the
 * same byte layout as dm-crypt's generators of the same name, so that a
 * volume reads back through either target. ESSIV is left to the kernel's
 * essiv template: the IV handed to it is plain64 and the template encrypts
 * it with the hash of the volume key. A transform without an IV (ecb)
 * takes none, whatever the table line names.
 */
#include <linux/kernel.h>
#include <linux/log2.h>
#include <linux/mm.h>
#include <linux/random.h>
#include <linux/scatterlist.h>
#include <linux/slab.h>
#include <linux/string.h>
#include <crypto/aes.h>
#include <crypto/algapi.h>
#include <crypto/hash.h>
#include <crypto/md5.h>
#include <crypto/skcipher.h>
#include "dm-veil.h"
#include "veil-iv.h"
#include "veil-compat.h"

struct veil_iv_type {
	const char *name;
	enum veil_iv_mode mode;
	bool needs_opts;
};

static const struct veil_iv_type veil_iv_types[] = {
	{ "null",	VEIL_IV_NULL,		false },
	{ "plain",	VEIL_IV_PLAIN,		false },
	{ "plain64",	VEIL_IV_PLAIN64,	false },
	{ "plain64be",	VEIL_IV_PLAIN64BE,	false },
	{ "benbi",	VEIL_IV_BENBI,		false },
	{ "eboiv",	VEIL_IV_EBOIV,		false },
	{ "lmk",	VEIL_IV_LMK,		false },
	{ "tcw",	VEIL_IV_TCW,		false },
	{ "elephant",	VEIL_IV_ELEPHANT,	false },
	{ "essiv",	VEIL_IV_ESSIV,		true },
	{ "random",	VEIL_IV_RANDOM,		false },
};

/**
 * veil_iv_parse() - look up an IV generator by name
 * @name: the IV part of a cipher spec ("plain64", "essiv", ...).
 * @opts: the text after ':' in the IV part, or NULL. Only essiv takes
 *	options; the others ignore them, as in dm-crypt, whose table prints
 *	them back (aes-xts-plain64:sha256 is aes-xts-plain64).
 * @mode: set to the generator on success.
 * @error: set to a message naming the problem on failure.
 *
 * Return: 0, or -EINVAL for an unknown generator or essiv without a hash.
 */
int veil_iv_parse(const char *name, const char *opts, enum veil_iv_mode *mode,
		  char **error)
{
	const struct veil_iv_type *t;

	for (t = veil_iv_types; t < veil_iv_types + ARRAY_SIZE(veil_iv_types); t++) {
		if (strcmp(name, t->name))
			continue;
		if (t->needs_opts && (!opts || !*opts)) {
			*error = "Digest algorithm missing for ESSIV mode";
			return -EINVAL;
		}
		*mode = t->mode;
		return 0;
	}
	*error = "Invalid IV mode";
	return -EINVAL;
}

/**
 * veil_iv_cipher_api() - the Crypto API name of a cipher with its IV mode
 * @mode: the IV generator.
 * @base: the cipher's own Crypto API name ("xts(aes)", "cbc(serpent)").
 * @opts: IV options (the ESSIV hash), or NULL.
 * @api: buffer for the name.
 * @len: size of @api.
 *
 * Return: 0, or -ENAMETOOLONG if the name does not fit.
 */
int veil_iv_cipher_api(enum veil_iv_mode mode, const char *base,
		       const char *opts, char *api, size_t len)
{
	int n;

	if (mode == VEIL_IV_ESSIV)
		n = snprintf(api, len, "essiv(%s,%s)", base, opts);
	else
		n = snprintf(api, len, "%s", base);

	return n < 0 || n >= len ? -ENAMETOOLONG : 0;
}

/* benbi counts cipher blocks: a power of two of at most 512 bytes. */
static int veil_iv_benbi_setup(struct veil_c *vc, char **error)
{
	unsigned int bs = vc->aead ? crypto_aead_blocksize(vc->aead) :
				     crypto_skcipher_blocksize(vc->tfm);

	if (!is_power_of_2(bs)) {
		*error = "cypher blocksize is not a power of 2";
		return -EINVAL;
	}
	if (bs > SECTOR_SIZE) {
		*error = "cypher blocksize is > 512";
		return -EINVAL;
	}
	vc->benbi_shift = SECTOR_SHIFT - ilog2(bs);
	return 0;
}

/*
 * eboiv encrypts a zero block with the byte offset as its IV, as dm-crypt
 * does with its data transform: a synchronous instance of the same
 * algorithm does it in any context, without waiting for a driver.
 */
static int veil_iv_eboiv_setup(struct veil_c *vc, char **error)
{
	const char *name = crypto_tfm_alg_name(crypto_skcipher_tfm(vc->tfm));
	struct crypto_sync_skcipher *tfm;

	if (crypto_skcipher_blocksize(vc->tfm) != vc->iv_size) {
		*error = "Block size of EBOIV cipher does not match IV size of block cipher";
		return -EINVAL;
	}
	tfm = crypto_alloc_sync_skcipher(name, 0, CRYPTO_ALG_ALLOCATES_MEMORY);
	if (IS_ERR(tfm)) {
		*error = "Error allocating crypto tfm";
		return PTR_ERR(tfm);
	}
	vc->iv_tfm = tfm;
	if (crypto_skcipher_alignmask(&tfm->base) > VEIL_MAX_IV_ALIGNMASK) {
		*error = "IV alignment of cipher not supported";
		return -EINVAL;
	}
	return 0;
}

/* lmk hashes a 64-byte seed, of which the key gives the first 16. */
#define VEIL_LMK_SEED_SIZE	64

/*
 * lmk: 512-byte sectors of 16-byte blocks, and MD5. A read is decrypted
 * with a zero IV and fixed up after, which is right only where the IV
 * touches the first block alone: CBC. dm-crypt takes other modes too, and
 * reads back other data than it wrote with them.
 */
static int veil_iv_lmk_setup(struct veil_c *vc, char **error)
{
	const char *name = crypto_tfm_alg_name(crypto_skcipher_tfm(vc->tfm));
	struct crypto_shash *hash;

	if (!strstarts(name, "cbc(")) {
		*error = "LMK needs CBC";
		return -EINVAL;
	}
	if (vc->sector_size != SECTOR_SIZE) {
		*error = "Unsupported sector size for LMK";
		return -EINVAL;
	}
	/* The IV is the first iv_size bytes of the MD5 state (8 or 16). */
	if (vc->iv_size > MD5_DIGEST_SIZE) {
		*error = "IV size of cipher not supported";
		return -EINVAL;
	}
	hash = crypto_alloc_shash("md5", 0, CRYPTO_ALG_ALLOCATES_MEMORY);
	if (IS_ERR(hash)) {
		*error = "Error initializing LMK hash";
		return PTR_ERR(hash);
	}
	vc->lmk_hash = hash;
	return 0;
}

/* tcw's whitening key: two 8-byte halves. */
#define VEIL_TCW_WHITENING_SIZE	16

/*
 * ccm with a random IV: bytes of its length field, which bounds a message
 * to 2^16 - 1 bytes: the largest sector is 4096.
 */
#define VEIL_CCM_IV_LENGTH_FIELD	2

/* tcw: 512-byte sectors, CRC32, and room for the seed and whitening key. */
static int veil_iv_tcw_setup(struct veil_c *vc, char **error)
{
	struct crypto_shash *crc;

	if (vc->sector_size != SECTOR_SIZE) {
		*error = "Unsupported sector size for TCW";
		return -EINVAL;
	}
	crc = crypto_alloc_shash("crc32", 0, CRYPTO_ALG_ALLOCATES_MEMORY);
	if (IS_ERR(crc)) {
		*error = "Error initializing CRC32 in TCW";
		return PTR_ERR(crc);
	}
	vc->tcw_crc = crc;
	vc->tcw_seed = kzalloc(vc->iv_size + VEIL_TCW_WHITENING_SIZE,
			       GFP_KERNEL);
	if (!vc->tcw_seed) {
		*error = "Error allocating seed storage in TCW";
		return -ENOMEM;
	}
	return 0;
}

/* Longest Elephant key: AES-256's. */
#define VEIL_ELEPHANT_MAX_KEY_SIZE	32

/*
 * elephant: eboiv's IV, and AES (the library's, on two blocks a sector, in
 * any context) for the sector keys.
 */
static int veil_iv_elephant_setup(struct veil_c *vc, char **error)
{
	int ret;

	ret = veil_iv_eboiv_setup(vc, error);
	if (ret)
		return ret;
	vc->elephant_key = kzalloc(sizeof(*vc->elephant_key), GFP_KERNEL);
	if (!vc->elephant_key) {
		*error = "Cannot allocate Elephant key";
		return -ENOMEM;
	}
	return 0;
}

/* ccm() by any driver: the algorithm's name, not the driver's. */
static bool veil_iv_is_ccm(struct crypto_aead *aead)
{
	return strstarts(crypto_tfm_alg_name(crypto_aead_tfm(aead)), "ccm(");
}

/**
 * veil_iv_setup() - set the IV generator up for the allocated transform
 * @vc: the target; its transform, IV mode and IV size are set.
 * @error: set to a message naming the problem on failure.
 *
 * Return: 0 or a negative errno; veil_iv_exit() undoes a partial setup.
 */
int veil_iv_setup(struct veil_c *vc, char **error)
{
	switch (vc->iv_mode) {
	case VEIL_IV_BENBI:
		return veil_iv_benbi_setup(vc, error);
	case VEIL_IV_EBOIV:
		return veil_iv_eboiv_setup(vc, error);
	case VEIL_IV_LMK:
		return veil_iv_lmk_setup(vc, error);
	case VEIL_IV_TCW:
		return veil_iv_tcw_setup(vc, error);
	case VEIL_IV_ELEPHANT:
		return veil_iv_elephant_setup(vc, error);
	case VEIL_IV_RANDOM:
		if (vc->aead)
			vc->iv_ccm = veil_iv_is_ccm(vc->aead);
		return 0;
	default:
		return 0;
	}
}

/**
 * veil_iv_key_extra() - bytes at the end of the key that are the IV's
 * @vc: the target.
 * @size: the key's size.
 *
 * lmk's seed: a key that does not split into the key count's equal parts
 * has one part more, the seed, as in dm-crypt. tcw's IV seed and
 * whitening key: the IV size plus 16 bytes. elephant's sector key maker:
 * the second half.
 *
 * Return: the bytes the IV takes, or 0.
 */
unsigned int veil_iv_key_extra(const struct veil_c *vc, unsigned int size)
{
	if (vc->iv_mode == VEIL_IV_TCW)
		return vc->iv_size + VEIL_TCW_WHITENING_SIZE;
	if (vc->iv_mode == VEIL_IV_ELEPHANT)
		return size / 2;
	if (vc->iv_mode != VEIL_IV_LMK || !(size % vc->tfms_count))
		return 0;
	return size / (vc->tfms_count + 1);
}

/**
 * veil_iv_setkey() - give the IV generator the volume key
 * @vc: the target; suspended or being constructed (no I/O).
 * @key: the whole key.
 * @size: its size.
 * @part: the size of one transform's part: eboiv uses the first part
 *	(dm-crypt's, with a multi-key table too); lmk's seed follows the
 *	transforms' parts; tcw's seed and whitening key end the key.
 *
 * Context: process; may sleep.
 * Return: 0, -ENOMEM, or the cipher's error.
 */
int veil_iv_setkey(struct veil_c *vc, const u8 *key, unsigned int size,
		   unsigned int part)
{
	unsigned int extra = veil_iv_key_extra(vc, size);
	int ret;

	/*
	 * lmk's seed: dm-crypt's parts are size / (keycount + 1) bytes and the
	 * seed is the part after the keycount's, of which MD5's size counts
	 * (a key too short for those bytes dm-crypt reads past; veil refuses).
	 */
	if (vc->iv_mode == VEIL_IV_LMK && extra) {
		if (vc->tfms_count * extra + MD5_DIGEST_SIZE > size)
			return -EINVAL;
		if (!vc->lmk_seed)
			vc->lmk_seed = kzalloc(VEIL_LMK_SEED_SIZE, GFP_KERNEL);
		if (!vc->lmk_seed)
			return -ENOMEM;
		memcpy(vc->lmk_seed, key + vc->tfms_count * extra,
		       MD5_DIGEST_SIZE);
	}
	if (vc->iv_mode == VEIL_IV_TCW)
		memcpy(vc->tcw_seed, key + size - extra, extra);
	if (vc->elephant_key) {
		ret = extra > VEIL_ELEPHANT_MAX_KEY_SIZE ? -EINVAL :
		      aes_expandkey(vc->elephant_key, key + size - extra, extra);
		if (ret)
			return ret;
	}
	if (!vc->iv_tfm)
		return 0;
	return crypto_sync_skcipher_setkey(vc->iv_tfm, key, part);
}

/**
 * veil_iv_exit() - free what veil_iv_setup() allocated
 * @vc: the target.
 */
void veil_iv_exit(struct veil_c *vc)
{
	crypto_free_sync_skcipher(vc->iv_tfm);
	vc->iv_tfm = NULL;
	crypto_free_shash(vc->lmk_hash);
	vc->lmk_hash = NULL;
	kfree_sensitive(vc->lmk_seed);
	vc->lmk_seed = NULL;
	kfree_sensitive(vc->elephant_key);
	vc->elephant_key = NULL;
	crypto_free_shash(vc->tcw_crc);
	vc->tcw_crc = NULL;
	kfree_sensitive(vc->tcw_seed);
	vc->tcw_seed = NULL;
}

/*
 * tcw: XOR the 512-byte sector @data with its whitening: the whitening key
 * XORed with the sector number, each 32-bit quarter replaced by its CRC32,
 * folded to 8 bytes. Whitening twice undoes it.
 */
static int veil_iv_tcw_whiten(const struct veil_c *vc, sector_t sector,
			      u8 *data)
{
	const u8 *key = vc->tcw_seed + vc->iv_size;
	__le64 le = cpu_to_le64(sector);
	u8 buf[VEIL_TCW_WHITENING_SIZE];
	int i, ret = 0;

	SHASH_DESC_ON_STACK(desc, vc->tcw_crc);

	crypto_xor_cpy(buf, key, (u8 *)&le, 8);
	crypto_xor_cpy(buf + 8, key + 8, (u8 *)&le, 8);
	desc->tfm = vc->tcw_crc;
	for (i = 0; i < 4 && !ret; i++) {
		ret = crypto_shash_init(desc);
		if (!ret)
			ret = crypto_shash_update(desc, buf + 4 * i, 4);
		if (!ret)
			ret = crypto_shash_final(desc, buf + 4 * i);
	}
	if (!ret) {
		crypto_xor(buf, buf + 12, 4);
		crypto_xor(buf + 4, buf + 8, 4);
		for (i = 0; i < SECTOR_SIZE / 8; i++)
			crypto_xor(data + 8 * i, buf, 8);
	}
	shash_desc_zero(desc);
	memzero_explicit(buf, sizeof(buf));
	return ret;
}

/*
 * The Elephant diffusers (Niels Ferguson, "AES-CBC + Elephant diffuser",
 * 2006): A runs 5 cycles over the sector's 32-bit words, each word taking
 * the XOR of the word 2 before it and the word 5 before it rotated left by
 * 9, 0, 13, 0 bits in turn; B runs 3 cycles with the words 2 and 5 after
 * it and rotations of 0, 10, 0, 25. Decrypting adds, word after word;
 * encrypting subtracts, in the reverse order.
 */
static const u8 veil_elephant_rot_a[4] = { 9, 0, 13, 0 };
static const u8 veil_elephant_rot_b[4] = { 0, 10, 0, 25 };

static void veil_elephant_diffuse(u32 *d, int n, int cycles, int near,
				  int far, const u8 *rot, bool decrypt)
{
	int k, steps = cycles * n, i = decrypt ? 0 : n - 1;
	int a = (i + n + near) % n, b = (i + n + far) % n;
	u32 t;

	/* i, a and b walk the words together, wrapping; n is a multiple of 4. */
	for (k = 0; k < steps; k++) {
		t = d[a] ^ rol32(d[b], rot[i & 3]);
		if (decrypt) {
			d[i] += t;
			i = i + 1 == n ? 0 : i + 1;
			a = a + 1 == n ? 0 : a + 1;
			b = b + 1 == n ? 0 : b + 1;
		} else {
			d[i] -= t;
			i = i ? i - 1 : n - 1;
			a = a ? a - 1 : n - 1;
			b = b ? b - 1 : n - 1;
		}
	}
}

/*
 * elephant on one sector of plaintext @data: before encryption, XOR with
 * the sector key, then diffusers A and B; after decryption, the inverse.
 * The sector key is the AES encryption, under the Elephant key, of the
 * byte offset (eboiv's) and of the same block with its last byte 0x80.
 */
static void veil_iv_elephant(const struct veil_c *vc, sector_t sector,
			     u8 *data, bool encrypt)
{
	int i, words = vc->sector_size / sizeof(u32);
	u8 offset[AES_BLOCK_SIZE] = { }, key[2 * AES_BLOCK_SIZE];
	u32 *d = (u32 *)data;

	put_unaligned_le64((u64)sector * vc->sector_size, offset);
	aes_encrypt(vc->elephant_key, key, offset);
	offset[AES_BLOCK_SIZE - 1] = 0x80;
	aes_encrypt(vc->elephant_key, key + AES_BLOCK_SIZE, offset);

	for (i = 0; i < words; i++)
		le32_to_cpus(&d[i]);
	if (!encrypt) {
		veil_elephant_diffuse(d, words, 3, 2, 5, veil_elephant_rot_b,
				      true);
		veil_elephant_diffuse(d, words, 5, -2, -5, veil_elephant_rot_a,
				      true);
	}
	for (i = 0; i < words; i++)
		cpu_to_le32s(&d[i]);
	for (i = 0; i < vc->sector_size; i += sizeof(key))
		crypto_xor(data + i, key, sizeof(key));
	if (encrypt) {
		for (i = 0; i < words; i++)
			le32_to_cpus(&d[i]);
		veil_elephant_diffuse(d, words, 5, -2, -5, veil_elephant_rot_a,
				      false);
		veil_elephant_diffuse(d, words, 3, 2, 5, veil_elephant_rot_b,
				      false);
		for (i = 0; i < words; i++)
			cpu_to_le32s(&d[i]);
	}
	memzero_explicit(key, sizeof(key));
	memzero_explicit(offset, sizeof(offset));
}

/* tcw's IV: the seed XORed with the sector number, in each 8-byte half. */
static void veil_iv_tcw(const struct veil_c *vc, u8 *iv, sector_t sector)
{
	__le64 le = cpu_to_le64(sector);

	crypto_xor_cpy(iv, vc->tcw_seed, (u8 *)&le, 8);
	if (vc->iv_size > 8)
		crypto_xor_cpy(iv + 8, vc->tcw_seed + 8, (u8 *)&le,
			       vc->iv_size - 8);
}

/*
 * lmk: the MD5 state (no padding) over the seed, the 512-byte sector @data
 * past its first 16 bytes and the sector number, little endian: its first
 * iv_size bytes into @iv.
 */
static int veil_iv_lmk(const struct veil_c *vc, u8 *iv, sector_t sector,
		       const u8 *data)
{
	u8 digest[MD5_DIGEST_SIZE];
	struct md5_state state;
	__le32 tail[4];
	int i, ret;

	SHASH_DESC_ON_STACK(desc, vc->lmk_hash);

	desc->tfm = vc->lmk_hash;
	ret = crypto_shash_init(desc);
	if (!ret && vc->lmk_seed)
		ret = crypto_shash_update(desc, vc->lmk_seed,
					  VEIL_LMK_SEED_SIZE);
	if (!ret)
		ret = crypto_shash_update(desc, data + MD5_DIGEST_SIZE,
					  SECTOR_SIZE - MD5_DIGEST_SIZE);
	/* The sector number is cut to 56 bits, as loop-AES does. */
	tail[0] = cpu_to_le32(lower_32_bits(sector));
	tail[1] = cpu_to_le32((upper_32_bits(sector) & 0x00ffffff) |
			      0x80000000);
	tail[2] = cpu_to_le32(4024);
	tail[3] = 0;
	if (!ret)
		ret = crypto_shash_update(desc, (u8 *)tail, sizeof(tail));
	if (!ret)
		ret = crypto_shash_export(desc, &state);
	shash_desc_zero(desc);
	if (ret)
		return ret;
	for (i = 0; i < MD5_HASH_WORDS; i++)
		put_unaligned_le32(state.hash[i], digest + i * sizeof(u32));
	memcpy(iv, digest, vc->iv_size);
	memzero_explicit(digest, sizeof(digest));
	memzero_explicit(&state, sizeof(state));
	return 0;
}

/**
 * veil_iv_post() - finish a sector after the cipher
 * @vc: the target; veil_iv_uses_data() is true of its IV mode.
 * @sector: IV sector number.
 * @out: the sector the cipher wrote: a read's plaintext or a write's
 *	ciphertext.
 * @encrypt: @out is a write's ciphertext.
 *
 * lmk: XORs the IV made from a read's plaintext into its first block.
 * tcw: whitens a write's ciphertext. elephant: undoes the diffusers and
 * the sector key on a read's plaintext.
 *
 * Context: any; never sleeps.
 * Return: 0 or the hash's error.
 */
int veil_iv_post(const struct veil_c *vc, sector_t sector, u8 *out,
		 bool encrypt)
{
	u8 iv[MD5_DIGEST_SIZE];
	int ret = 0;

	switch (vc->iv_mode) {
	case VEIL_IV_TCW:
		if (encrypt)
			ret = veil_iv_tcw_whiten(vc, sector, out);
		break;
	case VEIL_IV_ELEPHANT:
		if (!encrypt)
			veil_iv_elephant(vc, sector, out, false);
		break;
	case VEIL_IV_LMK:
		if (encrypt)
			break;
		ret = veil_iv_lmk(vc, iv, sector, out);
		if (!ret)
			crypto_xor(out, iv, vc->iv_size);
		memzero_explicit(iv, sizeof(iv));
		break;
	default:
		break;
	}
	return ret;
}

/* eboiv: the byte offset, encrypted into @iv (one cipher block). */
static int veil_iv_eboiv(const struct veil_c *vc, u8 *iv, sector_t sector)
{
	u8 offset[VEIL_MAX_IV_SIZE] __aligned(VEIL_MAX_IV_ALIGNMASK + 1) = { };
	struct scatterlist src, dst;
	int ret;

	SYNC_SKCIPHER_REQUEST_ON_STACK(req, vc->iv_tfm);

	put_unaligned_le64((u64)sector * vc->sector_size, offset);
	sg_init_one(&src, page_address(ZERO_PAGE(0)), vc->iv_size);
	sg_init_one(&dst, iv, vc->iv_size);
	skcipher_request_set_sync_tfm(req, vc->iv_tfm);
	skcipher_request_set_callback(req, 0, NULL, NULL);
	skcipher_request_set_crypt(req, &src, &dst, vc->iv_size, offset);
	ret = crypto_skcipher_encrypt(req);
	skcipher_request_zero(req);
	memzero_explicit(offset, sizeof(offset));
	return ret;
}

/**
 * veil_iv_gen() - make the IV of one encryption sector
 * @vc: the target; gives the IV mode and size.
 * @iv: buffer of vc->iv_size bytes, aligned for the transform.
 * @sector: IV sector number (iv_offset applied, scaled for iv_large_sectors).
 * @in: where veil_iv_uses_data(), the sector the cipher reads: a write's
 *	plaintext (lmk's IV is made from it; a read's is zero until
 *	veil_iv_post()), elephant's copy of it (diffused here), or a read's
 *	ciphertext (tcw unwhitens it here). NULL otherwise.
 * @encrypt: @in is a write's plaintext.
 *
 * A random IV is made for writes only: a read's is the one its write kept
 * in the sector's metadata, which the caller takes from there.
 *
 * Context: any; never sleeps.
 * Return: 0, or the cipher's or hash's error for eboiv, lmk and tcw.
 */
int veil_iv_gen(const struct veil_c *vc, u8 *iv, sector_t sector, u8 *in,
		bool encrypt)
{
	memset(iv, 0, vc->iv_size);

	switch (vc->iv_mode) {
	case VEIL_IV_NULL:
		break;
	case VEIL_IV_PLAIN:
		put_unaligned_le32(sector & 0xffffffff, iv);
		break;
	case VEIL_IV_PLAIN64:
	case VEIL_IV_ESSIV:
		put_unaligned_le64(sector, iv);
		break;
	case VEIL_IV_PLAIN64BE:
		put_unaligned_be64(sector, iv + vc->iv_size - sizeof(u64));
		break;
	case VEIL_IV_BENBI:
		put_unaligned_be64(((u64)sector << vc->benbi_shift) + 1,
				   iv + vc->iv_size - sizeof(u64));
		break;
	case VEIL_IV_EBOIV:
		return veil_iv_eboiv(vc, iv, sector);
	case VEIL_IV_LMK:
		return encrypt ? veil_iv_lmk(vc, iv, sector, in) : 0;
	case VEIL_IV_TCW:
		veil_iv_tcw(vc, iv, sector);
		return encrypt ? 0 : veil_iv_tcw_whiten(vc, sector, in);
	case VEIL_IV_ELEPHANT:
		if (encrypt)
			veil_iv_elephant(vc, sector, in, true);
		return veil_iv_eboiv(vc, iv, sector);
	case VEIL_IV_RANDOM:
		/* A read's comes from the sector's metadata (veil-crypt.c). */
		get_random_bytes(iv, vc->iv_size);
		/*
		 * ccm's first IV byte is its length field's size less one, 1
		 * to 7 (RFC 3610); dm-crypt leaves it random, which fails
		 * most writes. One: 2 bytes of length, 13 random of nonce;
		 * the counter, in the last 2, starts at zero.
		 */
		if (vc->iv_ccm) {
			iv[0] = VEIL_CCM_IV_LENGTH_FIELD - 1;
			memset(iv + vc->iv_size - VEIL_CCM_IV_LENGTH_FIELD, 0,
			       VEIL_CCM_IV_LENGTH_FIELD);
		}
		break;
	}
	return 0;
}
