// SPDX-License-Identifier: GPL-2.0
/*
 * dm-veil keystream-ahead: CTR reads whose keystream is computed while the
 * device is still reading.
 *
 * The keystream depends only on key and sector, so veil_map() plans a
 * keystream job, offers it to helpers and lets dm submit the read. A
 * helper's keystream chunk is marked ready; a chunk claimed after the read
 * completed is decrypted in place instead, which saves its XOR. Each ready
 * chunk is XORed into the data exactly once, by whoever clears its mark
 * after the read is in: the read's completion, or a helper that finishes
 * a chunk after it (the marks and their ordering: veil-job.c).
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
 * does: the job's last put clears its pages (veil_pages_put_keystream()).
 *
 * Keystream pages come from the stash of free pages or the page allocator
 * without waiting, never from the write reserve, and count against the
 * target's cap on pages in flight (veil-pages.c); a read that gets none,
 * or finds no CPU to compute ahead, is a plain read (keystream_skip).
 */
#include <linux/bio.h>
#include <linux/workqueue.h>

#include "veil-bh.h"
#include "veil-helpers.h"
#include "veil-job.h"
#include "veil-keystream.h"
#include "veil-pages.h"

/*
 * A keystream read at most this large whose keystream is not all ready when
 * the device completes it in the submitter's own submit_bio is decrypted
 * there: shorter than waking the crypt queue.
 */
#define VEIL_KS_FINISH_INLINE_MAX	(64 * 1024)

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

	if (!veil_helpers_available(vc) || !veil_pages_get_keystream(io)) {
		this_cpu_inc(vc->stats->ahead_skip);
		return false;
	}
	veil_job_plan(io, VEIL_JOB_KEYSTREAM, spread);
	veil_helpers_offer(io, veil_helpers_wanted(io, false));
	return true;
}

/* The completion, or softirq after it: XOR what is ready, run the rest. */
static void veil_ks_finish(struct veil_io *io)
{
	veil_job_sweep(io);
	veil_job_run(io, VEIL_IN_ENDIO, true);
}

static void veil_ks_runner_work(struct work_struct *work)
{
	struct veil_io *io = container_of(work, struct veil_io, work);

	veil_job_sweep(io);
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

	claimed = veil_job_read_in(io, status, &hit);
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
