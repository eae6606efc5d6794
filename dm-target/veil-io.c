// SPDX-License-Identifier: GPL-2.0
/*
 * dm-veil I/O glue: which context starts the job of a bio. The job ends
 * the bio (veil-job.c).
 *
 * Writes: veil_map() takes ciphertext pages without waiting and runs the
 * job there, on the submitting task, offering chunks of a large write to
 * idle CPUs' helpers. A write that gets no pages goes to the page-wait
 * queue, which waits for them and then runs the job the same way (with
 * no_write_workqueue, veil_map() waits itself and offers nothing). The
 * put that finishes the job submits the ciphertext; its completion
 * (veil-job.c) frees the pages and ends the bio.
 *
 * Reads: dm submits the bio. A completion that runs in the submitter's
 * own submit_bio (a ramdisk, a driver that completes inline) decrypts
 * there, as a write encrypts in veil_map(), and offers chunks of a large
 * read to helpers: the submitter pays for its own read. Any other
 * completion (an interrupt, softirq, a threaded IRQ handler, loop's, nbd's
 * or md's worker, kintegrityd) starts the job on the crypt queue instead
 * (unbound; per-CPU on the completing CPU with same_cpu_crypt), whose
 * runner offers chunks the same way: no cipher time is taken from another
 * driver's thread. A submitter that keeps many reads in flight (an
 * async one at a deep queue) would rather go on submitting while another
 * CPU decrypts: see veil_read_hand_off(). With
 * no_read_workqueue every read decrypts in its completion, without
 * helpers, and one that completes in hard IRQ or with interrupts off in
 * softirq right after it (veil-bh.c), as 6.12's dm-crypt does. An async
 * cipher driver gets an inline decryption's sectors at once and ends it in
 * its callback (veil-crypt.c, veil-job.c).
 *
 * CTR reads up to keystream_ahead_max: see veil-keystream.c.
 *
 * Over dm-integrity (veil-integrity.c) every data bio carries its sectors'
 * metadata: a write's ciphertext bio, and for a read a clone of the bio
 * from the target's bioset, whose pool has room for the metadata's
 * payload (dm's own bio would need a kmalloc for it). The clone's
 * completion is the read's, and puts the clone. A read whose tags do not
 * all match is read again once by its job (veil-job.c).
 *
 * With an async cipher driver, a write's encryption in veil_map() waits
 * for the driver (a window of requests at a time, veil-crypt.c), so the
 * submitter's submit_bio lasts the write's cipher time, as it does with a
 * sync cipher; dm-crypt instead returns from map and finishes the write
 * from the driver's callback. The wait needs nothing of veil's: the
 * driver's completions end it.
 *
 * Queues and what may wait where:
 * - crypt_wq (WQ_MEM_RECLAIM, unbound; per-CPU with same_cpu_crypt; no
 *   more items running than CPUs): reads' runners (reads that another
 *   driver's context completed, and those their submitter handed off),
 *   the decryption of reads read again and resumed async chunks; waits
 *   for the cipher, and for the device to take a write that a resumed
 *   chunk finished (submit_bio); never for pages.
 * - helper_wq (as crypt_wq): helpers; waits for the cipher and for
 *   submit_bio, as crypt_wq.
 * - page_wait_wq (WQ_MEM_RECLAIM, ordered): writes that wait for pages,
 *   and reads over dm-integrity read again into pages, one at a time;
 *   pages come back from the device's write completions and from reads
 *   read again once crypt_wq has decrypted them. So an item here may wait
 *   for a crypt_wq item, which never waits for pages nor for this queue:
 *   no cycle.
 * No other item waits for an item of a veil queue, and no bio waits for
 * an item to be scheduled on a given CPU.
 */
#include <linux/bio.h>
#include <linux/blkdev.h>
#include <linux/interrupt.h>
#include <linux/sched/isolation.h>
#include <crypto/skcipher.h>

#include "veil-bh.h"
#include "veil-crypt.h"
#include "veil-helpers.h"
#include "veil-integrity.h"
#include "veil-io.h"
#include "veil-job.h"
#include "veil-keystream.h"
#include "veil-pages.h"

/*
 * Reads completed in their submitter between two handed off to find out
 * whether it waits for them: at first, and twice as many after each that
 * found no deep queue, up to the most.
 */
#define VEIL_PROBE_FIRST	256
#define VEIL_PROBE_MOST		4096
/* Reads handed off after the last sign of a deep queue. */
#define VEIL_DEEP_CREDIT	64

/**
 * struct veil_reader - the last task that mapped a read of any veil target
 *	on one CPU, and what the hand-off of its reads knows of it
 * @task: that task; compared, never dereferenced.
 * @when: jiffies at its last read's map.
 * @handed: reads mapped on this CPU, handed off and not ended.
 * @inherited: @handed counts reads of the task before @task: no sign of
 *	depth until it has come down to zero.
 * @credit: reads to hand off since the last sign of a deep queue.
 * @since_probe: reads since the last one handed off to find out.
 * @probe_period: reads from one such read to the next.
 * @free_when: jiffies when other CPUs were last looked at.
 * @free: whether one of them had no other reader then.
 *
 * Advisory, per CPU and never locked: the fields other than @handed are
 * written by the tasks that read on this CPU, and a task preempted between
 * a read and a write of one of them may undo another's update. The worst
 * that does is one read decrypted in the other place.
 */
struct veil_reader {
	struct task_struct *task;
	unsigned long when;
	atomic_t handed;
	bool inherited;
	unsigned int credit;
	unsigned int since_probe;
	unsigned int probe_period;
	unsigned long free_when;
	bool free;
};

static DEFINE_PER_CPU_ALIGNED(struct veil_reader, veil_readers);

/* Writes. */

static void veil_write_start(struct veil_io *io, enum veil_where where)
{
	struct veil_c *vc = io->vc;

	io->out->bi_iter.bi_sector = vc->start + io->sector;
	io->out->bi_ioprio = io->base->bi_ioprio;
	veil_job_plan(io, VEIL_JOB_WRITE, veil_may_fanout(vc, VEIL_JOB_WRITE));
	/* The job ends at once, with the error, if the payload failed. */
	if (io->tags && veil_integrity_attach(io, io->out))
		io->error = true;
	io->shared = veil_helpers_offer(io, veil_helpers_wanted(io, true));
	veil_job_run(io, where, false);
}

static void veil_write_wait_work(struct work_struct *work)
{
	struct veil_io *io = container_of(work, struct veil_io, work);

	io->out = veil_pages_alloc(io, true);
	veil_write_start(io, VEIL_IN_QUEUE);
}

static int veil_map_write(struct veil_io *io)
{
	struct veil_c *vc = io->vc;

	io->out = veil_pages_alloc(io, false);
	if (!io->out) {
		if (!test_bit(VEIL_NO_WRITE_WQ, &vc->flags)) {
			INIT_WORK(&io->work, veil_write_wait_work);
			queue_work(vc->page_wait_wq, &io->work);
			return DM_MAPIO_SUBMITTED;
		}
		io->out = veil_pages_alloc(io, true);
	}
	veil_write_start(io, VEIL_IN_MAP);
	return DM_MAPIO_SUBMITTED;
}

/* Reads. */

static void veil_read_start(struct veil_io *io, enum veil_where where,
			    bool atomic)
{
	struct veil_c *vc = io->vc;

	veil_job_plan(io, VEIL_JOB_READ, veil_may_fanout(vc, VEIL_JOB_READ));
	veil_helpers_offer(io, veil_helpers_wanted(io, true));
	veil_job_run(io, where, atomic);
}

static void veil_read_work(struct work_struct *work)
{
	veil_read_start(container_of(work, struct veil_io, work),
			VEIL_IN_QUEUE, false);
}

/*
 * A read's decryption handed off by its submitter's own completion: until
 * the job ends the bio, a read its submitter maps shows that it had not
 * waited for it (veil_read_depth_note()).
 */
static void veil_read_handoff_work(struct work_struct *work)
{
	struct veil_io *io = container_of(work, struct veil_io, work);

	atomic_dec(&io->vc->handoffs_waiting);
	veil_read_start(io, VEIL_IN_QUEUE, false);
}

/* Where a read's completion may hand its decryption off at all. */
static bool veil_read_may_hand_off(struct veil_c *vc)
{
	return !test_bit(VEIL_SAME_CPU, &vc->flags) &&
	       !test_bit(VEIL_NO_READ_WQ, &vc->flags);
}

/*
 * At the map of a read: the current task is this CPU's reader now. A read
 * it maps while one of its handed-off reads has not ended shows a deep
 * queue: its next VEIL_DEEP_CREDIT reads are handed off. One mapped with
 * none in flight uses up one of them. Another task's read makes the CPU
 * its own, with nothing known yet: the reads the one before handed off
 * are not its own.
 */
static void veil_read_depth_note(struct veil_c *vc)
{
	struct veil_reader *me = raw_cpu_ptr(&veil_readers);
	unsigned long now = jiffies;
	unsigned int credit;

	if (!veil_read_may_hand_off(vc))
		return;
	if (READ_ONCE(me->when) != now)
		WRITE_ONCE(me->when, now);
	if (READ_ONCE(me->task) != current) {
		WRITE_ONCE(me->task, current);
		WRITE_ONCE(me->credit, 0);
		WRITE_ONCE(me->since_probe, 0);
		WRITE_ONCE(me->probe_period, VEIL_PROBE_FIRST);
		WRITE_ONCE(me->inherited, atomic_read(&me->handed) != 0);
		return;
	}
	credit = READ_ONCE(me->credit);
	if (!atomic_read(&me->handed)) {
		if (READ_ONCE(me->inherited))
			WRITE_ONCE(me->inherited, false);
		if (credit)
			WRITE_ONCE(me->credit, credit - 1);
		return;
	}
	if (READ_ONCE(me->inherited))
		return;
	if (credit != VEIL_DEEP_CREDIT)
		WRITE_ONCE(me->credit, VEIL_DEEP_CREDIT);
	if (READ_ONCE(me->probe_period) != VEIL_PROBE_FIRST)
		WRITE_ONCE(me->probe_period, VEIL_PROBE_FIRST);
}

/*
 * Whether this read is one handed off to find out; the next one comes
 * twice as many reads later, unless a sign of depth brings the period
 * back to VEIL_PROBE_FIRST. A hand-off costs a wake-up of another CPU, up
 * to a millisecond from deep idle under emulation.
 */
static bool veil_read_probe(struct veil_reader *me)
{
	unsigned int period = READ_ONCE(me->probe_period);
	unsigned int since = READ_ONCE(me->since_probe) + 1;

	if (since < period) {
		WRITE_ONCE(me->since_probe, since);
		return false;
	}
	WRITE_ONCE(me->since_probe, 0);
	period = min_t(unsigned int, period * 2, VEIL_PROBE_MOST);
	WRITE_ONCE(me->probe_period, period);
	return true;
}

/*
 * Whether a CPU that the unbound crypt queue may use (online, isolated
 * neither from workqueues nor from the scheduler's domains) has no reader
 * but the current task: none, or none in this jiffy and the one before.
 * A CPU that another reader keeps busy gains nothing from taking this
 * one's reads but the wake-ups. Looked at once per jiffy per CPU, and
 * the look ends at the first such CPU. The workqueue's own cpumask
 * (sysfs, workqueue.unbound_cpus=) may narrow it further: a hand-off
 * then costs a wake-up more, never a read.
 */
static bool veil_read_cpu_free(struct veil_reader *me)
{
	const struct cpumask *wq_cpus, *sched_cpus;
	unsigned int self = raw_smp_processor_id();
	unsigned long now = jiffies;
	bool free = false;
	unsigned int cpu;

	if (READ_ONCE(me->free_when) == now)
		return READ_ONCE(me->free);
	wq_cpus = housekeeping_cpumask(HK_TYPE_WQ);
	sched_cpus = housekeeping_cpumask(HK_TYPE_DOMAIN);
	for_each_cpu_and(cpu, wq_cpus, sched_cpus) {
		struct veil_reader *other = per_cpu_ptr(&veil_readers, cpu);
		struct task_struct *task = READ_ONCE(other->task);

		if (cpu == self || !cpu_online(cpu))
			continue;
		if (!task || task == current ||
		    now - READ_ONCE(other->when) > 1) {
			free = true;
			break;
		}
	}
	WRITE_ONCE(me->free, free);
	WRITE_ONCE(me->free_when, now);
	return free;
}

/*
 * Whether the submitter's own completion of a read hands its decryption to
 * the crypt queue, and if so counts it there.
 *
 * On a device that completes inline (a ramdisk), a submitter with one read
 * in flight waits for it: decrypting it in its completion costs nothing
 * but the cipher, and handing it off would add a CPU-to-CPU wake-up to
 * each read (dm-crypt's default is 2 to 3 times slower there). A submitter
 * with many reads in flight (an async one at a deep queue) does not wait:
 * while another CPU decrypts, it submits the next. Down here both show one
 * read at a time, so a read now and then is handed off to find out
 * (veil_read_probe(), veil_read_depth_note()); after a sign of depth, the
 * reads are handed off. Either only while no handed-off read of the target
 * waits for the queue to start it and another CPU has no other reader
 * (veil_read_cpu_free()), and never for a real-time task, whose reads
 * would wait behind it for a worker of normal priority.
 */
static bool veil_read_hand_off(struct veil_io *io)
{
	struct veil_reader *me = raw_cpu_ptr(&veil_readers);
	struct veil_c *vc = io->vc;

	if (!veil_read_may_hand_off(vc) || READ_ONCE(me->task) != current ||
	    current->prio < MAX_RT_PRIO ||
	    atomic_read(&vc->handoffs_waiting) || !veil_read_cpu_free(me))
		return false;
	if (!READ_ONCE(me->credit) && !veil_read_probe(me))
		return false;
	io->handed_count = &me->handed;
	atomic_inc(&me->handed);
	atomic_inc(&vc->handoffs_waiting);
	return true;
}

/* Softirq after a hard-IRQ completion (no_read_workqueue). */
static void veil_read_bh(struct veil_io *io)
{
	veil_read_start(io, VEIL_IN_ENDIO, true);
}

/* @bio: the bio veil_map() was given, or its clone with metadata. */
static void veil_read_end_io(struct bio *bio)
{
	struct veil_io *io = bio->bi_private;
	blk_status_t status = bio->bi_status;
	work_func_t decrypt = veil_read_work;
	struct veil_c *vc = io->vc;

	/* The clone has brought the data and the metadata: done with it. */
	if (bio != io->base) {
		io->base->bi_status = status;
		bio_put(bio);
	}

	if (io->kind == VEIL_JOB_KEYSTREAM) {
		veil_ks_read_done(io, status);
		return;
	}
	if (status) {
		/* Nothing to decrypt: the job ends at once, with the error. */
		veil_job_plan(io, VEIL_JOB_READ, false);
		io->error = true;
		veil_job_run(io, VEIL_IN_ENDIO, true);
		return;
	}
	/*
	 * Hard IRQ: the cipher is not usable there and the work is too long;
	 * interrupts off: completions from the idle task. dm-crypt's rules.
	 * no_read_workqueue asks for the cipher in any other completion. By
	 * default only the submitter's own completion runs it, unless it
	 * hands it off (veil_read_hand_off()). The completion may hold
	 * locks: it never sleeps (atomic).
	 */
	if (in_hardirq() || irqs_disabled()) {
		if (test_bit(VEIL_NO_READ_WQ, &vc->flags)) {
			veil_bh_defer(io, veil_read_bh);
			return;
		}
	} else if (test_bit(VEIL_NO_READ_WQ, &vc->flags)) {
		veil_read_start(io, VEIL_IN_ENDIO, true);
		return;
	} else if (veil_io_in_submitter(io)) {
		if (!veil_read_hand_off(io)) {
			veil_read_start(io, VEIL_IN_ENDIO, true);
			return;
		}
		decrypt = veil_read_handoff_work;
	}
	INIT_WORK(&io->work, decrypt);
	queue_work(vc->crypt_wq, &io->work);
}

/* A read with metadata: its clone goes down, and completes the read. */
static int veil_map_read_tagged(struct veil_io *io)
{
	struct veil_c *vc = io->vc;
	struct bio *clone;

	/* Not polled: dm polls only the bio it gave the target. */
	clone = bio_alloc_clone(vc->dev->bdev, io->base, GFP_NOIO, &vc->bs);
	clone->bi_opf &= ~REQ_POLLED;
	clone->bi_iter.bi_sector = vc->start + io->sector;
	clone->bi_end_io = veil_read_end_io;
	clone->bi_private = io;
	if (veil_integrity_attach(io, clone)) {
		bio_put(clone);
		veil_integrity_free(io);
		return DM_MAPIO_KILL;
	}
	dm_submit_bio_remap(io->base, clone);
	return DM_MAPIO_SUBMITTED;
}

static int veil_map_read(struct veil_io *io)
{
	struct veil_c *vc = io->vc;
	struct bio *bio = io->base;

	veil_read_depth_note(vc);
	io->kind = VEIL_JOB_READ;
	io->error = false;
	io->orig_end_io = bio->bi_end_io;
	io->orig_private = bio->bi_private;
	if (io->tags)
		return veil_map_read_tagged(io);
	bio->bi_end_io = veil_read_end_io;
	bio->bi_private = io;
	bio_set_dev(bio, vc->dev->bdev);
	bio->bi_iter.bi_sector = vc->start + io->sector;

	if (test_bit(VEIL_CTR, &vc->flags) &&
	    !test_bit(VEIL_NO_KS_AHEAD, &vc->flags) &&
	    !test_bit(VEIL_NO_READ_WQ, &vc->flags) &&
	    io->iter.bi_size <= vc->ks_ahead_max)
		veil_ks_start(io);
	return DM_MAPIO_REMAPPED;
}

/**
 * veil_io_map() - start a read or write through the cipher
 * @vc: the target.
 * @bio: a data bio, not empty, aligned to and a multiple of the encryption
 *	sector; a write, and any bio over dm-integrity, is at most
 *	BIO_MAX_VECS pages' worth of bytes (veil_map() splits larger ones),
 *	another read any size. Over dm-integrity the bio may be cut here to
 *	what a metadata buffer holds.
 * @sector: target-relative first sector of @bio.
 *
 * Return: DM_MAPIO_REMAPPED for reads (dm submits the bio; decryption
 * runs on completion), DM_MAPIO_SUBMITTED for writes.
 */
int veil_io_map(struct veil_c *vc, struct bio *bio, sector_t sector)
{
	struct veil_io *io = veil_io_of(vc, bio);

	io->vc = vc;
	io->base = bio;
	io->src = bio;
	io->recheck = false;
	io->handed_count = NULL;
	io->out = NULL;
	io->ks_pages = NULL;
	veil_integrity_map(io, bio);
	io->iter = bio->bi_iter;
	io->sector = sector;
	io->submitter = current;

	if (bio_data_dir(bio) == READ)
		return veil_map_read(io);
	return veil_map_write(io);
}

/**
 * veil_io_init() - set up the engine: page reserve, helpers, queues
 * @ti: the target; ti->error is set on failure, per-bio data size is set.
 * @vc: the target instance; its transform and options must be set.
 *
 * Return: 0 or a negative errno; veil_io_exit() undoes a partial setup.
 */
int veil_io_init(struct dm_target *ti, struct veil_c *vc)
{
	const char *name = dm_table_device_name(ti->table);
	unsigned int crypt_flags = WQ_MEM_RECLAIM | WQ_CPU_INTENSIVE;
	unsigned int wait_flags = WQ_MEM_RECLAIM;
	int crypt_active = 1;
	int ret;

	vc->per_bio_data_size = ALIGN(offsetof(struct veil_io, req) +
				      veil_req_size(vc), ARCH_KMALLOC_MINALIGN);
	ti->per_io_data_size = vc->per_bio_data_size;
	spin_lock_init(&vc->jobs_lock);
	INIT_LIST_HEAD(&vc->jobs);

	ret = veil_pages_init(ti, vc);
	if (ret)
		return ret;
	/* Windows of requests in flight need more than one per context. */
	if (veil_cipher_is_async(vc)) {
		ret = mempool_init_kmalloc_pool(&vc->req_pool, VEIL_ASYNC_DEPTH,
						veil_req_size(vc));
		if (ret) {
			ti->error = "Cannot allocate cipher request pool";
			return ret;
		}
	}
	ret = veil_helpers_init(ti, vc);
	if (ret)
		return ret;
	ret = veil_bh_init(ti, vc);
	if (ret)
		return ret;

	/*
	 * All three are on the writeback path, hence WQ_MEM_RECLAIM. The
	 * crypt queue is unbound, as dm-crypt's, so that a read's decryption
	 * runs on whichever CPU is free; with same_cpu_crypt it is per-CPU
	 * and runs on the CPU that completed the read. Helpers are unbound
	 * too, so that one preempted in a chunk moves to another CPU; per-CPU
	 * with same_cpu_crypt. The page-wait queue is ordered: one writer
	 * waits for pages at a time.
	 *
	 * max_active, as dm-crypt's kcryptd in 6.1 and 6.12: the items of
	 * both queues are cipher work, busy on a CPU, so more of them running
	 * than there are CPUs would only share the CPUs, each finishing later
	 * and none sooner. Unbound: one per online CPU at construction (per
	 * NUMA node before 6.9, for the whole queue since). Per-CPU: one per
	 * CPU, so that a CPU runs the reads completed on it one after another,
	 * in order. A helper held back is "queued and not started", which
	 * keeps jobs from being listed while the CPUs are busy
	 * (veil-helpers.c). Neither limit can deadlock: no item waits for
	 * another item of any veil queue.
	 */
	if (!test_bit(VEIL_SAME_CPU, &vc->flags)) {
		crypt_flags = WQ_MEM_RECLAIM | WQ_UNBOUND;
		crypt_active = num_online_cpus();
	}
	/* As 6.12's dm-crypt: every queue of the target, high priority. */
	if (test_bit(VEIL_HIGH_PRIORITY, &vc->flags)) {
		crypt_flags |= WQ_HIGHPRI;
		wait_flags |= WQ_HIGHPRI;
	}
	vc->crypt_wq = alloc_workqueue("kveild_crypt/%s", crypt_flags,
				       crypt_active, name);
	vc->helper_wq = alloc_workqueue("kveild_help/%s", crypt_flags,
					crypt_active, name);
	vc->page_wait_wq = alloc_ordered_workqueue("kveild_wait/%s",
						   wait_flags, name);
	if (!vc->crypt_wq || !vc->helper_wq || !vc->page_wait_wq) {
		ti->error = "Cannot allocate workqueue";
		return -ENOMEM;
	}
	return 0;
}

/**
 * veil_io_exit() - tear down what veil_io_init() set up
 * @vc: the target instance; no I/O may be in flight.
 */
void veil_io_exit(struct veil_c *vc)
{
	veil_helpers_exit(vc);
	veil_bh_exit(vc);
	if (vc->page_wait_wq)
		destroy_workqueue(vc->page_wait_wq);
	if (vc->helper_wq)
		destroy_workqueue(vc->helper_wq);
	if (vc->crypt_wq)
		destroy_workqueue(vc->crypt_wq);
	mempool_exit(&vc->req_pool);
	veil_pages_exit(vc);
}
