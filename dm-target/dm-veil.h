/* SPDX-License-Identifier: GPL-2.0 */
/*
 * dm-veil: device-mapper block encryption target.
 *
 * The target instance, struct veil_c, and the limits of its table line.
 * Each file's interface is in its own header (docs/design.md lists the
 * files). Calls run one way: veil-target.c calls the table, key, stats,
 * pages, io and integrity files; the data path runs veil-io.c ->
 * veil-keystream.c -> veil-bh.c, veil-helpers.c -> veil-job.c ->
 * veil-crypt.c, veil-pages.c, veil-integrity.c, veil-masks.c -> veil-iv.c;
 * veil-key.c calls veil-masks.c to stop and start them. Completions
 * come back through function pointers only.
 */
#ifndef DM_VEIL_H
#define DM_VEIL_H

#include <linux/bio.h>
#include <linux/device-mapper.h>
#include <linux/list.h>
#include <linux/mempool.h>
#include <linux/mutex.h>
#include <linux/spinlock.h>
#include <linux/wait.h>
#include <linux/workqueue.h>
#include <crypto/aead.h>
#include <crypto/skcipher.h>

#include "veil-iv.h"
#include "veil-key.h"
#include "veil-options.h"

#define DM_MSG_PREFIX "veil"

/* Fan-out chunk size in bytes: default and limits. */
#define VEIL_FANOUT_CHUNK_DEFAULT	(64 * 1024)
#define VEIL_FANOUT_CHUNK_MIN		4096
#define VEIL_FANOUT_CHUNK_MAX		(1024 * 1024)

/*
 * CTR reads up to keystream_ahead_max bytes compute their keystream during
 * the read: the default.
 */
#define VEIL_KS_AHEAD_MAX_DEFAULT	(64 * 1024)

/* Most keys of a multi-key table: loop-AES uses 64. */
#define VEIL_MAX_KEYCOUNT		256

/* Largest encryption sector, as dm-crypt; never more than one page. */
#define VEIL_MAX_SECTOR_SIZE		4096

/**
 * enum veil_flag - engine switches from the table line (bits of veil_c.flags)
 * @VEIL_SAME_CPU: same_cpu_crypt: a bio's cipher work stays on one CPU.
 * @VEIL_HIGH_PRIORITY: high_priority: the engine's queues are high priority.
 * @VEIL_SUBMIT_FROM_CRYPT: submit_from_crypt_cpus (veil always does so).
 * @VEIL_NO_READ_WQ: no_read_workqueue: decrypt reads in their completion.
 * @VEIL_NO_WRITE_WQ: no_write_workqueue: encrypt writes only in map().
 * @VEIL_NO_FANOUT: no_fanout: never split a request over CPUs.
 * @VEIL_NO_KS_AHEAD: no_keystream_ahead: CTR reads decrypt after the I/O.
 * @VEIL_CTR: the mode is CTR, so reads can use keystream-ahead.
 */
enum veil_flag {
	VEIL_SAME_CPU,
	VEIL_HIGH_PRIORITY,
	VEIL_SUBMIT_FROM_CRYPT,
	VEIL_NO_READ_WQ,
	VEIL_NO_WRITE_WQ,
	VEIL_NO_FANOUT,
	VEIL_NO_KS_AHEAD,
	VEIL_CTR,
};

struct veil_bh;
struct veil_costs;
struct veil_helper;
struct veil_masks;
struct veil_stats;

/**
 * struct veil_c - one veil target instance
 * @dev: the underlying (ciphertext) device.
 * @start: first sector of the mapping on @dev, in 512-byte sectors.
 * @iv_offset: added to the target sector before the IV is made.
 * @cipher_string: the cipher spec exactly as the table line gave it.
 * @tfm: the skcipher ("xts(aes)", "essiv(cbc(aes),sha256)", ...): @tfms[0],
 *	named for the properties all of them share; @tfms owns it.
 * @tfms: the transforms of a multi-key table (dm-crypt's keycount), each
 *	with its part of the key; sector s (in 512-byte units, iv_offset
 *	added) uses @tfms[s % @tfms_count], as in dm-crypt.
 * @tfms_count: entries of @tfms, a power of two (1 without a keycount).
 * @aead: integrity:<bytes>:aead: the authenticated cipher, used in place of
 *	@tfm, @tfms (empty then) and @tfms_count.
 * @integrity_kind: VEIL_INTEGRITY_AEAD or VEIL_INTEGRITY_NONE from
 *	integrity:<bytes>:<kind>, NULL without the option.
 * @tag_size_used: the <bytes> of integrity:<bytes>:<kind>.
 * @mac_key_size: authenc(hmac(...),...): key bytes of the MAC, at the
 *	key's end.
 * @mac_key_size_set: integrity_key_size gave @mac_key_size.
 * @tuple_size: metadata bytes per encryption sector on the device, 0 when
 *	veil keeps nothing there (veil-integrity.c).
 * @auth_size: bytes of the AEAD's tag, first in each tuple.
 * @iv_stored: bytes of the random IV, after the tag in each tuple.
 * @tag_pool: metadata buffers of VEIL_TAG_POOL_BYTES, for when kmalloc
 *	fails.
 * @iv_mode: how IVs are made.
 * @iv_size: IV length of @tfm in bytes.
 * @iv_align: alignment of the IV in a request: @tfm's alignmask plus one.
 * @sector_size: encryption sector size in bytes (512..4096).
 * @sector_shift: log2(@sector_size / 512).
 * @iv_large_sectors: IVs count @sector_size units, not 512-byte sectors.
 * @benbi_shift: benbi: log2 of the cipher blocks in 512 bytes.
 * @iv_ccm: random: the AEAD is ccm(), whose IV's first byte is not random.
 * @iv_tfm: eboiv: a synchronous instance of @tfm's algorithm, with the
 *	first key, that encrypts each sector's byte offset into its IV.
 * @lmk_hash: lmk: MD5.
 * @lmk_seed: lmk: the seed, LMK_SEED_SIZE bytes, or NULL without one.
 * @elephant_key: elephant: the second half of the key, expanded for the
 *	AES library, which makes each sector's key.
 * @tcw_crc: tcw: CRC32.
 * @tcw_seed: tcw: the IV seed (@iv_size bytes) and the whitening key
 *	(16 bytes), from the end of the key.
 * @flags: enum veil_flag bits.
 * @fanout_chunk: bytes per chunk when a bio is split over CPUs.
 * @ks_ahead_max: largest CTR read whose keystream is computed ahead.
 * @aead_masks: aead_masks:<n>: slots of write masks (veil-masks.c), 0 for
 *	none.
 * @masks: the write masks of a gcm(aes) or rfc4106(gcm(aes)) table with
 *	the random IV, NULL for any other.
 * @key: the volume key.
 * @key_lock: serialises key messages with status, which prints the key,
 *	and with suspend and resume.
 * @running: resumed: I/O may run, key messages are refused.
 * @page_pool: reserve of ciphertext pages for writes.
 * @bs: bios that carry ciphertext to @dev.
 * @req_pool: cipher requests of a context beyond its own, for an async
 *	driver (taken without waiting in atomic context); set up only when
 *	the transform is async.
 * @page_wait_lock: held by the one writer that may wait on @page_pool.
 * @pages_in_flight: ciphertext and keystream pages held by this target.
 * @page_waiters: writers waiting for pages; others take none meanwhile.
 * @pages_max: cap on @pages_in_flight beyond which writes wait.
 * @pages_freed: woken when pages are given back.
 * @stash_lock: protects @stash and @stash_pages; taken in any context.
 * @stash: free pages kept for reuse (veil-pages.c), linked by page->lru.
 * @stash_pages: pages in @stash.
 * @jobs_lock: protects @jobs and the claims of listed jobs.
 * @jobs: jobs with chunks that helpers may take.
 * @helpers: the helpers, one per possible CPU.
 * @nr_helpers: entries of @helpers set up.
 * @helpers_queued: helpers queued and not yet started.
 * @handoffs_waiting: reads whose decryption their submitter's own
 *	completion handed to @crypt_wq, not yet started (veil-io.c).
 * @crypt_wq: reads' decryption after the device completed them.
 * @helper_wq: queue of @helpers: unbound, per-CPU with same_cpu_crypt.
 * @page_wait_wq: writes that wait for ciphertext pages, one at a time.
 * @bh: per-CPU softirq work of reads completed in hard IRQ (veil-bh.c).
 * @stats: per-CPU counters.
 * @costs: what a helper costs and saves, measured (veil-stats.h).
 * @per_bio_data_size: size of struct veil_io plus the cipher request.
 */
struct veil_c {
	struct dm_dev *dev;
	sector_t start;
	u64 iv_offset;
	char *cipher_string;

	struct crypto_skcipher *tfm;
	struct crypto_skcipher **tfms;
	unsigned int tfms_count;
	struct crypto_aead *aead;
	const char *integrity_kind;
	unsigned int tag_size_used;
	unsigned int mac_key_size;
	bool mac_key_size_set;
	unsigned int tuple_size;
	unsigned int auth_size;
	unsigned int iv_stored;
	mempool_t tag_pool;
	enum veil_iv_mode iv_mode;
	unsigned int iv_size;
	unsigned int iv_align;
	unsigned int sector_size;
	unsigned int sector_shift;
	bool iv_large_sectors;
	unsigned int benbi_shift;
	bool iv_ccm;
	struct crypto_sync_skcipher *iv_tfm;
	struct crypto_shash *lmk_hash;
	u8 *lmk_seed;
	struct crypto_aes_ctx *elephant_key;
	struct crypto_shash *tcw_crc;
	u8 *tcw_seed;
	unsigned long flags;
	unsigned int fanout_chunk;
	unsigned int ks_ahead_max;
	unsigned int aead_masks;
	struct veil_masks *masks;

	struct veil_key key;
	struct mutex key_lock;		/* key messages vs. status, resume */
	bool running;

	mempool_t page_pool;
	struct bio_set bs;
	mempool_t req_pool;
	struct mutex page_wait_lock;	/* the one writer that may wait */
	atomic_t pages_in_flight;
	atomic_t page_waiters;
	unsigned int pages_max;
	wait_queue_head_t pages_freed;
	spinlock_t stash_lock;		/* @stash, @stash_pages */
	struct list_head stash;
	unsigned int stash_pages;

	spinlock_t jobs_lock;		/* @jobs and listed jobs' claims */
	struct list_head jobs;
	struct veil_helper *helpers;
	unsigned int nr_helpers;
	atomic_t helpers_queued;
	atomic_t handoffs_waiting;

	struct workqueue_struct *crypt_wq;
	struct workqueue_struct *helper_wq;
	struct workqueue_struct *page_wait_wq;
	struct veil_bh __percpu *bh;

	struct veil_stats __percpu *stats;
	struct veil_costs *costs;
	unsigned int per_bio_data_size;
};

#endif /* DM_VEIL_H */
