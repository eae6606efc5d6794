// SPDX-License-Identifier: GPL-2.0
/*
 * veilsetup mappings: open (plain, LUKS1, LUKS2; the other formats in
 * vs-foreign.c), close, resize, refresh,
 * luksSuspend and luksResume. libcryptsetup reads the headers and
 * gives the volume key (from a passphrase or a LUKS2 token); veilsetup
 * loads it with the veil target through the thread keyring, for the table
 * load only: dmsetup masks the hex key of a crypt table but prints a veil
 * table's, so no key goes into a table unless --disable-keyring asks for
 * it.
 */
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>
#include <json-c/json.h>
#include <libcryptsetup.h>

#include "veilsetup.h"
#include "veil-options.h"

#define DEFAULT_PLAIN_CIPHER	"aes-cbc-essiv:sha256"	/* cryptsetup 2.6 */
#define DEFAULT_PLAIN_BITS	256

/* Map @m as @m->name; the key's keyring entry, if any, is gone after. */
static int map_volume(const struct vs_map *m, int keyring)
{
	char desc[192], *key, *table = NULL;
	uint64_t len = m->size;
	int32_t key_id;
	int r;

	if (!len) {
		len = vs_device_sectors(m->device);
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
	r = vs_key_field(m, keyring, desc, &key_id, &key);
	if (r)
		goto out;
	table = vs_table_build(m, len, key, NULL);
	if (!table) {
		r = -ENOMEM;
		goto out;
	}
	/* Device-mapper loads the dm-veil module for the table if it can. */
	r = vs_dm_create(m, table, opt.read_only);
	if (r)
		vs_dm_create_failed(m->name);
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

/*
 * Refuse a taken name or a device somebody holds exclusively; with
 * @shared (plain open --shared) only a taken name, as libcryptsetup,
 * which then skips its exclusive open: the caller's --offset and --size
 * say which part of the device this mapping is.
 */
static int check_free(const char *name, const char *device, int shared)
{
	int fd;

	if (vs_dm_exists(name)) {
		fprintf(stderr, "Device %s already exists.\n", name);
		return -EEXIST;
	}
	if (shared)
		return 0;
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
	uint64_t len = vs_device_sectors(device);

	if (len <= m->offset || !((len - m->offset) % (m->sector_size / 512)))
		return 0;
	fprintf(stderr, "Device size is not aligned to requested sector size.\n");
	return -EINVAL;
}

static int open_plain(const char *device, const char *name)
{
	struct vs_map m = { .name = name, .offset = opt.offset,
			    .iv_offset = opt.skip, .size = opt.size,
			    .sector_size = opt.sector_size ?: 512,
			    .iv_large_sectors = opt.iv_large_sectors,
			    .flags = cli_flags() };
	char path[128], uuid[VS_DM_UUID_LEN];
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
	r = check_free(name, path, opt.shared) ?: vs_check_cipher(m.cipher, m.key_size) ?:
	    check_plain_aligned(path, &m) ?: vs_plain_key(path, &m);
	if (!r)
		r = map_volume(&m, !opt.disable_keyring);
	if (loop_fd >= 0)
		close(loop_fd);
	crypt_safe_free(m.key);
	return r;
}

/*
 * What veil cannot map: requirements it does not handle (a re-encryption
 * in progress), anything but one crypt segment. Messages as
 * cryptsetup's where it has one.
 */
static int check_mappable(struct crypt_device *cd)
{
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
 * The volume key of @cd into @m->key: as cryptsetup, from a LUKS2 token
 * first (a PIN asked up to @pin_tries times, vs-token.c), then unless
 * --token-only from the passphrase, asked up to --tries times on a
 * terminal. Returns the keyslot or a negative errno.
 */
static int luks_volume_key(struct crypt_device *cd, struct vs_map *m, const char *device,
			   int pin_tries)
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
	r = vs_token_volume_key(cd, (char *)m->key, &m->key_size, pin_tries);
	if (r >= 0 || opt.token_only)
		return r;
	snprintf(prompt, sizeof(prompt), "Enter passphrase for %s: ", device);
	do {
		r = vs_read_passphrase(cd, prompt, opt.key_file, opt.keyfile_offset,
				       opt.keyfile_size, 0, &pass, &pass_len);
		if (r)
			break;
		/*
		 * As cryptsetup: --test-passphrase --unbound tries unbound
		 * keyslots too; a mapping never takes their keys, and
		 * crypt_volume_key_get() of one keyslot would.
		 */
		if (opt.unbound)
			r = crypt_activate_by_passphrase(cd, NULL, opt.key_slot, pass, pass_len,
							 CRYPT_ACTIVATE_ALLOW_UNBOUND_KEY);
		else if (crypt_keyslot_status(cd, opt.key_slot) == CRYPT_SLOT_UNBOUND)
			r = -ENOENT;
		else
			r = crypt_volume_key_get(cd, opt.key_slot, (char *)m->key, &m->key_size,
						 pass, pass_len);
		crypt_safe_free(pass);
		pass = NULL;
		if (r == -EPERM)
			fprintf(stderr, "No key available with this passphrase.\n");
		else if (r == -ENOENT)
			fprintf(stderr, "No usable keyslot is available.\n");
		else if (r >= 0 && opt.verbose)
			printf("Key slot %d unlocked.\n", r);
	} while (r == -EPERM && !opt.key_file && isatty(STDIN_FILENO) && --tries > 0);
	return r;
}

/*
 * --volume-key-file: the volume key of @cd from that file into @m->key,
 * checked against the header's digest, as cryptsetup's open.
 */
static int luks_file_key(struct crypt_device *cd, struct vs_map *m)
{
	int r;

	m->key_size = crypt_get_volume_key_size(cd);
	if (!m->key_size && !opt.key_bits) {
		fprintf(stderr, "Cannot determine volume key size for LUKS without keyslots, please use --key-size option.\n");
		return -EINVAL;
	}
	m->key_size = m->key_size ?: (size_t)opt.key_bits / 8;
	r = vs_read_volume_key(opt.volume_key_file, m->key_size, (char **)&m->key);
	if (r)
		return r;
	r = crypt_volume_key_verify(cd, (char *)m->key, m->key_size);
	if (r == -EPERM || r == -ENOENT)
		fprintf(stderr, "Volume key does not match the volume.\n");
	return r;
}

static int open_luks(const char *device, const char *name)
{
	struct crypt_params_integrity ip = { 0 };
	struct vs_map m = { .name = name };
	struct crypt_device *cd = NULL;
	char path[128], uuid[VS_DM_UUID_LEN];
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
	vs_luks_dm_uuid(cd, name, uuid, sizeof(uuid));
	m.uuid = uuid;

	if (!opt.test_passphrase) {
		r = block_device(device, path, sizeof(path), &loop_fd);
		if (r)
			goto out;
		m.device = path;
		r = check_free(name, path, 0);
		if (r)
			goto out;
	}
	if (opt.volume_key_file)
		r = luks_file_key(cd, &m);
	else
		r = luks_volume_key(cd, &m, device, vs_tries_tty());
	if (r < 0 || opt.test_passphrase)
		goto out;
	if (!crypt_get_integrity_info(cd, &ip) && ip.tag_size)
		r = vs_integrity_open(cd, &m, !opt.disable_keyring);
	else
		r = map_volume(&m, !opt.disable_keyring);
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

/*
 * cryptsetup's checks of open's options for any type but plain (its
 * verify_open()): the data's place and sector size come from the header.
 */
static int check_open_options(const char *type)
{
	int loopaes = !strcmp(type, "loopaes");
	const char *msg = NULL;

	if (vs_option_given("skip") && !loopaes)
		msg = "Option --skip is supported only for open of plain and loopaes devices.";
	else if (vs_option_given("offset") && !loopaes)
		msg = "Option --offset with open action is only supported for plain and loopaes devices.";
	else if ((opt.tcrypt_flags & CRYPT_TCRYPT_HIDDEN_HEADER) && opt.allow_discards)
		msg = "Option --tcrypt-hidden cannot be combined with --allow-discards.";
	else if (vs_option_given("sector-size"))
		msg = "Sector size option with open action is supported only for plain devices.";
	else if (opt.iv_large_sectors)
		msg = "Large IV sectors option is supported only for opening plain type device with sector size larger than 512 bytes.";
	if (!msg)
		return 0;
	fprintf(stderr, "veilsetup: %s\n", msg);
	return -EINVAL;
}

int vs_action_open(int argc, char **argv)
{
	const char *type = opt.type ?: "luks";
	int r;

	/* As cryptsetup: open --refresh [<device>] <name> is refresh <name>. */
	if (opt.refresh)
		return vs_action_refresh(1, argv + (argc > 1));
	if (opt.shared && strcmp(type, "plain")) {
		fprintf(stderr, "veilsetup: Option --shared is allowed only for open of plain device.\n");
		return -EINVAL;
	}
	if (opt.test_passphrase && (!strcmp(type, "plain") || !strcmp(type, "loopaes"))) {
		fprintf(stderr, "veilsetup: Option --test-passphrase is allowed only for open of LUKS, TCRYPT, BITLK and FVAULT2 devices.\n");
		return -EINVAL;
	}
	if (opt.unbound && strncmp(type, "luks", 4)) {
		fprintf(stderr, "veilsetup: Option --unbound is allowed only for open of luks device.\n");
		return -EINVAL;
	}
	if (opt.unbound && !opt.test_passphrase) {
		fprintf(stderr, "veilsetup: Option --unbound cannot be used without --test-passphrase.\n");
		return -EINVAL;
	}
	r = vs_foreign_check_options(type);
	if (!r && strcmp(type, "plain"))
		r = check_open_options(type);
	if (r)
		return r;
	if (argc < 2 && !opt.test_passphrase) {
		fprintf(stderr, "Command requires device and mapped name as arguments.\n");
		return -EINVAL;
	}
	if (!strcmp(type, "plain"))
		return open_plain(argv[0], argv[1]);
	if (!strcmp(type, "luks") || !strcmp(type, "luks1") || !strcmp(type, "luks2"))
		return open_luks(argv[0], argc > 1 ? argv[1] : NULL);
	if (vs_foreign_type(type))
		return vs_foreign_open(type, argv[0], argc > 1 ? argv[1] : NULL);
	fprintf(stderr, "Unrecognized metadata device type %s.\n", type);
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

/*
 * close --cancel-deferred: as libcryptsetup, the message to the mapping;
 * a removal veilsetup deferred for the dm-integrity device below is
 * cancelled too.
 */
static int cancel_deferred(const char *name, const struct vs_table *t)
{
	int r = vs_dm_cancel_deferred(name);

	if (r)
		fprintf(stderr, "Could not cancel deferred remove from device %s.\n", name);
	else if (t->dif[0])
		vs_dm_cancel_deferred(t->dif);
	return r;
}

int vs_action_close(int argc, char **argv)
{
	struct vs_table t;
	int r;

	(void)argc;
	/* also a device libcryptsetup made that is still dm-crypt */
	r = vs_table_get_closing(argv[0], &t);
	explicit_bzero(t.key, sizeof(t.key));
	if (r)
		return r;
	if (opt.cancel_deferred)
		return cancel_deferred(argv[0], &t);
	r = opt.deferred ? vs_dm_remove_deferred(argv[0]) : vs_dm_remove(argv[0]);
	if (r) {
		fprintf(stderr, "Device %s is still in use.\n", argv[0]);
		return r;
	}
	/* --deferred and still open: what is below goes after it. */
	if (opt.deferred && vs_dm_exists(argv[0])) {
		printf("Device %s is still active and scheduled for deferred removal.\n",
		       argv[0]);
		if (t.dif[0])
			vs_dm_remove_deferred(t.dif);
		return vs_foreign_close(argv[0], &t, 1);
	}
	/* As cryptsetup: the dm-integrity device below goes too. */
	if (t.dif[0] && vs_dm_remove(t.dif)) {
		fprintf(stderr, "Device %s is still in use.\n", t.dif);
		return -EBUSY;
	}
	/* and a TCRYPT cascade's lower layers */
	return vs_foreign_close(argv[0], &t, 0);
}

/*
 * The volume key of mapping @t again, into @m->key: for LUKS from
 * --volume-key-file (checked against the header) or the header's tokens
 * (a PIN asked up to @pin_tries times) and passphrase, for a plain mapping
 * from the passphrase and plain options given now, for a loop-AES one from
 * --key-file.
 */
static int volume_key(const char *name, const struct vs_table *t, struct vs_map *m,
		      int pin_tries)
{
	struct crypt_device *cd = NULL;
	const char *type = vs_uuid_type(t->uuid);
	int r;

	if (t->foreign[0])
		return vs_foreign_volume_key(name, t, m);
	if (!strcmp(type, CRYPT_PLAIN)) {
		m->key_size = t->key_bits / 8;
		m->size = 0;
		return vs_plain_key(t->path, m);
	}
	r = vs_load_luks(opt.header ?: t->path, &cd);
	if (!r)
		r = opt.volume_key_file ? luks_file_key(cd, m) :
		    luks_volume_key(cd, m, t->path, pin_tries);
	crypt_free(cd);
	return r;
}

/*
 * The key field for a new table of mapping @t, with the volume key again
 * (volume_key()) where it is needed; a key in the kernel keyring goes
 * through the thread keyring (*@key_id, to drop after the load), and a
 * plain or loop-AES key is checked against the mapping's data.
 *
 * A key in the table (--disable-keyring) stays, and with @unlock (a
 * refresh; a loop-AES resize with --key-file too) the key unlocked now
 * must be that one, as libcryptsetup compares keys for a reload:
 * cryptsetup's resize of such a mapping asks for no key, its refresh
 * does. The null cipher has no key to compare.
 */
static int reload_key(const char *name, struct vs_table *t, struct vs_map *m,
		      int unlock, int pin_tries, int32_t *key_id, char **field)
{
	const char *type = vs_uuid_type(t->uuid);
	int loopaes = !strcmp(t->foreign, CRYPT_LOOPAES);
	char desc[192];
	int r;

	*key_id = -1;
	*field = NULL;
	if (!t->keyring) {
		if ((unlock || (loopaes && opt.key_file)) && (type || t->foreign[0]) &&
		    strcmp(t->key, "-")) {
			r = volume_key(name, t, m, pin_tries);
			if (r < 0)
				return r;
			r = vs_key_equal_hex(m->key, m->key_size, t->key);
			if (r < 0)
				return r;
			if (!r) {
				fprintf(stderr, "Mismatching parameters on device %s.\n", name);
				return -EINVAL;
			}
		}
		*field = crypt_safe_alloc(sizeof(t->key));
		if (!*field)
			return -ENOMEM;
		memcpy(*field, t->key, sizeof(t->key));
		return 0;
	}
	if (!type && !t->foreign[0]) {
		fprintf(stderr, "The key of %s is in the kernel keyring only, and it "
			"is no veilsetup mapping: veilsetup cannot load it again.\n", name);
		return -EINVAL;
	}
	r = volume_key(name, t, m, pin_tries);
	if (r >= 0) {
		snprintf(desc, sizeof(desc), VS_KEY_PREFIX "%s", t->uuid);
		r = vs_key_field(m, 1, desc, key_id, field);
	}
	if (!r && loopaes)
		r = vs_plain_key_check(t, m, *field, name);
	else if (!r && type && !strcmp(type, CRYPT_PLAIN))
		r = vs_plain_key_check(t, m, *field, NULL);
	return r < 0 ? r : 0;
}

/*
 * Load @t again with @len sectors and optional words @words, or @m's flags
 * and the options when @words is NULL; @unlock for a refresh (reload_key());
 * a token's PIN is asked up to @pin_tries times.
 */
static int reload(const char *name, struct vs_table *t, struct vs_map *m, uint64_t len,
		  const char *words, int unlock, int pin_tries)
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
	m->iv_large_sectors = strstr(t->features, VEIL_OPT_IV_LARGE_SECTORS) != NULL;
	r = reload_key(name, t, m, unlock, pin_tries, &key_id, &key);
	if (!r) {
		table = vs_table_build(m, len, key, words);
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

/*
 * As cryptsetup 2.6: libcryptsetup resizes no TCRYPT or BITLK mapping
 * (and no FileVault2 one, vs_action_resize()); cryptsetup refreshes LUKS,
 * plain and loop-AES mappings only, and loop-AES ones with --key-file. A
 * loop-AES mapping with its key in the kernel keyring takes --key-file
 * for a resize too: veilsetup loads the keys again.
 */
static int check_reloadable(const struct vs_table *t, int refresh)
{
	int loopaes = !strcmp(t->foreign, CRYPT_LOOPAES);

	if (!t->foreign[0])
		return 0;
	if (refresh && !loopaes) {
		fprintf(stderr, "Refresh is not supported for device type %s\n", t->foreign);
		return -EINVAL;
	}
	if (!refresh && (!strcmp(t->foreign, CRYPT_TCRYPT) || !strcmp(t->foreign, CRYPT_BITLK))) {
		fprintf(stderr, "This operation is not supported for this device type.\n");
		return -ENOTSUP;
	}
	if (loopaes && !opt.key_file && (refresh || t->keyring)) {
		fprintf(stderr, "Option --key-file is required.\n");
		return -EINVAL;
	}
	return 0;
}

int vs_action_resize(int argc, char **argv)
{
	struct vs_map m = { .name = argv[0] };
	struct vs_table t;
	uint64_t dev_len, len;
	int r;

	(void)argc;
	r = vs_table_get(argv[0], &t) ?: check_reloadable(&t, 0);
	if (r)
		goto out;
	vs_table_flags(&t, &m);
	if (t.suspended) {
		fprintf(stderr, "Device %s is suspended: luksResume it first.\n", argv[0]);
		r = -EBUSY;
		goto out;
	}
	/*
	 * Neither can cryptsetup: 2.6 fails with "Unsupported parameters on
	 * device <name>.", 2.8 says this (exit code 1 both).
	 */
	if (t.dif[0]) {
		fprintf(stderr, "Resize of LUKS2 device with integrity protection is not supported.\n");
		r = -ENOTSUP;
		goto out;
	}
	/* An image file may have grown: its loop device learns it first. */
	vs_loop_refresh_capacity(t.path);
	dev_len = vs_device_sectors(t.path);
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
	/*
	 * As libcryptsetup 2.6, which reloads no FileVault2 mapping: a new
	 * size is refused, the same one needs nothing.
	 */
	if (!strcmp(t.foreign, CRYPT_FVAULT2)) {
		r = len == t.len ? 0 : -EINVAL;
		if (r)
			fprintf(stderr, "Mismatching parameters on device %s.\n", argv[0]);
		goto out;
	}
	/* The optional words stay as they are; as cryptsetup, one PIN try. */
	r = reload(argv[0], &t, &m, len, t.features, 0, 1);
out:
	explicit_bzero(&t, sizeof(t));
	return r;
}

/* The persistent flags of a LUKS2 mapping's header (0 for others). */
static uint32_t header_flags(const struct vs_table *t)
{
	struct crypt_device *cd = NULL;
	uint32_t flags = 0;
	const char *type = vs_uuid_type(t->uuid);

	if (type && !strcmp(type, CRYPT_LUKS2) && !vs_load_luks(opt.header ?: t->path, &cd))
		crypt_persistent_flags_get(cd, CRYPT_FLAGS_ACTIVATION, &flags);
	crypt_free(cd);
	return flags;
}

/* --persistent: @flags into the LUKS2 header of mapping @t. */
static int store_flags(const struct vs_table *t, uint32_t flags)
{
	struct crypt_device *cd = NULL;
	const char *type = vs_uuid_type(t->uuid);
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

int vs_action_refresh(int argc, char **argv)
{
	struct vs_map m = { .name = argv[0] };
	struct vs_table t;
	int r;

	(void)argc;
	r = vs_table_get(argv[0], &t) ?: check_reloadable(&t, 1);
	if (!r) {
		vs_table_flags(&t, &m);
		/* As cryptsetup: the header's flags and those given now. */
		m.flags = cli_flags() | header_flags(&t);
		vs_keep_engine_words(&t);
		/* cryptsetup's open --refresh: --tries PINs on a terminal */
		r = reload(argv[0], &t, &m, t.len, NULL, 1, vs_tries_tty());
		if (!r && opt.persistent)
			r = store_flags(&t, m.flags);
	}
	explicit_bzero(&t, sizeof(t));
	return r;
}

/* Only LUKS mappings, as cryptsetup's luksSuspend and luksResume. */
static int get_luks_table(const char *name, struct vs_table *t)
{
	int r = vs_table_get(name, t);
	const char *type;

	if (r)
		return r;
	type = vs_uuid_type(t->uuid);
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
		r = luks_volume_key(cd, &m, t.path, vs_tries_tty());
	if (r < 0)
		goto out;
	/* After key wipe the table shows no reference: decide as open does. */
	snprintf(desc, sizeof(desc), VS_KEY_PREFIX "%s", t.uuid);
	r = vs_key_field(&m, !opt.disable_keyring, desc, &key_id, &key);
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
