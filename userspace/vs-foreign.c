// SPDX-License-Identifier: GPL-2.0
/*
 * veilsetup and cryptsetup's other formats: TCRYPT (TrueCrypt, VeraCrypt),
 * BITLK (BitLocker), FVAULT2 (FileVault2) and loop-AES. libcryptsetup
 * reads their headers and checks passphrases and key files as it does for
 * cryptsetup, so tcryptDump, bitlkDump, fvault2Dump and open
 * --test-passphrase give cryptsetup's output, messages and exit codes.
 *
 * libcryptsetup's public API does not give all that a veil table needs
 * (the TCRYPT and FileVault2 volume sizes, BitLocker's segments, the
 * loop-AES key), so veilsetup maps them as vs-integrity.c maps LUKS2 with
 * integrity: libcryptsetup activates the volume with dm-crypt, private to
 * udev, the keys in the tables; veilsetup reads each device's table and
 * loads it again in place with every crypt target a veil target with the
 * same fields (the key through the thread keyring), the other targets
 * (BitLocker's zero segments) as they are. A TCRYPT cascade is a stack of
 * devices, <name> over <name>_1 over <name>_2: each layer is swapped, the
 * lowest first. The devices keep libcryptsetup's names and dm uuids.
 */
#include <errno.h>
#include <inttypes.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <libcryptsetup.h>

#include "veilsetup.h"

/* cryptsetup 2.6's loop-AES defaults (configure: aes, 256 bits). */
#define LOOPAES_CIPHER		"aes"
#define LOOPAES_KEY_BITS	256

static const struct foreign {
	const char *name;	/* --type */
	const char *type;	/* libcryptsetup's, and its dm uuids' CRYPT-<type>- */
} formats[] = {
	{ "tcrypt", CRYPT_TCRYPT },
	{ "bitlk", CRYPT_BITLK },
	{ "fvault2", CRYPT_FVAULT2 },
	{ "loopaes", CRYPT_LOOPAES },
};

#define N_FORMATS	(sizeof(formats) / sizeof(formats[0]))

/* libcryptsetup's dm uuid prefix, before the type. */
#define CRYPT_UUID_PREFIX	"CRYPT-"
/* A TCRYPT cascade: <name> over <name>_1 over <name>_2. */
#define MAX_LAYERS		3

static const struct foreign *format_of(const char *type)
{
	size_t i;

	for (i = 0; i < N_FORMATS; i++)
		if (!strcmp(type, formats[i].name))
			return &formats[i];
	return NULL;
}

/**
 * vs_foreign_type() - whether a device type is one of this file's
 * @type: the --type of open.
 *
 * Return: 1 for tcrypt, bitlk, fvault2 and loopaes, else 0.
 */
int vs_foreign_type(const char *type)
{
	return !!format_of(type);
}

/**
 * vs_foreign_check_options() - cryptsetup's checks of the TCRYPT options
 * @type: the device type of open or tcryptDump (--type, or the action's).
 *
 * As cryptsetup's verify_tcryptdump(), for any type.
 *
 * Return: 0, or -EINVAL after cryptsetup's message.
 */
int vs_foreign_check_options(const char *type)
{
	uint32_t headers = CRYPT_TCRYPT_HIDDEN_HEADER | CRYPT_TCRYPT_SYSTEM_HEADER |
			   CRYPT_TCRYPT_BACKUP_HEADER;
	int tcrypt = type && !strcmp(type, "tcrypt");
	const char *msg = NULL;

	if ((opt.tcrypt_flags & headers) && !tcrypt)
		msg = "Option --tcrypt-hidden, --tcrypt-system or --tcrypt-backup is supported only for TCRYPT device.";
	else if ((vs_option_given("veracrypt") || vs_option_given("disable-veracrypt")) && !tcrypt)
		msg = "Option --veracrypt or --disable-veracrypt is supported only for TCRYPT device type.";
	else if (vs_option_given("veracrypt-pim") && vs_option_given("disable-veracrypt"))
		msg = "Option --veracrypt-pim is supported only for VeraCrypt compatible devices.";
	else if (opt.veracrypt_query_pim && vs_option_given("disable-veracrypt"))
		msg = "Option --veracrypt-query-pim is supported only for VeraCrypt compatible devices.";
	else if (opt.veracrypt_query_pim && vs_option_given("veracrypt-pim"))
		msg = "The options --veracrypt-pim and --veracrypt-query-pim are mutually exclusive.";
	if (!msg)
		return 0;
	fprintf(stderr, "veilsetup: %s\n", msg);
	return -EINVAL;
}

/* cryptsetup's checks of open's options for these formats (verify_open()). */
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
	if (msg) {
		fprintf(stderr, "veilsetup: %s\n", msg);
		return -EINVAL;
	}
	if (loopaes && !opt.key_file) {
		fprintf(stderr, "Option --key-file is required.\n");
		return -EINVAL;
	}
	return 0;
}

/* libcryptsetup's context for @device (--header holds a TCRYPT header). */
static int init_device(const char *type, const char *device, struct crypt_device **cd)
{
	/* libcryptsetup says "Device ... does not exist or access denied." */
	int r = !strcmp(type, "tcrypt") && opt.header ?
		crypt_init_data_device(cd, opt.header, device) : crypt_init(cd, device);

	return r < 0 ? -ENODEV : 0;
}

/* The BITLK or FVAULT2 header of @device, with cryptsetup's message. */
static int load_header(struct crypt_device *cd, const struct foreign *f, const char *device)
{
	int r = crypt_load(cd, f->type, NULL);

	if (r < 0)
		fprintf(stderr, "Device %s is not a valid %s device.\n", device, f->type);
	return r;
}

/* --veracrypt-query-pim: the PIM, read as the passphrase is. */
static int query_pim(struct crypt_device *cd, const char *stdin_key, uint32_t *pim)
{
	unsigned long long v;
	char *text = NULL, *end;
	size_t len;
	int r;

	r = vs_read_passphrase(cd, "Enter VeraCrypt PIM: ", stdin_key, 0, 0,
			       VS_PASS_EMPTY_OK, &text, &len);
	if (r < 0)
		return r;
	errno = 0;
	v = strtoull(text, &end, 10);
	if (!*text || *end || errno == EINVAL) {
		fprintf(stderr, "Invalid PIM value: parse error.\n");
		r = -EINVAL;
	} else if (!v) {
		fprintf(stderr, "Invalid PIM value: 0.\n");
		r = -EINVAL;
	} else if (v > UINT32_MAX || errno == ERANGE) {
		fprintf(stderr, "Invalid PIM value: outside of range.\n");
		r = -ERANGE;
	} else {
		*pim = v;
	}
	crypt_safe_free(text);
	explicit_bzero(&v, sizeof(v));
	return r;
}

/*
 * The TCRYPT header of @device, as cryptsetup's tcrypt_load(): it is
 * encrypted, so the passphrase (then --veracrypt-query-pim's PIM) comes
 * first, and libcryptsetup tries it with the key files (every -d but "-",
 * which is standard input for the passphrase), --hash and --cipher. A
 * wrong one is asked again, up to --tries times on a terminal.
 */
static int tcrypt_load(struct crypt_device *cd, const char *device)
{
	const char *key_files[VS_MAX_KEY_FILES], *stdin_key = NULL;
	struct crypt_params_tcrypt p;
	int tries = vs_tries_tty(), eperm = 0, r, i;
	unsigned int n = 0;
	char prompt[300], *pass;
	size_t len;

	for (i = 0; i < opt.key_file_count; i++) {
		if (!strcmp(opt.key_files[i], "-"))
			stdin_key = opt.key_files[i];
		else
			key_files[n++] = opt.key_files[i];
	}
	snprintf(prompt, sizeof(prompt), "Enter passphrase for %s: ", device);
	do {
		p = (struct crypt_params_tcrypt){
			.keyfiles = n ? key_files : NULL,
			.keyfiles_count = n,
			.flags = opt.tcrypt_flags | CRYPT_TCRYPT_LEGACY_MODES |
				 (vs_option_given("disable-veracrypt") ? 0 :
				  CRYPT_TCRYPT_VERA_MODES),
			.veracrypt_pim = opt.veracrypt_pim,
			.hash_name = opt.hash,
			.cipher = opt.cipher,
		};
		pass = NULL;
		r = vs_read_passphrase(cd, prompt, stdin_key, 0, 0, VS_PASS_EMPTY_OK, &pass, &len);
		if (r < 0)
			continue;
		if (opt.veracrypt_query_pim)
			r = query_pim(cd, stdin_key, &p.veracrypt_pim);
		if (r < 0) {
			crypt_safe_free(pass);
			continue;
		}
		p.passphrase = pass;
		p.passphrase_size = len;
		r = crypt_load(cd, CRYPT_TCRYPT, &p);
		if (r == -EPERM) {
			fprintf(stderr, "No device header detected with this passphrase.\n");
			eperm = 1;
		}
		crypt_safe_free(pass);
		explicit_bzero(&p, sizeof(p));
	} while ((r == -EPERM || r == -ERANGE) && --tries > 0);
	/* As cryptsetup: a wrong passphrase, then no more input, is wrong. */
	if (eperm && r == -EPIPE)
		r = -EPERM;
	return r;
}

/* SIGINT and SIGTERM wait while a dm-crypt device of ours is up. */
static void hold_signals(sigset_t *old)
{
	sigset_t term;

	sigemptyset(&term);
	sigaddset(&term, SIGINT);
	sigaddset(&term, SIGTERM);
	sigprocmask(SIG_BLOCK, &term, old);
}

static void release_signals(const sigset_t *old)
{
	sigprocmask(SIG_SETMASK, old, NULL);
}

/* The flags of libcryptsetup's activation: hidden from udev until veil is in. */
static uint32_t activation_flags(void)
{
	return opt.perf_flags | CRYPT_ACTIVATE_PRIVATE |
	       (opt.allow_discards ? CRYPT_ACTIVATE_ALLOW_DISCARDS : 0) |
	       (opt.read_only ? CRYPT_ACTIVATE_READONLY : 0);
}

/* Layer @i of mapping @name: @name itself, or <name>_<i> below it. */
static void layer_name(const char *name, int i, char *out, size_t len)
{
	if (i)
		snprintf(out, len, "%s_%d", name, i);
	else
		snprintf(out, len, "%s", name);
}

/* The dm uuid of @name into @uuid (VS_DM_UUID_LEN), or -ENODEV. */
static int dm_uuid(const char *name, char *uuid)
{
	char type[32], status[4096];
	uint64_t len;

	return vs_dm_get(name, 1, type, sizeof(type), status, sizeof(status), &len,
			 uuid, VS_DM_UUID_LEN, NULL, NULL);
}

/*
 * Whether layer @i (1, 2) of mapping @name is mapped and belongs to it:
 * its uuid begins with @top_uuid, the uuid of @name, as libcryptsetup's
 * TCRYPT_deactivate() checks. Its name goes to @lname.
 */
static int layer_of(const char *name, int i, const char *top_uuid, char *lname, size_t len)
{
	char uuid[VS_DM_UUID_LEN];

	layer_name(name, i, lname, len);
	return top_uuid[0] && !dm_uuid(lname, uuid) &&
	       !strncmp(uuid, top_uuid, strlen(top_uuid));
}

/* Remove the lower layers of mapping @name (dm uuid @top_uuid). */
static int remove_lower(const char *name, const char *top_uuid)
{
	char lname[160];
	int i;

	for (i = 1; i < MAX_LAYERS; i++) {
		if (!layer_of(name, i, top_uuid, lname, sizeof(lname)))
			continue;
		if (vs_dm_remove(lname)) {
			fprintf(stderr, "Device %s is still in use.\n", lname);
			return -EBUSY;
		}
	}
	return 0;
}

/*
 * dm-crypt's target @tg, "<cipher> <hex key> <iv_offset> <dev> <offset>
 * [<n> <words>]", into a veil target with the same fields and veil's
 * engine options from the command line, the key through the thread
 * keyring as @desc (*@key_id, to drop after the load) unless
 * --disable-keyring.
 */
static int crypt_to_veil(struct vs_dm_target *tg, const char *desc, int32_t *key_id)
{
	char *hex = crypt_safe_alloc(VS_KEY_FIELD_MAX), *field = NULL, *table = NULL;
	char dev[64], words[1280] = "";
	struct vs_map m = { 0 };
	unsigned int nwords = 0;
	size_t i, n;
	int r = -EINVAL;

	if (!hex)
		return -ENOMEM;
	_Static_assert(VS_KEY_FIELD_MAX == 8352, "update the %8351s below");
	if (sscanf(tg->params, "%127s %8351s %" SCNu64 " %63s %" SCNu64 " %u %1023[^\n]",
		   m.cipher, hex, &m.iv_offset, dev, &m.offset, &nwords, words) < 5 ||
	    hex[0] == ':' || !hex[0] || strlen(hex) % 2)
		goto out;
	m.key_size = strlen(hex) / 2;
	m.key = crypt_safe_alloc(m.key_size);
	if (!m.key) {
		r = -ENOMEM;
		goto out;
	}
	for (i = 0; i < m.key_size; i++)
		if (sscanf(hex + 2 * i, "%2hhx", &m.key[i]) != 1)
			goto out;
	m.device = dev;
	n = strlen(words);
	snprintf(words + n, sizeof(words) - n, "%s", opt.features);
	r = vs_key_field(&m, !opt.disable_keyring, desc, key_id, &field);
	if (r)
		goto out;
	table = vs_table_build(&m, tg->len, field, words[0] ? words : NULL);
	if (!table) {
		r = -ENOMEM;
		goto out;
	}
	/* vs_table_build() gives "<len> <params>". */
	snprintf(tg->params, VS_TABLE_MAX, "%s", strchr(table, ' ') + 1);
	snprintf(tg->type, sizeof(tg->type), "%s", VS_TARGET);
out:
	crypt_safe_free(hex);
	crypt_safe_free(m.key);
	crypt_safe_free(field);
	crypt_safe_free(table);
	return r;
}

/*
 * The table of device @lname again, in place, with veil for dm-crypt;
 * @private_dev for a lower layer, which udev is to leave alone.
 */
static int swap_layer(const char *lname, int private_dev)
{
	struct vs_dm_target tg[VS_DM_MAX_TARGETS];
	int32_t key_ids[VS_DM_MAX_TARGETS];
	char uuid[VS_DM_UUID_LEN], desc[192];
	int n = 0, read_only = 0, i, r;

	for (i = 0; i < VS_DM_MAX_TARGETS; i++)
		key_ids[i] = -1;
	r = vs_dm_targets_get(lname, tg, VS_DM_MAX_TARGETS, &n, uuid, sizeof(uuid), &read_only);
	if (r)
		return r;
	for (i = 0; !r && i < n; i++) {
		/* BitLocker's zero segments stay. */
		if (strcmp(tg[i].type, "crypt"))
			continue;
		if (i)
			snprintf(desc, sizeof(desc), VS_KEY_PREFIX "%s:%d", uuid, i);
		else
			snprintf(desc, sizeof(desc), VS_KEY_PREFIX "%s", uuid);
		r = crypt_to_veil(&tg[i], desc, &key_ids[i]);
	}
	if (!r)
		r = vs_dm_targets_swap(lname, tg, n, read_only, private_dev);
	for (i = 0; i < VS_DM_MAX_TARGETS; i++)
		vs_keyring_drop(key_ids[i]);
	vs_dm_targets_free(tg, n);
	return r;
}

/*
 * libcryptsetup's activation of @name returned @r: if it mapped it, each
 * of its devices goes from dm-crypt to veil, the lowest first; on an
 * error all of them are removed.
 */
static int swap_stack(const char *name, int r)
{
	char top_uuid[VS_DM_UUID_LEN] = "", lname[160];
	int i;

	vs_dm_log_default();
	if (r < 0 || !name)
		return r;
	r = dm_uuid(name, top_uuid);
	for (i = MAX_LAYERS - 1; !r && i >= 0; i--) {
		if (i && !layer_of(name, i, top_uuid, lname, sizeof(lname)))
			continue;
		layer_name(name, i, lname, sizeof(lname));
		r = swap_layer(lname, i > 0);
		if (r == -EINVAL)
			vs_dm_create_failed(lname);
	}
	if (r) {
		fprintf(stderr, "Cannot map %s with veil: its dm-crypt devices are removed.\n",
			name);
		if (vs_dm_remove(name))
			fprintf(stderr, "Device %s is still in use.\n", name);
		else
			remove_lower(name, top_uuid);
	}
	return r;
}

/*
 * The passphrase of a BITLK or FVAULT2 device, checked by libcryptsetup,
 * up to --tries times on a terminal: with no name, as cryptsetup's
 * --test-passphrase; with @name, the volume is mapped as @name.
 */
static int unlock(struct crypt_device *cd, const char *device, const char *name)
{
	int tries = vs_tries_tty(), r;
	char prompt[300], *pass;
	sigset_t old;
	size_t len;

	snprintf(prompt, sizeof(prompt), "Enter passphrase for %s: ", device);
	do {
		r = vs_read_passphrase(cd, prompt, opt.key_file, opt.keyfile_offset,
				       opt.keyfile_size, VS_PASS_EMPTY_OK, &pass, &len);
		if (r < 0)
			return r;
		hold_signals(&old);
		r = crypt_activate_by_passphrase(cd, name, CRYPT_ANY_SLOT, pass, len,
						 name ? activation_flags() : 0);
		crypt_safe_free(pass);
		r = swap_stack(name, r);
		release_signals(&old);
		if (r == -EPERM)
			fprintf(stderr, "No key available with this passphrase.\n");
		else if (r == -ENOENT)
			fprintf(stderr, "No usable keyslot is available.\n");
	} while ((r == -EPERM || r == -ERANGE) && --tries > 0);
	return r < 0 ? r : 0;
}

/* loop-AES: libcryptsetup checks the cipher, key size, hash and device. */
static int loopaes_format(struct crypt_device *cd)
{
	struct crypt_params_loopaes p = {
		.hash = opt.hash,
		.offset = opt.offset,
		.skip = vs_option_given("skip") ? opt.skip : opt.offset,
	};

	return crypt_format(cd, CRYPT_LOOPAES, opt.cipher ?: LOOPAES_CIPHER, NULL, NULL, NULL,
			    (opt.key_bits ?: LOOPAES_KEY_BITS) / 8, &p);
}

/**
 * vs_foreign_open() - open of a TCRYPT, BITLK, FVAULT2 or loop-AES device
 * @type: "tcrypt", "bitlk", "fvault2" or "loopaes".
 * @device: the device or image file.
 * @name: the mapping's name; NULL with --test-passphrase.
 *
 * With --test-passphrase the passphrase is checked as cryptsetup checks
 * it. Otherwise libcryptsetup maps the volume with dm-crypt, private to
 * udev (the dm_crypt module must be there for that moment), and each of
 * its devices is loaded again with veil in place of dm-crypt. SIGINT and
 * SIGTERM wait from the activation to the end of the swap.
 *
 * Return: 0, or a negative errno after a message; on an error nothing is
 * left mapped.
 */
int vs_foreign_open(const char *type, const char *device, const char *name)
{
	const struct foreign *f = format_of(type);
	const char *key_file = opt.key_file;
	struct crypt_device *cd = NULL;
	sigset_t old;
	int r;

	if (opt.test_passphrase)
		name = NULL;
	r = check_open_options(type) ?: init_device(type, device, &cd);
	if (r)
		return r;
	/* The keys go into the dm-crypt tables, and from there to veil's. */
	crypt_volume_key_keyring(cd, 0);
	if (!strcmp(type, "loopaes"))
		r = loopaes_format(cd);
	else if (strcmp(type, "tcrypt"))
		r = load_header(cd, f, device);
	if (r < 0)
		goto out;
	if (!strcmp(type, "tcrypt")) {
		r = tcrypt_load(cd, device);
		if (r < 0 || !name)
			goto out;
		hold_signals(&old);
		r = crypt_activate_by_volume_key(cd, name, NULL, 0, activation_flags());
		r = swap_stack(name, r);
		release_signals(&old);
	} else if (!strcmp(type, "loopaes")) {
		/* As cryptsetup: libcryptsetup reads standard input as a file. */
		if (!strcmp(key_file, "-"))
			key_file = "/dev/stdin";
		hold_signals(&old);
		r = crypt_activate_by_keyfile_device_offset(cd, name, CRYPT_ANY_SLOT, key_file,
							    opt.keyfile_size, opt.keyfile_offset,
							    activation_flags());
		r = swap_stack(name, r);
		release_signals(&old);
	} else {
		r = unlock(cd, device, name);
	}
out:
	crypt_free(cd);
	return r < 0 ? r : 0;
}

/**
 * vs_foreign_uuid_type() - the format of a mapping these formats make
 * @uuid: the mapping's dm uuid.
 *
 * Return: "TCRYPT", "BITLK", "FVAULT2" or "LOOPAES" for libcryptsetup's
 * uuid of that format (CRYPT-<type>-...), else NULL.
 */
const char *vs_foreign_uuid_type(const char *uuid)
{
	size_t i, n = strlen(CRYPT_UUID_PREFIX), t;

	if (strncmp(uuid, CRYPT_UUID_PREFIX, n))
		return NULL;
	for (i = 0; i < N_FORMATS; i++) {
		t = strlen(formats[i].type);
		if (!strncmp(uuid + n, formats[i].type, t) && uuid[n + t] == '-')
			return formats[i].type;
	}
	return NULL;
}

/* The cipher, key bits, device and offsets of veil target params @p. */
static int veil_fields(const char *p, char *cipher, size_t *key_bits, char *dev,
		       uint64_t *iv_offset, uint64_t *offset)
{
	int key = 0, end = 0;

	/* The key field: ":<bytes>:logon:<desc>", or hex with --disable-keyring. */
	if (sscanf(p, "%127s %n%*s%n", cipher, &key, &end) != 1 || !end ||
	    sscanf(p + end, "%" SCNu64 " %63s %" SCNu64, iv_offset, dev, offset) != 3)
		return -EINVAL;
	*key_bits = p[key] == ':' ? strtoul(p + key + 1, NULL, 10) * 8 : (size_t)(end - key) * 4;
	return 0;
}

/**
 * vs_foreign_table() - a TCRYPT, BITLK, FVAULT2 or loop-AES mapping's status
 * @name: the mapping.
 * @t: its table's first target, as vs_table_get() read it.
 *
 * For a mapping with libcryptsetup's dm uuid of one of these formats, as
 * cryptsetup's status shows it: t->foreign names the format, t->len is
 * the whole device's, t->offset and t->iv_offset those of the veil target
 * that starts lowest on the device (BitLocker maps several); a multi-key
 * loop-AES key size is that of one key ("aes:64-cbc-lmk"); a TCRYPT
 * cascade's cipher is the chain from the top layer down ("aes-twofish-
 * serpent-xts-plain64"), its key size the sum of the layers', its device
 * and offset the lowest layer's. Any other mapping is left as it is.
 */
void vs_foreign_table(const char *name, struct vs_table *t)
{
	struct vs_dm_target tg[VS_DM_MAX_TARGETS];
	char uuid[VS_DM_UUID_LEN], cipher[128], dev[64], lname[160], *mode, *keys;
	uint64_t iv_offset, offset, min = UINT64_MAX;
	int n, i, read_only;
	const char *type = vs_foreign_uuid_type(t->uuid);
	size_t bits, used;

	if (!type || vs_dm_targets_get(name, tg, VS_DM_MAX_TARGETS, &n, uuid, sizeof(uuid),
				       &read_only))
		return;
	snprintf(t->foreign, sizeof(t->foreign), "%s", type);
	t->len = 0;
	for (i = 0; i < n; i++) {
		t->len += tg[i].len;
		if (!strcmp(tg[i].type, VS_TARGET) &&
		    !veil_fields(tg[i].params, cipher, &bits, dev, &iv_offset, &offset) &&
		    offset < min) {
			min = offset;
			t->offset = offset;
			t->iv_offset = iv_offset;
		}
	}
	vs_dm_targets_free(tg, n);
	/* As libcryptsetup: a multi-key loop-AES key's size is one key's. */
	keys = strchr(t->cipher, ':');
	if (!strcmp(type, CRYPT_LOOPAES) && keys && strtoul(keys + 1, NULL, 10) > 1)
		t->key_bits = t->key_bits / 8 / strtoul(keys + 1, NULL, 10) * 8;
	if (strcmp(type, CRYPT_TCRYPT))
		return;
	mode = strchr(t->cipher, '-');
	if (!mode)
		return;
	snprintf(cipher, sizeof(cipher), "%s", mode);
	*mode = '\0';
	used = strlen(t->cipher);
	for (i = 1; i < MAX_LAYERS; i++) {
		char lcipher[128];

		if (!layer_of(name, i, t->uuid, lname, sizeof(lname)) ||
		    vs_dm_targets_get(lname, tg, VS_DM_MAX_TARGETS, &n, uuid, sizeof(uuid),
				      &read_only))
			break;
		if (!strcmp(tg[0].type, VS_TARGET) &&
		    !veil_fields(tg[0].params, lcipher, &bits, dev, &iv_offset, &offset)) {
			lcipher[strcspn(lcipher, "-")] = '\0';
			used += snprintf(t->cipher + used, sizeof(t->cipher) - used, "-%s",
					 lcipher);
			t->key_bits += bits;
			t->offset = offset;
			vs_dev_path(dev, t->path, sizeof(t->path));
		}
		vs_dm_targets_free(tg, n);
	}
	snprintf(t->cipher + used, sizeof(t->cipher) - used, "%s", cipher);
}

/**
 * vs_foreign_close() - remove the lower layers of a TCRYPT mapping
 * @name: the mapping, just removed.
 * @t: its table, read before.
 *
 * As cryptsetup's close: <name>_1 and <name>_2, if libcryptsetup made them
 * for @name (their dm uuid begins with its).
 *
 * Return: 0, or -EBUSY after a message.
 */
int vs_foreign_close(const char *name, const struct vs_table *t)
{
	return t->foreign[0] ? remove_lower(name, t->uuid) : 0;
}

/* tcryptDump, bitlkDump, fvault2Dump <device>: libcryptsetup's dump. */
int vs_action_foreign_dump(int argc, char **argv)
{
	const struct foreign *f = format_of(opt.type);
	struct crypt_device *cd = NULL;
	int r;

	(void)argc;
	r = vs_foreign_check_options(opt.type) ?: init_device(opt.type, argv[0], &cd);
	if (r)
		return r;
	r = strcmp(opt.type, "tcrypt") ? load_header(cd, f, argv[0]) : tcrypt_load(cd, argv[0]);
	if (r >= 0)
		r = crypt_dump(cd);
	crypt_free(cd);
	return r < 0 ? r : 0;
}
