// SPDX-License-Identifier: GPL-2.0
/*
 * dm-veil bottom halves: light work of a read completed in hard IRQ,
 * moved to softirq on the same CPU.
 *
 * A read that completes in hard IRQ (NVMe, a timer) must not run the
 * cipher there. Short work that dm-crypt would do in the completion (the
 * XOR of a CTR read whose keystream is ready; decryption with
 * no_read_workqueue) runs in softirq right after the interrupt instead of
 * waking a worker: each CPU has a list of such reads and a tasklet that
 * drains it. The tasklets belong to the target, not to a bio, so a bio
 * may end inside the drain (a tasklet that freed itself would be touched
 * again by the tasklet code after it returns).
 *
 * Softirq runs on interrupt exit whatever task holds the CPU; a CPU that
 * goes offline hands its pending tasklets to another (takeover_tasklets).
 */
#include <linux/interrupt.h>
#include <linux/llist.h>
#include <linux/percpu.h>

#include "dm-veil.h"

/**
 * struct veil_bh - one CPU's reads waiting for softirq
 * @ios: the reads, newest first.
 * @tasklet: drains @ios.
 */
struct veil_bh {
	struct llist_head ios;
	struct tasklet_struct tasklet;
};

static void veil_bh_drain(struct tasklet_struct *t)
{
	struct veil_bh *bh = from_tasklet(bh, t, tasklet);
	struct llist_node *list = llist_reverse_order(llist_del_all(&bh->ios));
	struct veil_io *io, *next;

	/* @fn may end the bio and free @io: take @next first. */
	llist_for_each_entry_safe(io, next, list, bh_node)
		io->bh_fn(io);
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
		tasklet_schedule(&bh->tasklet);
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
		tasklet_setup(&bh->tasklet, veil_bh_drain);
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
		tasklet_kill(&per_cpu_ptr(vc->bh, cpu)->tasklet);
	free_percpu(vc->bh);
	vc->bh = NULL;
}
