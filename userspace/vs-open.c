// SPDX-License-Identifier: GPL-2.0
/*
 * veilsetup mappings: open (plain, LUKS1, LUKS2), close, status, resize,
 * refresh, luksSuspend and luksResume. libcryptsetup reads the headers and
 * gives the volume key; veilsetup loads it with the veil target, as
 * cryptsetup loads it with crypt: LUKS2 keys go through the thread keyring
 * for the table load only, plain and LUKS1 keys into the table as hex.
 */
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <unistd.h>
#include <linux/fs.h>
#include <linux/if_alg.h>
#include <json-c/json.h>
#include <libcryptsetup.h>

#include "veilsetup.h"

#define DEFAULT_PLAIN_CIPHER	"aes-cbc-essiv:sha256"	/* cryptsetup 2.6 */
#define DEFAULT_PLAIN_BITS	256
#define DEFAULT_PLAIN_HASH	"ripemd160"
#define SOL_ALG_LEVEL		279
#define PARAMS_MAX		(VS_TABLE_MAX - 32)

/* The dm-crypt flags veil takes, with their table words. */
static const struct {
	uint32_t flag;
	const char *word;
} flag_words[] = {
	{ CRYPT_ACTIVATE_ALLOW_DISCARDS, "allow_discards" },
	{ CRYPT_ACTIVATE_SAME_CPU_CRYPT, "same_cpu_crypt" },
	{ CRYPT_ACTIVATE_SUBMIT_FROM_CRYPT_CPUS, "submit_from_crypt_cpus" },
	{ CRYPT_ACTIVATE_NO_READ_WORKQUEUE, "no_read_workqueue" },
	{ CRYPT_ACTIVATE_NO_WRITE_WORKQUEUE, "no_write_workqueue" },
};

#define N_FLAGS	(sizeof(flag_words) / sizeof(flag_words[0]))

/* A veil table's parameters, split. */
struct vs_table {
	char cipher[128];
	char key[2 * VS_MAX_KEY + 160];	/* hex, or :<size>:logon:<desc> */
	uint64_t iv_offset, offset, len;
	char dev[64];			/* major:minor */
	char path[128];			/* /dev/... */
	char features[1024];		/* without the count */
	char uuid[160];
	size_t key_bits;
	int keyring;			/* the key is a keyring reference */
	int read_only, suspended;
};

static uint64_t device_sectors(const char *device)
{
	uint64_t bytes = 0;
	int fd = open(device, O_RDONLY | O_CLOEXEC);

	if (fd >= 0) {
		if (ioctl(fd, BLKGETSIZE64, &bytes))
			bytes = 0;
		close(fd);
	}
	return bytes >> 9;
}

/* "major:minor" to a /dev path, through sysfs. */
static void dev_path(const char *majmin, char *out, size_t len)
{
	char path[128], line[120];
	FILE *f;

	snprintf(out, len, "%s", majmin);
	snprintf(path, sizeof(path), "/sys/dev/block/%s/uevent", majmin);
	f = fopen(path, "r");
	if (!f)
		return;
	while (fgets(line, sizeof(line), f))
		if (!strncmp(line, "DEVNAME=", 8)) {
			line[strcspn(line, "\n")] = '\0';
			snprintf(out, len, "/dev/%s", line + 8);
		}
	fclose(f);
}

/* The table of veil mapping @name; a message and an errno otherwise. */
static int get_table(const char *name, struct vs_table *t)
{
	char type[32], *params = crypt_safe_alloc(VS_TABLE_MAX);
	int r, n;

	if (!params)
		return -ENOMEM;
	memset(t, 0, sizeof(*t));
	r = vs_dm_get(name, 0, type, sizeof(type), params, VS_TABLE_MAX, &t->len,
		      t->uuid, sizeof(t->uuid), &t->read_only, &t->suspended);
	if (r) {
		fprintf(stderr, "Device %s is not active.\n", name);
		r = -ENODEV;
	} else if (strcmp(type, VS_TARGET)) {
		fprintf(stderr, "Device %s is not a veil device (target %s).\n", name, type);
		r = -EINVAL;
	} else {
		n = sscanf(params, "%127s %415s %" SCNu64 " %63s %" SCNu64 " %*u %1023[^\n]",
			   t->cipher, t->key, &t->iv_offset, t->dev, &t->offset, t->features);
		r = n >= 5 ? 0 : -EINVAL;
		dev_path(t->dev, t->path, sizeof(t->path));
		t->keyring = t->key[0] == ':';
		t->key_bits = t->keyring ? strtoul(t->key + 1, NULL, 10) * 8 :
					   strlen(t->key) * 4;
	}
	crypt_safe_free(params);
	return r;
}

/* The LUKS version a mapping's dm uuid names, or NULL. */
static const char *uuid_type(const char *uuid)
{
	if (!strncmp(uuid, VS_UUID_LUKS2, strlen(VS_UUID_LUKS2)))
		return CRYPT_LUKS2;
	if (!strncmp(uuid, VS_UUID_LUKS1, strlen(VS_UUID_LUKS1)))
		return CRYPT_LUKS1;
	if (!strncmp(uuid, VS_UUID_PLAIN, strlen(VS_UUID_PLAIN)))
		return CRYPT_PLAIN;
	return NULL;
}

/*
 * Check with the kernel's crypto API, through AF_ALG, that the cipher and
 * mode exist and take a key of @key_bytes: the kernel would refuse the
 * table otherwise, with no message that reaches the user. capi: specs are
 * left to the kernel.
 */
static int check_cipher(const char *spec, size_t key_bytes)
{
	struct sockaddr_alg sa = { .salg_family = AF_ALG, .salg_type = "skcipher" };
	unsigned char key[VS_MAX_KEY] = { 0 };
	char cipher[64], mode[64];
	int fd, r = 0;

	if (!strncmp(spec, "capi:", 5))
		return 0;
	if (sscanf(spec, "%63[^-]-%63[^-]-", cipher, mode) != 2) {
		fprintf(stderr, "No known cipher specification pattern detected.\n");
		return -EINVAL;
	}
	snprintf((char *)sa.salg_name, sizeof(sa.salg_name), "%.30s(%.30s)", mode, cipher);
	fd = socket(AF_ALG, SOCK_SEQPACKET, 0);
	if (fd < 0)
		return 0;	/* no AF_ALG: leave it to the kernel */
	if (bind(fd, (struct sockaddr *)&sa, sizeof(sa))) {
		fprintf(stderr, "Cipher %s is not available in the kernel.\n", spec);
		r = -ENOENT;
	} else if (key_bytes > sizeof(key) || key_bytes < 1 ||
		   setsockopt(fd, SOL_ALG_LEVEL, ALG_SET_KEY, key, key_bytes)) {
		fprintf(stderr, "Key size %zu bits is not valid for cipher %s.\n",
			key_bytes * 8, spec);
		r = -EINVAL;
	}
	close(fd);
	return r;
}

/* The optional words of a new table: flags, sector size, engine options. */
static void table_features(const struct vs_map *m, char *out, size_t len)
{
	size_t i, used = 0;

	out[0] = '\0';
	for (i = 0; i < N_FLAGS; i++)
		if (m->flags & flag_words[i].flag)
			used += snprintf(out + used, len - used, " %s", flag_words[i].word);
	if (m->sector_size > 512) {
		used += snprintf(out + used, len - used, " sector_size:%u", m->sector_size);
		if (m->iv_large_sectors)
			used += snprintf(out + used, len - used, " iv_large_sectors");
	}
	snprintf(out + used, len - used, "%s", opt.features);
}

/*
 * "<len> <cipher> <key> <iv_offset> <dev> <offset> [<n> <words>]": the
 * optional words are @words if given, else those of @m and the options.
 */
static char *build_table(const struct vs_map *m, uint64_t len, const char *key,
			 const char *words)
{
	char *table = crypt_safe_alloc(VS_TABLE_MAX), feat[1024];
	int nfeat = 0, n;
	const char *p;

	if (!table)
		return NULL;
	if (words)
		snprintf(feat, sizeof(feat), " %s", words);
	else
		table_features(m, feat, sizeof(feat));
	for (p = feat; *p; p++)
		nfeat += *p == ' ' && p[1] && p[1] != ' ';
	n = snprintf(table, VS_TABLE_MAX, "%" PRIu64 " %s %s %" PRIu64 " %s %" PRIu64,
		     len, m->cipher, key, m->iv_offset, m->device, m->offset);
	if (nfeat)
		n += snprintf(table + n, VS_TABLE_MAX - n, " %d%s", nfeat, feat);
	if (n >= VS_TABLE_MAX) {
		crypt_safe_free(table);
		return NULL;
	}
	return table;
}

/*
 * The table's key field for @m into *@out: ":<size>:logon:<desc>" with the
 * key added to the thread keyring (*@key_id set, drop it after the load)
 * when @keyring, else the key in hex. Returns 0 or a negative errno.
 */
static int key_field(const struct vs_map *m, int keyring, const char *desc,
		     int32_t *key_id, char **out)
{
	size_t len = 2 * m->key_size + strlen(desc) + 32, i;
	char *field = crypt_safe_alloc(len);
	int id;

	*key_id = -1;
	*out = NULL;
	if (!field)
		return -ENOMEM;
	if (!keyring) {
		for (i = 0; i < m->key_size; i++)
			snprintf(field + 2 * i, 3, "%02x", m->key[i]);
		*out = field;
		return 0;
	}
	id = vs_keyring_add(desc, m->key, m->key_size);
	if (id < 0) {
		crypt_safe_free(field);
		return id;
	}
	*key_id = id;
	snprintf(field, len, ":%zu:logon:%s", m->key_size, desc);
	*out = field;
	return 0;
}

/* Map @m as @m->name; the key's keyring entry, if any, is gone after. */
static int map_volume(const struct vs_map *m, int keyring)
{
	char desc[192], *key, *table = NULL;
	uint64_t len = m->size;
	int32_t key_id;
	int r;

	if (!len) {
		len = device_sectors(m->device);
		if (len <= m->offset) {
			fprintf(stderr, "Device %s is too small.\n", m->device);
			return -EINVAL;
		}
		len -= m->offset;
	}
	/*
	 * Whole encryption sectors or nothing, never rounded. cryptsetup's exit
	 * codes: libcryptsetup refuses a plain volume (1); a LUKS table gets as
	 * far as dm-crypt, whose refusal cryptsetup reports as a wrong device (4).
	 */
	if (len % (m->sector_size / 512)) {
		fprintf(stderr, "Device size is not aligned to requested sector size.\n");
		return strncmp(m->uuid, VS_UUID_PLAIN, strlen(VS_UUID_PLAIN)) ? -ENODEV : -EINVAL;
	}
	snprintf(desc, sizeof(desc), VS_KEY_PREFIX "%s", m->uuid);
	r = key_field(m, keyring, desc, &key_id, &key);
	if (r)
		goto out;
	table = build_table(m, len, key, NULL);
	if (!table) {
		r = -ENOMEM;
		goto out;
	}
	/* Device-mapper loads the dm-veil module for the table if it can. */
	r = vs_dm_create(m, table, opt.read_only);
	if (r) {
		if (!vs_dm_target_loaded())
			fprintf(stderr, "Cannot create device %s: the kernel has no veil "
				"target and could not load the dm-veil module (install "
				"the dm-veil-dkms package, or run 'make dkms-install').\n",
				m->name);
		else
			fprintf(stderr, "Cannot create device %s: the kernel refused the "
				"veil table (see the kernel log).\n", m->name);
	}
out:
	vs_keyring_drop(key_id);
	crypt_safe_free(key);
	crypt_safe_free(table);
	return r;
}

/* The flags the command line asks for. */
static uint32_t cli_flags(void)
{
	return opt.perf_flags |
	       (opt.allow_discards ? CRYPT_ACTIVATE_ALLOW_DISCARDS : 0);
}

/*
 * A regular file is mapped through a loop device (as cryptsetup does):
 * *@loop_fd holds the loop until the mapping does.
 */
static int block_device(const char *device, char *path, size_t len, int *loop_fd)
{
	struct stat st;

	*loop_fd = -1;
	if (stat(device, &st)) {
		fprintf(stderr, "Device %s does not exist or access denied.\n", device);
		return -ENODEV;
	}
	if (S_ISREG(st.st_mode)) {
		*loop_fd = vs_loop_attach(device, opt.read_only, path, len);
		return *loop_fd < 0 ? *loop_fd : 0;
	}
	if (!S_ISBLK(st.st_mode)) {
		fprintf(stderr, "Device %s is not a block device.\n", device);
		return -ENOTBLK;
	}
	snprintf(path, len, "%s", device);
	return 0;
}

/* Refuse a taken name or a device somebody holds exclusively. */
static int check_free(const char *name, const char *device)
{
	int fd;

	if (vs_dm_exists(name)) {
		fprintf(stderr, "Device %s already exists.\n", name);
		return -EEXIST;
	}
	fd = open(device, O_RDONLY | O_EXCL | O_CLOEXEC);
	if (fd < 0) {
		fprintf(stderr, errno == EBUSY ? "Cannot use device %s which is in use "
			"(already mapped or mounted).\n" :
			"Cannot use device %s, name is invalid or still in use.\n", device);
		return errno == EBUSY ? -EBUSY : -ENODEV;
	}
	close(fd);
	return 0;
}

/*
 * As libcryptsetup's plain format: with sectors above 512 bytes, the device
 * past the offset must be whole sectors, whatever --size maps. libcryptsetup
 * checks this only when it hashes a passphrase; a key file skips it.
 */
static int check_plain_aligned(const char *device, const struct vs_map *m)
{
	uint64_t len = device_sectors(device);

	if (len <= m->offset || !((len - m->offset) % (m->sector_size / 512)))
		return 0;
	fprintf(stderr, "Device size is not aligned to requested sector size.\n");
	return -EINVAL;
}

static int open_plain(const char *device, const char *name)
{
	struct crypt_params_plain params = {
		.hash = opt.hash ?: DEFAULT_PLAIN_HASH,
		.offset = opt.offset, .skip = opt.skip, .size = opt.size,
		.sector_size = opt.sector_size ?: 512,
	};
	struct vs_map m = { .name = name, .offset = opt.offset,
			    .iv_offset = opt.skip, .size = opt.size,
			    .sector_size = opt.sector_size ?: 512,
			    .iv_large_sectors = opt.iv_large_sectors,
			    .flags = cli_flags() };
	char path[128], uuid[VS_DM_UUID_LEN], cipher[64], mode[96];
	struct crypt_device *cd = NULL;
	char *pass = NULL;
	size_t pass_len = 0;
	int r, loop_fd;

	snprintf(m.cipher, sizeof(m.cipher), "%s", opt.cipher ?: DEFAULT_PLAIN_CIPHER);
	m.key_size = (opt.key_bits ?: DEFAULT_PLAIN_BITS) / 8;
	snprintf(uuid, sizeof(uuid), VS_UUID_PLAIN "%s", name);
	m.uuid = uuid;
	if (strstr(m.cipher, "-ctr-"))
		fprintf(stderr, "WARNING: %s is CTR mode: every rewrite of a sector reuses "
			"its keystream. Use XTS unless nobody can image the device twice.\n",
			m.cipher);

	r = block_device(device, path, sizeof(path), &loop_fd);
	if (r)
		return r;
	m.device = path;
	r = check_free(name, path) ?: check_cipher(m.cipher, m.key_size) ?:
	    check_plain_aligned(path, &m);
	if (r)
		goto out;
	if (opt.key_file && strcmp(opt.key_file, "-")) {
		/* As cryptsetup 2.6: a key file is the key itself, unhashed. */
		if (opt.hash)
			fprintf(stderr, "WARNING: The --hash parameter is being ignored in "
				"plain mode with keyfile specified.\n");
		if (opt.keyfile_size && opt.keyfile_size != m.key_size)
			fprintf(stderr, "WARNING: The --keyfile-size option is being ignored, "
				"the read size is the same as the encryption key size.\n");
		r = vs_read_passphrase(NULL, NULL, opt.key_file, opt.keyfile_offset,
				       m.key_size, 0, &pass, &pass_len);
		if (!r && pass_len != m.key_size) {
			fprintf(stderr, "Cannot read %zu bytes from keyfile %s.\n",
				m.key_size, opt.key_file);
			r = -EINVAL;
		}
		if (!r) {
			m.key = (unsigned char *)pass;
			pass = NULL;
		}
	} else {
		if (sscanf(m.cipher, "%63[^-]-%95s", cipher, mode) != 2) {
			fprintf(stderr, "No known cipher specification pattern detected.\n");
			r = -EINVAL;
			goto out;
		}
		m.key = crypt_safe_alloc(m.key_size);
		r = m.key ? vs_read_passphrase(NULL, "Enter passphrase: ", opt.key_file,
					       opt.keyfile_offset, opt.keyfile_size, 0,
					       &pass, &pass_len) : -ENOMEM;
		if (!r)
			r = crypt_init(&cd, path);
		if (!r)
			r = crypt_format(cd, CRYPT_PLAIN, cipher, mode, NULL, NULL,
					 m.key_size, &params);
		if (!r) {
			size_t vk_size = m.key_size;

			r = crypt_volume_key_get(cd, CRYPT_ANY_SLOT, (char *)m.key,
						 &vk_size, pass, pass_len);
			r = r < 0 ? r : 0;
		}
	}
	if (!r && !opt.test_passphrase)
		r = map_volume(&m, 0);
out:
	if (loop_fd >= 0)
		close(loop_fd);
	crypt_free(cd);
	crypt_safe_free(pass);
	crypt_safe_free(m.key);
	return r;
}

/*
 * What veil cannot map: requirements it does not handle (a re-encryption
 * in progress), integrity, anything but one crypt segment. Messages as
 * cryptsetup's where it has one.
 */
static int check_mappable(struct crypt_device *cd)
{
	struct crypt_params_integrity ip = { 0 };
	struct json_object *root = NULL, *segs, *seg, *val;
	const char *json;
	uint32_t reqs = 0;
	int r = 0, n = 0;

	if (strcmp(crypt_get_type(cd), CRYPT_LUKS2))
		return 0;
	if (crypt_persistent_flags_get(cd, CRYPT_FLAGS_REQUIREMENTS, &reqs)) {
		fprintf(stderr, "Failed to read LUKS2 requirements.\n");
		return -EINVAL;
	}
	if (reqs & CRYPT_REQUIREMENT_UNKNOWN) {
		fprintf(stderr, "Unmet LUKS2 requirements detected.\n");
		return -ETXTBSY;
	}
	if (reqs & CRYPT_REQUIREMENT_OFFLINE_REENCRYPT)
		fprintf(stderr, "Operation incompatible with device marked for legacy "
			"reencryption. Aborting.\n");
	if (reqs & CRYPT_REQUIREMENT_ONLINE_REENCRYPT)
		fprintf(stderr, "Operation incompatible with device marked for LUKS2 "
			"reencryption. Aborting.\n");
	if (reqs)
		return -EINVAL;
	if (!crypt_get_integrity_info(cd, &ip) && ip.integrity) {
		fprintf(stderr, "The volume uses integrity protection (%s): the veil "
			"target has none, use cryptsetup.\n", ip.integrity);
		return -ENOTSUP;
	}
	if (crypt_dump_json(cd, &json, 0) || !(root = json_tokener_parse(json)) ||
	    !json_object_object_get_ex(root, "segments", &segs)) {
		fprintf(stderr, "Cannot read the LUKS2 segments.\n");
		r = -EINVAL;
		goto out;
	}
	json_object_object_foreach(segs, key, s) {
		(void)key;
		seg = s;
		n++;
	}
	if (n != 1 || !json_object_object_get_ex(seg, "type", &val) ||
	    strcmp(json_object_get_string(val), "crypt")) {
		fprintf(stderr, "The LUKS2 data area is not one crypt segment: the veil "
			"target maps only that, use cryptsetup.\n");
		r = -ENOTSUP;
	}
out:
	json_object_put(root);
	return r;
}

/*
 * The volume key of @cd into @m->key: the passphrase asked up to --tries
 * times on a terminal. Returns the keyslot or a negative errno.
 */
static int luks_volume_key(struct crypt_device *cd, struct vs_map *m, const char *device)
{
	char prompt[256], *pass = NULL;
	size_t pass_len = 0;
	int tries = opt.tries, r;

	m->key_size = crypt_get_volume_key_size(cd);
	if (!m->key_size) {
		fprintf(stderr, "No usable keyslot is available.\n");
		return -ENOENT;
	}
	m->key = crypt_safe_alloc(m->key_size);
	if (!m->key)
		return -ENOMEM;
	snprintf(prompt, sizeof(prompt), "Enter passphrase for %s: ", device);
	do {
		r = vs_read_passphrase(cd, prompt, opt.key_file, opt.keyfile_offset,
				       opt.keyfile_size, 0, &pass, &pass_len);
		if (r)
			break;
		r = crypt_volume_key_get(cd, opt.key_slot, (char *)m->key, &m->key_size,
					 pass, pass_len);
		crypt_safe_free(pass);
		pass = NULL;
		if (r == -EPERM)
			fprintf(stderr, "No key available with this passphrase.\n");
		else if (r == -ENOENT)
			fprintf(stderr, "No usable keyslot is available.\n");
	} while (r == -EPERM && !opt.key_file && isatty(STDIN_FILENO) && --tries > 0);
	return r;
}

static const char *luks_uuid_nodash(struct crypt_device *cd, char *out, size_t len)
{
	const char *p = crypt_get_uuid(cd) ?: "";
	size_t n = 0;

	for (; *p && n < len - 1; p++)
		if (*p != '-')
			out[n++] = *p;
	out[n] = '\0';
	return out;
}

static int open_luks(const char *device, const char *name)
{
	struct vs_map m = { .name = name };
	struct crypt_device *cd = NULL;
	char path[128], uuid[VS_DM_UUID_LEN], nodash[64];
	const char *type;
	uint32_t flags = 0;
	int r, loop_fd = -1;

	r = vs_load_luks(device, &cd) ?: check_mappable(cd);
	if (r)
		goto out;
	type = crypt_get_type(cd);
	snprintf(m.cipher, sizeof(m.cipher), "%s-%s", crypt_get_cipher(cd),
		 crypt_get_cipher_mode(cd));
	m.offset = crypt_get_data_offset(cd);
	m.iv_offset = crypt_get_iv_offset(cd);
	m.sector_size = crypt_get_sector_size(cd) ?: 512;
	/* LUKS1 has no stored flags (libcryptsetup would say so). */
	if (!strcmp(type, CRYPT_LUKS2))
		crypt_persistent_flags_get(cd, CRYPT_FLAGS_ACTIVATION, &flags);
	m.flags = flags | cli_flags();
	/* As cryptsetup's CRYPT-LUKS2-<uuid without dashes>-<name>. */
	snprintf(uuid, sizeof(uuid), "%s%s-%s",
		 strcmp(type, CRYPT_LUKS1) ? VS_UUID_LUKS2 : VS_UUID_LUKS1,
		 luks_uuid_nodash(cd, nodash, sizeof(nodash)), name ?: "");
	m.uuid = uuid;

	if (!opt.test_passphrase) {
		r = block_device(device, path, sizeof(path), &loop_fd);
		if (r)
			goto out;
		m.device = path;
		r = check_free(name, path);
		if (r)
			goto out;
	}
	r = luks_volume_key(cd, &m, device);
	if (r < 0 || opt.test_passphrase)
		goto out;
	r = map_volume(&m, !opt.disable_keyring && !strcmp(type, CRYPT_LUKS2));
	/* As cryptsetup: the flags of the active mapping go to the header. */
	if (!r && opt.persistent && !strcmp(type, CRYPT_LUKS2)) {
		r = crypt_persistent_flags_set(cd, CRYPT_FLAGS_ACTIVATION, m.flags);
		if (r)
			fprintf(stderr, "Device activated but cannot make flags persistent.\n");
	}
out:
	if (loop_fd >= 0)
		close(loop_fd);
	crypt_free(cd);
	crypt_safe_free(m.key);
	return r < 0 ? r : 0;
}

int vs_action_open(int argc, char **argv)
{
	const char *type = opt.type ?: "luks";

	if (opt.test_passphrase && !strcmp(type, "plain")) {
		fprintf(stderr, "Option --test-passphrase is allowed only for open of "
			"LUKS devices.\n");
		return -EINVAL;
	}
	if (argc < 2 && !opt.test_passphrase) {
		fprintf(stderr, "Command requires device and mapped name as arguments.\n");
		return -EINVAL;
	}
	if (!strcmp(type, "plain"))
		return open_plain(argv[0], argv[1]);
	if (!strcmp(type, "luks") || !strcmp(type, "luks1") || !strcmp(type, "luks2"))
		return open_luks(argv[0], argc > 1 ? argv[1] : NULL);
	fprintf(stderr, "Device type %s is not supported by veilsetup: use plain, luks, "
		"luks1 or luks2.\n", type);
	return -EINVAL;
}

int vs_action_luks_open(int argc, char **argv)
{
	if (opt.type && strncmp(opt.type, "luks", 4)) {
		fprintf(stderr, "luksOpen opens LUKS devices only, not type %s.\n", opt.type);
		return -EINVAL;
	}
	return vs_action_open(argc, argv);
}

/* cryptsetup's old spelling: create <name> <device>, plain. */
int vs_action_create(int argc, char **argv)
{
	char *args[2] = { argv[1], argv[0] };

	(void)argc;
	opt.type = "plain";
	return vs_action_open(2, args);
}

int vs_action_close(int argc, char **argv)
{
	struct vs_table t;
	int r;

	(void)argc;
	r = get_table(argv[0], &t);
	explicit_bzero(t.key, sizeof(t.key));
	if (r)
		return r;
	r = vs_dm_remove(argv[0]);
	if (r)
		fprintf(stderr, "Device %s is still in use.\n", argv[0]);
	return r;
}

static const char *type_name(const char *uuid)
{
	const char *type = uuid_type(uuid);

	if (!type)
		return "n/a";
	if (!strcmp(type, CRYPT_PLAIN))
		return "PLAIN";
	return type;
}

/* Print one mapping as cryptsetup status does, or as JSON. */
static int print_status(const char *name, struct vs_table *t, char *info)
{
	const char *location = t->keyring ? "keyring" : "dm-veil";
	char backing[512] = "", node[192], *p, *save = NULL, *tok;
	struct json_object *o, *counters, *words;
	unsigned int ssize = 512;
	int in_use = 0, fd;

	p = strstr(t->features, "sector_size:");
	if (p)
		ssize = strtoul(p + strlen("sector_size:"), NULL, 10);
	vs_loop_backing_file(t->path, backing, sizeof(backing));
	snprintf(node, sizeof(node), "/dev/mapper/%s", name);
	fd = open(node, O_RDONLY | O_EXCL | O_CLOEXEC);
	if (fd < 0 && errno == EBUSY)
		in_use = 1;
	if (fd >= 0)
		close(fd);
	if (!opt.json) {
		printf("/dev/mapper/%s is active%s.\n", name, in_use ? " and is in use" : "");
		printf("  type:    %s\n", type_name(t->uuid));
		printf("  cipher:  %s\n", t->cipher);
		printf("  keysize: %zu bits\n", t->key_bits);
		printf("  key location: %s\n", location);
		printf("  device:  %s\n", t->path);
		if (backing[0])
			printf("  loop:    %s\n", backing);
		printf("  sector size:  %u\n", ssize);
		printf("  offset:  %" PRIu64 " sectors\n", t->offset);
		printf("  skip:    %" PRIu64 " sectors\n", t->iv_offset);
		printf("  size:    %" PRIu64 " sectors\n", t->len);
		printf("  mode:    %s%s\n", t->read_only ? "readonly" : "read/write",
		       t->suspended ? " (suspended)" : "");
		printf("  flags:   %s\n", t->features[0] ? t->features : "(none)");
		printf("  counters:\n");
		for (tok = strtok_r(info, " ", &save); tok; tok = strtok_r(NULL, " ", &save))
			printf("    %s\n", tok);
		return 0;
	}
	o = json_object_new_object();
	counters = json_object_new_object();
	words = json_object_new_array();
	json_object_object_add(o, "name", json_object_new_string(name));
	json_object_object_add(o, "active", json_object_new_boolean(1));
	json_object_object_add(o, "in_use", json_object_new_boolean(in_use));
	json_object_object_add(o, "type", json_object_new_string(type_name(t->uuid)));
	json_object_object_add(o, "uuid", json_object_new_string(t->uuid));
	json_object_object_add(o, "cipher", json_object_new_string(t->cipher));
	json_object_object_add(o, "key_bits", json_object_new_int64(t->key_bits));
	json_object_object_add(o, "key_location", json_object_new_string(location));
	json_object_object_add(o, "device", json_object_new_string(t->path));
	if (backing[0])
		json_object_object_add(o, "loop", json_object_new_string(backing));
	json_object_object_add(o, "sector_size", json_object_new_int(ssize));
	json_object_object_add(o, "offset", json_object_new_int64(t->offset));
	json_object_object_add(o, "skip", json_object_new_int64(t->iv_offset));
	json_object_object_add(o, "size", json_object_new_int64(t->len));
	json_object_object_add(o, "read_only", json_object_new_boolean(t->read_only));
	json_object_object_add(o, "suspended", json_object_new_boolean(t->suspended));
	for (tok = strtok_r(t->features, " ", &save); tok; tok = strtok_r(NULL, " ", &save))
		json_object_array_add(words, json_object_new_string(tok));
	json_object_object_add(o, "flags", words);
	for (tok = strtok_r(info, " ", &save); tok; tok = strtok_r(NULL, " ", &save)) {
		p = strchr(tok, '=');
		if (!p)
			continue;
		*p = '\0';
		json_object_object_add(counters, tok, json_object_new_string(p + 1));
	}
	json_object_object_add(o, "counters", counters);
	printf("%s\n", json_object_to_json_string_ext(o, JSON_C_TO_STRING_PRETTY |
						       JSON_C_TO_STRING_NOSLASHESCAPE));
	json_object_put(o);
	return 0;
}

int vs_action_status(int argc, char **argv)
{
	char info[4096] = "", type[32];
	struct vs_table t;
	uint64_t len;
	int r;

	(void)argc;
	if (!vs_dm_exists(argv[0])) {
		if (opt.json) {
			struct json_object *o = json_object_new_object();

			json_object_object_add(o, "name", json_object_new_string(argv[0]));
			json_object_object_add(o, "active", json_object_new_boolean(0));
			printf("%s\n", json_object_to_json_string_ext(o, JSON_C_TO_STRING_PRETTY));
			json_object_put(o);
		} else
			printf("/dev/mapper/%s is inactive.\n", argv[0]);
		return -ENODEV;
	}
	r = get_table(argv[0], &t);
	explicit_bzero(t.key, sizeof(t.key));
	if (r)
		return r;
	/* The counters follow the "<reads>..." words of the status line. */
	vs_dm_get(argv[0], 1, type, sizeof(type), info, sizeof(info), &len, NULL, 0,
		  NULL, NULL);
	r = print_status(argv[0], &t, info);
	explicit_bzero(&t, sizeof(t));
	return r;
}

/*
 * The key field for a new table of mapping @t: the same hex key, or for a
 * keyring key the volume key again from the LUKS2 header's passphrase,
 * through the thread keyring (*@key_id, to drop after the load).
 */
static int reload_key(const char *name, struct vs_table *t, struct vs_map *m,
		      int32_t *key_id, char **field)
{
	struct crypt_device *cd = NULL;
	char desc[192];
	int r;

	*key_id = -1;
	*field = NULL;
	if (!t->keyring) {
		*field = crypt_safe_alloc(sizeof(t->key));
		if (!*field)
			return -ENOMEM;
		memcpy(*field, t->key, sizeof(t->key));
		return 0;
	}
	if (!uuid_type(t->uuid) || strcmp(uuid_type(t->uuid), CRYPT_LUKS2)) {
		fprintf(stderr, "The key of %s is in the kernel keyring only: veilsetup "
			"needs its LUKS2 header to load it again.\n", name);
		return -EINVAL;
	}
	r = vs_load_luks(opt.header ?: t->path, &cd);
	if (!r)
		r = luks_volume_key(cd, m, t->path);
	if (r >= 0) {
		snprintf(desc, sizeof(desc), VS_KEY_PREFIX "%s", t->uuid);
		r = key_field(m, 1, desc, key_id, field);
	}
	crypt_free(cd);
	return r < 0 ? r : 0;
}

/*
 * Load @t again with @len sectors and optional words @words, or @m's flags
 * and the options when @words is NULL.
 */
static int reload(const char *name, struct vs_table *t, struct vs_map *m, uint64_t len,
		  const char *words)
{
	char *key = NULL, *table = NULL;
	int32_t key_id;
	int r;

	if (t->suspended) {
		fprintf(stderr, "Device %s is suspended: luksResume it first.\n", name);
		return -EBUSY;
	}
	snprintf(m->cipher, sizeof(m->cipher), "%s", t->cipher);
	m->device = t->dev;
	m->offset = t->offset;
	m->iv_offset = t->iv_offset;
	m->iv_large_sectors = strstr(t->features, "iv_large_sectors") != NULL;
	r = reload_key(name, t, m, &key_id, &key);
	if (!r) {
		table = build_table(m, len, key, words);
		r = table ? vs_dm_reload(name, table, t->read_only) : -ENOMEM;
		if (r)
			fprintf(stderr, "Cannot reload device %s.\n", name);
	}
	vs_keyring_drop(key_id);
	crypt_safe_free(key);
	crypt_safe_free(table);
	crypt_safe_free(m->key);
	return r;
}

/* The sector size and flags of @t's optional words, into @m. */
static void table_flags(const struct vs_table *t, struct vs_map *m)
{
	const char *p = strstr(t->features, "sector_size:");
	size_t i;

	m->sector_size = p ? strtoul(p + strlen("sector_size:"), NULL, 10) : 512;
	for (i = 0; i < N_FLAGS; i++)
		if (strstr(t->features, flag_words[i].word))
			m->flags |= flag_words[i].flag;
}

int vs_action_resize(int argc, char **argv)
{
	struct vs_map m = { .name = argv[0] };
	struct vs_table t;
	uint64_t dev_len, len;
	int r;

	(void)argc;
	r = get_table(argv[0], &t);
	if (r)
		goto out;
	table_flags(&t, &m);
	if (t.suspended) {
		fprintf(stderr, "Device %s is suspended: luksResume it first.\n", argv[0]);
		r = -EBUSY;
		goto out;
	}
	/* An image file may have grown: its loop device learns it first. */
	vs_loop_refresh_capacity(t.path);
	dev_len = device_sectors(t.path);
	if (dev_len <= t.offset) {
		fprintf(stderr, "Device %s is too small.\n", t.path);
		r = -EINVAL;
		goto out;
	}
	len = opt.size ?: dev_len - t.offset;
	/* As cryptsetup: to the end of the device too, never rounded down. */
	if (len % (m.sector_size / 512)) {
		fprintf(stderr, "Device size is not aligned to requested sector size.\n");
		r = -EINVAL;
		goto out;
	}
	if (!len || len > dev_len - t.offset) {
		fprintf(stderr, "Device %s is too small.\n", t.path);
		r = -EINVAL;
		goto out;
	}
	/* The optional words stay as they are. */
	r = reload(argv[0], &t, &m, len, t.features);
out:
	explicit_bzero(&t, sizeof(t));
	return r;
}

/* The persistent flags of a LUKS2 mapping's header (0 for others). */
static uint32_t header_flags(const struct vs_table *t)
{
	struct crypt_device *cd = NULL;
	uint32_t flags = 0;
	const char *type = uuid_type(t->uuid);

	if (type && !strcmp(type, CRYPT_LUKS2) && !vs_load_luks(opt.header ?: t->path, &cd))
		crypt_persistent_flags_get(cd, CRYPT_FLAGS_ACTIVATION, &flags);
	crypt_free(cd);
	return flags;
}

/* --persistent: @flags into the LUKS2 header of mapping @t. */
static int store_flags(const struct vs_table *t, uint32_t flags)
{
	struct crypt_device *cd = NULL;
	const char *type = uuid_type(t->uuid);
	int r;

	if (!type || strcmp(type, CRYPT_LUKS2)) {
		fprintf(stderr, "Persistent flags are stored in LUKS2 headers only.\n");
		return -EINVAL;
	}
	r = vs_load_luks(opt.header ?: t->path, &cd);
	if (!r)
		r = crypt_persistent_flags_set(cd, CRYPT_FLAGS_ACTIVATION, flags);
	if (r)
		fprintf(stderr, "Device activated but cannot make flags persistent.\n");
	crypt_free(cd);
	return r;
}

/* veil's own engine words of @t, kept when the command line gives none. */
static void keep_engine_words(const struct vs_table *t)
{
	char words[sizeof(t->features)], *tok, *save = NULL;
	size_t i, n;

	if (opt.features[0])
		return;
	snprintf(words, sizeof(words), "%s", t->features);
	for (tok = strtok_r(words, " ", &save); tok; tok = strtok_r(NULL, " ", &save)) {
		for (i = 0; i < N_FLAGS && strcmp(tok, flag_words[i].word); i++)
			;
		if (i < N_FLAGS || !strncmp(tok, "sector_size:", 12) ||
		    !strcmp(tok, "iv_large_sectors"))
			continue;
		n = strlen(opt.features);
		snprintf(opt.features + n, sizeof(opt.features) - n, " %s", tok);
	}
}

int vs_action_refresh(int argc, char **argv)
{
	struct vs_map m = { .name = argv[0] };
	struct vs_table t;
	int r;

	(void)argc;
	r = get_table(argv[0], &t);
	if (!r) {
		table_flags(&t, &m);
		/* As cryptsetup: the header's flags and those given now. */
		m.flags = cli_flags() | header_flags(&t);
		keep_engine_words(&t);
		r = reload(argv[0], &t, &m, t.len, NULL);
		if (!r && opt.persistent)
			r = store_flags(&t, m.flags);
	}
	explicit_bzero(&t, sizeof(t));
	return r;
}

/* Only LUKS mappings, as cryptsetup's luksSuspend and luksResume. */
static int get_luks_table(const char *name, struct vs_table *t)
{
	int r = get_table(name, t);
	const char *type;

	if (r)
		return r;
	type = uuid_type(t->uuid);
	if (!type || !strcmp(type, CRYPT_PLAIN)) {
		fprintf(stderr, "%s is not active LUKS device name or header is missing.\n",
			name);
		return -EINVAL;
	}
	return 0;
}

int vs_action_suspend(int argc, char **argv)
{
	struct vs_table t;
	int r;

	(void)argc;
	r = get_luks_table(argv[0], &t);
	explicit_bzero(t.key, sizeof(t.key));
	if (r)
		return r;
	if (t.suspended) {
		fprintf(stderr, "Volume %s is already suspended.\n", argv[0]);
		return -EINVAL;
	}
	r = vs_dm_suspend(argv[0]);
	if (!r)
		r = vs_dm_message(argv[0], "key wipe");
	if (r)
		fprintf(stderr, "Error during suspending device %s.\n", argv[0]);
	return r;
}

int vs_action_resume(int argc, char **argv)
{
	struct crypt_device *cd = NULL;
	struct vs_map m = { .name = argv[0] };
	char desc[192], *key = NULL, *msg = NULL;
	struct vs_table t;
	int32_t key_id = -1;
	int r;

	(void)argc;
	r = get_luks_table(argv[0], &t);
	if (r)
		goto out;
	if (!t.suspended) {
		fprintf(stderr, "Volume %s is not suspended.\n", argv[0]);
		r = -EINVAL;
		goto out;
	}
	r = vs_load_luks(opt.header ?: t.path, &cd);
	if (!r)
		r = luks_volume_key(cd, &m, t.path);
	if (r < 0)
		goto out;
	/* After key wipe the table shows no reference: decide as open does. */
	snprintf(desc, sizeof(desc), VS_KEY_PREFIX "%s", t.uuid);
	r = key_field(&m, !opt.disable_keyring && !strcmp(crypt_get_type(cd), CRYPT_LUKS2),
		      desc, &key_id, &key);
	if (r)
		goto out;
	msg = crypt_safe_alloc(VS_TABLE_MAX);
	if (!msg) {
		r = -ENOMEM;
		goto out;
	}
	snprintf(msg, VS_TABLE_MAX, "key set %s", key);
	r = vs_dm_message(argv[0], msg) ?: vs_dm_resume(argv[0]);
	if (r)
		fprintf(stderr, "Error during resuming device %s.\n", argv[0]);
out:
	vs_keyring_drop(key_id);
	explicit_bzero(&t, sizeof(t));
	crypt_free(cd);
	crypt_safe_free(key);
	crypt_safe_free(msg);
	crypt_safe_free(m.key);
	return r < 0 ? r : 0;
}
