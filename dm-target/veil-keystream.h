/* SPDX-License-Identifier: GPL-2.0 */
/*
 * dm-veil keystream-ahead (veil-keystream.c): CTR reads whose keystream is
 * computed while the device reads.
 */
#ifndef DM_VEIL_KEYSTREAM_H
#define DM_VEIL_KEYSTREAM_H

#include <linux/blk_types.h>

struct veil_io;

bool veil_ks_start(struct veil_io *io);
void veil_ks_read_done(struct veil_io *io, blk_status_t status);

#endif /* DM_VEIL_KEYSTREAM_H */
