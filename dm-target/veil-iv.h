/* SPDX-License-Identifier: GPL-2.0 */
/*
 * dm-veil IV generators (veil-iv.c).
 */
#ifndef DM_VEIL_IV_H
#define DM_VEIL_IV_H

#include <linux/types.h>

struct veil_c;

/* Largest IV of a transform: adiantum's and hctr2's 32 bytes. */
#define VEIL_MAX_IV_SIZE		32

/*
 * Largest transform alignmask whose IVs a request can align: room left in
 * its IV buffer. 15 covers every skcipher in the kernel's tree.
 */
#define VEIL_MAX_IV_ALIGNMASK		15

/**
 * enum veil_iv_mode - how the IV of one encryption sector is made
 * @VEIL_IV_NULL: all zero.
 * @VEIL_IV_PLAIN: low 32 bits of the sector number, little endian.
 * @VEIL_IV_PLAIN64: 64-bit sector number, little endian.
 * @VEIL_IV_PLAIN64BE: 64-bit sector number, big endian, in the last 8 bytes.
 * @VEIL_IV_BENBI: 64-bit count of cipher blocks before the sector, plus
 *	one, big endian, in the last 8 bytes.
 * @VEIL_IV_EBOIV: the sector's byte offset (IV sector times sector size),
 *	encrypted with the volume key: BitLocker's IV.
 * @VEIL_IV_LMK: loop-AES's: an MD5 state over an optional seed, the
 *	sector's plaintext past its first block and the sector number; a
 *	read decrypts with a zero IV and XORs it into the first block after.
 * @VEIL_IV_TCW: TrueCrypt's: a seed XORed with the sector number, and the
 *	ciphertext whitened with a key-derived 8-byte pattern per sector.
 * @VEIL_IV_ELEPHANT: BitLocker's with the Elephant diffuser: eboiv, and
 *	the plaintext mixed with a per-sector key and diffused before CBC.
 * @VEIL_IV_ESSIV: plain64 IV, encrypted by the kernel's essiv template.
 * @VEIL_IV_RANDOM: random bytes for every write, kept in the sector's
 *	metadata on a dm-integrity device (veil-integrity.c), read from
 *	there for a read.
 */
enum veil_iv_mode {
	VEIL_IV_NULL,
	VEIL_IV_PLAIN,
	VEIL_IV_PLAIN64,
	VEIL_IV_PLAIN64BE,
	VEIL_IV_BENBI,
	VEIL_IV_EBOIV,
	VEIL_IV_LMK,
	VEIL_IV_TCW,
	VEIL_IV_ELEPHANT,
	VEIL_IV_ESSIV,
	VEIL_IV_RANDOM,
};

/**
 * veil_iv_uses_data() - whether the IV generator reads or changes the data
 * @mode: the IV mode.
 *
 * lmk makes a write's IV from its plaintext and fixes a read's first block
 * after decryption; tcw unwhitens a read's ciphertext before decryption
 * and whitens a write's after encryption. Their transforms are
 * synchronous, so that the step after the cipher follows its call.
 *
 * elephant diffuses a copy of a write's plaintext before encryption and a
 * read's plaintext after decryption.
 *
 * Return: true for lmk, tcw and elephant.
 */
static inline bool veil_iv_uses_data(enum veil_iv_mode mode)
{
	return mode == VEIL_IV_LMK || mode == VEIL_IV_TCW ||
	       mode == VEIL_IV_ELEPHANT;
}

/**
 * veil_iv_encrypts_copy() - whether a write encrypts a processed copy
 * @mode: the IV mode.
 *
 * elephant changes the plaintext before encryption, and the bio's own
 * pages must stay as the writer left them: the plaintext is copied to the
 * ciphertext page, processed there by veil_iv_gen() and encrypted in
 * place.
 *
 * Return: true for elephant.
 */
static inline bool veil_iv_encrypts_copy(enum veil_iv_mode mode)
{
	return mode == VEIL_IV_ELEPHANT;
}

int veil_iv_parse(const char *name, const char *opts, enum veil_iv_mode *mode,
		  char **error);
int veil_iv_cipher_api(enum veil_iv_mode mode, const char *base,
		       const char *opts, char *api, size_t len);
int veil_iv_setup(struct veil_c *vc, char **error);
unsigned int veil_iv_key_extra(const struct veil_c *vc, unsigned int size);
int veil_iv_setkey(struct veil_c *vc, const u8 *key, unsigned int size,
		   unsigned int part);
void veil_iv_exit(struct veil_c *vc);
int veil_iv_gen(const struct veil_c *vc, u8 *iv, sector_t sector, u8 *in,
		bool encrypt);
int veil_iv_post(const struct veil_c *vc, sector_t sector, u8 *out,
		 bool encrypt);

#endif /* DM_VEIL_IV_H */
