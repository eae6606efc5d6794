// SPDX-License-Identifier: GPL-2.0
/*
 * dm-veil helpers: running chunks of listed jobs on other CPUs.
 *
 * A target has one helper per possible CPU: a work item with a cipher
 * request of its own. A helper takes chunks of any listed job until the
 * list is empty, then leaves. Rules:
 *
 * - A job never waits for a helper (veil-job.c): the helper is an offer.
 *   Its runner takes every chunk that no helper has claimed.
 * - Helpers run on an unbound queue, as dm-crypt's kcryptd work: the
 *   scheduler places them on idle CPUs, and a helper preempted in the
 *   middle of a chunk (by a real-time task, or on a vCPU the host stopped)
 *   migrates to another CPU instead of holding the chunk there (on 6.1,
 *   within its NUMA node: unbound pools are per node before 6.9). The
 *   queue follows the workqueue code's unbound cpumask, which leaves out
 *   isolated CPUs. With same_cpu_crypt the queue is per-CPU and the one
 *   helper it may get (keystream-ahead, no fan-out) runs on the
 *   submitting CPU, as that option asks.
 * - A helper is queued only if it is idle. While some helper is queued and
 *   not yet started, the CPUs are busy: jobs are not listed and run whole
 *   on their runner, which keeps every bio on one CPU under a deep queue.
 * - One bio wakes at most one helper per VEIL_WAKE_BYTES of its data, and
 *   never more than it has chunks beyond its runner's; beyond the first,
 *   no more than its measured cipher time is worth against the measured
 *   time a helper takes to start (veil-stats.h): see below.
 * - A running helper takes new jobs without being queued again.
 * - A helper waits for the cipher (async drivers, and their requests
 *   from the target's request mempool, which only the driver's
 *   completions refill) and, when it finishes a write, for the device to
 *   take it (submit_bio may sleep for a request tag, as any submitter):
 *   never for pages, veil's locks, or other work of any veil queue.
 */
#include <linux/cpumask.h>
#include <linux/jiffies.h>
#include <linux/math64.h>
#include <linux/percpu.h>
#include <linux/slab.h>
#include <linux/timekeeping.h>

#include "veil-helpers.h"
#include "veil-job.h"

/* A bio wakes at most one helper per this many bytes of its data. */
#define VEIL_WAKE_BYTES			(32 * 1024)

/* A helper delay last measured longer ago than this is not trusted. */
#define VEIL_DELAY_STALE		HZ

/**
 * struct veil_helper - one helper of one target
 * @vc: the target.
 * @work: the helper, queued by veil_helpers_offer().
 * @state: enum veil_helper_state.
 * @req: the helper's cipher request; one at a time, as @work never runs
 *	on two CPUs at once.
 * @queued_ns: when it was last queued (ktime_get_mono_fast_ns()).
 */
struct veil_helper {
	struct veil_c *vc;
	struct work_struct work;
	atomic_t state;
	struct veil_req *req;
	u64 queued_ns;
};

/**
 * enum veil_helper_state - where a helper is
 * @VEIL_HELPER_IDLE: not queued, not running: may be queued.
 * @VEIL_HELPER_QUEUED: queued and not started yet: the CPUs are busy.
 * @VEIL_HELPER_RUNNING: taking chunks; sees newly listed jobs.
 */
enum veil_helper_state {
	VEIL_HELPER_IDLE,
	VEIL_HELPER_QUEUED,
	VEIL_HELPER_RUNNING,
};

/**
 * veil_may_fanout() - whether a job of this kind may be shared with helpers
 * @vc: the target.
 * @kind: the job's kind.
 *
 * Not with no_fanout or same_cpu_crypt; not for writes with
 * no_write_workqueue nor for reads with no_read_workqueue, whose work
 * stays in veil_map() and in the read's completion; not on one CPU.
 *
 * Return: true if helpers may take chunks of such a job.
 */
bool veil_may_fanout(struct veil_c *vc, enum veil_job_kind kind)
{
	if (test_bit(VEIL_NO_FANOUT, &vc->flags) ||
	    test_bit(VEIL_SAME_CPU, &vc->flags))
		return false;
	if (kind == VEIL_JOB_WRITE ? test_bit(VEIL_NO_WRITE_WQ, &vc->flags) :
				     test_bit(VEIL_NO_READ_WQ, &vc->flags))
		return false;
	return num_online_cpus() > 1;
}

/*
 * How many helpers a job's cipher work is worth, as measured: one per
 * helper delay of its expected cipher time, less one for a runner. As a
 * rule of thumb: the runner and each helper would have at least a delay's
 * worth of work if all started at once, so a helper that starts a delay
 * late still finds some. UINT_MAX while either figure is unknown, or the
 * delay was last measured over VEIL_DELAY_STALE ago (under a load that may
 * have passed): helpers that stay running give no samples, and the next
 * wake-up measures it again.
 */
static unsigned int veil_helpers_worth(struct veil_io *io, bool runner)
{
	struct veil_costs *costs = io->vc->costs;
	enum veil_dir dir = veil_kind_dir(io->kind);
	unsigned long delay = veil_cost_read(&costs->helper_delay);
	unsigned long per_kib = veil_cost_read(&costs->cipher_ns_kib[dir]);
	u64 delays;

	if (!delay || !per_kib ||
	    time_after(jiffies, READ_ONCE(costs->helper_delay_when) +
			       VEIL_DELAY_STALE))
		return UINT_MAX;
	delays = div64_ul((u64)(io->iter.bi_size / 1024) * per_kib, delay);
	if (runner && delays)
		delays--;
	return min_t(u64, delays, UINT_MAX);
}

/**
 * veil_helpers_wanted() - how many helpers a job may wake
 * @io: a planned job.
 * @runner: the job has a runner that takes chunks too (not a keystream
 *	job, whose submitter waits for the device meanwhile).
 *
 * A wake-up and the claims that follow cost a few microseconds on an idle
 * machine; on a CPU with AES instructions that is the cipher time of
 * several KiB. So a job wakes at most one helper per VEIL_WAKE_BYTES of
 * its data: a 64 KiB bio at most two, a 1 MiB bio at most one per other
 * online CPU. Beyond the first, only as many as the measured costs say
 * are worth it (veil_helpers_worth()): a cheap cipher (the null cipher),
 * or CPUs slow to start a helper (busy, or vCPUs that the host runs on
 * fewer CPUs), wakes fewer. The first is not held back by them: it keeps
 * the delay measured, and a delay measured on CPUs that rarely see a
 * helper would hold helpers back for good. A keystream job may wake one
 * helper whatever its size, and more as the others: its submitter sleeps
 * until the device completes, and nobody else makes the keystream.
 *
 * Return: the most helpers the job may wake.
 */
unsigned int veil_helpers_wanted(struct veil_io *io, bool runner)
{
	unsigned int n = io->iter.bi_size / VEIL_WAKE_BYTES;
	unsigned int cpus = num_online_cpus();

	/* Only bios that may wake two or more give cost samples. */
	BUILD_BUG_ON(VEIL_COST_BIO_MIN != 2 * VEIL_WAKE_BYTES);
	if (n > 1 && io->nr_chunks > 1)
		n = min(n, max(veil_helpers_worth(io, runner), 1U));
	if (runner)
		return min3(n, io->nr_chunks - 1, cpus - 1);
	return min3(max(n, 1U), io->nr_chunks, cpus);
}

static bool veil_helper_queue(struct veil_c *vc, struct veil_helper *h)
{
	switch (atomic_cmpxchg(&h->state, VEIL_HELPER_IDLE,
			       VEIL_HELPER_QUEUED)) {
	case VEIL_HELPER_IDLE:
		atomic_inc(&vc->helpers_queued);
		/* Seen by the work: queueing orders it before the work runs. */
		h->queued_ns = ktime_get_mono_fast_ns();
		if (test_bit(VEIL_SAME_CPU, &vc->flags))
			queue_work_on(raw_smp_processor_id(), vc->helper_wq,
				      &h->work);
		else
			queue_work(vc->helper_wq, &h->work);
		this_cpu_inc(vc->stats->helpers_woken);
		return true;
	case VEIL_HELPER_RUNNING:
		return true;
	default:
		return false;
	}
}

/**
 * veil_helpers_available() - whether a helper could take a job now
 * @vc: the target.
 *
 * Advisory: the answer may change at once.
 *
 * With same_cpu_crypt a helper waits on its own CPU's queue, behind what
 * that CPU runs: one CPU held by a real-time task says nothing of the
 * others, so it does not stop keystream-ahead for the whole target.
 *
 * Return: true if no helper waits to be started, or with same_cpu_crypt.
 */
bool veil_helpers_available(struct veil_c *vc)
{
	return test_bit(VEIL_SAME_CPU, &vc->flags) ||
	       !atomic_read(&vc->helpers_queued);
}

/**
 * veil_helpers_offer() - list a job for helpers and wake them
 * @io: a planned job, held by its runner or its read.
 * @max: most helpers wanted (veil_helpers_wanted()).
 *
 * The job is listed only if veil_helpers_available(); then idle helpers
 * are queued, up to @max with those found running.
 *
 * Return: how many helpers were queued or found running.
 */
unsigned int veil_helpers_offer(struct veil_io *io, unsigned int max)
{
	struct veil_c *vc = io->vc;
	unsigned int i, n = 0;

	if (!max || !veil_helpers_available(vc))
		return 0;
	veil_job_list(io);
	/* Listed before a helper's state is read; pairs with veil_helper_work(). */
	smp_mb();
	for (i = 0; i < vc->nr_helpers && n < max; i++)
		if (veil_helper_queue(vc, &vc->helpers[i]))
			n++;
	this_cpu_inc(vc->stats->fanout);
	return n;
}

static void veil_helper_work(struct work_struct *work)
{
	struct veil_helper *h = container_of(work, struct veil_helper, work);
	struct veil_c *vc = h->vc;

	atomic_set(&h->state, VEIL_HELPER_RUNNING);
	atomic_dec(&vc->helpers_queued);
	/* The fast clock may step back a little from one CPU to another. */
	veil_stats_helper_delay(vc, max_t(s64, ktime_get_mono_fast_ns() -
					       h->queued_ns, 0));
	for (;;) {
		/* Jobs may keep coming: let others run between chunks. */
		while (veil_job_help(vc, h->req))
			cond_resched();
		atomic_set(&h->state, VEIL_HELPER_IDLE);
		/* Idle before the list is read; pairs with veil_helpers_offer(). */
		smp_mb();
		if (list_empty_careful(&vc->jobs))
			return;
		/* A job came: go on, unless an offer queued this helper again. */
		if (atomic_cmpxchg(&h->state, VEIL_HELPER_IDLE,
				   VEIL_HELPER_RUNNING) != VEIL_HELPER_IDLE)
			return;
	}
}

/**
 * veil_helpers_init() - set up one helper per possible CPU
 * @ti: the target; ti->error is set on failure.
 * @vc: the target instance; its transform must be allocated.
 *
 * Return: 0 or -ENOMEM; veil_helpers_exit() undoes a partial setup.
 */
int veil_helpers_init(struct dm_target *ti, struct veil_c *vc)
{
	size_t size = veil_req_size(vc);
	struct veil_helper *h;
	unsigned int i;

	atomic_set(&vc->helpers_queued, 0);
	vc->helpers = kcalloc(num_possible_cpus(), sizeof(*vc->helpers),
			      GFP_KERNEL);
	if (!vc->helpers)
		goto nomem;
	for (i = 0; i < num_possible_cpus(); i++) {
		h = &vc->helpers[i];
		h->vc = vc;
		INIT_WORK(&h->work, veil_helper_work);
		atomic_set(&h->state, VEIL_HELPER_IDLE);
		h->req = kzalloc(size, GFP_KERNEL);
		if (!h->req)
			goto nomem;
		vc->nr_helpers++;
	}
	return 0;
nomem:
	ti->error = "Cannot allocate helpers";
	return -ENOMEM;
}

/**
 * veil_helpers_exit() - stop and free the helpers
 * @vc: the target instance; no I/O may be in flight.
 *
 * A helper still queued is cancelled; one running finishes first (it
 * holds no chunk once no I/O is in flight, and may run on any CPU).
 */
void veil_helpers_exit(struct veil_c *vc)
{
	unsigned int i;

	if (!vc->helpers)
		return;
	for (i = 0; i < vc->nr_helpers; i++) {
		cancel_work_sync(&vc->helpers[i].work);
		kfree_sensitive(vc->helpers[i].req);
	}
	kfree(vc->helpers);
	vc->helpers = NULL;
}
