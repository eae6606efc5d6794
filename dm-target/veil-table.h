/* SPDX-License-Identifier: GPL-2.0 */
/*
 * dm-veil table lines (veil-table.c): the cipher spec and the optional
 * parameters, parsed and printed back.
 */
#ifndef DM_VEIL_TABLE_H
#define DM_VEIL_TABLE_H

#include "dm-veil.h"

int veil_parse_cipher(struct dm_target *ti, struct veil_c *vc,
		      const char *spec);
int veil_parse_options(struct dm_target *ti, struct veil_c *vc,
		       unsigned int argc, char **argv);
unsigned int veil_emit_options(struct dm_target *ti, struct veil_c *vc,
			       char *result, unsigned int maxlen);

#endif /* DM_VEIL_TABLE_H */
