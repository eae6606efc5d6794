// SPDX-License-Identifier: GPL-2.0
/*
 * dm-veil counters: kept per CPU so that the I/O path never shares a cache
 * line for them, summed when status is read. Reads of another CPU's
 * counters are not synchronised with its updates: a status line is a
 * snapshot, exact on 64-bit machines once the device is idle.
 * The measured costs that decide helper wake-ups (struct veil_costs) are
 * shared, written once per large bio and per helper start, and printed
 * with the counters.
 */
#include <linux/percpu.h>
#include <linux/slab.h>
#include <linux/string.h>

#include "dm-veil.h"
#include "veil-stats.h"

/**
 * veil_stats_init() - allocate zeroed per-CPU counters and measured costs
 * @vc: the target instance.
 *
 * Return: 0 or -ENOMEM.
 */
int veil_stats_init(struct veil_c *vc)
{
	vc->stats = alloc_percpu(struct veil_stats);
	vc->costs = kzalloc(sizeof(*vc->costs), GFP_KERNEL);
	return vc->stats && vc->costs ? 0 : -ENOMEM;
}

/**
 * veil_stats_exit() - free the counters
 * @vc: the target instance.
 */
void veil_stats_exit(struct veil_c *vc)
{
	free_percpu(vc->stats);
	kfree(vc->costs);
}

/**
 * veil_stats_reset() - zero every counter on every CPU
 * @vc: the target instance.
 */
void veil_stats_reset(struct veil_c *vc)
{
	int cpu;

	for_each_possible_cpu(cpu)
		memset(per_cpu_ptr(vc->stats, cpu), 0, sizeof(struct veil_stats));
}

/**
 * veil_stats_emit() - print the counters as the status INFO fields
 * @vc: the target instance.
 * @result: output buffer.
 * @maxlen: size of @result.
 *
 * Return: the number of characters written.
 */
unsigned int veil_stats_emit(struct veil_c *vc, char *result,
			     unsigned int maxlen)
{
	struct veil_stats sum = { }, *s;
	unsigned int sz = 0;
	const char *sep = "";
	int cpu, i;

	for_each_possible_cpu(cpu) {
		s = per_cpu_ptr(vc->stats, cpu);
		for (i = 0; i < VEIL_NR_DIRS; i++) {
			sum.bytes[i] += s->bytes[i];
			sum.reqs[i] += s->reqs[i];
			sum.cipher_ns[i] += s->cipher_ns[i];
		}
		for (i = 0; i < VEIL_NR_WHERE; i++)
			sum.where[i] += s->where[i];
		sum.fanout += s->fanout;
		sum.helpers_woken += s->helpers_woken;
		sum.ahead_hit += s->ahead_hit;
		sum.ahead_miss += s->ahead_miss;
		sum.ahead_skip += s->ahead_skip;
		sum.page_waits += s->page_waits;
		sum.aead_mask_hit += s->aead_mask_hit;
		sum.aead_mask_miss += s->aead_mask_miss;
	}

	DMEMIT("reads=%llu writes=%llu bytes_decrypted=%llu bytes_encrypted=%llu",
	       sum.reqs[VEIL_DECRYPT], sum.reqs[VEIL_ENCRYPT],
	       sum.bytes[VEIL_DECRYPT], sum.bytes[VEIL_ENCRYPT]);
	DMEMIT(" cipher_ns_decrypt=%llu cipher_ns_encrypt=%llu",
	       sum.cipher_ns[VEIL_DECRYPT], sum.cipher_ns[VEIL_ENCRYPT]);
	DMEMIT(" fanout=%llu helpers_woken=%llu", sum.fanout, sum.helpers_woken);
	DMEMIT(" keystream_hit=%llu keystream_miss=%llu keystream_skip=%llu",
	       sum.ahead_hit, sum.ahead_miss, sum.ahead_skip);
	DMEMIT(" aead_mask_hit=%llu aead_mask_miss=%llu",
	       sum.aead_mask_hit, sum.aead_mask_miss);
	DMEMIT(" chunks_map=%llu chunks_endio=%llu chunks_queue=%llu chunks_helper=%llu",
	       sum.where[VEIL_IN_MAP], sum.where[VEIL_IN_ENDIO],
	       sum.where[VEIL_IN_QUEUE], sum.where[VEIL_IN_HELPER]);
	DMEMIT(" page_waits=%llu", sum.page_waits);
	DMEMIT(" helper_delay_ns=%lu cipher_ns_kib_decrypt=%lu cipher_ns_kib_encrypt=%lu",
	       veil_cost_read(&vc->costs->helper_delay),
	       veil_cost_read(&vc->costs->cipher_ns_kib[VEIL_DECRYPT]),
	       veil_cost_read(&vc->costs->cipher_ns_kib[VEIL_ENCRYPT]));
	DMEMIT(" cpu_chunks=");
	for_each_possible_cpu(cpu) {
		DMEMIT("%s%d:%llu", sep, cpu, per_cpu_ptr(vc->stats, cpu)->chunks);
		sep = ",";
	}
	return sz;
}
