/* SPDX-License-Identifier: GPL-2.0 */
/*
 * dm-veil bottom halves (veil-bh.c): a read completed in hard IRQ goes on
 * in softirq on the same CPU.
 */
#ifndef DM_VEIL_BH_H
#define DM_VEIL_BH_H

#include "dm-veil.h"

struct veil_io;

int veil_bh_init(struct dm_target *ti, struct veil_c *vc);
void veil_bh_exit(struct veil_c *vc);
void veil_bh_defer(struct veil_io *io, void (*fn)(struct veil_io *io));

#endif /* DM_VEIL_BH_H */
