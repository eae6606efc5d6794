/* SPDX-License-Identifier: GPL-2.0 */
/*
 * dm-veil: kernel API differences between the kernels the module builds
 * for (6.1 and later). Each VEIL_HAVE_* comes from a probe of the kernel's
 * own headers in Kbuild, never from the version number: distribution
 * kernels carry backports that a version check gets wrong.
 */
#ifndef DM_VEIL_COMPAT_H
#define DM_VEIL_COMPAT_H

#include <linux/blkdev.h>
#include <linux/blk-integrity.h>
#include <linux/crypto.h>

/* get_unaligned() and friends moved from <asm/> to <linux/> in 6.12. */
#ifdef VEIL_HAVE_LINUX_UNALIGNED_H
#include <linux/unaligned.h>
#else
#include <asm/unaligned.h>
#endif

/*
 * An async cipher's completion callback gets the data given to
 * skcipher_request_set_callback() since 6.3; before, the request that
 * holds it. A callback is declared as
 *	static void fn(veil_crypto_done_arg arg, int err)
 * and finds its data with veil_crypto_done_data(arg).
 */
#ifdef VEIL_HAVE_CRYPTO_DONE_DATA
#define veil_crypto_done_arg void *
static inline void *veil_crypto_done_data(void *data)
{
	return data;
}
#else
#define veil_crypto_done_arg struct crypto_async_request *
static inline void *veil_crypto_done_data(struct crypto_async_request *areq)
{
	return areq->data;
}
#endif

/*
 * Work that runs in softirq on the CPU that queues it: an item of the BH
 * workqueue (system_bh_wq, since 6.9), where the kernel has it, else a
 * tasklet, which new code upstream may no longer use. Either never runs
 * on two CPUs at once, may queue itself again from its own function, and
 * runs on another CPU if its own goes offline while it is queued.
 *
 *	struct veil_bh_work		the item, embedded in the owner
 *	static void fn(veil_bh_work_arg arg)
 *					its function, which finds the owner
 *					with veil_bh_work_entry(arg, type,
 *					member)
 *	veil_bh_work_init(w, fn)	set @w up to run fn
 *	veil_bh_work_queue(w)		queue @w on this CPU unless it is
 *					queued already; with preemption off
 *	veil_bh_work_cancel(w)		sleep until @w is neither queued nor
 *					running; nothing may queue it meanwhile
 */
#ifdef VEIL_HAVE_BH_WORKQUEUE
#include <linux/smp.h>
#include <linux/workqueue.h>

struct veil_bh_work {
	struct work_struct work;
};

#define veil_bh_work_arg struct work_struct *
#define veil_bh_work_entry(arg, type, member) \
	container_of(arg, type, member.work)

static inline void veil_bh_work_init(struct veil_bh_work *w,
				     void (*fn)(veil_bh_work_arg))
{
	INIT_WORK(&w->work, fn);
}

/*
 * This CPU, not the one @w belongs to: a function that runs for a CPU gone
 * offline queues itself again where it runs.
 */
static inline void veil_bh_work_queue(struct veil_bh_work *w)
{
	queue_work_on(smp_processor_id(), system_bh_wq, &w->work);
}

static inline void veil_bh_work_cancel(struct veil_bh_work *w)
{
	cancel_work_sync(&w->work);
}
#else
#include <linux/interrupt.h>

struct veil_bh_work {
	struct tasklet_struct tasklet;
};

#define veil_bh_work_arg struct tasklet_struct *
#define veil_bh_work_entry(arg, type, member) \
	container_of(arg, type, member.tasklet)

static inline void veil_bh_work_init(struct veil_bh_work *w,
				     void (*fn)(veil_bh_work_arg))
{
	tasklet_setup(&w->tasklet, fn);
}

static inline void veil_bh_work_queue(struct veil_bh_work *w)
{
	tasklet_schedule(&w->tasklet);
}

static inline void veil_bh_work_cancel(struct veil_bh_work *w)
{
	tasklet_kill(&w->tasklet);
}
#endif

/*
 * Whether a disk's integrity metadata is opaque per-sector space that the
 * layer above fills (dm-integrity without an internal hash), not a
 * protection-information checksum: a csum_type of none since 6.11, the
 * profile dm-integrity registers before.
 */
#ifdef VEIL_HAVE_INTEGRITY_CSUM_TYPE
static inline bool veil_integrity_opaque(const struct blk_integrity *bi)
{
	return bi && bi->csum_type == BLK_INTEGRITY_CSUM_NONE;
}
#else
#include <linux/string.h>

static inline bool veil_integrity_opaque(const struct blk_integrity *bi)
{
	return bi && bi->profile &&
	       !strcasecmp(bi->profile->name, "DM-DIF-EXT-TAG");
}
#endif

#endif /* DM_VEIL_COMPAT_H */
