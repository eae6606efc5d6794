/* SPDX-License-Identifier: GPL-2.0 */
/*
 * dm-veil: device-mapper block encryption target.
 *
 * Shared definitions: the per-target and per-bio structures and the
 * interfaces between the files of the module (docs/design.md lists the
 * files and what each holds).
 */
#ifndef DM_VEIL_H
#define DM_VEIL_H

#include <linux/bio.h>
#include <linux/device-mapper.h>
#include <linux/list.h>
#include <linux/llist.h>
#include <linux/mempool.h>
#include <linux/mutex.h>
#include <linux/scatterlist.h>
#include <linux/spinlock.h>
#include <linux/wait.h>
#include <linux/workqueue.h>
#include <crypto/skcipher.h>

#include "veil-options.h"

#define DM_MSG_PREFIX "veil"

/* Fan-out chunk size in bytes: default and limits. */
#define VEIL_FANOUT_CHUNK_DEFAULT	(64 * 1024)
#define VEIL_FANOUT_CHUNK_MIN		4096
#define VEIL_FANOUT_CHUNK_MAX		(1024 * 1024)
/* A bio is cut into at least this many chunks per online CPU, if it can. */
#define VEIL_CHUNKS_PER_CPU		4
/* A bio wakes at most one helper per this many bytes of its data. */
#define VEIL_WAKE_BYTES			(32 * 1024)

/*
 * CTR reads up to keystream_ahead_max bytes compute their keystream during
 * the read: default, and the most chunks such a read can have.
 */
#define VEIL_KS_AHEAD_MAX_DEFAULT	(64 * 1024)
#define VEIL_KS_MAX_CHUNKS		(VEIL_FANOUT_CHUNK_MAX / VEIL_FANOUT_CHUNK_MIN)
/*
 * A keystream read at most this large whose keystream is not all ready when
 * the device completes it in the submitter's own submit_bio is decrypted
 * there: shorter than waking the crypt queue.
 */
#define VEIL_KS_FINISH_INLINE_MAX	(64 * 1024)

/**
 * enum veil_flag - engine switches from the table line (bits of veil_c.flags)
 * @VEIL_SAME_CPU: same_cpu_crypt: a bio's cipher work stays on one CPU.
 * @VEIL_SUBMIT_FROM_CRYPT: submit_from_crypt_cpus (veil always does so).
 * @VEIL_NO_READ_WQ: no_read_workqueue: decrypt reads in their completion.
 * @VEIL_NO_WRITE_WQ: no_write_workqueue: encrypt writes only in map().
 * @VEIL_NO_FANOUT: no_fanout: never split a request over CPUs.
 * @VEIL_NO_KS_AHEAD: no_keystream_ahead: CTR reads decrypt after the I/O.
 * @VEIL_CTR: the mode is CTR, so reads can use keystream-ahead.
 */
enum veil_flag {
	VEIL_SAME_CPU,
	VEIL_SUBMIT_FROM_CRYPT,
	VEIL_NO_READ_WQ,
	VEIL_NO_WRITE_WQ,
	VEIL_NO_FANOUT,
	VEIL_NO_KS_AHEAD,
	VEIL_CTR,
};

/* Largest IV of any supported mode: one 128-bit cipher block. */
#define VEIL_MAX_IV_SIZE		16

/*
 * Largest transform alignmask whose IVs a request can align: room left in
 * its IV buffer. 15 covers every skcipher in the kernel's tree.
 */
#define VEIL_MAX_IV_ALIGNMASK		15

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
 * enum veil_dir - direction of a counter
 * @VEIL_DECRYPT: reads.
 * @VEIL_ENCRYPT: writes.
 * @VEIL_NR_DIRS: number of directions.
 */
enum veil_dir {
	VEIL_DECRYPT,
	VEIL_ENCRYPT,
	VEIL_NR_DIRS,
};

/**
 * enum veil_where - the context a chunk ran in (status: chunks_<where>)
 * @VEIL_IN_MAP: veil_map(), on the submitting task.
 * @VEIL_IN_ENDIO: a read's completion: in the submitter's own submit_bio
 *	(a ramdisk), or with no_read_workqueue in whatever context the read
 *	completed (softirq after a hard-IRQ completion).
 * @VEIL_IN_QUEUE: the crypt or page-wait queue, as a job's first runner.
 * @VEIL_IN_HELPER: a helper, on the helper queue.
 * @VEIL_NR_WHERE: number of contexts.
 */
enum veil_where {
	VEIL_IN_MAP,
	VEIL_IN_ENDIO,
	VEIL_IN_QUEUE,
	VEIL_IN_HELPER,
	VEIL_NR_WHERE,
};

/**
 * struct veil_stats - per-CPU counters, summed by status
 * @bytes: bytes through the cipher, per direction.
 * @reqs: bios completed, per direction.
 * @cipher_ns: nanoseconds inside cipher calls, per direction.
 * @chunks: chunks this CPU ran.
 * @where: chunks run in each context.
 * @fanout: bios whose chunks were offered to helpers.
 * @helpers_woken: helpers queued (woken) by those offers.
 * @ahead_hit: CTR reads whose keystream was ready when the device finished.
 * @ahead_miss: CTR reads whose keystream was not all ready when the device
 *	finished: the rest was decrypted by the crypt queue, a helper that
 *	finished late, or the submitter's own completion.
 * @ahead_skip: CTR reads without keystream-ahead: no pages or no idle CPU.
 * @page_waits: writes that waited for ciphertext pages.
 */
struct veil_stats {
	u64 bytes[VEIL_NR_DIRS];
	u64 reqs[VEIL_NR_DIRS];
	u64 cipher_ns[VEIL_NR_DIRS];
	u64 chunks;
	u64 where[VEIL_NR_WHERE];
	u64 fanout;
	u64 helpers_woken;
	u64 ahead_hit;
	u64 ahead_miss;
	u64 ahead_skip;
	u64 page_waits;
};

/* Most requests a sleeping context keeps in flight with an async driver. */
#define VEIL_ASYNC_DEPTH		32

struct veil_c;
struct veil_window;

/**
 * struct veil_req - a cipher request with what it points to
 * @vc: the target (a request from its pool goes back there).
 * @window: the sleeping context's requests in flight (veil-crypt.c).
 * @sg_in: source of @req.
 * @sg_out: destination of @req (unused when decrypting in place).
 * @iv_buf: holds the IV of @req, at veil_req_iv().
 * @req: the cipher request; the transform's request context follows it.
 *
 * An async driver reads @sg_in, @sg_out and the IV after the call that
 * queued @req returned: they live here, never on the caller's stack.
 */
struct veil_req {
	struct veil_c *vc;
	struct veil_window *window;
	struct scatterlist sg_in;
	struct scatterlist sg_out;
	u8 iv_buf[VEIL_MAX_IV_SIZE + VEIL_MAX_IV_ALIGNMASK];
	struct skcipher_request req;
};

/**
 * struct veil_helper - one helper of one target
 * @vc: the target.
 * @work: the helper, queued by veil_helpers_offer().
 * @state: enum veil_helper_state (veil-helpers.c).
 * @req: the helper's cipher request; one at a time, as @work never runs
 *	on two CPUs at once.
 */
struct veil_helper {
	struct veil_c *vc;
	struct work_struct work;
	atomic_t state;
	struct veil_req *req;
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
 * @iv_align: alignment of the IV in a request: @tfm's alignmask plus one.
 * @sector_size: encryption sector size in bytes (512..4096).
 * @sector_shift: log2(@sector_size / 512).
 * @iv_large_sectors: IVs count @sector_size units, not 512-byte sectors.
 * @flags: enum veil_flag bits.
 * @fanout_chunk: bytes per chunk when a bio is split over CPUs.
 * @ks_ahead_max: largest CTR read whose keystream is computed ahead.
 * @key: the volume key.
 * @key_lock: serialises key messages with status, which prints the key,
 *	and with suspend and resume.
 * @running: resumed: I/O may run, key messages are refused.
 * @page_pool: reserve of ciphertext pages for writes.
 * @bs: bios that carry ciphertext to @dev.
 * @req_pool: cipher requests of sleeping contexts beyond their own, for
 *	an async driver; set up only when the transform is async.
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
 * @crypt_wq: reads' decryption after the device completed them.
 * @helper_wq: queue of @helpers: unbound, per-CPU with same_cpu_crypt.
 * @page_wait_wq: writes that wait for ciphertext pages, one at a time.
 * @bh: per-CPU softirq work of reads completed in hard IRQ (veil-bh.c).
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
	unsigned int iv_align;
	unsigned int sector_size;
	unsigned int sector_shift;
	bool iv_large_sectors;
	unsigned long flags;
	unsigned int fanout_chunk;
	unsigned int ks_ahead_max;

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

	struct workqueue_struct *crypt_wq;
	struct workqueue_struct *helper_wq;
	struct workqueue_struct *page_wait_wq;
	struct veil_bh __percpu *bh;

	struct veil_stats __percpu *stats;
	unsigned int per_bio_data_size;
};

/**
 * enum veil_job_kind - what the chunks of a bio do
 * @VEIL_JOB_WRITE: encrypt the bio's data into the ciphertext bio.
 * @VEIL_JOB_READ: decrypt the bio's data in place.
 * @VEIL_JOB_KEYSTREAM: CTR keystream of the bio's sectors, during the read;
 *	chunks taken after the read completed decrypt in place instead.
 */
enum veil_job_kind {
	VEIL_JOB_WRITE,
	VEIL_JOB_READ,
	VEIL_JOB_KEYSTREAM,
};

/**
 * struct veil_io - per-bio state, in the bio's dm per-bio data
 * @vc: the target.
 * @base: the bio dm handed to veil_map().
 * @iter: @base's data as it was at map time.
 * @sector: target-relative sector of @base, in 512-byte sectors.
 * @submitter: the task that mapped @base; compared, never dereferenced.
 * @orig_end_io: read: @base's completion, restored when the read is done.
 * @orig_private: read: @base's bi_private, restored with @orig_end_io.
 * @out: write: the ciphertext bio.
 * @ks_pages: keystream read: the keystream, one page per 4 KiB of data.
 * @kind: what the chunks do.
 * @chunk_bytes: bytes per chunk.
 * @nr_chunks: chunks in the job.
 * @next_chunk: the next chunk to claim; under vc->jobs_lock once @listed.
 * @pending: chunks not done, plus one hold by the job's runner (or by the
 *	device read, for a keystream job); the put that drops it to zero
 *	finishes the job.
 * @node: entry in vc->jobs while @listed and chunks are unclaimed.
 * @listed: offered to helpers: claims take vc->jobs_lock from then on.
 * @error: a cipher call or the device read failed; later chunks are skipped.
 * @read_done: keystream job: the device read completed.
 * @ks_ready: keystream job: chunks whose keystream awaits the XOR.
 * @work: the job's runner when it runs from a queue.
 * @bh_node: entry in a CPU's softirq list (veil_bh_defer()).
 * @bh_fn: what runs in softirq.
 * @resume_idx: chunk an async cipher call left unfinished (veil_io_resume).
 * @resume_off: bytes of that chunk already done.
 * @req: the runner's cipher request; must be last.
 */
struct veil_io {
	struct veil_c *vc;
	struct bio *base;
	struct bvec_iter iter;
	sector_t sector;
	struct task_struct *submitter;
	bio_end_io_t *orig_end_io;
	void *orig_private;
	struct bio *out;
	struct page **ks_pages;

	enum veil_job_kind kind;
	unsigned int chunk_bytes;
	unsigned int nr_chunks;
	unsigned int next_chunk;
	atomic_t pending;
	struct list_head node;
	bool listed;
	bool error;
	bool read_done;
	DECLARE_BITMAP(ks_ready, VEIL_KS_MAX_CHUNKS);

	struct work_struct work;
	struct llist_node bh_node;
	void (*bh_fn)(struct veil_io *io);
	unsigned int resume_idx;
	unsigned int resume_off;

	struct veil_req req;
};

/*
 * The IV of @r, aligned as @vc's transform asks: a misaligned IV makes the
 * cipher walk allocate an aligned copy for every request.
 */
static inline u8 *veil_req_iv(const struct veil_c *vc, struct veil_req *r)
{
	return PTR_ALIGN(&r->iv_buf[0], vc->iv_align);
}

/* The per-bio data of @bio. */
static inline struct veil_io *veil_io_of(struct veil_c *vc, struct bio *bio)
{
	return dm_per_bio_data(bio, vc->per_bio_data_size);
}

/* Bytes of data in chunk @idx of @io. */
static inline unsigned int veil_chunk_len(const struct veil_io *io,
					  unsigned int idx)
{
	return min(io->chunk_bytes, io->iter.bi_size - idx * io->chunk_bytes);
}

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
int veil_key_decode(struct veil_key *key, char *str, char **error);
int veil_key_load(struct veil_c *vc, struct veil_key *key, char **error);
int veil_key_wipe(struct veil_c *vc);
void veil_key_free(struct veil_key *key);
unsigned int veil_key_emit(const struct veil_key *key, char *result,
			   unsigned int maxlen);

/* veil-crypt.c */
int veil_crypt_chunk(struct veil_io *io, struct veil_req *r, unsigned int idx,
		     enum veil_job_kind kind, unsigned int *done, bool atomic);
void veil_crypt_xor(struct veil_io *io, unsigned int idx);

/* veil-pages.c */
int veil_pages_init(struct dm_target *ti, struct veil_c *vc);
void veil_pages_exit(struct veil_c *vc);
bool veil_pages_reserve(struct veil_c *vc, unsigned int nr);
bool veil_pages_reserve_keystream(struct veil_c *vc, unsigned int nr);
void veil_pages_unreserve(struct veil_c *vc, unsigned int nr);
struct bio *veil_pages_alloc(struct veil_io *io, bool may_wait);
void veil_pages_free(struct veil_c *vc, struct bio *bio);
struct page *veil_page_get(struct veil_c *vc, gfp_t gfp);
void veil_pages_put(struct veil_c *vc, struct list_head *pages);
void veil_pages_drain(struct veil_c *vc);

/* veil-job.c */
void veil_job_plan(struct veil_io *io, enum veil_job_kind kind, bool spread);
void veil_job_list(struct veil_io *io);
bool veil_job_claim(struct veil_io *io, unsigned int *idx);
struct veil_io *veil_job_claim_listed(struct veil_c *vc, unsigned int *idx);
bool veil_job_unclaimed(struct veil_io *io);
void veil_job_put(struct veil_io *io);
bool veil_job_run_chunk(struct veil_io *io, struct veil_req *r,
			unsigned int idx, unsigned int from,
			enum veil_where where, bool atomic);
void veil_job_run(struct veil_io *io, enum veil_where where, bool atomic);

/* veil-helpers.c */
int veil_helpers_init(struct dm_target *ti, struct veil_c *vc);
void veil_helpers_exit(struct veil_c *vc);
bool veil_may_fanout(struct veil_c *vc, enum veil_job_kind kind);
unsigned int veil_helpers_wanted(struct veil_io *io, bool runner);
bool veil_helpers_available(struct veil_c *vc);
unsigned int veil_helpers_offer(struct veil_io *io, unsigned int max);

/* veil-keystream.c */
bool veil_ks_start(struct veil_io *io);
void veil_ks_chunk_done(struct veil_io *io, unsigned int idx);
void veil_ks_read_done(struct veil_io *io, blk_status_t status);
void veil_ks_free(struct veil_io *io);

/* veil-io.c */
int veil_io_init(struct dm_target *ti, struct veil_c *vc);
void veil_io_exit(struct veil_c *vc);
int veil_io_map(struct veil_c *vc, struct bio *bio, sector_t sector);
bool veil_io_in_submitter(const struct veil_io *io);
void veil_io_finish(struct veil_io *io);
void veil_io_resume(struct veil_io *io);

/* veil-bh.c */
int veil_bh_init(struct dm_target *ti, struct veil_c *vc);
void veil_bh_exit(struct veil_c *vc);
void veil_bh_defer(struct veil_io *io, void (*fn)(struct veil_io *io));

/* veil-stats.c */
int veil_stats_init(struct veil_c *vc);
void veil_stats_exit(struct veil_c *vc);
void veil_stats_reset(struct veil_c *vc);
unsigned int veil_stats_emit(struct veil_c *vc, char *result,
			     unsigned int maxlen);

#endif /* DM_VEIL_H */
