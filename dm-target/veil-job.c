// SPDX-License-Identifier: GPL-2.0
/*
 * dm-veil jobs: a bio's data planned into chunks, chunks claimed by whoever
 * runs them, and the job finished by its data, never by a worker.
 *
 * Rules:
 * - @pending of a job counts its chunks that are not done, plus one hold:
 *   the runner's (the context that planned the job: veil_map(), a queue
 *   or a read's completion) or, for a keystream job, the device read's.
 *   The put that drops it to zero finishes the job (veil_io_finish()).
 * - A chunk is claimed once. Until a job is listed for helpers only its
 *   runner claims, without a lock; once listed, every claim takes
 *   jobs_lock, and the claim of the last chunk takes the job off the list.
 *   A read's completion may claim in softirq (veil-bh.c): jobs_lock is
 *   taken with bottom halves off everywhere.
 *   So a listed job always has an unclaimed chunk and a pending count above
 *   zero: a helper that finds it on the list may use it.
 * - The runner claims until no chunk is left, then drops its hold and never
 *   touches the job again. Nobody waits for a helper: one that comes late
 *   finds no chunk and leaves; one that never runs holds nothing.
 */
#include <linux/bio.h>
#include <linux/cpumask.h>
#include <linux/percpu.h>

#include "dm-veil.h"

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

/* Take the next chunk of a listed job; vc->jobs_lock is held. */
static unsigned int veil_job_take(struct veil_io *io)
{
	unsigned int idx = io->next_chunk;

	WRITE_ONCE(io->next_chunk, idx + 1);
	if (idx + 1 == io->nr_chunks)
		list_del(&io->node);
	return idx;
}

/**
 * veil_job_claim() - claim the next chunk of a job for its runner
 * @io: the job; the caller holds it.
 * @idx: set to the chunk claimed.
 *
 * Return: false when every chunk has been claimed.
 */
bool veil_job_claim(struct veil_io *io, unsigned int *idx)
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

/**
 * veil_job_claim_listed() - claim a chunk of any listed job, for a helper
 * @vc: the target.
 * @idx: set to the chunk claimed.
 *
 * Return: the job the chunk belongs to, or NULL if no job is listed. The
 * job stays alive until the chunk is put.
 */
struct veil_io *veil_job_claim_listed(struct veil_c *vc, unsigned int *idx)
{
	struct veil_io *io;

	spin_lock_bh(&vc->jobs_lock);
	io = list_first_entry_or_null(&vc->jobs, struct veil_io, node);
	if (io)
		*idx = veil_job_take(io);
	spin_unlock_bh(&vc->jobs_lock);
	return io;
}

/**
 * veil_job_unclaimed() - whether a job still has chunks nobody claimed
 * @io: the job; the caller holds it.
 *
 * Once false, it stays false.
 */
bool veil_job_unclaimed(struct veil_io *io)
{
	return READ_ONCE(io->next_chunk) < io->nr_chunks;
}

/**
 * veil_job_put() - drop one count of a job; the last one finishes it
 * @io: the job.
 */
void veil_job_put(struct veil_io *io)
{
	if (atomic_dec_and_test(&io->pending))
		veil_io_finish(io);
}

/**
 * veil_job_run_chunk() - run one claimed chunk and put it
 * @io: the job.
 * @r: the cipher request of the context running it.
 * @idx: the chunk.
 * @from: bytes of the chunk already done (non-zero only when resuming).
 * @where: the context, for the counters.
 * @atomic: the caller may not sleep: @r must be &io->req, and an async
 *	cipher call leaves the chunk to veil_io_resume().
 *
 * A keystream chunk taken after the read completed decrypts the data in
 * place; one taken before computes keystream and is put by whoever XORs it.
 * Chunks of a job that already failed are put without running.
 *
 * Return: true if the chunk went on asynchronously (only when @atomic).
 */
bool veil_job_run_chunk(struct veil_io *io, struct veil_req *r,
			unsigned int idx, unsigned int from,
			enum veil_where where, bool atomic)
{
	struct veil_c *vc = io->vc;
	enum veil_job_kind kind = io->kind;
	unsigned int done = from;
	int ret;

	if (READ_ONCE(io->error)) {
		veil_job_put(io);
		return false;
	}
	/* The read's data is in once the flag is seen; see veil-keystream.c. */
	if (kind == VEIL_JOB_KEYSTREAM && smp_load_acquire(&io->read_done))
		kind = VEIL_JOB_READ;
	/* Counted first: once in flight, @io and the target may be gone. */
	this_cpu_inc(vc->stats->where[where]);
	ret = veil_crypt_chunk(io, r, idx, kind, &done, atomic);
	/* In flight: the driver's callback may already have finished @io. */
	if (ret == -EINPROGRESS)
		return true;
	/* Not taken (no backlog when atomic): again from the crypt queue. */
	if (atomic && (ret == -EBUSY || ret == -ENOSPC)) {
		veil_io_resume(io);
		return true;
	}
	if (ret)
		WRITE_ONCE(io->error, true);
	if (kind == VEIL_JOB_KEYSTREAM && !ret)
		veil_ks_chunk_done(io, idx);
	else
		veil_job_put(io);
	return false;
}

/**
 * veil_job_run() - run a job as its runner: claim until none is left
 * @io: the job, held by the caller; the hold is dropped on return, or
 *	passed on to veil_io_resume() when a chunk goes on asynchronously.
 * @where: the context, for the counters.
 * @atomic: the caller may not sleep.
 */
void veil_job_run(struct veil_io *io, enum veil_where where, bool atomic)
{
	unsigned int idx;

	while (veil_job_claim(io, &idx)) {
		if (veil_job_run_chunk(io, &io->req, idx, 0, where, atomic))
			return;
		if (!atomic)
			cond_resched();
	}
	veil_job_put(io);
}
