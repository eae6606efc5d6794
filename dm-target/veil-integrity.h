/* SPDX-License-Identifier: GPL-2.0 */
/*
 * dm-veil over dm-integrity (veil-integrity.c): the authenticated cipher
 * and the per-sector metadata of a bio.
 */
#ifndef DM_VEIL_INTEGRITY_H
#define DM_VEIL_INTEGRITY_H

#include <linux/types.h>

struct bio;
struct dm_target;
struct veil_c;
struct veil_io;

/* Most metadata bytes per sector, as dm-crypt's integrity:<bytes>. */
#define VEIL_MAX_TAG_SIZE	480

/* Associated data of an AEAD sector: its number, then its IV. */
#define VEIL_AEAD_AD_SIZE(vc)	(sizeof(__le64) + (vc)->iv_size)

int veil_aead_alloc(struct dm_target *ti, struct veil_c *vc, const char *base,
		    const char *api);
int veil_aead_setkey(struct veil_c *vc, const u8 *key, unsigned int size);
int veil_integrity_init(struct dm_target *ti, struct veil_c *vc);
void veil_integrity_exit(struct veil_c *vc);
void veil_integrity_map(struct veil_io *io, struct bio *bio);
int veil_integrity_attach(struct veil_io *io, struct bio *bio);
void veil_integrity_free(struct veil_io *io);

#endif /* DM_VEIL_INTEGRITY_H */
