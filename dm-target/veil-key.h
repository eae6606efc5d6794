/* SPDX-License-Identifier: GPL-2.0 */
/*
 * dm-veil keys (veil-key.c).
 */
#ifndef DM_VEIL_KEY_H
#define DM_VEIL_KEY_H

#include <linux/types.h>

#include "veil-options.h"

struct veil_c;

/**
 * struct veil_key - the volume key and where it came from
 * @size: key length in bytes, fixed by the table line.
 * @bytes: the key itself, @size bytes; wiped before it is freed.
 * @ref: "<type>:<description>" of a kernel keyring key, NULL for a hex key.
 * @valid: the cipher holds this key; false after "key wipe".
 */
struct veil_key {
	unsigned int size;
	u8 *bytes;
	char *ref;
	bool valid;
};

int veil_key_decode(struct veil_key *key, char *str, char **error);
int veil_key_load(struct veil_c *vc, struct veil_key *key, char **error);
int veil_key_wipe(struct veil_c *vc);
void veil_key_free(struct veil_key *key);
unsigned int veil_key_emit(const struct veil_key *key, char *result,
			   unsigned int maxlen);

#endif /* DM_VEIL_KEY_H */
