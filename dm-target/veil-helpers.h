/* SPDX-License-Identifier: GPL-2.0 */
/*
 * dm-veil helpers (veil-helpers.c): chunks of listed jobs run on other CPUs.
 */
#ifndef DM_VEIL_HELPERS_H
#define DM_VEIL_HELPERS_H

#include "veil-job.h"

int veil_helpers_init(struct dm_target *ti, struct veil_c *vc);
void veil_helpers_exit(struct veil_c *vc);
bool veil_may_fanout(struct veil_c *vc, enum veil_job_kind kind);
unsigned int veil_helpers_wanted(struct veil_io *io, bool runner);
bool veil_helpers_available(struct veil_c *vc);
unsigned int veil_helpers_offer(struct veil_io *io, unsigned int max);

#endif /* DM_VEIL_HELPERS_H */
