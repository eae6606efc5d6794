// SPDX-License-Identifier: GPL-2.0
/*
 * dm-veil jobs: a bio's data planned into chunks, chunks claimed by whoever
 * runs them, and the job finished by its data, never by a worker: the put
 * that drops the last count submits a write's ciphertext, whose completion
 * ends the write, or ends a read (one over dm-integrity whose tags did not
 * match is read again first).
 * Everything that can finish a job calls down into this file (veil-io.c,
 * veil-keystream.c, veil-helpers.c); this file calls the cipher
 * (veil-crypt.c), the pages (veil-pages.c) and the metadata
 * (veil-integrity.c), submits the bios that finish a job and owns their
 * completions.
 *
 * Rules:
 * - @pending of a job counts its chunks that are not done, plus one hold:
 *   the runner's (the context that planned the job: veil_map(), a queue
 *   or a read's completion) or, for a keystream job, the device read's.
 *   The put that drops it to zero finishes the job (veil_job_finish()).
 * - A chunk is claimed once. Until a job is listed for helpers only its
 *   runner claims, without a lock; once listed, every claim takes
 *   jobs_lock, and the claim of the last chunk takes the job off the list.
 *   A read's completion may claim in softirq (veil-bh.c): jobs_lock is
 *   taken with bottom halves off everywhere.
 *   So a listed job always has an unclaimed chunk and a pending count above
 *   zero: a helper that finds it on the list may use it.
 * - The runner claims until no chunk is left, then drops its hold and never
 *   touches the job again. An atomic runner whose chunk an async cipher
 *   driver has passes its hold on with it: to the driver's callback for
 *   the chunk's last sector, which drops it or goes on as the runner from
 *   the crypt queue. Nobody waits for a helper: one that comes late finds
 *   no chunk and leaves; one that never runs holds nothing.
 */
#include <linux/bio.h>
#include <linux/bitmap.h>
#include <linux/cpumask.h>
#include <linux/percpu.h>

#include "veil-compat.h"
#include "veil-crypt.h"
#include "veil-integrity.h"
#include "veil-job.h"
#include "veil-pages.h"

/* A bio is cut into at least this many chunks per online CPU, if it can. */
#define VEIL_CHUNKS_PER_CPU		4

/**
 * veil_job_plan() - cut a bio's data into chunks
 * @io: the bio's state; its data must not be empty.
 * @kind: what the chunks do.
 * @spread: the job may be shared with helpers: cut it into at least
 *	VEIL_CHUNKS_PER_CPU chunks per online CPU, each at most fanout_chunk
 *	bytes and a multiple of 4 KiB. Otherwise the job is one chunk.
 */
void veil_job_plan(struct veil_io *io, enum veil_job_kind kind, bool spread)
{
	unsigned int size = io->iter.bi_size;
	unsigned int share;

	io->kind = kind;
	io->chunk_bytes = size;
	if (spread) {
		share = DIV_ROUND_UP(size, num_online_cpus() *
				     VEIL_CHUNKS_PER_CPU);
		share = round_up(share, VEIL_FANOUT_CHUNK_MIN);
		io->chunk_bytes = min3(io->vc->fanout_chunk, share, size);
	}
	io->nr_chunks = DIV_ROUND_UP(size, io->chunk_bytes);
	io->next_chunk = 0;
	io->listed = false;
	io->error = false;
	io->bad_tag = false;
	if (kind == VEIL_JOB_KEYSTREAM) {
		io->read_done = false;
		bitmap_zero(io->ks_ready, io->nr_chunks);
	}
	atomic_set(&io->pending, io->nr_chunks + 1);
}

/**
 * veil_job_list() - offer a planned job's chunks to helpers
 * @io: a job with unclaimed chunks, held by its runner or its read.
 */
void veil_job_list(struct veil_io *io)
{
	struct veil_c *vc = io->vc;

	spin_lock_bh(&vc->jobs_lock);
	if (!io->listed && io->next_chunk < io->nr_chunks) {
		io->listed = true;
		list_add_tail(&io->node, &vc->jobs);
	}
	spin_unlock_bh(&vc->jobs_lock);
}

/**
 * veil_job_unclaimed() - whether a job still has chunks nobody claimed
 * @io: the job; the caller holds it.
 *
 * Return: true while a chunk is unclaimed; once false, it stays false.
 */
bool veil_job_unclaimed(struct veil_io *io)
{
	return READ_ONCE(io->next_chunk) < io->nr_chunks;
}

/* Take the next chunk of a listed job; vc->jobs_lock is held. */
static unsigned int veil_job_take(struct veil_io *io)
{
	unsigned int idx = io->next_chunk;

	WRITE_ONCE(io->next_chunk, idx + 1);
	if (idx + 1 == io->nr_chunks)
		list_del(&io->node);
	return idx;
}

/*
 * Claim the next chunk of a job for its runner, which holds it; false when
 * every chunk has been claimed.
 */
static bool veil_job_claim(struct veil_io *io, unsigned int *idx)
{
	struct veil_c *vc = io->vc;
	bool claimed = false;

	if (!READ_ONCE(io->listed)) {
		if (io->next_chunk >= io->nr_chunks)
			return false;
		*idx = io->next_chunk++;
		return true;
	}
	/* All claimed stays all claimed: no lock needed to see it. */
	if (!veil_job_unclaimed(io))
		return false;
	spin_lock_bh(&vc->jobs_lock);
	if (io->next_chunk < io->nr_chunks) {
		*idx = veil_job_take(io);
		claimed = true;
	}
	spin_unlock_bh(&vc->jobs_lock);
	return claimed;
}

/*
 * Claim a chunk of any listed job, for a helper: the job the chunk belongs
 * to, or NULL if no job is listed. The job stays alive until the chunk is
 * put.
 */
static struct veil_io *veil_job_claim_listed(struct veil_c *vc,
					     unsigned int *idx)
{
	struct veil_io *io;

	spin_lock_bh(&vc->jobs_lock);
	io = list_first_entry_or_null(&vc->jobs, struct veil_io, node);
	if (io)
		*idx = veil_job_take(io);
	spin_unlock_bh(&vc->jobs_lock);
	return io;
}

/* A chunk of @io failed with @err. */
static void veil_job_failed(struct veil_io *io, int err)
{
	if (err == -EBADMSG)
		WRITE_ONCE(io->bad_tag, true);
	WRITE_ONCE(io->error, true);
}

/*
 * Reads read again. A read over dm-integrity whose tags did not all match
 * is read again once, as dm-crypt does, into pages of the target's own
 * (on the page-wait queue, which may wait for them), decrypted on the
 * crypt queue and copied to the reader's buffer: a reader that changed
 * its buffer during the read, or read two sectors into one buffer, failed
 * only the first time. This rare path decrypts on the crypt queue in one
 * chunk whatever the table's options (no_read_workqueue, helpers).
 */

static void veil_job_read_again_decrypt(struct work_struct *work)
{
	struct veil_io *io = container_of(work, struct veil_io, work);

	veil_job_plan(io, VEIL_JOB_READ, false);
	/* A failed read ends at once, with the error. */
	io->error = io->base->bi_status != BLK_STS_OK;
	veil_job_run(io, VEIL_IN_QUEUE, false);
}

/* Any context, hard IRQ included: records the status and queues. */
static void veil_job_read_again_end_io(struct bio *pages)
{
	struct veil_io *io = pages->bi_private;

	io->base->bi_status = pages->bi_status;
	INIT_WORK(&io->work, veil_job_read_again_decrypt);
	queue_work(io->vc->crypt_wq, &io->work);
}

/* On the page-wait queue, which may wait for pages. */
static void veil_job_read_again(struct work_struct *work)
{
	struct veil_io *io = container_of(work, struct veil_io, work);
	struct veil_c *vc = io->vc;
	struct bio *pages = veil_pages_alloc(io, true);

	pages->bi_iter.bi_sector = vc->start + io->sector;
	pages->bi_ioprio = io->base->bi_ioprio;
	pages->bi_end_io = veil_job_read_again_end_io;
	pages->bi_private = io;
	io->out = pages;
	io->src = pages;
	io->iter = pages->bi_iter;
	/* No second read: the read fails as the first one did. */
	if (veil_integrity_attach(io, pages)) {
		pages->bi_status = BLK_STS_PROTECTION;
		bio_endio(pages);
		return;
	}
	submit_bio_noacct(pages);
}

/* End a write with @status, giving back its ciphertext pages and tags. */
static void veil_job_write_done(struct veil_io *io, blk_status_t status)
{
	struct bio *bio = io->base;

	if (status)
		bio->bi_status = status;
	veil_pages_free(io->vc, io->out);
	veil_integrity_free(io);
	bio_endio(bio);
}

/* A write's ciphertext is on the device, or failed there. */
static void veil_job_write_end_io(struct bio *out)
{
	struct veil_io *io = out->bi_private;

	this_cpu_inc(io->vc->stats->reqs[VEIL_ENCRYPT]);
	veil_job_write_done(io, out->bi_status);
}

/*
 * The last put of a job: submit the write's ciphertext, whose completion
 * ends the write, or end the read (a read whose tags did not match the
 * first time is read again instead). A failed write ends here with its
 * pages given back.
 */
static void veil_job_finish(struct veil_io *io)
{
	struct bio *bio = io->base;

	if (io->kind == VEIL_JOB_WRITE) {
		if (io->error) {
			veil_job_write_done(io, BLK_STS_IOERR);
			return;
		}
		io->out->bi_private = io;
		io->out->bi_end_io = veil_job_write_end_io;
		dm_submit_bio_remap(bio, io->out);
		return;
	}

	veil_pages_put_keystream(io);
	if (io->tags && io->bad_tag && !io->recheck) {
		io->recheck = true;
		INIT_WORK(&io->work, veil_job_read_again);
		queue_work(io->vc->page_wait_wq, &io->work);
		return;
	}
	if (io->recheck) {
		/* The layers below may have split or used up its iterator. */
		io->out->bi_iter = io->iter;
		if (!io->error)
			bio_copy_data(bio, io->out);
		/* The stash holds no plaintext (veil-pages.c). */
		zero_fill_bio(io->out);
		veil_pages_free(io->vc, io->out);
	}
	veil_integrity_free(io);
	if (io->error && !bio->bi_status)
		bio->bi_status = io->bad_tag ? BLK_STS_PROTECTION :
					       BLK_STS_IOERR;
	this_cpu_inc(io->vc->stats->reqs[VEIL_DECRYPT]);
	/*
	 * Before the bio ends: a submitter that its end wakes must not see
	 * this read still in flight when it maps the next one.
	 */
	if (io->handed_count)
		atomic_dec(io->handed_count);
	bio->bi_end_io = io->orig_end_io;
	bio->bi_private = io->orig_private;
	bio_endio(bio);
}

/* Drop one count of a job; the last one finishes it. */
static void veil_job_put(struct veil_io *io)
{
	if (atomic_dec_and_test(&io->pending))
		veil_job_finish(io);
}

/*
 * Keystream jobs. A chunk computed before the read completed is marked in
 * ks_ready, and its count passes with the mark to whoever XORs it: the
 * read's completion (veil_job_read_in(), then veil_job_sweep()) or a helper
 * that finishes a chunk after it. Each side orders "mark or flag, full
 * barrier, look at the other", so that one of them always sees the other.
 */

/**
 * veil_job_sweep() - XOR every ready keystream chunk into the read's data
 * @io: a keystream job whose read completed (veil_job_read_in()), held by
 *	the caller, so that no put here can finish it.
 *
 * Each ready chunk is XORed exactly once, by whoever clears its mark, and
 * put. Only maps pages and XORs: never called in hard-IRQ context.
 */
void veil_job_sweep(struct veil_io *io)
{
	unsigned int idx;

	for_each_set_bit(idx, io->ks_ready, io->nr_chunks) {
		if (!test_and_clear_bit(idx, io->ks_ready))
			continue;
		if (!READ_ONCE(io->error))
			veil_crypt_xor(io, idx);
		veil_job_put(io);
	}
}

/* A chunk's keystream is ready: its count passes to whoever XORs it. */
static void veil_job_ks_ready(struct veil_io *io, unsigned int idx)
{
	/* Hold the job across the sweep: the chunk's count goes with the mark. */
	atomic_inc(&io->pending);
	/* The keystream is stored before the mark is seen. */
	smp_mb__before_atomic();
	set_bit(idx, io->ks_ready);
	/* The mark before the look at read_done; pairs with veil_job_read_in(). */
	smp_mb__after_atomic();
	/* Acquire: the read's data is in once the flag is seen. */
	if (smp_load_acquire(&io->read_done))
		veil_job_sweep(io);
	veil_job_put(io);
}

static bool veil_job_chunk(struct veil_io *io, struct veil_req *r,
			   unsigned int idx, unsigned int from,
			   enum veil_where where, bool atomic);

static void veil_job_resume_work(struct work_struct *work)
{
	struct veil_io *io = container_of(work, struct veil_io, work);

	if (!veil_job_chunk(io, &io->req, io->resume_idx, io->resume_off,
			    VEIL_IN_QUEUE, false))
		veil_job_run(io, VEIL_IN_QUEUE, false);
}

/*
 * Go on with a job whose atomic runner met an async cipher driver, from
 * the crypt queue; the runner's hold passes to the queued work. Called
 * from the driver's completion (any context) or by the runner.
 */
static void veil_job_resume(struct veil_io *io)
{
	INIT_WORK(&io->work, veil_job_resume_work);
	queue_work(io->vc->crypt_wq, &io->work);
}

static void veil_job_run_work(struct work_struct *work)
{
	veil_job_run(container_of(work, struct veil_io, work), VEIL_IN_QUEUE,
		     false);
}

/*
 * The driver completed an atomic runner's request; the last of its chunk
 * in flight goes on with the job. A read's chunk whose every sector was
 * handed over (or that failed) is put here, and so is the runner's hold
 * if no chunk is left to claim, as dm-crypt ends a bio in its last
 * sector's callback; chunks left to claim go on from the crypt queue. A
 * chunk with sectors left, and a keystream job's (whose last put clears
 * its pages: not for a hard-IRQ completion), go on from the queue.
 * Whatever the context, only counts and puts here: no cipher call.
 */
static void veil_job_async_done(veil_crypto_done_arg arg, int err)
{
	struct veil_req *r = veil_crypto_done_data(arg);
	struct veil_io *io = r->io;
	int chunk_err;

	if (err == -EINPROGRESS)
		return;
	if (!veil_crypt_async_done(r, err))
		return;
	chunk_err = READ_ONCE(io->async_err);
	if (chunk_err)
		veil_job_failed(io, chunk_err);
	if (io->kind != VEIL_JOB_READ ||
	    (!chunk_err &&
	     io->resume_off < veil_chunk_len(io, io->resume_idx))) {
		veil_job_resume(io);
		return;
	}
	/* The chunk: the runner's hold keeps the job. */
	veil_job_put(io);
	if (!veil_job_unclaimed(io)) {
		veil_job_put(io);
		return;
	}
	INIT_WORK(&io->work, veil_job_run_work);
	queue_work(io->vc->crypt_wq, &io->work);
}

/*
 * Run one claimed chunk and put it. @from: bytes of the chunk already done
 * (non-zero only when resuming); @where: the context, for the counters;
 * @atomic: the caller may not sleep: @r must be &io->req, and a chunk
 * handed to an async cipher driver goes on in its callback,
 * veil_job_async_done().
 *
 * A keystream chunk taken after the read completed decrypts the data in
 * place; one taken before computes keystream and is put by whoever XORs it.
 * Chunks of a job that already failed are put without running.
 *
 * Returns true if the chunk went on asynchronously (only when @atomic).
 */
static bool veil_job_chunk(struct veil_io *io, struct veil_req *r,
			   unsigned int idx, unsigned int from,
			   enum veil_where where, bool atomic)
{
	struct veil_c *vc = io->vc;
	enum veil_job_kind kind = io->kind;
	int ret;

	if (READ_ONCE(io->error)) {
		veil_job_put(io);
		return false;
	}
	/* The read's data is in once the flag is seen; see veil_job_read_in(). */
	if (kind == VEIL_JOB_KEYSTREAM && smp_load_acquire(&io->read_done))
		kind = VEIL_JOB_READ;
	/* Counted first: once in flight, @io and the target may be gone. */
	this_cpu_inc(vc->stats->where[where]);
	ret = veil_crypt_chunk(io, r, idx, kind, from,
			       atomic ? veil_job_async_done : NULL);
	/* In flight: the driver's callback may already have finished @io. */
	if (ret == -EINPROGRESS)
		return true;
	/*
	 * Not all handed over (no request without waiting, or the driver's
	 * queue full): the rest from the crypt queue.
	 */
	if (atomic && ret == -ENOSPC) {
		veil_job_resume(io);
		return true;
	}
	if (ret)
		veil_job_failed(io, ret);
	if (kind == VEIL_JOB_KEYSTREAM && !ret)
		veil_job_ks_ready(io, idx);
	else
		veil_job_put(io);
	return false;
}

/**
 * veil_job_help() - run one chunk of any listed job, for a helper
 * @vc: the target.
 * @r: the helper's cipher request.
 *
 * Context: a helper's work item; may sleep.
 * Return: false if no job is listed.
 */
bool veil_job_help(struct veil_c *vc, struct veil_req *r)
{
	struct veil_io *io;
	unsigned int idx;

	io = veil_job_claim_listed(vc, &idx);
	if (!io)
		return false;
	veil_job_chunk(io, r, idx, 0, VEIL_IN_HELPER, false);
	return true;
}

/**
 * veil_job_run() - run a job as its runner: claim until none is left
 * @io: the job, held by the caller; the hold is dropped on return, or
 *	passed on with a chunk an async cipher driver has (veil_job_chunk()).
 * @where: the context, for the counters.
 * @atomic: the caller may not sleep.
 */
void veil_job_run(struct veil_io *io, enum veil_where where, bool atomic)
{
	unsigned int idx;

	while (veil_job_claim(io, &idx)) {
		if (veil_job_chunk(io, &io->req, idx, 0, where, atomic))
			return;
		if (!atomic)
			cond_resched();
	}
	veil_job_put(io);
}

/**
 * veil_job_read_in() - the device read of a keystream job completed
 * @io: the job, held by the read until the caller runs it
 *	(veil_job_run()).
 * @status: the read's status.
 * @hit: set if every chunk was claimed and every claimed chunk's
 *	keystream was ready: the keystream was all computed during the read.
 *
 * From here on a helper that finishes a keystream chunk XORs it itself;
 * the caller sweeps the chunks marked ready before (veil_job_sweep()).
 *
 * Context: the read's completion, any context.
 * Return: true if every chunk was claimed, as seen when @hit was decided.
 */
bool veil_job_read_in(struct veil_io *io, blk_status_t status, bool *hit)
{
	bool claimed;

	if (status)
		WRITE_ONCE(io->error, true);
	/* The data is in before the flag is seen ... */
	smp_store_release(&io->read_done, true);
	/* ... and the flag before the look at the marks. */
	smp_mb();
	claimed = !veil_job_unclaimed(io);
	*hit = claimed && atomic_read(&io->pending) ==
	       1 + bitmap_weight(io->ks_ready, io->nr_chunks);
	return claimed;
}
