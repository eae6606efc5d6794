/* SPDX-License-Identifier: GPL-2.0 */
/*
 * dm-veil write masks (veil-masks.c): GCM keystream of random IVs made
 * ahead of the writes that use them.
 */
#ifndef DM_VEIL_MASKS_H
#define DM_VEIL_MASKS_H

#include <linux/scatterlist.h>
#include <linux/types.h>

struct dm_target;
struct veil_c;

/* Slots of a table's pool: the default, and the most aead_masks takes. */
#define VEIL_AEAD_MASKS_DEFAULT		64
#define VEIL_AEAD_MASKS_MAX		4096

int veil_masks_init(struct dm_target *ti, struct veil_c *vc);
void veil_masks_exit(struct veil_c *vc);
void veil_masks_stop(struct veil_c *vc);
void veil_masks_start(struct veil_c *vc, const u8 *key, unsigned int size);
bool veil_masks_encrypt(struct veil_c *vc, sector_t sector,
			struct scatterlist *in, struct scatterlist *out,
			u8 *tuple);

#endif /* DM_VEIL_MASKS_H */
