/* SPDX-License-Identifier: GPL-2.0 */
/*
 * dm-veil counters (veil-stats.c): per CPU, summed by status.
 */
#ifndef DM_VEIL_STATS_H
#define DM_VEIL_STATS_H

#include <linux/average.h>
#include <linux/jiffies.h>
#include <linux/math64.h>
#include <linux/minmax.h>
#include <linux/percpu.h>
#include <linux/time64.h>
#include <linux/types.h>

#include "dm-veil.h"

/**
 * enum veil_dir - direction of a counter
 * @VEIL_DECRYPT: reads.
 * @VEIL_ENCRYPT: writes.
 * @VEIL_NR_DIRS: number of directions.
 */
enum veil_dir {
	VEIL_DECRYPT,
	VEIL_ENCRYPT,
	VEIL_NR_DIRS,
};

/**
 * enum veil_where - the context a chunk ran in (status: chunks_<where>)
 * @VEIL_IN_MAP: veil_map(), on the submitting task.
 * @VEIL_IN_ENDIO: a read's completion: in the submitter's own submit_bio
 *	(a ramdisk), or with no_read_workqueue in whatever context the read
 *	completed (softirq after a hard-IRQ completion).
 * @VEIL_IN_QUEUE: the crypt or page-wait queue, as a job's first runner.
 * @VEIL_IN_HELPER: a helper, on the helper queue.
 * @VEIL_NR_WHERE: number of contexts.
 */
enum veil_where {
	VEIL_IN_MAP,
	VEIL_IN_ENDIO,
	VEIL_IN_QUEUE,
	VEIL_IN_HELPER,
	VEIL_NR_WHERE,
};

/**
 * struct veil_stats - per-CPU counters, summed by status
 * @bytes: bytes through the cipher, per direction.
 * @reqs: bios completed, per direction.
 * @cipher_ns: nanoseconds in chunks' cipher loops (the calls and each
 *	sector's set-up), per direction.
 * @chunks: chunks this CPU ran.
 * @where: chunks run in each context.
 * @fanout: bios whose chunks were offered to helpers.
 * @helpers_woken: helpers queued (woken) by those offers.
 * @ahead_hit: CTR reads whose keystream was ready when the device finished.
 * @ahead_miss: CTR reads whose keystream was not all ready when the device
 *	finished: the rest was decrypted by the crypt queue, a helper that
 *	finished late, or the submitter's own completion.
 * @ahead_skip: CTR reads without keystream-ahead: no pages or no idle CPU.
 * @page_waits: writes that waited for ciphertext pages.
 * @aead_mask_hit: AEAD write sectors encrypted with a mask made ahead.
 * @aead_mask_miss: AEAD write sectors of a table with masks on that found
 *	none ready and went through the AEAD.
 */
struct veil_stats {
	u64 bytes[VEIL_NR_DIRS];
	u64 reqs[VEIL_NR_DIRS];
	u64 cipher_ns[VEIL_NR_DIRS];
	u64 chunks;
	u64 where[VEIL_NR_WHERE];
	u64 fanout;
	u64 helpers_woken;
	u64 ahead_hit;
	u64 ahead_miss;
	u64 ahead_skip;
	u64 page_waits;
	u64 aead_mask_hit;
	u64 aead_mask_miss;
};

/* Running averages of nanoseconds, in 1/16 ns: each sample weighs 1/8. */
#define VEIL_COST_PRECISION		4
DECLARE_EWMA(veil_ns, VEIL_COST_PRECISION, 8)

/*
 * A sample above this is a CPU taken away mid-way (preempted, or a vCPU
 * the host stopped), counted as this much: it also keeps the averages'
 * arithmetic within 32 bits.
 */
#define VEIL_COST_SAMPLE_MAX		(16 * NSEC_PER_MSEC)

/*
 * Bios of at least this many bytes, cut into chunks, give a cost sample:
 * only they may wake more than one helper (veil-helpers.c), and one
 * sample per bio keeps the shared line off the path of small ones.
 */
#define VEIL_COST_BIO_MIN		(64 * 1024)

/**
 * struct veil_costs - what waking a helper costs and what it would save
 * @helper_delay: nanoseconds from a helper's queueing to its start: the
 *	time a wake-up takes, on this machine and under its present load.
 * @helper_delay_when: jiffies of the last @helper_delay sample.
 * @cipher_ns_kib: nanoseconds per KiB in the cipher loop of the first
 *	chunk of bios of VEIL_COST_BIO_MIN or more cut into chunks, per
 *	direction.
 *
 * Shared by every CPU in a cache line of their own, written without a
 * lock by whoever has a sample: one update may undo a concurrent one,
 * which only loses a sample. Written once per such bio and per helper
 * start, never for small bios. 0 until the first sample; a sample is at
 * least 1.
 */
struct veil_costs {
	struct ewma_veil_ns helper_delay;
	unsigned long helper_delay_when;
	struct ewma_veil_ns cipher_ns_kib[VEIL_NR_DIRS];
} ____cacheline_aligned_in_smp;

/* Read a running average that other CPUs may be updating. */
static inline unsigned long veil_cost_read(struct ewma_veil_ns *avg)
{
	return READ_ONCE(avg->internal) >> VEIL_COST_PRECISION;
}

static inline void veil_cost_add(struct ewma_veil_ns *avg, u64 ns)
{
	ewma_veil_ns_add(avg, clamp_t(u64, ns, 1, VEIL_COST_SAMPLE_MAX));
}

/* Add cipher work to this CPU's counters: @bytes through it, @ns inside. */
static inline void veil_stats_cipher(struct veil_c *vc, enum veil_dir dir,
				     unsigned int bytes, u64 ns)
{
	this_cpu_add(vc->stats->bytes[dir], bytes);
	this_cpu_add(vc->stats->cipher_ns[dir], ns);
}

/* A helper started @ns after it was queued. */
static inline void veil_stats_helper_delay(struct veil_c *vc, u64 ns)
{
	veil_cost_add(&vc->costs->helper_delay, ns);
	WRITE_ONCE(vc->costs->helper_delay_when, jiffies);
}

/* A cost sample: @ns in the cipher for @bytes of a chunk. */
static inline void veil_stats_chunk_cost(struct veil_c *vc, enum veil_dir dir,
					 unsigned int bytes, u64 ns)
{
	veil_cost_add(&vc->costs->cipher_ns_kib[dir],
		      div_u64(min_t(u64, ns, VEIL_COST_SAMPLE_MAX) * 1024,
			      bytes));
}

int veil_stats_init(struct veil_c *vc);
void veil_stats_exit(struct veil_c *vc);
void veil_stats_reset(struct veil_c *vc);
unsigned int veil_stats_emit(struct veil_c *vc, char *result,
			     unsigned int maxlen);

#endif /* DM_VEIL_STATS_H */
