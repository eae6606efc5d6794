/* SPDX-License-Identifier: GPL-2.0 */
/*
 * dm-veil I/O (veil-io.c): map and end_io, the engine's queues.
 */
#ifndef DM_VEIL_IO_H
#define DM_VEIL_IO_H

#include "dm-veil.h"

int veil_io_init(struct dm_target *ti, struct veil_c *vc);
void veil_io_exit(struct veil_c *vc);
int veil_io_map(struct veil_c *vc, struct bio *bio, sector_t sector);

#endif /* DM_VEIL_IO_H */
