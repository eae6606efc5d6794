/* SPDX-License-Identifier: GPL-2.0 */
/*
 * dm-veil pages (veil-pages.c): a write's ciphertext pages and a CTR
 * read's keystream pages, under one cap per target.
 */
#ifndef DM_VEIL_PAGES_H
#define DM_VEIL_PAGES_H

#include "dm-veil.h"

struct veil_io;

int veil_pages_init(struct dm_target *ti, struct veil_c *vc);
void veil_pages_exit(struct veil_c *vc);
struct bio *veil_pages_alloc(struct veil_io *io, bool may_wait);
void veil_pages_free(struct veil_c *vc, struct bio *bio);
bool veil_pages_get_keystream(struct veil_io *io);
void veil_pages_put_keystream(struct veil_io *io);
void veil_pages_drain(struct veil_c *vc);

#endif /* DM_VEIL_PAGES_H */
