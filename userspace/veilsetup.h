/* SPDX-License-Identifier: GPL-2.0 */
/*
 * veilsetup: shared declarations of the tool's files.
 */
#ifndef VEILSETUP_H
#define VEILSETUP_H

#include <stddef.h>
#include <stdint.h>

#define VS_TARGET		"veil"
#define VS_UUID_PLAIN		"VEIL-PLAIN-"
#define VS_UUID_LUKS2		"VEIL-LUKS2-"
#define VS_KEY_PREFIX		"veil:"
#define VS_MAX_KEY		128

/* What a mapping needs, from the command line or a LUKS2 header. */
struct vs_map {
	const char *name;
	const char *device;
	const char *uuid;		/* dm uuid */
	char cipher[128];		/* e.g. aes-xts-plain64 */
	unsigned char *key;		/* locked buffer */
	size_t key_size;
	int hex_key;			/* key in the table, not the keyring */
	uint64_t offset;		/* sectors on device */
	uint64_t iv_offset;		/* sectors */
	uint64_t size;			/* sectors; 0 = to the end */
	unsigned int sector_size;
	int iv_large_sectors;
	int read_only;
	char features[256];		/* extra optional words */
};

/* vs-dm.c: every libdevmapper call */
int vs_dm_exists(const char *name);
int vs_dm_create(const struct vs_map *m, const char *table);
int vs_dm_reload(const char *name, const char *table);
int vs_dm_remove(const char *name);
int vs_dm_get(const char *name, int status, char *type, size_t type_len,
	      char *params, size_t params_len, uint64_t *len, char *uuid,
	      size_t uuid_len);
int vs_dm_target_loaded(void);

/* vs-key.c: passphrases, key files, keyring, locked buffers */
void *vs_secure_alloc(size_t size);
void vs_secure_free(void *p, size_t size);
int vs_read_passphrase(const char *prompt, int verify, char **pass,
		       size_t *len);
int vs_read_keyfile(const char *path, uint64_t offset, size_t max,
		    int exact, char **data, size_t *len);
int vs_keyring_add(const char *desc, const unsigned char *key, size_t len);
int vs_keyring_unlink(const char *desc);

/* vs-bench.c: AF_ALG cipher benchmark */
int vs_benchmark(const char *spec, int key_bits, int json);

#endif /* VEILSETUP_H */
