// SPDX-License-Identifier: GPL-2.0
/*
 * dm-veil bottom halves: the cipher work of a read completed in hard IRQ,
 * moved to softirq on the same CPU.
 *
 * A read that completes in hard IRQ (NVMe, a timer) must not run the
 * cipher there. What is bounded per read (the XOR of a CTR read whose
 * keystream was computed ahead, with the clearing of its keystream pages
 * when that XOR is the read's last step; decryption with
 * no_read_workqueue) runs in softirq right after the interrupt
 * instead of waking a worker, as 6.12's dm-crypt uses its BH workqueue
 * for no_read_workqueue: each CPU has a list of such reads and one drain
 * for it, queued on that CPU. The drain is an item of the kernel's BH
 * workqueue, or a tasklet on kernels without one (veil-compat.h). It
 * looks at the clock between reads: past VEIL_BH_BUDGET_NS it queues
 * itself again for the rest (the BH workqueue's own limit is 2 ms too).
 * One read is always decrypted whole, so a stretch of softirq lasts the
 * budget plus one read: a read of any size with no_read_workqueue (as
 * 6.12's dm-crypt), otherwise up to keystream_ahead_max of keystream XOR
 * and as many bytes of page clearing.
 * The drains belong to the target, not to a bio, so a bio may end inside
 * one (a tasklet that freed itself would be touched again by the tasklet
 * code after it returns).
 *
 * Softirq runs on interrupt exit whatever task holds the CPU. A drain
 * queued on a CPU that goes offline runs on another CPU, in softirq
 * there, and queues itself again on that one.
 */
#include <linux/llist.h>
#include <linux/percpu.h>
#include <linux/sched/clock.h>

#include "veil-bh.h"
#include "veil-compat.h"
#include "veil-job.h"

/* The longest a drain runs before it lets other softirq work in. */
#define VEIL_BH_BUDGET_NS	(2 * NSEC_PER_MSEC)

/**
 * struct veil_bh - one CPU's reads waiting for softirq
 * @ios: the reads, newest first.
 * @backlog: reads a drain left for the next one, oldest first; only the
 *	drain touches it, and it never runs twice at once.
 * @drain: drains @backlog, then @ios.
 */
struct veil_bh {
	struct llist_head ios;
	struct llist_node *backlog;
	struct veil_bh_work drain;
};

static void veil_bh_drain(veil_bh_work_arg arg)
{
	struct veil_bh *bh = veil_bh_work_entry(arg, struct veil_bh, drain);
	u64 end = local_clock() + VEIL_BH_BUDGET_NS;
	struct llist_node *list = bh->backlog;
	struct veil_io *io;

	if (!list)
		list = llist_reverse_order(llist_del_all(&bh->ios));
	bh->backlog = NULL;
	while (list) {
		io = llist_entry(list, struct veil_io, bh_node);
		/* @fn may end the bio and free @io: step first. */
		list = list->next;
		io->bh_fn(io);
		if (list && local_clock() > end) {
			bh->backlog = list;
			veil_bh_work_queue(&bh->drain);
			return;
		}
	}
	/*
	 * A read added while the drain was queued for a backlog did not
	 * queue it again.
	 */
	if (!llist_empty(&bh->ios))
		veil_bh_work_queue(&bh->drain);
}

/**
 * veil_bh_defer() - run @fn on @io in softirq on this CPU
 * @io: a read whose completion runs in hard IRQ or with interrupts off.
 * @fn: what to do; runs in softirq with interrupts on, must not sleep.
 */
void veil_bh_defer(struct veil_io *io, void (*fn)(struct veil_io *io))
{
	struct veil_bh *bh;
	unsigned long flags;

	io->bh_fn = fn;
	local_irq_save(flags);
	bh = this_cpu_ptr(io->vc->bh);
	if (llist_add(&io->bh_node, &bh->ios))
		veil_bh_work_queue(&bh->drain);
	local_irq_restore(flags);
}

/**
 * veil_bh_init() - set up one bottom half per possible CPU
 * @ti: the target; ti->error is set on failure.
 * @vc: the target instance.
 *
 * Return: 0 or -ENOMEM.
 */
int veil_bh_init(struct dm_target *ti, struct veil_c *vc)
{
	struct veil_bh *bh;
	int cpu;

	vc->bh = alloc_percpu(struct veil_bh);
	if (!vc->bh) {
		ti->error = "Cannot allocate bottom halves";
		return -ENOMEM;
	}
	for_each_possible_cpu(cpu) {
		bh = per_cpu_ptr(vc->bh, cpu);
		init_llist_head(&bh->ios);
		bh->backlog = NULL;
		veil_bh_work_init(&bh->drain, veil_bh_drain);
	}
	return 0;
}

/**
 * veil_bh_exit() - wait for pending bottom halves and free them
 * @vc: the target instance; no I/O may be in flight.
 */
void veil_bh_exit(struct veil_c *vc)
{
	int cpu;

	if (!vc->bh)
		return;
	for_each_possible_cpu(cpu)
		veil_bh_work_cancel(&per_cpu_ptr(vc->bh, cpu)->drain);
	free_percpu(vc->bh);
	vc->bh = NULL;
}
