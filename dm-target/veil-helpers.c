// SPDX-License-Identifier: GPL-2.0
/*
 * dm-veil helpers: running chunks of listed jobs on other CPUs.
 *
 * Each CPU has one helper per target: a work item on the per-CPU helper
 * queue and a cipher request of its own. A helper takes chunks of any
 * listed job until the list is empty, then leaves. Rules:
 *
 * - A job never waits for a helper (veil-job.c): the helper is an offer.
 *   Its runner takes every chunk that no helper has claimed.
 * - A helper is queued on a CPU only if the CPU is online, not isolated
 *   (isolcpus/nohz_full: housekeeping for domains and workqueues) and its
 *   helper has run since it was last queued. A CPU held by a real-time
 *   task, or otherwise too busy to run its last helper, gets no more.
 * - A helper already running takes new jobs without being queued again.
 * - A helper waits for the cipher (async drivers) and, when it finishes a
 *   write, for the device to take it (submit_bio may sleep for a request
 *   tag, as any submitter): never for pages, veil's locks, or other work
 *   of any veil queue.
 * - A CPU that goes offline with its helper queued has it run elsewhere by
 *   the workqueue code; veil_helpers_exit() cancels helpers that never ran.
 *
 * Known limit: a helper preempted in the middle of a chunk by a real-time
 * task holds that chunk until it runs again, as any kernel thread bound to
 * that CPU would; real-time throttling (the default) bounds the delay.
 */
#include <linux/cpumask.h>
#include <linux/percpu.h>
#include <linux/sched/isolation.h>
#include <linux/slab.h>

#include "dm-veil.h"

/**
 * enum veil_helper_state - where a CPU's helper is
 * @VEIL_HELPER_IDLE: not queued, not running: may be queued.
 * @VEIL_HELPER_QUEUED: queued and not started yet: its CPU is busy.
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

static bool veil_cpu_usable(int cpu)
{
	return cpu_online(cpu) && housekeeping_cpu(cpu, HK_TYPE_DOMAIN) &&
	       housekeeping_cpu(cpu, HK_TYPE_WQ);
}

/* The online CPU after @cpu, wrapping around. */
static int veil_next_cpu(int cpu)
{
	cpu = cpumask_next(cpu, cpu_online_mask);
	return cpu < nr_cpu_ids ? cpu : cpumask_first(cpu_online_mask);
}

/*
 * Call @fn for each CPU whose helper may take work, up to @max of them:
 * the other CPUs if @others, then this CPU if @here and no other was found.
 * Returns how many there were.
 */
static unsigned int veil_helpers_each(struct veil_c *vc, unsigned int max,
				      bool others, bool here,
				      bool (*fn)(struct veil_helper *h, int cpu))
{
	int this_cpu = raw_smp_processor_id(), cpu;
	unsigned int n = 0, step = 0;
	struct veil_helper *h;

	/*
	 * Preemptible: this_cpu may go offline under the walk, which then
	 * never meets it again; one round at most.
	 */
	for (cpu = veil_next_cpu(this_cpu);
	     others && n < max && cpu != this_cpu && step++ < nr_cpu_ids;
	     cpu = veil_next_cpu(cpu)) {
		h = per_cpu_ptr(vc->helpers, cpu);
		if (veil_cpu_usable(cpu) && fn(h, cpu))
			n++;
	}
	if (!n && here && max && veil_cpu_usable(this_cpu) &&
	    fn(per_cpu_ptr(vc->helpers, this_cpu), this_cpu))
		n++;
	return n;
}

static bool veil_helper_free(struct veil_helper *h, int cpu)
{
	return atomic_read(&h->state) != VEIL_HELPER_QUEUED;
}

/**
 * veil_helpers_available() - whether any helper could take a job now
 * @vc: the target.
 * @others: look at the other CPUs.
 * @here: look at this CPU if no other has a helper free.
 *
 * Advisory: the answer may change at once.
 *
 * Return: true if some helper is idle or running.
 */
bool veil_helpers_available(struct veil_c *vc, bool others, bool here)
{
	return veil_helpers_each(vc, 1, others, here, veil_helper_free);
}

static bool veil_helper_queue(struct veil_helper *h, int cpu)
{
	switch (atomic_cmpxchg(&h->state, VEIL_HELPER_IDLE,
			       VEIL_HELPER_QUEUED)) {
	case VEIL_HELPER_IDLE:
		queue_work_on(cpu, h->vc->helper_wq, &h->work);
		return true;
	case VEIL_HELPER_RUNNING:
		return true;
	default:
		return false;
	}
}

/**
 * veil_helpers_offer() - list a job for helpers and wake them
 * @io: a planned job, held by its runner or its read.
 * @max: most helpers wanted.
 * @others: helpers of the other CPUs may come.
 * @here: this CPU's helper may come if no other one can.
 *
 * The job is listed only if some helper can come; then idle helpers are
 * queued and running ones will find it.
 *
 * Return: how many helpers were queued or found running.
 */
unsigned int veil_helpers_offer(struct veil_io *io, unsigned int max,
				bool others, bool here)
{
	struct veil_c *vc = io->vc;
	unsigned int n;

	if (!veil_helpers_each(vc, 1, others, here, veil_helper_free))
		return 0;
	veil_job_list(io);
	/* Listed before a helper's state is read; pairs with veil_helper_work(). */
	smp_mb();
	n = veil_helpers_each(vc, max, others, here, veil_helper_queue);
	this_cpu_inc(vc->stats->fanout);
	return n;
}

static void veil_helper_work(struct work_struct *work)
{
	struct veil_helper *h = container_of(work, struct veil_helper, work);
	struct veil_c *vc = h->vc;
	struct veil_io *io;
	unsigned int idx;

	atomic_set(&h->state, VEIL_HELPER_RUNNING);
	for (;;) {
		while ((io = veil_job_claim_listed(vc, &idx))) {
			veil_job_run_chunk(io, h->req, idx, 0, VEIL_IN_HELPER,
					   false);
			/* Jobs may keep coming: let others run between chunks. */
			cond_resched();
		}
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
	size_t size = sizeof(struct veil_req) + crypto_skcipher_reqsize(vc->tfm);
	struct veil_helper *h;
	int cpu;

	vc->helpers = alloc_percpu(struct veil_helper);
	if (!vc->helpers)
		goto nomem;
	for_each_possible_cpu(cpu) {
		h = per_cpu_ptr(vc->helpers, cpu);
		h->vc = vc;
		INIT_WORK(&h->work, veil_helper_work);
		atomic_set(&h->state, VEIL_HELPER_IDLE);
		h->req = kzalloc_node(size, GFP_KERNEL, cpu_to_node(cpu));
		if (!h->req)
			goto nomem;
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
 * A helper still queued on a CPU that never ran it is cancelled, so that
 * removing the device does not wait for that CPU.
 */
void veil_helpers_exit(struct veil_c *vc)
{
	struct veil_helper *h;
	int cpu;

	if (!vc->helpers)
		return;
	for_each_possible_cpu(cpu) {
		h = per_cpu_ptr(vc->helpers, cpu);
		if (h->vc)
			cancel_work_sync(&h->work);
		kfree_sensitive(h->req);
	}
	free_percpu(vc->helpers);
	vc->helpers = NULL;
}
