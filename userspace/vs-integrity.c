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
#include <inttypes.h>
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

/* The name of device-mapper device "major:minor" @dev into @name. */
static int dm_name(const char *dev, char *name, size_t len)
{
	char path[96];
	FILE *f;
	int r = -ENODEV;

	snprintf(path, sizeof(path), "/sys/dev/block/%s/dm/name", dev);
	f = fopen(path, "r");
	if (!f)
		return r;
	if (fgets(name, len, f)) {
		name[strcspn(name, "\n")] = '\0';
		r = 0;
	}
	fclose(f);
	return r;
}

/**
 * vs_integrity_lower() - the dm-integrity device below mapping @t, if any
 * @t: a veil mapping's table; t->dif and t->path set when it has one.
 *
 * A mapping opened over a LUKS2 volume with integrity sits on the
 * dm-integrity device libcryptsetup made: its name goes to t->dif, and
 * t->path names the device below it (the LUKS2 device, as cryptsetup's
 * status shows it). Anything else leaves @t as it is.
 */
void vs_integrity_lower(struct vs_table *t)
{
	char name[128], type[32], uuid[VS_DM_UUID_LEN], params[1024], dev[64];
	uint64_t len;
	size_t i;

	if (dm_name(t->dev, name, sizeof(name)) ||
	    vs_dm_get(name, 0, type, sizeof(type), params, sizeof(params), &len,
		      uuid, sizeof(uuid), NULL, NULL) ||
	    strcmp(type, "integrity") || sscanf(params, "%63s", dev) != 1)
		return;
	for (i = 0; i < sizeof(dif_uuids) / sizeof(dif_uuids[0]); i++)
		if (!strncmp(uuid, dif_uuids[i], strlen(dif_uuids[i])))
			break;
	if (i == sizeof(dif_uuids) / sizeof(dif_uuids[0]))
		return;
	snprintf(t->dif, sizeof(t->dif), "%s", name);
	vs_dev_path(dev, t->path, sizeof(t->path));
}

/* The parts of the crypt table libcryptsetup loaded that veil's keeps. */
struct crypt_layer {
	char cipher[128];
	uint64_t len, iv_offset, offset;
	char dev[64];
	char words[1024];
};

static int read_crypt_layer(const char *name, struct crypt_layer *c)
{
	char type[32], *params = crypt_safe_alloc(VS_TABLE_MAX);
	unsigned int nwords = 0;
	int r;

	if (!params)
		return -ENOMEM;
	c->words[0] = '\0';
	r = vs_dm_get(name, 0, type, sizeof(type), params, VS_TABLE_MAX, &c->len,
		      NULL, 0, NULL, NULL);
	if (!r && (strcmp(type, "crypt") ||
		   sscanf(params, "%127s %*s %" SCNu64 " %63s %" SCNu64 " %u %1023[^\n]",
			  c->cipher, &c->iv_offset, c->dev, &c->offset, &nwords,
			  c->words) < 4))
		r = -EINVAL;
	crypt_safe_free(params);
	return r;
}

/* Remove what libcryptsetup mapped for @name: the top device, then @dif. */
static void remove_stack(const char *name, const char *dif)
{
	if (vs_dm_exists(name))
		vs_dm_remove(name);
	if (vs_dm_exists(dif))
		vs_dm_remove(dif);
}

/**
 * vs_integrity_open() - map a LUKS2 volume with integrity through veil
 * @cd: the volume's header, loaded.
 * @m: the mapping: name, uuid, flags, the volume key (cipher and
 *	integrity keys together, as libcryptsetup gives it).
 * @keyring: pass the key to the kernel through the thread keyring.
 *
 * libcryptsetup activates the volume (dm-integrity and dm-crypt, both
 * private to udev); its crypt device is removed and a veil device made in
 * its place, on the same dm-integrity device, with the same table.
 *
 * Return: 0 or a negative errno, with a message; on an error nothing of
 * the stack is left.
 */
int vs_integrity_open(struct crypt_device *cd, struct vs_map *m, int keyring)
{
	char dif[160], desc[192], *key = NULL, *table = NULL, words[1280];
	struct crypt_layer c;
	int32_t key_id = -1;
	int r;

	snprintf(dif, sizeof(dif), "%s_dif", m->name);
	if (vs_dm_exists(dif)) {
		fprintf(stderr, "Device %s already exists.\n", dif);
		return -EEXIST;
	}
	crypt_volume_key_keyring(cd, keyring);
	r = crypt_activate_by_volume_key(cd, m->name, (const char *)m->key, m->key_size,
					 m->flags | CRYPT_ACTIVATE_PRIVATE);
	vs_dm_log_default();
	if (r < 0) {
		fprintf(stderr, "Cannot activate the integrity layer of %s: libcryptsetup "
			"maps it with dm-integrity and dm-crypt (whose device veil then "
			"replaces), and the kernel needs both.\n", m->name);
		remove_stack(m->name, dif);
		return r;
	}
	r = read_crypt_layer(m->name, &c);
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
	snprintf(m->cipher, sizeof(m->cipher), "%s", c.cipher);
	m->device = c.dev;
	m->offset = c.offset;
	m->iv_offset = c.iv_offset;
	snprintf(words, sizeof(words), "%s%s", c.words, opt.features);
	snprintf(desc, sizeof(desc), VS_KEY_PREFIX "%s", m->uuid);
	r = vs_key_field(m, keyring, desc, &key_id, &key);
	if (r)
		goto fail;
	table = vs_table_build(m, c.len, key, words[0] ? words : NULL);
	r = table ? vs_dm_create(m, table, opt.read_only) : -ENOMEM;
	if (r)
		fprintf(stderr, "Cannot create device %s: the kernel refused the veil "
			"table (see the kernel log).\n", m->name);
fail:
	if (r)
		remove_stack(m->name, dif);
	vs_keyring_drop(key_id);
	crypt_safe_free(key);
	crypt_safe_free(table);
	explicit_bzero(&c, sizeof(c));
	return r;
}

/**
 * vs_integrity_wipe() - give every sector of a new volume a valid tag
 * @cd: a LUKS2 volume with integrity, just formatted.
 * @pass: the passphrase of its first keyslot.
 * @pass_len: its length.
 *
 * As cryptsetup's luksFormat: zeros written through a temporary mapping
 * of the volume (dm-integrity without its journal, veil on top), removed
 * after; until then a read of a sector fails its tag.
 *
 * Return: 0 or a negative errno, with a message.
 */
int vs_integrity_wipe(struct crypt_device *cd, const char *pass, size_t pass_len)
{
	char name[64], uuid[VS_DM_UUID_LEN], path[96], dif[80];
	struct vs_map m = { .flags = CRYPT_ACTIVATE_NO_JOURNAL };
	int r;

	if (!opt.batch)
		printf("Wiping device to initialize integrity checksum.\n");
	snprintf(name, sizeof(name), "temporary-veilsetup-%d", (int)getpid());
	snprintf(uuid, sizeof(uuid), VS_UUID_PREFIX "TEMP-%s", name);
	snprintf(path, sizeof(path), "/dev/mapper/%s", name);
	snprintf(dif, sizeof(dif), "%s_dif", name);
	m.name = name;
	m.uuid = uuid;
	m.key_size = crypt_get_volume_key_size(cd);
	m.key = crypt_safe_alloc(m.key_size);
	if (!m.key)
		return -ENOMEM;
	r = crypt_volume_key_get(cd, CRYPT_ANY_SLOT, (char *)m.key, &m.key_size,
				 pass, pass_len);
	if (r >= 0)
		r = vs_integrity_open(cd, &m, !opt.disable_keyring);
	crypt_safe_free(m.key);
	if (r < 0)
		return r;
	r = crypt_wipe(cd, path, CRYPT_WIPE_ZERO, 0, 0, 1024 * 1024, 0, NULL, NULL);
	if (r < 0)
		fprintf(stderr, "Cannot wipe %s to initialize its integrity tags.\n",
			crypt_get_device_name(cd));
	if (vs_dm_remove(name) || vs_dm_remove(dif))
		fprintf(stderr, "Cannot deactivate temporary device %s.\n", path);
	return r;
}
