/* SPDX-License-Identifier: GPL-2.0 */
/*
 * dm-veil: device-mapper block encryption target.
 *
 * Shared definitions: the per-target and per-bio structures and the
 * interfaces between the files of the module (table parsing, IV
 * generation, keys and the data path).
 */
#ifndef DM_VEIL_H
#define DM_VEIL_H

#include <linux/bio.h>
#include <linux/device-mapper.h>
#include <linux/mempool.h>
#include <linux/workqueue.h>
#include <crypto/skcipher.h>

#define DM_MSG_PREFIX "veil"

/* Table-line option strings, shared by the parser and the status output. */
#define VEIL_OPT_ALLOW_DISCARDS		"allow_discards"
#define VEIL_OPT_SECTOR_SIZE		"sector_size"
#define VEIL_OPT_IV_LARGE_SECTORS	"iv_large_sectors"
#define VEIL_MAX_OPTS			3

/* Largest IV of any supported mode: one 128-bit cipher block. */
#define VEIL_MAX_IV_SIZE		16

/* Largest encryption sector, as dm-crypt; never more than one page. */
#define VEIL_MAX_SECTOR_SIZE		4096

/* Longest key accepted, in bytes (two 256-bit XTS halves with room). */
#define VEIL_MAX_KEY_SIZE		128

/**
 * enum veil_iv_mode - how the IV of one encryption sector is made
 * @VEIL_IV_NULL: all zero.
 * @VEIL_IV_PLAIN: low 32 bits of the sector number, little endian.
 * @VEIL_IV_PLAIN64: 64-bit sector number, little endian.
 * @VEIL_IV_PLAIN64BE: 64-bit sector number, big endian, in the last 8 bytes.
 * @VEIL_IV_ESSIV: plain64 IV, encrypted by the kernel's essiv template.
 */
enum veil_iv_mode {
	VEIL_IV_NULL,
	VEIL_IV_PLAIN,
	VEIL_IV_PLAIN64,
	VEIL_IV_PLAIN64BE,
	VEIL_IV_ESSIV,
};

/**
 * struct veil_key - the volume key and where it came from
 * @size: key length in bytes, fixed by the table line.
 * @bytes: the key itself, @size bytes; wiped before it is freed.
 * @ref: "<type>:<description>" of a kernel keyring key, NULL for a hex key.
 * @valid: the cipher holds this key; false after "key wipe".
 */
struct veil_key {
	unsigned int size;
	u8 *bytes;
	char *ref;
	bool valid;
};

/**
 * struct veil_c - one veil target instance
 * @dev: the underlying (ciphertext) device.
 * @start: first sector of the mapping on @dev, in 512-byte sectors.
 * @iv_offset: added to the target sector before the IV is made.
 * @cipher_string: the cipher spec exactly as the table line gave it.
 * @tfm: the skcipher ("xts(aes)", "essiv(cbc(aes),sha256)", ...).
 * @iv_mode: how IVs are made.
 * @iv_size: IV length of @tfm in bytes.
 * @sector_size: encryption sector size in bytes (512..4096).
 * @sector_shift: log2(@sector_size / 512).
 * @iv_large_sectors: IVs count @sector_size units, not 512-byte sectors.
 * @key: the volume key.
 * @page_pool: pages for the ciphertext of writes.
 * @bs: bios that carry ciphertext to @dev.
 * @alloc_lock: serialises page allocations that may wait on @page_pool.
 * @wq: the crypto workqueue.
 * @per_bio_data_size: size of struct veil_io plus the cipher request.
 */
struct veil_c {
	struct dm_dev *dev;
	sector_t start;
	u64 iv_offset;
	char *cipher_string;

	struct crypto_skcipher *tfm;
	enum veil_iv_mode iv_mode;
	unsigned int iv_size;
	unsigned int sector_size;
	unsigned int sector_shift;
	bool iv_large_sectors;

	struct veil_key key;

	mempool_t page_pool;
	struct bio_set bs;
	struct mutex alloc_lock;	/* see veil_alloc_clone() */
	struct workqueue_struct *wq;
	unsigned int per_bio_data_size;
};

/**
 * struct veil_io - per-bio state, in the bio's dm per-bio data
 * @vc: the target.
 * @base: the bio dm handed to veil_map().
 * @iter: @base's data as it was at map time.
 * @sector: target-relative sector of @base, in 512-byte sectors.
 * @orig_end_io: @base's completion, restored after a read is decrypted.
 * @orig_private: @base's bi_private, restored with @orig_end_io.
 * @work: runs the cipher in process context.
 * @iv: IV buffer of @req.
 * @req: the cipher request; the tfm's request context follows it.
 */
struct veil_io {
	struct veil_c *vc;
	struct bio *base;
	struct bvec_iter iter;
	sector_t sector;
	bio_end_io_t *orig_end_io;
	void *orig_private;
	struct work_struct work;
	u8 iv[VEIL_MAX_IV_SIZE] __aligned(sizeof(u64));
	struct skcipher_request req;
};

/* veil-table.c */
int veil_parse_cipher(struct dm_target *ti, struct veil_c *vc,
		      const char *spec);
int veil_parse_options(struct dm_target *ti, struct veil_c *vc,
		       unsigned int argc, char **argv);

/* veil-iv.c */
int veil_iv_parse(const char *name, const char *opts, enum veil_iv_mode *mode,
		  char **error);
int veil_iv_cipher_api(enum veil_iv_mode mode, const char *base,
		       const char *opts, char *api, size_t len);
void veil_iv_gen(const struct veil_c *vc, u8 *iv, sector_t sector);

/* veil-key.c */
int veil_key_set(struct veil_c *vc, char *str, char **error);
void veil_key_wipe(struct veil_c *vc);
void veil_key_free(struct veil_key *key);
unsigned int veil_key_emit(const struct veil_key *key, char *result,
			   unsigned int maxlen);

/* veil-crypt.c */
int veil_crypt_init(struct dm_target *ti, struct veil_c *vc);
void veil_crypt_exit(struct veil_c *vc);
int veil_crypt_map(struct veil_c *vc, struct bio *bio, sector_t sector);

#endif /* DM_VEIL_H */
