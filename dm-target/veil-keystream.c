// SPDX-License-Identifier: GPL-2.0
/*
 * dm-veil keystream-ahead: CTR reads whose keystream is computed while the
 * device is still reading.
 *
 * The keystream depends only on key and sector, so veil_map() plans a
 * keystream job, offers it to helpers and lets dm submit the read. A
 * helper's keystream chunk is marked ready in ks_ready; a chunk claimed
 * after the read completed is decrypted in place instead, which saves its
 * XOR. Each ready chunk is XORed into the data exactly once, by whoever
 * clears its mark after the read is in: the read's completion, or a helper
 * that finishes a chunk after it. Both sides order "mark/flag, full
 * barrier, look at the other" so that one of them always sees the other.
 *
 * The job's hold belongs to the device read: its completion sweeps the
 * ready chunks, runs what nobody claimed, and drops the hold. The XOR
 * (keystream_ahead_max bytes at most, no cipher) runs in the completion,
 * or in softirq on the same CPU after a hard-IRQ completion (veil-bh.c).
 * Chunks nobody claimed need the cipher: the completion decrypts them
 * only in the submitter's own submit_bio (veil_io_in_submitter()) and for
 * a read of at most VEIL_KS_FINISH_INLINE_MAX bytes; otherwise the job's
 * runner on the crypt queue XORs and decrypts. (no_read_workqueue reads
 * have no keystream job.)
 *
 * Keystream decrypts every version of the sectors it covers, as the key
 * does: its pages are cleared before they are given back, so none
 * outlives its read (and "key wipe" leaves none in memory).
 *
 * Keystream pages come from the stash of free pages or the page allocator
 * without waiting, never from the write reserve (veil-pages.c), and count
 * against the target's cap on pages in flight; a read that gets none, or
 * finds no CPU to compute ahead, is a plain read (keystream_skip).
 */
#include <linux/bio.h>
#include <linux/bitmap.h>
#include <linux/gfp.h>
#include <linux/highmem.h>
#include <linux/slab.h>

#include "dm-veil.h"

/**
 * veil_ks_free() - clear and give back a keystream read's pages
 * @io: the job, finished or never started.
 */
void veil_ks_free(struct veil_io *io)
{
	unsigned int i, nr = DIV_ROUND_UP(io->iter.bi_size, PAGE_SIZE);
	LIST_HEAD(pages);

	if (!io->ks_pages)
		return;
	for (i = 0; i < nr; i++) {
		if (!io->ks_pages[i])
			continue;
		clear_highpage(io->ks_pages[i]);
		list_add_tail(&io->ks_pages[i]->lru, &pages);
	}
	veil_pages_put(io->vc, &pages);
	kfree(io->ks_pages);
	io->ks_pages = NULL;
	veil_pages_unreserve(io->vc, nr);
}

static bool veil_ks_alloc(struct veil_io *io)
{
	unsigned int i, nr = DIV_ROUND_UP(io->iter.bi_size, PAGE_SIZE);
	/* Optional pages: never from the emergency reserves. */
	const gfp_t gfp = GFP_NOWAIT | __GFP_NOWARN | __GFP_NOMEMALLOC;

	if (!veil_pages_reserve_keystream(io->vc, nr))
		return false;
	io->ks_pages = kcalloc(nr, sizeof(*io->ks_pages), gfp);
	if (!io->ks_pages) {
		veil_pages_unreserve(io->vc, nr);
		return false;
	}
	for (i = 0; i < nr; i++) {
		io->ks_pages[i] = veil_page_get(io->vc, gfp);
		if (!io->ks_pages[i]) {
			veil_ks_free(io);
			return false;
		}
	}
	return true;
}

/**
 * veil_ks_start() - start computing a CTR read's keystream
 * @io: a read of at most keystream_ahead_max bytes, not yet submitted.
 *
 * Helpers are woken as veil_helpers_wanted() allows; where fan-out is not
 * allowed the job is one chunk for one helper.
 *
 * Return: true if the read is now a keystream job, false for a plain read.
 */
bool veil_ks_start(struct veil_io *io)
{
	struct veil_c *vc = io->vc;
	bool spread = veil_may_fanout(vc, VEIL_JOB_KEYSTREAM);

	if (!veil_helpers_available(vc) || !veil_ks_alloc(io)) {
		this_cpu_inc(vc->stats->ahead_skip);
		return false;
	}
	veil_job_plan(io, VEIL_JOB_KEYSTREAM, spread);
	io->read_done = false;
	bitmap_zero(io->ks_ready, io->nr_chunks);
	veil_helpers_offer(io, veil_helpers_wanted(io, false));
	return true;
}

/*
 * XOR every ready chunk into the data and put it. The caller holds the
 * job, so no put here can finish it.
 */
static void veil_ks_sweep(struct veil_io *io)
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

/**
 * veil_ks_chunk_done() - a chunk's keystream is ready
 * @io: the keystream job.
 * @idx: the chunk; its pending count passes to whoever XORs it.
 */
void veil_ks_chunk_done(struct veil_io *io, unsigned int idx)
{
	/* Hold the job across the sweep: the chunk's count goes with the mark. */
	atomic_inc(&io->pending);
	/* The keystream is stored before the mark is seen. */
	smp_mb__before_atomic();
	set_bit(idx, io->ks_ready);
	/* The mark before the look at read_done; pairs with veil_ks_read_done(). */
	smp_mb__after_atomic();
	/* Acquire: the read's data is in once the flag is seen. */
	if (smp_load_acquire(&io->read_done))
		veil_ks_sweep(io);
	veil_job_put(io);
}

/* The completion, or softirq after it: XOR what is ready, run the rest. */
static void veil_ks_finish(struct veil_io *io)
{
	veil_ks_sweep(io);
	veil_job_run(io, VEIL_IN_ENDIO, true);
}

static void veil_ks_runner_work(struct work_struct *work)
{
	struct veil_io *io = container_of(work, struct veil_io, work);

	veil_ks_sweep(io);
	veil_job_run(io, VEIL_IN_QUEUE, false);
}

/**
 * veil_ks_read_done() - the device read of a keystream job completed
 * @io: the job.
 * @status: the read's status.
 *
 * Called from the read's completion, in any context. The ready chunks are
 * XORed here, or in softirq right after a hard-IRQ completion
 * (veil-bh.c). Chunks nobody claimed are decrypted here too in the
 * submitter's own submit_bio for a read up to VEIL_KS_FINISH_INLINE_MAX;
 * otherwise the job's runner on the crypt queue does both.
 */
void veil_ks_read_done(struct veil_io *io, blk_status_t status)
{
	struct veil_c *vc = io->vc;
	bool claimed, hit;

	if (status)
		WRITE_ONCE(io->error, true);
	/* The data is in before the flag is seen ... */
	smp_store_release(&io->read_done, true);
	/* ... and the flag before the look at the marks. */
	smp_mb();

	claimed = !veil_job_unclaimed(io);
	hit = claimed && atomic_read(&io->pending) ==
	      1 + bitmap_weight(io->ks_ready, io->nr_chunks);
	if (hit)
		this_cpu_inc(vc->stats->ahead_hit);
	else
		this_cpu_inc(vc->stats->ahead_miss);

	if (!claimed && (io->iter.bi_size > VEIL_KS_FINISH_INLINE_MAX ||
			 !veil_io_in_submitter(io))) {
		INIT_WORK(&io->work, veil_ks_runner_work);
		queue_work(vc->crypt_wq, &io->work);
		return;
	}
	if (in_hardirq() || irqs_disabled())
		veil_bh_defer(io, veil_ks_finish);
	else
		veil_ks_finish(io);
}
