// SPDX-License-Identifier: GPL-2.0
/*
 * veilsetup: set up dm-veil volumes the way cryptsetup sets up dm-crypt
 * ones. Plain volumes hash the passphrase exactly as cryptsetup's plain
 * mode (libcryptsetup does it); LUKS2 headers, keyslots and PBKDF are all
 * libcryptsetup's. veilsetup only maps the volume key with the veil target.
 */
#include <errno.h>
#include <fcntl.h>
#include <getopt.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>
#include <unistd.h>
#include <linux/fs.h>
#include <linux/if_alg.h>
#include <libcryptsetup.h>

#include "veilsetup.h"

#define DEFAULT_CIPHER		"aes-xts-plain64"
#define DEFAULT_PLAIN_BITS	256	/* cryptsetup's plain default */
#define DEFAULT_LUKS_BITS	512
#define DEFAULT_PLAIN_HASH	"ripemd160"	/* cryptsetup's plain default */
#define SOL_ALG_LEVEL		279

static struct {
	const char *type, *cipher, *hash, *key_file, *pbkdf;
	int key_bits, verify, batch, hex_key, read_only, json, iv_large_sectors;
	uint64_t keyfile_offset, keyfile_size, offset, skip, size;
	unsigned int sector_size, pbkdf_memory, iter_time;
	char features[256];
} opt;

struct action {
	const char *name;
	int (*fn)(int argc, char **argv);
	int args;
	const char *arg_help;
	const char *help;
};

/* Fail with a message unless @device is a block device nobody holds. */
static int check_device(const char *device, int need_free)
{
	struct stat st;
	int fd;

	if (stat(device, &st) || !S_ISBLK(st.st_mode)) {
		fprintf(stderr, "Device %s does not exist or is not a block device.\n", device);
		return -ENODEV;
	}
	if (!need_free)
		return 0;
	fd = open(device, O_RDONLY | O_EXCL | O_CLOEXEC);
	if (fd < 0) {
		fprintf(stderr, errno == EBUSY ?
			"Cannot use device %s: it is in use (mounted or mapped).\n" :
			"Cannot open device %s.\n", device);
		return -EBUSY;
	}
	close(fd);
	return 0;
}

static uint64_t device_sectors(const char *device)
{
	uint64_t bytes = 0;
	int fd = open(device, O_RDONLY | O_CLOEXEC);

	if (fd >= 0) {
		ioctl(fd, BLKGETSIZE64, &bytes);
		close(fd);
	}
	return bytes >> 9;
}

/* "aes-xts-plain64" -> "aes" and "xts-plain64", as libcryptsetup takes them. */
static int split_spec(const char *spec, char *cipher, char *mode)
{
	if (sscanf(spec, "%63[^-]-%63s", cipher, mode) != 2 || !strchr(mode, '-')) {
		fprintf(stderr, "Invalid cipher specification %s: use cipher-mode-iv, e.g. %s.\n",
			spec, DEFAULT_CIPHER);
		return -EINVAL;
	}
	return 0;
}

/*
 * Check with the kernel's crypto API, through AF_ALG, that the cipher and
 * mode exist and take a key of @key_bytes: the kernel would refuse the
 * table otherwise, with no message that reaches the user.
 */
static int check_cipher(const char *spec, size_t key_bytes)
{
	struct sockaddr_alg sa = { .salg_family = AF_ALG, .salg_type = "skcipher" };
	char cipher[64], mode[64], *dash;
	unsigned char key[VS_MAX_KEY] = { 0 };
	int fd, r = 0;

	if (split_spec(spec, cipher, mode))
		return -EINVAL;
	dash = strchr(mode, '-');
	*dash = '\0';
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

/* CTR reuses a sector's keystream on every rewrite: say so. */
static void warn_ctr(const char *spec)
{
	if (strstr(spec, "-ctr-"))
		fprintf(stderr, "WARNING: %s is CTR mode: every rewrite of a sector reuses its "
			"keystream, so anyone who sees the device twice learns the XOR of old and "
			"new data. Use XTS unless nobody can image the device twice.\n", spec);
}

/* Map @m: the key goes into the keyring unless --hex-key. */
static int map_volume(struct vs_map *m)
{
	char keyref[192], keydesc[128], *table, *p;
	size_t tlen = 1024 + 2 * m->key_size;
	uint64_t len = m->size;
	int nfeat = 0, r;
	char feat[512] = "";

	if (!len) {
		len = device_sectors(m->device);
		if (len <= m->offset) {
			fprintf(stderr, "Device %s is too small for offset %" PRIu64 ".\n",
				m->device, m->offset);
			return -EINVAL;
		}
		len -= m->offset;
	}
	if (m->sector_size > 512) {
		len &= ~(uint64_t)(m->sector_size / 512 - 1);
		nfeat++;
		snprintf(feat + strlen(feat), sizeof(feat) - strlen(feat),
			 " sector_size:%u", m->sector_size);
		if (m->iv_large_sectors) {
			nfeat++;
			strcat(feat, " iv_large_sectors");
		}
	}
	for (p = m->features; *p; p++)
		if (*p == ' ')
			nfeat++;
	strncat(feat, m->features, sizeof(feat) - strlen(feat) - 1);

	table = vs_secure_alloc(tlen);
	if (!table)
		return -ENOMEM;
	snprintf(keydesc, sizeof(keydesc), VS_KEY_PREFIX "%s", m->name);
	if (m->hex_key) {
		p = table + snprintf(table, tlen, "%" PRIu64 " %s ", len, m->cipher);
		for (size_t i = 0; i < m->key_size; i++)
			p += sprintf(p, "%02x", m->key[i]);
	} else {
		r = vs_keyring_add(keydesc, m->key, m->key_size);
		if (r)
			goto out;
		snprintf(keyref, sizeof(keyref), ":%zu:logon:%s", m->key_size, keydesc);
		p = table + snprintf(table, tlen, "%" PRIu64 " %s %s", len, m->cipher, keyref);
	}
	p += sprintf(p, " %" PRIu64 " %s %" PRIu64, m->iv_offset, m->device, m->offset);
	if (nfeat)
		sprintf(p, " %d%s", nfeat, feat);

	/* Device-mapper loads the dm-veil module for the table if it can. */
	r = vs_dm_create(m, table);
	if (r) {
		if (!vs_dm_target_loaded())
			fprintf(stderr, "Cannot create device %s: the kernel has no veil "
				"target and could not load the dm-veil module (install "
				"the dm-veil-dkms package, or run 'make dkms-install').\n",
				m->name);
		else
			fprintf(stderr, "Cannot create device %s: the kernel refused the "
				"veil table (see the kernel log).\n", m->name);
		if (!m->hex_key)
			vs_keyring_unlink(keydesc);
	}
out:
	vs_secure_free(table, tlen);
	return r;
}

/* Passphrase from the key file (whole, or --keyfile-size) or the prompt. */
static int get_passphrase(const char *prompt, int verify, char **pass, size_t *len)
{
	if (opt.key_file)
		return vs_read_keyfile(opt.key_file, opt.keyfile_offset,
				       opt.keyfile_size, 0, pass, len);
	return vs_read_passphrase(prompt, verify, pass, len);
}

static int common_checks(const char *device, const char *name)
{
	if (vs_dm_exists(name)) {
		fprintf(stderr, "Device %s already exists.\n", name);
		return -EEXIST;
	}
	return check_device(device, 1);
}

static int open_plain(const char *device, const char *name)
{
	struct crypt_params_plain params = {
		.hash = opt.hash ? opt.hash : DEFAULT_PLAIN_HASH,
		.offset = opt.offset, .skip = opt.skip, .size = opt.size,
		.sector_size = opt.sector_size,
	};
	struct vs_map m = { .name = name, .device = device, .offset = opt.offset,
			    .iv_offset = opt.skip, .size = opt.size,
			    .sector_size = opt.sector_size, .hex_key = opt.hex_key,
			    .read_only = opt.read_only,
			    .iv_large_sectors = opt.iv_large_sectors };
	char cipher[64], mode[64], uuid[160];
	struct crypt_device *cd = NULL;
	char *pass = NULL;
	size_t pass_len = 0;
	int r;

	snprintf(m.cipher, sizeof(m.cipher), "%s", opt.cipher ? opt.cipher : DEFAULT_CIPHER);
	m.key_size = (opt.key_bits ? opt.key_bits : DEFAULT_PLAIN_BITS) / 8;
	snprintf(m.features, sizeof(m.features), "%s", opt.features);
	snprintf(uuid, sizeof(uuid), VS_UUID_PLAIN "%s", name);
	m.uuid = uuid;

	r = common_checks(device, name) ?: check_cipher(m.cipher, m.key_size);
	if (r)
		return r;
	warn_ctr(m.cipher);
	m.key = vs_secure_alloc(m.key_size);
	if (!m.key)
		return -ENOMEM;

	if (opt.key_file && strcmp(opt.key_file, "-")) {
		/* As cryptsetup 2.6: a key file is the key itself, unhashed. */
		if (opt.hash)
			fprintf(stderr, "WARNING: --hash is ignored in plain mode with a key file.\n");
		if (opt.keyfile_size && opt.keyfile_size != m.key_size)
			fprintf(stderr, "WARNING: --keyfile-size is ignored in plain mode: the key "
				"file gives exactly the key size.\n");
		r = vs_read_keyfile(opt.key_file, opt.keyfile_offset, m.key_size, 1,
				    &pass, &pass_len);
		if (!r)
			memcpy(m.key, pass, m.key_size);
	} else {
		r = get_passphrase("Enter passphrase: ", opt.verify, &pass, &pass_len);
		if (r)
			goto out;
		split_spec(m.cipher, cipher, mode);
		r = crypt_init(&cd, device);
		if (!r)
			r = crypt_format(cd, CRYPT_PLAIN, cipher, mode, NULL, NULL,
					 m.key_size, &params);
		if (!r) {
			size_t vk_size = m.key_size;

			r = crypt_volume_key_get(cd, CRYPT_ANY_SLOT, (char *)m.key,
						 &vk_size, pass, pass_len);
		}
		if (r)
			fprintf(stderr, "Cannot derive the key with hash %s.\n", params.hash);
	}
	if (!r)
		r = map_volume(&m);
out:
	crypt_free(cd);
	vs_secure_free(pass, pass_len);
	vs_secure_free(m.key, m.key_size);
	return r;
}

static int load_luks2(const char *device, struct crypt_device **cd)
{
	int r = crypt_init(cd, device);

	if (!r)
		r = crypt_load(*cd, CRYPT_LUKS2, NULL);
	if (r) {
		fprintf(stderr, "Device %s is not a valid LUKS2 device "
			"(no LUKS2 header, or a corrupt one).\n", device);
		crypt_free(*cd);
		*cd = NULL;
		return -EINVAL;
	}
	return 0;
}

static int open_luks2(const char *device, const char *name)
{
	/* LUKS2 counts IVs in 512-byte sectors whatever its sector size. */
	struct vs_map m = { .name = name, .device = device, .hex_key = opt.hex_key,
			    .read_only = opt.read_only };
	struct crypt_device *cd = NULL;
	char *pass = NULL, uuid[160];
	size_t pass_len = 0;
	int r;

	r = common_checks(device, name) ?: load_luks2(device, &cd);
	if (r)
		return r;
	snprintf(m.cipher, sizeof(m.cipher), "%s-%s", crypt_get_cipher(cd),
		 crypt_get_cipher_mode(cd));
	m.key_size = crypt_get_volume_key_size(cd);
	m.offset = crypt_get_data_offset(cd);
	m.iv_offset = crypt_get_iv_offset(cd);
	m.sector_size = crypt_get_sector_size(cd);
	snprintf(m.features, sizeof(m.features), "%s", opt.features);
	snprintf(uuid, sizeof(uuid), VS_UUID_LUKS2 "%s-%s", crypt_get_uuid(cd), name);
	m.uuid = uuid;
	m.key = vs_secure_alloc(m.key_size);
	if (!m.key) {
		r = -ENOMEM;
		goto out;
	}
	r = get_passphrase("Enter passphrase: ", 0, &pass, &pass_len);
	if (r)
		goto out;
	r = crypt_volume_key_get(cd, CRYPT_ANY_SLOT, (char *)m.key, &m.key_size,
				 pass, pass_len);
	if (r < 0) {
		fprintf(stderr, "No key available with this passphrase.\n");
		r = -EPERM;
		goto out;
	}
	r = map_volume(&m);
out:
	crypt_free(cd);
	vs_secure_free(pass, pass_len);
	vs_secure_free(m.key, m.key_size);
	return r;
}

static int action_open(int argc, char **argv)
{
	const char *type = opt.type ? opt.type : "luks2";

	(void)argc;
	if (!strcmp(type, "plain"))
		return open_plain(argv[0], argv[1]);
	if (!strcmp(type, "luks2") || !strcmp(type, "luks"))
		return open_luks2(argv[0], argv[1]);
	fprintf(stderr, "Unsupported device type %s: use plain or luks2.\n", type);
	return -EINVAL;
}

/* The table of a veil device; fails with a message for anything else. */
static int get_veil(const char *name, char *params, size_t len, uint64_t *sectors,
		    char *uuid, size_t uuid_len)
{
	char type[32];

	if (vs_dm_get(name, 0, type, sizeof(type), params, len, sectors, uuid, uuid_len)) {
		fprintf(stderr, "Device %s is not active.\n", name);
		return -ENODEV;
	}
	if (strcmp(type, VS_TARGET)) {
		fprintf(stderr, "Device %s is not a veil device (target %s).\n", name, type);
		return -EINVAL;
	}
	return 0;
}

static int action_close(int argc, char **argv)
{
	char params[1024], uuid[160], desc[128];
	uint64_t len;
	int r;

	(void)argc;
	r = get_veil(argv[0], params, sizeof(params), &len, uuid, sizeof(uuid));
	explicit_bzero(params, sizeof(params));
	if (r)
		return r;
	r = vs_dm_remove(argv[0]);
	if (r) {
		fprintf(stderr, "Cannot close %s: it is still in use.\n", argv[0]);
		return r;
	}
	snprintf(desc, sizeof(desc), VS_KEY_PREFIX "%s", argv[0]);
	vs_keyring_unlink(desc);
	return 0;
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

static int action_status(int argc, char **argv)
{
	char params[1024], info[2048], type[32], uuid[160], cipher[128], key[256];
	char dev[64], path[128], feats[512] = "";
	uint64_t len, ivoff, off;
	unsigned int ssize = 512;
	char *p;
	int r;

	(void)argc;
	r = get_veil(argv[0], params, sizeof(params), &len, uuid, sizeof(uuid));
	if (r)
		return r;
	if (sscanf(params, "%127s %255s %" SCNu64 " %63s %" SCNu64 " %511[^\n]",
		   cipher, key, &ivoff, dev, &off, feats) < 5)
		return -EINVAL;
	p = strstr(feats, "sector_size:");
	if (p)
		ssize = atoi(p + strlen("sector_size:"));
	dev_path(dev, path, sizeof(path));
	vs_dm_get(argv[0], 1, type, sizeof(type), info, sizeof(info), &len, NULL, 0);

	printf("/dev/mapper/%s is active.\n", argv[0]);
	printf("  type:    %s\n", !strncmp(uuid, VS_UUID_LUKS2, strlen(VS_UUID_LUKS2)) ?
	       "LUKS2" : !strncmp(uuid, VS_UUID_PLAIN, strlen(VS_UUID_PLAIN)) ? "PLAIN" : "n/a");
	printf("  cipher:  %s\n", cipher);
	printf("  keysize: %zu bits\n", key[0] == ':' ? (size_t)atoi(key + 1) * 8 :
	       strlen(key) * 4);
	printf("  key location: %s\n", key[0] == ':' ? "keyring" : "dm table (hex)");
	printf("  device:  %s\n", path);
	printf("  sector size:  %u\n", ssize);
	printf("  offset:  %" PRIu64 " sectors\n", off);
	printf("  skip:    %" PRIu64 " sectors\n", ivoff);
	printf("  size:    %" PRIu64 " sectors\n", len);
	printf("  features: %s\n", feats[0] ? feats : "(none)");
	printf("  counters:\n");
	for (p = strtok(info, " "); p; p = strtok(NULL, " "))
		printf("    %s\n", p);
	explicit_bzero(params, sizeof(params));
	explicit_bzero(key, sizeof(key));
	return 0;
}

static int action_resize(int argc, char **argv)
{
	char params[1024], rest[1024], table[1100], dev[64], path[128];
	uint64_t len, off, size;
	int r;

	(void)argc;
	r = get_veil(argv[0], params, sizeof(params), &len, NULL, 0);
	if (r)
		return r;
	if (sscanf(params, "%*s %*s %*u %63s %" SCNu64, dev, &off) != 2)
		return -EINVAL;
	dev_path(dev, path, sizeof(path));
	size = opt.size ? opt.size : device_sectors(path) - off;
	snprintf(rest, sizeof(rest), "%s", params);
	snprintf(table, sizeof(table), "%" PRIu64 " %s", size, rest);
	r = vs_dm_reload(argv[0], table);
	if (r)
		fprintf(stderr, "Cannot resize %s to %" PRIu64 " sectors.\n", argv[0], size);
	explicit_bzero(params, sizeof(params));
	explicit_bzero(rest, sizeof(rest));
	explicit_bzero(table, sizeof(table));
	return r;
}

static int confirm(const char *device)
{
	char answer[16] = "";

	if (opt.batch)
		return 0;
	fprintf(stderr, "WARNING: this will overwrite data on %s irrevocably.\n"
		"Are you sure? (Type 'yes' in capital letters): ", device);
	if (!fgets(answer, sizeof(answer), stdin) || strcmp(answer, "YES\n")) {
		fprintf(stderr, "Operation aborted.\n");
		return -EPERM;
	}
	return 0;
}

static int action_luks_format(int argc, char **argv)
{
	const char *spec = opt.cipher ? opt.cipher : DEFAULT_CIPHER;
	size_t key_bytes = (opt.key_bits ? opt.key_bits : DEFAULT_LUKS_BITS) / 8;
	struct crypt_params_luks2 params = { .sector_size = opt.sector_size ?: 512 };
	struct crypt_pbkdf_type pbkdf = {
		.type = opt.pbkdf ? opt.pbkdf : CRYPT_KDF_ARGON2ID, .hash = "sha256",
		.time_ms = opt.iter_time ? opt.iter_time : 2000,
		.max_memory_kb = opt.pbkdf_memory ? opt.pbkdf_memory : 1048576,
		.parallel_threads = 4,
	};
	struct crypt_device *cd = NULL;
	char cipher[64], mode[64], *pass = NULL;
	size_t pass_len = 0;
	int r;

	(void)argc;
	r = check_device(argv[0], 1) ?: check_cipher(spec, key_bytes);
	if (r)
		return r;
	warn_ctr(spec);
	if (!strcmp(pbkdf.type, CRYPT_KDF_PBKDF2))
		pbkdf.max_memory_kb = pbkdf.parallel_threads = 0;
	r = confirm(argv[0]) ?: get_passphrase("Enter passphrase for the new volume: ",
					       opt.verify || isatty(STDIN_FILENO),
					       &pass, &pass_len);
	if (r)
		return r;
	split_spec(spec, cipher, mode);
	r = crypt_init(&cd, argv[0]);
	if (!r)
		r = crypt_set_pbkdf_type(cd, &pbkdf);
	if (!r)
		r = crypt_format(cd, CRYPT_LUKS2, cipher, mode, NULL, NULL, key_bytes, &params);
	if (!r)
		r = crypt_keyslot_add_by_volume_key(cd, CRYPT_ANY_SLOT, NULL, 0, pass, pass_len);
	if (r < 0)
		fprintf(stderr, "Cannot format %s as LUKS2: %s.\n", argv[0], strerror(-r));
	crypt_free(cd);
	vs_secure_free(pass, pass_len);
	return r < 0 ? r : 0;
}

static int action_luks_add_key(int argc, char **argv)
{
	struct crypt_device *cd = NULL;
	char *old = NULL, *new = NULL;
	size_t old_len = 0, new_len = 0;
	int r;

	(void)argc;
	r = load_luks2(argv[0], &cd);
	if (r)
		return r;
	r = get_passphrase("Enter any existing passphrase: ", 0, &old, &old_len);
	if (!r)
		r = vs_read_passphrase("Enter new passphrase for key slot: ",
				       isatty(STDIN_FILENO), &new, &new_len);
	if (!r) {
		r = crypt_keyslot_add_by_passphrase(cd, CRYPT_ANY_SLOT, old, old_len,
						    new, new_len);
		if (r == -EPERM)
			fprintf(stderr, "No key available with this passphrase.\n");
		else if (r < 0)
			fprintf(stderr, "Cannot add a key slot: %s.\n", strerror(-r));
	}
	crypt_free(cd);
	vs_secure_free(old, old_len);
	vs_secure_free(new, new_len);
	return r < 0 ? r : 0;
}

static int action_luks_remove_key(int argc, char **argv)
{
	struct crypt_device *cd = NULL;
	char *pass = NULL;
	size_t len = 0;
	int r, slot;

	(void)argc;
	r = load_luks2(argv[0], &cd);
	if (r)
		return r;
	r = get_passphrase("Enter passphrase to be deleted: ", 0, &pass, &len);
	if (!r) {
		slot = crypt_activate_by_passphrase(cd, NULL, CRYPT_ANY_SLOT, pass, len, 0);
		if (slot < 0) {
			fprintf(stderr, "No key available with this passphrase.\n");
			r = -EPERM;
		} else {
			r = crypt_keyslot_destroy(cd, slot);
		}
	}
	crypt_free(cd);
	vs_secure_free(pass, len);
	return r;
}

static int action_luks_dump(int argc, char **argv)
{
	struct crypt_device *cd = NULL;
	int r;

	(void)argc;
	r = load_luks2(argv[0], &cd);
	if (!r)
		r = crypt_dump(cd);
	crypt_free(cd);
	return r;
}

static int action_benchmark(int argc, char **argv)
{
	(void)argc;
	(void)argv;
	return vs_benchmark(opt.cipher, opt.key_bits, opt.json);
}

static const struct action actions[] = {
	{ "open", action_open, 2, "<device> <name>", "open a device as mapping <name>" },
	{ "close", action_close, 1, "<name>", "remove a mapping" },
	{ "status", action_status, 1, "<name>", "show a mapping and its engine counters" },
	{ "resize", action_resize, 1, "<name>", "resize an active mapping (--size, or to the device)" },
	{ "luksFormat", action_luks_format, 1, "<device>", "format a LUKS2 device" },
	{ "luksAddKey", action_luks_add_key, 1, "<device>", "add a passphrase to a LUKS2 device" },
	{ "luksRemoveKey", action_luks_remove_key, 1, "<device>", "remove a passphrase from a LUKS2 device" },
	{ "luksDump", action_luks_dump, 1, "<device>", "dump LUKS2 header information" },
	{ "benchmark", action_benchmark, 0, "", "cipher speed through the kernel's crypto API" },
	{ NULL, NULL, 0, NULL, NULL },
};

enum {
	OPT_KEYFILE_OFFSET = 256, OPT_SECTOR_SIZE, OPT_ALLOW_DISCARDS, OPT_HEX_KEY,
	OPT_PBKDF, OPT_PBKDF_MEMORY, OPT_ITER_TIME, OPT_JSON, OPT_TYPE,
	OPT_VALUE_FEATURE, OPT_FEATURE, OPT_IV_LARGE,
};

static const struct option long_opts[] = {
	{ "cipher", required_argument, NULL, 'c' },
	{ "key-size", required_argument, NULL, 's' },
	{ "hash", required_argument, NULL, 'h' },
	{ "key-file", required_argument, NULL, 'd' },
	{ "keyfile-offset", required_argument, NULL, OPT_KEYFILE_OFFSET },
	{ "keyfile-size", required_argument, NULL, 'l' },
	{ "verify-passphrase", no_argument, NULL, 'y' },
	{ "offset", required_argument, NULL, 'o' },
	{ "skip", required_argument, NULL, 'p' },
	{ "size", required_argument, NULL, 'b' },
	{ "sector-size", required_argument, NULL, OPT_SECTOR_SIZE },
	{ "iv-large-sectors", no_argument, NULL, OPT_IV_LARGE },
	{ "allow-discards", no_argument, NULL, OPT_ALLOW_DISCARDS },
	{ "readonly", no_argument, NULL, 'r' },
	{ "hex-key", no_argument, NULL, OPT_HEX_KEY },
	{ "type", required_argument, NULL, OPT_TYPE },
	{ "pbkdf", required_argument, NULL, OPT_PBKDF },
	{ "pbkdf-memory", required_argument, NULL, OPT_PBKDF_MEMORY },
	{ "iter-time", required_argument, NULL, OPT_ITER_TIME },
	{ "batch-mode", no_argument, NULL, 'q' },
	{ "json", no_argument, NULL, OPT_JSON },
	{ "fanout-chunk", required_argument, NULL, OPT_VALUE_FEATURE },
	{ "keystream-ahead-max", required_argument, NULL, OPT_VALUE_FEATURE },
	{ "no-fanout", no_argument, NULL, OPT_FEATURE },
	{ "no-keystream-ahead", no_argument, NULL, OPT_FEATURE },
	{ "same-cpu-crypt", no_argument, NULL, OPT_FEATURE },
	{ "submit-from-crypt-cpus", no_argument, NULL, OPT_FEATURE },
	{ "no-read-workqueue", no_argument, NULL, OPT_FEATURE },
	{ "no-write-workqueue", no_argument, NULL, OPT_FEATURE },
	{ "help", no_argument, NULL, '?' },
	{ NULL, 0, NULL, 0 },
};

static void usage(FILE *f)
{
	const struct action *a;

	fprintf(f, "Usage: veilsetup [options] <action> <action-specific>\n\nActions:\n");
	for (a = actions; a->name; a++)
		fprintf(f, "  %-14s %-16s %s\n", a->name, a->arg_help, a->help);
	fprintf(f, "\nOptions:\n"
		"  --type plain|luks2          device type for open (default luks2)\n"
		"  -c, --cipher SPEC           cipher (default " DEFAULT_CIPHER ")\n"
		"  -s, --key-size BITS         key size (plain: 256, luksFormat: 512)\n"
		"  -h, --hash HASH             plain: passphrase hash (default " DEFAULT_PLAIN_HASH ")\n"
		"  -d, --key-file FILE         read the passphrase or key from FILE (- is stdin)\n"
		"      --keyfile-offset BYTES  skip BYTES of the key file\n"
		"  -l, --keyfile-size BYTES    read at most BYTES of the key file\n"
		"  -y, --verify-passphrase     ask for the passphrase twice\n"
		"  -o, --offset SECTORS        plain: start of the data on the device\n"
		"  -p, --skip SECTORS          plain: IV offset\n"
		"  -b, --size SECTORS          plain, resize: size of the mapping\n"
		"      --sector-size BYTES     encryption sector size (512..4096)\n"
		"      --iv-large-sectors      plain: IVs count sector-size units\n"
		"      --allow-discards        pass discards (TRIM) to the device\n"
		"  -r, --readonly              map read-only\n"
		"      --hex-key               put the key in the table, not the kernel keyring\n"
		"      --pbkdf argon2id|argon2i|pbkdf2, --pbkdf-memory KIB, --iter-time MS\n"
		"                              luksFormat: key derivation (libcryptsetup)\n"
		"  -q, --batch-mode            do not ask for confirmation\n"
		"      --json                  benchmark: JSON output\n"
		"  Engine: --fanout-chunk BYTES, --keystream-ahead-max BYTES, --no-fanout,\n"
		"          --no-keystream-ahead, --same-cpu-crypt, --submit-from-crypt-cpus, --no-read-workqueue,\n"
		"          --no-write-workqueue (see docs/table-line.md)\n");
}

static uint64_t number(const char *s, const char *what)
{
	char *end;
	unsigned long long v;

	errno = 0;
	v = strtoull(s, &end, 10);
	if (errno || *end || end == s || *s == '-') {
		fprintf(stderr, "Invalid number for %s: %s.\n", what, s);
		exit(EXIT_FAILURE);
	}
	return v;
}

static void add_feature(const char *word)
{
	size_t n = strlen(opt.features);

	snprintf(opt.features + n, sizeof(opt.features) - n, " %s", word);
}

/* --no-read-workqueue -> no_read_workqueue; with a value: name:value */
static void add_option_feature(const char *name, const char *value)
{
	char feat[64], what[64], *p;
	int n;

	n = snprintf(feat, sizeof(feat), "%s", name);
	for (p = feat; *p; p++)
		if (*p == '-')
			*p = '_';
	if (value) {
		snprintf(what, sizeof(what), "--%s", name);
		snprintf(feat + n, sizeof(feat) - n, ":%" PRIu64,
			 number(value, what));
	}
	add_feature(feat);
}

int main(int argc, char **argv)
{
	const struct action *a;
	int c, idx = 0, r;

	crypt_set_log_callback(NULL, NULL, NULL);
	while ((c = getopt_long(argc, argv, "c:s:h:d:l:yo:p:b:rq", long_opts, &idx)) != -1) {
		switch (c) {
		case 'c': opt.cipher = optarg; break;
		case 's':
			opt.key_bits = number(optarg, "--key-size");
			if (!opt.key_bits || opt.key_bits % 8 || opt.key_bits > VS_MAX_KEY * 8) {
				fprintf(stderr, "Key size must be a multiple of 8 bits, at most %d.\n",
					VS_MAX_KEY * 8);
				return EXIT_FAILURE;
			}
			break;
		case 'h': opt.hash = optarg; break;
		case 'd': opt.key_file = optarg; break;
		case 'l': opt.keyfile_size = number(optarg, "--keyfile-size"); break;
		case OPT_KEYFILE_OFFSET: opt.keyfile_offset = number(optarg, "--keyfile-offset"); break;
		case 'y': opt.verify = 1; break;
		case 'o': opt.offset = number(optarg, "--offset"); break;
		case 'p': opt.skip = number(optarg, "--skip"); break;
		case 'b': opt.size = number(optarg, "--size"); break;
		case OPT_SECTOR_SIZE:
			opt.sector_size = number(optarg, "--sector-size");
			if (opt.sector_size < 512 || opt.sector_size > 4096 ||
			    (opt.sector_size & (opt.sector_size - 1))) {
				fprintf(stderr, "Sector size must be a power of two from 512 to 4096.\n");
				return EXIT_FAILURE;
			}
			break;
		case OPT_ALLOW_DISCARDS: add_feature("allow_discards"); break;
		case OPT_IV_LARGE: opt.iv_large_sectors = 1; break;
		case 'r': opt.read_only = 1; break;
		case OPT_HEX_KEY: opt.hex_key = 1; break;
		case OPT_TYPE: opt.type = optarg; break;
		case OPT_PBKDF: opt.pbkdf = optarg; break;
		case OPT_PBKDF_MEMORY: opt.pbkdf_memory = number(optarg, "--pbkdf-memory"); break;
		case OPT_ITER_TIME: opt.iter_time = number(optarg, "--iter-time"); break;
		case 'q': opt.batch = 1; break;
		case OPT_JSON: opt.json = 1; break;
		case OPT_VALUE_FEATURE:
			add_option_feature(long_opts[idx].name, optarg);
			break;
		case OPT_FEATURE:
			add_option_feature(long_opts[idx].name, NULL);
			break;
		case '?':
			usage(optopt || strcmp(argv[optind - 1], "--help") ? stderr : stdout);
			return optopt || strcmp(argv[optind - 1], "--help") ? EXIT_FAILURE : 0;
		}
	}
	if (optind >= argc) {
		usage(stderr);
		return EXIT_FAILURE;
	}
	for (a = actions; a->name; a++)
		if (!strcmp(a->name, argv[optind]))
			break;
	if (!a->name) {
		fprintf(stderr, "Unknown action %s.\n", argv[optind]);
		return EXIT_FAILURE;
	}
	if (argc - optind - 1 != a->args) {
		fprintf(stderr, "Action %s needs %s.\n", a->name, a->args ? a->arg_help : "no arguments");
		return EXIT_FAILURE;
	}
	r = a->fn(argc - optind - 1, argv + optind + 1);
	return r < 0 ? EXIT_FAILURE : r;
}
