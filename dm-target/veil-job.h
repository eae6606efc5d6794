/* SPDX-License-Identifier: GPL-2.0 */
/*
 * dm-veil jobs (veil-job.c): the per-bio state, a bio's data cut into
 * chunks, the claims, and the bio's completion by the job's last put.
 */
#ifndef DM_VEIL_JOB_H
#define DM_VEIL_JOB_H

#include <linux/bio.h>
#include <linux/bitops.h>
#include <linux/llist.h>
#include <linux/preempt.h>
#include <linux/sched.h>

#include "dm-veil.h"
#include "veil-crypt.h"
#include "veil-stats.h"

/* The most chunks a keystream read can have. */
#define VEIL_KS_MAX_CHUNKS	(VEIL_FANOUT_CHUNK_MAX / VEIL_FANOUT_CHUNK_MIN)

/**
 * struct veil_io - per-bio state, in the bio's dm per-bio data
 * @vc: the target.
 * @base: the bio dm handed to veil_map().
 * @src: the bio whose data the chunks work on: @base, or for a read over
 *	dm-integrity read again, its pages (@out).
 * @iter: @src's data as it was when the job started.
 * @sector: target-relative sector of @base, in 512-byte sectors.
 * @submitter: the task that mapped @base; compared, never dereferenced.
 * @orig_end_io: read: @base's completion, restored when the read is done.
 * @orig_private: read: @base's bi_private, restored with @orig_end_io.
 * @out: write: the ciphertext bio; a read that is read again: its pages.
 * @tags: the metadata tuples of the bio's sectors (veil-integrity.c), or
 *	NULL when the target keeps none.
 * @tags_from_pool: @tags came from vc->tag_pool.
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
 * @shared: a write that helpers were woken for (or found running): its
 *	sectors take no write mask (veil-masks.c).
 * @error: a cipher call or the device read failed; later chunks are skipped.
 * @bad_tag: an AEAD sector's tag did not match: the bio ends with
 *	BLK_STS_PROTECTION.
 * @recheck: a read over dm-integrity is being read again into pages of
 *	its own, after a tag did not match.
 * @read_done: keystream job: the device read completed.
 * @handed_count: a read whose submitter's completion handed its
 *	decryption to the crypt queue: the count of such reads in flight of
 *	the CPU that handed it off (veil-io.c), which the read's end takes
 *	it out of.
 * @ks_ready: keystream job: chunks whose keystream awaits the XOR.
 * @work: the job's runner when it runs from a queue, or a read being read
 *	again (the page-wait queue, then the crypt queue).
 * @bh_node: entry in a CPU's softirq list (veil_bh_defer()).
 * @bh_fn: what runs in softirq.
 * @resume_idx: the chunk an atomic runner handed to an async cipher
 *	driver (set by veil-crypt.c, read by the job's resume).
 * @resume_off: bytes of that chunk done or in flight; the chunk goes on
 *	from there.
 * @async_inflight: the runner's requests of that chunk in flight, plus
 *	its hold while it hands them over.
 * @async_err: the first error among them.
 * @req: the runner's cipher request; must be last.
 */
struct veil_io {
	struct veil_c *vc;
	struct bio *base;
	struct bio *src;
	struct bvec_iter iter;
	sector_t sector;
	struct task_struct *submitter;
	bio_end_io_t *orig_end_io;
	void *orig_private;
	struct bio *out;
	u8 *tags;
	bool tags_from_pool;
	struct page **ks_pages;

	enum veil_job_kind kind;
	unsigned int chunk_bytes;
	unsigned int nr_chunks;
	unsigned int next_chunk;
	atomic_t pending;
	struct list_head node;
	bool listed;
	bool shared;
	bool error;
	bool bad_tag;
	bool recheck;
	bool read_done;
	atomic_t *handed_count;
	DECLARE_BITMAP(ks_ready, VEIL_KS_MAX_CHUNKS);

	struct work_struct work;
	struct llist_node bh_node;
	void (*bh_fn)(struct veil_io *io);
	unsigned int resume_idx;
	unsigned int resume_off;
	atomic_t async_inflight;
	int async_err;

	struct veil_req req;
};

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

/**
 * veil_io_in_submitter() - whether a read completes in its submitter's
 *	own submit_bio
 * @io: the read.
 *
 * True in the task that mapped the bio while it is still inside
 * submit_bio (which sets current->bio_list), with interrupts on: a ramdisk
 * or a driver that completes inline. There the cipher work is the
 * submitter's own. False in any other driver's context.
 *
 * Return: true if the completion may run the cipher where it is.
 */
static inline bool veil_io_in_submitter(const struct veil_io *io)
{
	return in_task() && !irqs_disabled() && current->bio_list &&
	       current == io->submitter;
}

void veil_job_plan(struct veil_io *io, enum veil_job_kind kind, bool spread);
void veil_job_list(struct veil_io *io);
bool veil_job_unclaimed(struct veil_io *io);
bool veil_job_help(struct veil_c *vc, struct veil_req *r);
void veil_job_run(struct veil_io *io, enum veil_where where, bool atomic);
bool veil_job_read_in(struct veil_io *io, blk_status_t status, bool *hit);
void veil_job_sweep(struct veil_io *io);

#endif /* DM_VEIL_JOB_H */
