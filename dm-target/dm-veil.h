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
#define VEIL_OPT_SAME_CPU		"same_cpu_crypt"
#define VEIL_OPT_SUBMIT_FROM_CRYPT	"submit_from_crypt_cpus"
#define VEIL_OPT_NO_READ_WQ		"no_read_workqueue"
#define VEIL_OPT_NO_WRITE_WQ		"no_write_workqueue"
#define VEIL_OPT_SECTOR_SIZE		"sector_size"
#define VEIL_OPT_IV_LARGE_SECTORS	"iv_large_sectors"
#define VEIL_OPT_FANOUT_CHUNK		"fanout_chunk"
#define VEIL_OPT_NO_FANOUT		"no_fanout"
#define VEIL_OPT_NO_KS_AHEAD		"no_keystream_ahead"
#define VEIL_OPT_KS_AHEAD_MAX		"keystream_ahead_max"
#define VEIL_MAX_OPTS			11

/* Fan-out chunk size in bytes: default and limits. */
#define VEIL_FANOUT_CHUNK_DEFAULT	(64 * 1024)
#define VEIL_FANOUT_CHUNK_MIN		4096
#define VEIL_FANOUT_CHUNK_MAX		(1024 * 1024)
/* A bio is cut into at least this many chunks per online CPU, if it can. */
#define VEIL_CHUNKS_PER_CPU		4

/*
 * CTR reads up to keystream_ahead_max bytes compute their keystream during
 * the read: default, and the most chunks such a read can have.
 */
#define VEIL_KS_AHEAD_MAX_DEFAULT	(64 * 1024)
#define VEIL_KS_MAX_CHUNKS		(VEIL_FANOUT_CHUNK_MAX / VEIL_FANOUT_CHUNK_MIN)

/**
 * enum veil_flag - engine switches from the table line (bits of veil_c.flags)
 * @VEIL_SAME_CPU: same_cpu_crypt: no fan-out, work stays on one CPU.
 * @VEIL_SUBMIT_FROM_CRYPT: submit_from_crypt_cpus (always so in veil).
 * @VEIL_NO_READ_WQ: no_read_workqueue: decrypt small reads in the completion.
 * @VEIL_NO_WRITE_WQ: no_write_workqueue: encrypt writes only in map().
 * @VEIL_NO_FANOUT: no_fanout: never split a request over CPUs.
 * @VEIL_NO_KS_AHEAD: no_keystream_ahead: CTR reads decrypt after the I/O.
 * @VEIL_CTR: the mode is CTR, so reads can use keystream-ahead.
 * @VEIL_SYNC_TFM: the transform never completes asynchronously.
 */
enum veil_flag {
	VEIL_SAME_CPU,
	VEIL_SUBMIT_FROM_CRYPT,
	VEIL_NO_READ_WQ,
	VEIL_NO_WRITE_WQ,
	VEIL_NO_FANOUT,
	VEIL_NO_KS_AHEAD,
	VEIL_CTR,
	VEIL_SYNC_TFM,
};

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
 * struct veil_stats - per-CPU counters, summed by status
 * @bytes: bytes through the cipher, [0] decrypted, [1] encrypted.
 * @reqs: bios completed, [0] reads, [1] writes.
 * @cipher_ns: nanoseconds inside cipher calls, [0] decrypt, [1] encrypt.
 * @chunks: chunks this CPU ran.
 * @fanout: bios split over more than one worker.
 * @ahead_hit: CTR reads whose keystream was ready when the device finished.
 * @ahead_miss: CTR reads that waited for their keystream after the device.
 * @ahead_skip: CTR reads that found no pages for a keystream buffer.
 */
struct veil_stats {
	u64 bytes[2];
	u64 reqs[2];
	u64 cipher_ns[2];
	u64 chunks;
	u64 fanout;
	u64 ahead_hit;
	u64 ahead_miss;
	u64 ahead_skip;
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
 * @flags: enum veil_flag bits.
 * @fanout_chunk: bytes per chunk when a bio is split over CPUs.
 * @ks_ahead_max: largest CTR read whose keystream is computed ahead.
 * @key: the volume key.
 * @page_pool: pages for write ciphertext and CTR keystream.
 * @bs: bios that carry ciphertext to @dev, and keystream page holders.
 * @alloc_lock: serialises page allocations that may wait on @page_pool.
 * @req_pools: per-CPU pools of cipher requests for fan-out helpers.
 * @req_size: size of one struct veil_req with its request context.
 * @wq: per-CPU queue: fan-out participants, each on the CPU chosen for it.
 * @fanout_wq: unbound queue: jobs that run alone, on whichever CPU is free.
 * @active_jobs: jobs started and not finished; fan-out stops at one per CPU.
 * @stats: per-CPU counters.
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
	unsigned long flags;
	unsigned int fanout_chunk;
	unsigned int ks_ahead_max;

	struct veil_key key;

	mempool_t page_pool;
	struct bio_set bs;
	struct mutex alloc_lock;	/* see veil_alloc_pages() */
	mempool_t __percpu *req_pools;
	unsigned int req_size;
	struct workqueue_struct *wq;
	struct workqueue_struct *fanout_wq;
	atomic_t active_jobs;
	struct veil_stats __percpu *stats;
	unsigned int per_bio_data_size;
};

/**
 * enum veil_job_kind - what the chunks of a bio do
 * @VEIL_JOB_WRITE: encrypt the bio's data into the ciphertext bio.
 * @VEIL_JOB_READ: decrypt the bio's data in place.
 * @VEIL_JOB_KEYSTREAM: CTR keystream of the bio's sectors, during the read.
 */
enum veil_job_kind {
	VEIL_JOB_WRITE,
	VEIL_JOB_READ,
	VEIL_JOB_KEYSTREAM,
};

struct veil_io;

/**
 * struct veil_req - one participant of a job: a cipher request and its work
 * @io: the job.
 * @work: runs the participant on a workqueue.
 * @pool: the pool it came from; NULL for the one inside struct veil_io.
 * @iv: IV buffer of @req.
 * @req: the cipher request; the tfm's request context follows it.
 */
struct veil_req {
	struct veil_io *io;
	struct work_struct work;
	mempool_t *pool;
	u8 iv[VEIL_MAX_IV_SIZE] __aligned(sizeof(u64));
	struct skcipher_request req;
};

/**
 * struct veil_io - per-bio state, in the bio's dm per-bio data
 * @vc: the target.
 * @base: the bio dm handed to veil_map().
 * @out: write: the ciphertext bio; keystream: holder of the keystream pages.
 * @iter: @base's data as it was at map time.
 * @sector: target-relative sector of @base, in 512-byte sectors.
 * @orig_end_io: @base's completion, restored when a read is done.
 * @orig_private: @base's bi_private, restored with @orig_end_io.
 * @kind: what the chunks do.
 * @chunk_bytes: bytes per chunk.
 * @nr_chunks: chunks in the job.
 * @next_chunk: next chunk to take; participants take them in turn.
 * @participants: participants that have not left yet.
 * @ahead_pending: keystream read: the device I/O and the keystream job.
 * @read_done: keystream read: the device read completed without error.
 * @shared: the job has had more than one participant.
 * @error: a cipher call failed.
 * @ks_chunks: keystream read: chunks whose keystream awaits the XOR.
 * @req0: the participant that needs no allocation; must be last.
 */
struct veil_io {
	struct veil_c *vc;
	struct bio *base;
	struct bio *out;
	struct bvec_iter iter;
	sector_t sector;
	bio_end_io_t *orig_end_io;
	void *orig_private;

	enum veil_job_kind kind;
	unsigned int chunk_bytes;
	unsigned int nr_chunks;
	atomic_t next_chunk;
	atomic_t participants;
	atomic_t ahead_pending;
	bool read_done;
	bool shared;
	bool error;
	DECLARE_BITMAP(ks_chunks, VEIL_KS_MAX_CHUNKS);

	struct veil_req req0;
};

/* veil-table.c */
int veil_parse_cipher(struct dm_target *ti, struct veil_c *vc,
		      const char *spec);
int veil_parse_options(struct dm_target *ti, struct veil_c *vc,
		       unsigned int argc, char **argv);
unsigned int veil_emit_options(struct dm_target *ti, struct veil_c *vc,
			       char *result, unsigned int maxlen);

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
int veil_crypt_chunk(struct veil_io *io, struct veil_req *r, unsigned int idx,
		     enum veil_job_kind kind, bool may_sleep);
void veil_crypt_xor_keystream(struct veil_io *io);

/* veil-engine.c */
int veil_engine_init(struct dm_target *ti, struct veil_c *vc);
void veil_engine_exit(struct veil_c *vc);
int veil_engine_map(struct veil_c *vc, struct bio *bio, sector_t sector);

/* veil-stats.c */
int veil_stats_init(struct veil_c *vc);
void veil_stats_exit(struct veil_c *vc);
void veil_stats_reset(struct veil_c *vc);
unsigned int veil_stats_emit(struct veil_c *vc, char *result,
			     unsigned int maxlen);

#endif /* DM_VEIL_H */
