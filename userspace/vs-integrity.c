// SPDX-License-Identifier: GPL-2.0
/*
 * veilsetup and LUKS2 volumes with integrity protection (luksFormat
 * --integrity): libcryptsetup maps them as two devices, dm-integrity
 * (<name>_dif, built from the header and the dm-integrity superblock)
 * below dm-crypt. veilsetup lets libcryptsetup build that stack, keeps its
 * dm-integrity device and puts veil in place of the crypt device on top,
 * with the same cipher, table words and length: the veil target reads and
 * writes the same tags and IVs as dm-crypt.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <libcryptsetup.h>

#include "veilsetup.h"

/* dm uuid prefixes of the dm-integrity device below a LUKS2 volume. */
static const char * const dif_uuids[] = {
	"CRYPT-INTEGRITY-",	/* cryptsetup up to 2.7 */
	"CRYPT-SUBDEV-",	/* 2.8 on */
};

/* Whether @uuid is libcryptsetup's for @dif below LUKS2 volume @hex. */
static int dif_uuid(const char *uuid, const char *hex, const char *dif)
{
	size_t i, n;

	for (i = 0; i < sizeof(dif_uuids) / sizeof(dif_uuids[0]); i++) {
		n = strlen(dif_uuids[i]);
		if (!strncmp(uuid, dif_uuids[i], n) && !strncmp(uuid + n, hex, strlen(hex)) &&
		    uuid[n + strlen(hex)] == '-' && !strcmp(uuid + n + strlen(hex) + 1, dif))
			return 1;
	}
	return 0;
}

/**
 * vs_integrity_lower() - the dm-integrity device below mapping @t, if any
 * @name: the mapping's name.
 * @t: its table; t->dif and t->path set when it has one.
 *
 * A LUKS2 volume with integrity, opened by veilsetup as @name, sits on the
 * dm-integrity device libcryptsetup made for it: named <name>_dif, with the
 * uuid libcryptsetup gives it for the same LUKS2 uuid. Its name goes to
 * t->dif, and t->path names the device below it (the LUKS2 device, as
 * cryptsetup's status shows it). Any other device below leaves @t as it is.
 */
void vs_integrity_lower(const char *name, struct vs_table *t)
{
	char dif[sizeof(t->dif)], lower[128], uuid[VS_DM_UUID_LEN], hex[VS_DM_UUID_LEN];
	char type[32], params[1024], dev[64];
	uint64_t len;
	int r;

	/* VEIL-LUKS2-<hex>-<name> over CRYPT-INTEGRITY-<hex>-<name>_dif */
	if (strncmp(t->uuid, VS_UUID_LUKS2, strlen(VS_UUID_LUKS2)) ||
	    sscanf(t->uuid + strlen(VS_UUID_LUKS2), "%128[0-9a-f]", hex) != 1)
		return;
	snprintf(dif, sizeof(dif), "%s_dif", name);
	if (vs_dm_sysfs(t->dev, "name", lower, sizeof(lower)) || strcmp(lower, dif) ||
	    vs_dm_sysfs(t->dev, "uuid", uuid, sizeof(uuid)) || !dif_uuid(uuid, hex, dif))
		return;
	r = vs_dm_get(dif, 0, type, sizeof(type), params, sizeof(params), &len,
		      NULL, 0, NULL, NULL);
	/* Its table may hold keys (journal_crypt, internal_hash). */
	if (!r && !strcmp(type, "integrity") && sscanf(params, "%63s", dev) == 1) {
		snprintf(t->dif, sizeof(t->dif), "%s", dif);
		vs_dev_path(dev, t->path, sizeof(t->path));
	}
	explicit_bzero(params, sizeof(params));
}

/*
 * The crypt table libcryptsetup loaded for @name (the key in hex: loaded
 * without the keyring), split, and its length.
 */
static int read_crypt_layer(const char *name, struct vs_target_fields *c, uint64_t *len)
{
	char type[32], *params = crypt_safe_alloc(VS_TABLE_MAX);
	int r;

	if (!params)
		return -ENOMEM;
	r = vs_dm_get(name, 0, type, sizeof(type), params, VS_TABLE_MAX, len,
		      NULL, 0, NULL, NULL);
	if (!r && strcmp(type, "crypt"))
		r = -EINVAL;
	if (!r)
		r = vs_table_split(params, c);
	crypt_safe_free(params);
	return r;
}

/**
 * vs_integrity_open() - map a LUKS2 volume with integrity through veil
 * @cd: the volume's header, loaded (or just formatted).
 * @m: the mapping: name, uuid, flags, and the volume key (cipher and
 *	integrity keys together, as libcryptsetup gives it), or no key
 *	(NULL): the one @cd holds after crypt_format(), into @m->key.
 * @keyring: pass the key to veil through the thread keyring.
 *
 * libcryptsetup activates the volume (dm-integrity and dm-crypt, private
 * to udev, the key in dm-crypt's table for that moment: no copy is left
 * in a keyring); its crypt device is removed and a veil device made in
 * its place, on the same dm-integrity device, with the same table.
 *
 * Return: 0 or a negative errno, with a message; on an error nothing that
 * this call made is left mapped.
 */
int vs_integrity_open(struct crypt_device *cd, struct vs_map *m, int keyring)
{
	uint32_t flags = m->flags | CRYPT_ACTIVATE_PRIVATE |
			 (opt.read_only ? CRYPT_ACTIVATE_READONLY : 0);
	char dif[160], desc[192], *key = NULL, *table = NULL, words[1280];
	struct vs_target_fields *c;
	uint64_t len = 0;
	int32_t key_id = -1;
	int r, crypt_up = 1;

	snprintf(dif, sizeof(dif), "%s_dif", m->name);
	if (vs_dm_exists(dif)) {
		fprintf(stderr, "Device %s already exists.\n", dif);
		return -EEXIST;
	}
	c = crypt_safe_alloc(sizeof(*c));
	if (!c)
		return -ENOMEM;
	crypt_volume_key_keyring(cd, 0);
	r = crypt_activate_by_volume_key(cd, m->name, (const char *)m->key,
					 m->key ? m->key_size : 0, flags);
	vs_dm_log_default();
	if (r < 0) {
		/* libcryptsetup said why, and removed what it made. */
		crypt_safe_free(c);
		return r;
	}
	r = read_crypt_layer(m->name, c, &len);
	if (!r && !m->key) {
		m->key_size = crypt_get_volume_key_size(cd);
		r = vs_key_from_hex(c->key, m);
	}
	if (r) {
		fprintf(stderr, "Cannot read the table libcryptsetup loaded for %s.\n",
			m->name);
		goto fail;
	}
	r = vs_dm_remove(m->name);
	if (r) {
		fprintf(stderr, "Cannot replace the crypt device of %s: it is in use.\n",
			m->name);
		goto fail;
	}
	crypt_up = 0;
	snprintf(m->cipher, sizeof(m->cipher), "%s", c->cipher);
	m->device = c->dev;
	m->offset = c->offset;
	m->iv_offset = c->iv_offset;
	snprintf(words, sizeof(words), "%s%s", c->words, opt.features);
	snprintf(desc, sizeof(desc), VS_KEY_PREFIX "%s", m->uuid);
	r = vs_key_field(m, keyring, desc, &key_id, &key);
	if (r)
		goto fail;
	table = vs_table_build(m, len, key, words[0] ? words : NULL);
	r = table ? vs_dm_create(m, table, opt.read_only) : -ENOMEM;
	if (r)
		vs_dm_create_failed(m->name);
fail:
	/* libcryptsetup's two devices, or its dm-integrity one under no veil */
	if (r && crypt_up)
		vs_dm_remove(m->name);
	if (r)
		vs_dm_remove(dif);
	vs_keyring_drop(key_id);
	crypt_safe_free(key);
	crypt_safe_free(table);
	crypt_safe_free(c);
	return r;
}

/**
 * vs_integrity_wipe() - give every sector of a new volume a valid tag
 * @cd: a LUKS2 volume with integrity, just formatted: it holds the key.
 *
 * As cryptsetup's luksFormat: zeros written through a temporary mapping
 * of the volume (dm-integrity without its journal, veil on top, both
 * private to udev), removed after; until then a read of a sector fails
 * its tag. Progress as vs_progress() prints it. A termination signal
 * stops the wipe (-EINTR), the rest of the volume left unwiped, and
 * waits for the temporary mapping's removal (vs_signals_hold()).
 *
 * Return: 0 or a negative errno, with a message.
 */
int vs_integrity_wipe(struct crypt_device *cd)
{
	struct vs_map m = { .flags = CRYPT_ACTIVATE_NO_JOURNAL | CRYPT_ACTIVATE_PRIVATE };
	struct vs_progress progress = { .device = crypt_get_device_name(cd) };
	char dif[80], backing[4096];
	struct vs_temp tmp;
	int r;

	/* The JSON names an image file, not its loop device, as cryptsetup's. */
	if (!vs_loop_backing_file(progress.device, backing, sizeof(backing)))
		progress.device = backing;
	r = vs_dm_temp_begin(&tmp);
	if (r)
		return r;
	snprintf(dif, sizeof(dif), "%s_dif", tmp.name);
	if (!opt.batch)
		printf("Wiping device to initialize integrity checksum.\n"
		       "You can interrupt this by pressing CTRL+c "
		       "(rest of not wiped device will contain invalid checksum).\n");
	m.name = tmp.name;
	m.uuid = tmp.uuid;
	r = vs_integrity_open(cd, &m, !opt.disable_keyring);
	crypt_safe_free(m.key);
	if (!r) {
		r = crypt_wipe(cd, tmp.path, CRYPT_WIPE_ZERO, 0, 0, 1024 * 1024, 0,
			       vs_progress, &progress);
		if (r < 0 && r != -EINTR)
			fprintf(stderr, "Cannot wipe %s to initialize its integrity tags.\n",
				crypt_get_device_name(cd));
		if (vs_dm_remove(tmp.name) || vs_dm_remove(dif))
			vs_dm_temp_remove_failed(&tmp);
	}
	vs_dm_temp_end(&tmp);
	return r < 0 ? r : 0;
}
