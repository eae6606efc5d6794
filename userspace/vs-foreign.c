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
 * loop-AES key), so libcryptsetup activates the volume with dm-crypt,
 * private to udev, the keys in the tables, and veilsetup reads each
 * device's table and loads it again in place (reload and resume: the
 * device stays, with libcryptsetup's name and dm uuid), every crypt
 * target a veil target with the same fields (the key through the thread
 * keyring), the other targets (BitLocker's zero segments) as they are.
 * (vs-integrity.c takes the table of LUKS2 with integrity the same way,
 * but removes the crypt device and creates a veil one with veilsetup's
 * dm uuid.) A TCRYPT cascade is a stack of devices, <name> over <name>_1
 * over <name>_2, each found from the table of the one above: each layer
 * is swapped, the lowest first. Only TCRYPT has layers.
 */
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
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

/* loop-AES's keys come from a key file only. */
static int check_key_file(const char *type)
{
	if (!strcmp(type, "loopaes") && !opt.key_file) {
		fprintf(stderr, "Option --key-file is required.\n");
		return -EINVAL;
	}
	return 0;
}

/* libcryptsetup's context for @device (--header holds a TCRYPT header). */
static int init_device(const char *type, const char *device, struct crypt_device **cd)
{
	return vs_crypt_init(!strcmp(type, "tcrypt") ? opt.header : NULL, device, cd);
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

/* The flags of libcryptsetup's activation: hidden from udev until veil is in. */
static uint32_t activation_flags(void)
{
	return opt.perf_flags | CRYPT_ACTIVATE_PRIVATE |
	       (opt.allow_discards ? CRYPT_ACTIVATE_ALLOW_DISCARDS : 0) |
	       (opt.read_only ? CRYPT_ACTIVATE_READONLY : 0);
}

/*
 * The layers of a TCRYPT mapping, top down: [0] the mapping, [i] <name>_<i>.
 * libcryptsetup names them so and gives layer i the dm uuid of the top
 * with "_<i>" (CRYPT-TCRYPT-<name>_<i>).
 */
struct stack {
	int n;				/* layers, the top included */
	char name[MAX_LAYERS][160];
};

/* Layer @i of @name: its name into @lname, the uuid it must have into @luuid. */
static void layer_ids(const char *name, const char *top_uuid, int i, char *lname,
		      size_t nlen, char *luuid, size_t ulen)
{
	snprintf(lname, nlen, "%s_%d", name, i);
	snprintf(luuid, ulen, "%s_%d", top_uuid, i);
}

/* The first target of @name: its type (32 bytes) and fields. */
static int read_fields(const char *name, char *type, struct vs_target_fields *c)
{
	char *params = crypt_safe_alloc(VS_TABLE_MAX);
	uint64_t len;
	int r;

	if (!params)
		return -ENOMEM;
	r = vs_dm_get(name, 0, type, 32, params, VS_TABLE_MAX, &len, NULL, 0, NULL, NULL) ?:
	    vs_table_split(params, c);
	crypt_safe_free(params);
	return r;
}

/*
 * Whether c->dev ("major:minor", mapped by layer @i - 1 of TCRYPT mapping
 * @name, dm uuid @top_uuid) is layer @i: named <name>_<i>, with the uuid
 * libcryptsetup gives that layer. Its name goes to @lname, its first
 * target's type to @type (32 bytes) and its fields to @c (c->dev "" if
 * unknown).
 */
static int next_layer(const char *name, const char *top_uuid, int i,
		      struct vs_target_fields *c, char *type, char *lname, size_t len)
{
	char want[VS_DM_UUID_LEN + 8], got[VS_DM_UUID_LEN], got_name[160];

	layer_ids(name, top_uuid, i, lname, len, want, sizeof(want));
	if (!c->dev[0] || vs_dm_sysfs(c->dev, "name", got_name, sizeof(got_name)) ||
	    strcmp(got_name, lname) || vs_dm_sysfs(c->dev, "uuid", got, sizeof(got)) ||
	    strcmp(got, want))
		return 0;
	if (read_fields(lname, type, c)) {
		type[0] = '\0';
		c->dev[0] = '\0';
	}
	return 1;
}

/*
 * The stack of TCRYPT mapping @name, just activated: the layers below it
 * as its table and theirs lead, each made by this activation (not mapped
 * before it: !@existed[i]).
 */
static void stack_of(const char *name, const int *existed, struct stack *s)
{
	struct vs_target_fields *c = crypt_safe_alloc(sizeof(*c));
	char top_uuid[VS_DM_UUID_LEN], type[32];

	s->n = 1;
	snprintf(s->name[0], sizeof(s->name[0]), "%s", name);
	if (c && !vs_dm_uuid(name, top_uuid, sizeof(top_uuid)) && !read_fields(name, type, c))
		while (s->n < MAX_LAYERS && !existed[s->n] &&
		       next_layer(name, top_uuid, s->n, c, type, s->name[s->n],
				  sizeof(s->name[s->n])))
			s->n++;
	crypt_safe_free(c);
}

/*
 * After a failed TCRYPT activation of @name: libcryptsetup 2.6 stops at the
 * first error and leaves the lower layers it made, with dm-crypt and its
 * keys. They are removed, upper first: a <name>_<i> with the dm uuid
 * libcryptsetup gives it (CRYPT-TCRYPT-<name>_<i>: a TCRYPT volume has no
 * uuid of its own) that was not mapped before (!@existed[i]).
 */
static int remove_made(const char *name, const int *existed)
{
	char top_uuid[VS_DM_UUID_LEN], want[VS_DM_UUID_LEN + 8], uuid[VS_DM_UUID_LEN];
	char lname[160];
	int i;

	snprintf(top_uuid, sizeof(top_uuid), CRYPT_UUID_PREFIX CRYPT_TCRYPT "-%s", name);
	for (i = 1; i < MAX_LAYERS; i++) {
		layer_ids(name, top_uuid, i, lname, sizeof(lname), want, sizeof(want));
		if (existed[i] || vs_dm_uuid(lname, uuid, sizeof(uuid)) || strcmp(uuid, want))
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
	struct vs_target_fields *c = crypt_safe_alloc(sizeof(*c));
	char *field = NULL, *table = NULL, words[sizeof(c->words) + sizeof(opt.features)];
	struct vs_map m = { 0 };
	int r = -ENOMEM;

	if (!c)
		return r;
	r = vs_table_split(tg->params, c) ?: vs_key_from_hex(c->key, &m);
	if (r)
		goto out;
	snprintf(m.cipher, sizeof(m.cipher), "%s", c->cipher);
	m.device = c->dev;
	m.offset = c->offset;
	m.iv_offset = c->iv_offset;
	snprintf(words, sizeof(words), "%s%s", c->words, opt.features);
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
	crypt_safe_free(c);
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
	if (!r) {
		r = vs_dm_targets_swap(lname, tg, n, read_only, private_dev);
		if (r == -EINVAL)
			vs_dm_create_failed(lname);
	}
	for (i = 0; i < VS_DM_MAX_TARGETS; i++)
		vs_keyring_drop(key_ids[i]);
	vs_dm_targets_free(tg, n);
	return r;
}

/*
 * libcryptsetup's activation of @name returned @r: if it mapped it, each
 * of its devices goes from dm-crypt to veil, the lowest first, and on an
 * error all of them are removed; if not, the layers a TCRYPT activation
 * left are. @existed: for TCRYPT, whether <name>_1 and <name>_2 were
 * mapped before the activation; NULL for the other formats.
 *
 * Return: 0, @r, the swap's error, or -EBUSY when a device to remove
 * stays in use (the rest are left too, for veilsetup close).
 */
static int swap_stack(const char *name, int r, const int *existed)
{
	struct stack s = { .n = 1 };
	int i;

	vs_dm_log_default();
	if (!name)
		return r;
	if (r < 0)
		return existed && remove_made(name, existed) ? -EBUSY : r;
	if (existed)
		stack_of(name, existed, &s);
	else
		snprintf(s.name[0], sizeof(s.name[0]), "%s", name);
	for (i = s.n - 1; !r && i >= 0; i--)
		r = swap_layer(s.name[i], i > 0);
	if (!r)
		return 0;
	for (i = 0; i < s.n; i++) {
		if (vs_dm_remove(s.name[i])) {
			fprintf(stderr, "Cannot map %s with veil, and device %s is still in use: close it with veilsetup close %s.\n",
				name, s.name[i], s.name[i]);
			return -EBUSY;
		}
	}
	fprintf(stderr, "Cannot map %s with veil: the devices libcryptsetup made for it are removed.\n",
		name);
	return r;
}

/* Whether <name>_1 and <name>_2, a TCRYPT cascade's layer names, are mapped. */
static void layers_existing(const char *name, int *existed)
{
	char lname[160];
	int i;

	existed[0] = 1;
	for (i = 1; i < MAX_LAYERS; i++) {
		snprintf(lname, sizeof(lname), "%s_%d", name, i);
		existed[i] = vs_dm_exists(lname);
	}
}

/*
 * libcryptsetup's message when a BITLK passphrase gives no volume key,
 * which cryptsetup's bitlkOpen (activation by passphrase) never prints:
 * veilsetup prints cryptsetup's "No key available with this passphrase."
 */
#define BITLK_NO_KEY_MSG	"Cannot retrieve volume key for BITLK device.\n"

static void bitlk_key_log(int level, const char *msg, void *usrptr)
{
	if (level != CRYPT_LOG_ERROR || strcmp(msg, BITLK_NO_KEY_MSG))
		vs_log(level, msg, usrptr);
}

/*
 * The volume key of BITLK device @cd from passphrase @pass into @key
 * (crypt_safe_alloc(), *@key_size bytes): the slow key derivation, with
 * termination not held.
 */
static int bitlk_volume_key(struct crypt_device *cd, const char *pass, size_t len,
			    char **key, size_t *key_size)
{
	int r;

	*key_size = crypt_get_volume_key_size(cd);
	*key = crypt_safe_alloc(*key_size ?: 1);
	if (!*key)
		return -ENOMEM;
	crypt_set_log_callback(cd, bitlk_key_log, NULL);
	r = crypt_volume_key_get(cd, CRYPT_ANY_SLOT, *key, key_size, pass, len);
	crypt_set_log_callback(cd, NULL, NULL);
	return r < 0 ? r : 0;
}

/*
 * --volume-key-file for a BITLK or FVAULT2 device, as cryptsetup: the key
 * (of the header's size, or --key-size) activated by libcryptsetup, which
 * checks it (and in 2.6 activates FVAULT2 by passphrase only: its error);
 * with no name (--test-passphrase) it is only checked.
 */
static int unlock_by_key_file(struct crypt_device *cd, const char *name)
{
	size_t key_size = crypt_get_volume_key_size(cd);
	char *key = NULL;
	sigset_t old;
	int r;

	if (!key_size && !opt.key_bits) {
		fprintf(stderr, "Cannot determine volume key size for %s, please use --key-size option.\n",
			crypt_get_type(cd));
		return -EINVAL;
	}
	/* libcryptsetup 2.6.1 crashes checking a BITLK volume key unmapped. */
	if (!name && !strcmp(crypt_get_type(cd), CRYPT_BITLK)) {
		fprintf(stderr, "veilsetup: Option --volume-key-file with --test-passphrase is not supported for BITLK devices.\n");
		return -EINVAL;
	}
	key_size = key_size ?: (size_t)opt.key_bits / 8;
	r = vs_read_volume_key(opt.volume_key_file, key_size, &key);
	if (r)
		return r;
	vs_signals_hold(&old);
	r = crypt_activate_by_volume_key(cd, name, key, key_size, name ? activation_flags() : 0);
	crypt_safe_free(key);
	r = swap_stack(name, r, NULL);
	vs_signals_release(&old);
	return r < 0 ? r : 0;
}

/*
 * The passphrase of a BITLK or FVAULT2 device, checked by libcryptsetup,
 * up to --tries times on a terminal: with no name, as cryptsetup's
 * --test-passphrase; with @name, the volume is mapped as @name. A BITLK
 * volume key is derived before termination is held, then activated;
 * libcryptsetup 2.6 activates FVAULT2 by passphrase only, so there the
 * key derivation runs held.
 */
static int unlock(struct crypt_device *cd, const char *device, const char *name)
{
	int tries = vs_tries_tty(), r;
	int by_key = name && !strcmp(crypt_get_type(cd), CRYPT_BITLK) &&
		     crypt_get_volume_key_size(cd) > 0;
	char prompt[300], *pass, *key = NULL;
	size_t len, key_size = 0;
	sigset_t old;

	if (opt.volume_key_file)
		return unlock_by_key_file(cd, name);
	snprintf(prompt, sizeof(prompt), "Enter passphrase for %s: ", device);
	do {
		r = vs_read_passphrase(cd, prompt, opt.key_file, opt.keyfile_offset,
				       opt.keyfile_size, VS_PASS_EMPTY_OK, &pass, &len);
		if (r < 0)
			return r;
		if (by_key)
			r = bitlk_volume_key(cd, pass, len, &key, &key_size);
		vs_signals_hold(&old);
		if (by_key && !r)
			r = crypt_activate_by_volume_key(cd, name, key, key_size,
							 activation_flags());
		else if (!by_key)
			r = crypt_activate_by_passphrase(cd, name, CRYPT_ANY_SLOT, pass, len,
							 name ? activation_flags() : 0);
		crypt_safe_free(pass);
		crypt_safe_free(key);
		key = NULL;
		r = swap_stack(name, r, NULL);
		vs_signals_release(&old);
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
 * its devices is loaded again with veil in place of dm-crypt.
 * Termination waits (vs_signals_hold()) from the activation to the end of
 * the swap.
 *
 * Return: 0, or a negative errno after a message; on an error nothing
 * this call made is left mapped, unless a device stays in use (-EBUSY,
 * named in the message).
 */
int vs_foreign_open(const char *type, const char *device, const char *name)
{
	const struct foreign *f = format_of(type);
	const char *key_file = opt.key_file;
	struct crypt_device *cd = NULL;
	int existed[MAX_LAYERS];
	sigset_t old;
	int r;

	if (opt.test_passphrase)
		name = NULL;
	r = check_key_file(type) ?: init_device(type, device, &cd);
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
		vs_signals_hold(&old);
		layers_existing(name, existed);
		r = crypt_activate_by_volume_key(cd, name, NULL, 0, activation_flags());
		r = swap_stack(name, r, existed);
		vs_signals_release(&old);
	} else if (!strcmp(type, "loopaes")) {
		/* As cryptsetup: libcryptsetup reads standard input as a file. */
		if (!strcmp(key_file, "-"))
			key_file = "/dev/stdin";
		vs_signals_hold(&old);
		r = crypt_activate_by_keyfile_device_offset(cd, name, CRYPT_ANY_SLOT, key_file,
							    opt.keyfile_size, opt.keyfile_offset,
							    activation_flags());
		r = swap_stack(name, r, NULL);
		vs_signals_release(&old);
	} else {
		r = unlock(cd, device, name);
	}
out:
	crypt_free(cd);
	return r < 0 ? r : 0;
}

/*
 * Remove temporary device @tmp, if made (@made), and end it
 * (vs_dm_temp_end()); @r: the result so far, kept unless 0 and the device
 * stays.
 */
static int temp_remove(struct vs_temp *tmp, int made, int r)
{
	if (made && vs_dm_remove(tmp->name)) {
		vs_dm_temp_remove_failed(tmp);
		r = r ?: -EBUSY;
	}
	vs_dm_temp_end(tmp);
	return r;
}

/*
 * --key-file (with --keyfile-offset and --keyfile-size) read now, before
 * termination is held, and left in a pipe (kernel memory, never swapped)
 * for libcryptsetup to read back as a file: *@pipe_path names it, *@fd
 * is its read end, to close after. A key file on standard input or a slow
 * device may keep the read waiting, and SIGINT must still end it.
 */
static int key_file_pipe(char *pipe_path, size_t len, int *fd)
{
	const char *key_file = strcmp(opt.key_file, "-") ? opt.key_file : NULL;
	int fds[2] = { -1, -1 }, r;
	size_t kf_size = 0, done = 0;
	char *kf = NULL;
	ssize_t w;

	*fd = -1;
	/* libcryptsetup's messages, as when it reads the file itself */
	r = crypt_keyfile_device_read(NULL, key_file, &kf, &kf_size, opt.keyfile_offset,
				      opt.keyfile_size, 0);
	if (r < 0)
		return r;
	/*
	 * A loop-AES key file is 65 lines at most, a few KiB: one that a
	 * pipe cannot hold whole (64 KiB) is none, as libcryptsetup would say.
	 */
	if (kf_size > 1 << 16) {
		fprintf(stderr, "Incompatible loop-AES keyfile detected.\n");
		r = -EINVAL;
		goto out;
	}
	if (pipe2(fds, O_CLOEXEC)) {
		r = -errno;
		fprintf(stderr, "Cannot pass key file %s on: %s.\n", opt.key_file, strerror(-r));
		goto out;
	}
	for (; done < kf_size; done += w) {
		w = write(fds[1], kf + done, kf_size - done);
		if (w < 0 && errno == EINTR) {
			w = 0;
			continue;
		}
		if (w <= 0) {
			r = -EIO;
			fprintf(stderr, "Cannot pass key file %s on: %s.\n", opt.key_file,
				strerror(EIO));
			goto out;
		}
	}
	snprintf(pipe_path, len, "/proc/self/fd/%d", fds[0]);
	*fd = fds[0];
	fds[0] = -1;
out:
	if (fds[0] >= 0)
		close(fds[0]);
	if (fds[1] >= 0)
		close(fds[1]);
	crypt_safe_free(kf);
	return r < 0 ? r : 0;
}

/**
 * vs_foreign_volume_key() - the keys of a loop-AES mapping, for a new table
 * @name: the mapping.
 * @t: its table (vs_table_get()).
 * @m: m->key (crypt_safe_alloc(), the caller frees it) and m->key_size.
 *
 * From --key-file (with --keyfile-offset, --keyfile-size, --hash; the
 * cipher, key size and offsets are the mapping's), as libcryptsetup makes
 * them: its public API gives loop-AES keys only in a table, so
 * libcryptsetup maps the volume with dm-crypt, read-only and hidden from
 * udev, and the keys come from that table, as at open. It maps a
 * temporary linear device over @t's device, which the mapping holds
 * (libcryptsetup wants it exclusively). Both temporary devices are
 * removed before the keys are used. A key file whose keys make another
 * cipher spec than the mapping's (one key for a 64-key volume) is
 * refused with the message of libcryptsetup's refresh; loop-AES has no
 * header, so the caller checks the keys against the mapping's data.
 *
 * Return: 0, or a negative errno after a message; -ENOTSUP for a mapping
 * of another format.
 */
int vs_foreign_volume_key(const char *name, const struct vs_table *t, struct vs_map *m)
{
	struct crypt_params_loopaes p = {
		.hash = opt.hash, .offset = t->offset, .skip = t->iv_offset,
	};
	struct vs_target_fields *c;
	struct crypt_device *cd = NULL;
	struct vs_temp lin, tmp;
	int r, lin_made = 0, tmp_made = 0, key_fd = -1;
	char cipher[64], type[32], key_file[64];

	if (strcmp(t->foreign, CRYPT_LOOPAES))
		return -ENOTSUP;
	c = crypt_safe_alloc(sizeof(*c));
	if (!c)
		return -ENOMEM;
	r = check_key_file("loopaes") ?: key_file_pipe(key_file, sizeof(key_file), &key_fd) ?:
	    vs_dm_temp_begin(&lin);
	if (r)
		goto out_free;
	r = vs_dm_create_linear(&lin, t->dev, vs_device_sectors(t->path));
	lin_made = !r;
	if (r)
		fprintf(stderr, "Cannot create temporary device %s.\n", lin.path);
	if (!r)
		r = vs_crypt_init(NULL, lin.path, &cd);
	if (r)
		goto out_lin;
	/* The keys go into the dm-crypt table, and from there to veil's. */
	crypt_volume_key_keyring(cd, 0);
	snprintf(cipher, sizeof(cipher), "%.*s", (int)strcspn(t->cipher, ":-"), t->cipher);
	r = crypt_format(cd, CRYPT_LOOPAES, cipher, NULL, NULL, NULL, t->key_bits / 8, &p) ?:
	    vs_dm_temp_begin(&tmp);
	if (r)
		goto out_lin;
	/* The key file as read before, offset and size applied. */
	r = crypt_activate_by_keyfile_device_offset(cd, tmp.name, CRYPT_ANY_SLOT, key_file,
						    0, 0,
						    CRYPT_ACTIVATE_PRIVATE | CRYPT_ACTIVATE_READONLY);
	vs_dm_log_default();
	tmp_made = r >= 0;
	if (tmp_made)
		r = read_fields(tmp.name, type, c);
	r = temp_remove(&tmp, tmp_made, r);
	if (!r && strcmp(c->cipher, t->cipher)) {
		fprintf(stderr, "Mismatching parameters on device %s.\n", name);
		r = -EINVAL;
	}
	if (!r)
		r = vs_key_from_hex(c->key, m);
out_lin:
	crypt_free(cd);
	r = temp_remove(&lin, lin_made, r);
out_free:
	if (key_fd >= 0)
		close(key_fd);
	crypt_safe_free(c);
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
	struct vs_target_fields *c = crypt_safe_alloc(sizeof(*c));
	char uuid[VS_DM_UUID_LEN], mode[128], lname[160], type[32], *dash, *keys;
	uint64_t min = UINT64_MAX;
	int n, i, read_only;
	const char *format = vs_foreign_uuid_type(t->uuid);
	size_t used;

	if (!c || !format ||
	    vs_dm_targets_get(name, tg, VS_DM_MAX_TARGETS, &n, uuid, sizeof(uuid), &read_only))
		goto out;
	snprintf(t->foreign, sizeof(t->foreign), "%s", format);
	t->len = 0;
	for (i = 0; i < n; i++) {
		t->len += tg[i].len;
		if (!strcmp(tg[i].type, VS_TARGET) && !vs_table_split(tg[i].params, c) &&
		    c->offset < min) {
			min = c->offset;
			t->offset = c->offset;
			t->iv_offset = c->iv_offset;
		}
	}
	vs_dm_targets_free(tg, n);
	/* As libcryptsetup: a multi-key loop-AES key's size is one key's. */
	keys = strchr(t->cipher, ':');
	if (!strcmp(format, CRYPT_LOOPAES) && keys && strtoul(keys + 1, NULL, 10) > 1)
		t->key_bits = t->key_bits / 8 / strtoul(keys + 1, NULL, 10) * 8;
	dash = strchr(t->cipher, '-');
	if (strcmp(format, CRYPT_TCRYPT) || !dash)
		goto out;
	snprintf(mode, sizeof(mode), "%s", dash);
	*dash = '\0';
	used = strlen(t->cipher);
	snprintf(c->dev, sizeof(c->dev), "%s", t->dev);
	for (i = 1; i < MAX_LAYERS && next_layer(name, t->uuid, i, c, type, lname, sizeof(lname));
	     i++) {
		if (strcmp(type, VS_TARGET))
			continue;
		c->cipher[strcspn(c->cipher, "-")] = '\0';
		used += snprintf(t->cipher + used, sizeof(t->cipher) - used, "-%s", c->cipher);
		t->key_bits += vs_key_bits(c->key);
		t->offset = c->offset;
		vs_dev_path(c->dev, t->path, sizeof(t->path));
	}
	snprintf(t->cipher + used, sizeof(t->cipher) - used, "%s", mode);
out:
	crypt_safe_free(c);
}

/**
 * vs_foreign_close() - remove the lower layers of a TCRYPT mapping
 * @name: the mapping, just removed.
 * @t: its table, read before.
 * @deferred: close --deferred: each layer goes once the one above is gone.
 *
 * As cryptsetup's close: <name>_1, then <name>_2, each if the layer above
 * maps it and it has the dm uuid libcryptsetup gives that layer of @name.
 * The other formats have no layers.
 *
 * Return: 0, or -EBUSY after a message.
 */
int vs_foreign_close(const char *name, const struct vs_table *t, int deferred)
{
	struct vs_target_fields *c;
	char lname[160], type[32];
	int i, r = 0;

	if (strcmp(t->foreign, CRYPT_TCRYPT))
		return 0;
	c = crypt_safe_alloc(sizeof(*c));
	if (!c)
		return -ENOMEM;
	snprintf(c->dev, sizeof(c->dev), "%s", t->dev);
	for (i = 1; !r && i < MAX_LAYERS &&
	     next_layer(name, t->uuid, i, c, type, lname, sizeof(lname)); i++) {
		if (deferred ? vs_dm_remove_deferred(lname) : vs_dm_remove(lname)) {
			fprintf(stderr, "Device %s is still in use.\n", lname);
			r = -EBUSY;
		}
	}
	crypt_safe_free(c);
	return r;
}

/*
 * tcryptDump, bitlkDump, fvault2Dump --dump-volume-key, as cryptsetup's:
 * a YES first; a TCRYPT key comes with the header the passphrase opened,
 * a BITLK or FVAULT2 one takes a passphrase (--key-file or asked). The
 * key is printed in hex or, not for TCRYPT, written to --volume-key-file.
 */
static int dump_volume_key(struct crypt_device *cd, const char *device)
{
	int tcrypt = !strcmp(crypt_get_type(cd), CRYPT_TCRYPT);
	int bitlk = !strcmp(crypt_get_type(cd), CRYPT_BITLK);
	size_t key_size = crypt_get_volume_key_size(cd), len = 0;
	char *key = NULL, *pass = NULL, prompt[300];
	int r;

	if (vs_confirm(tcrypt ? "Header dump with volume key is sensitive information\n"
			 "which allows access to encrypted partition without passphrase.\n"
			 "This dump should be always stored encrypted on safe place." :
			 "The header dump with volume key is sensitive information\n"
			 "that allows access to encrypted partition without a passphrase.\n"
			 "This dump should be stored encrypted in a safe place.", NULL))
		return -EPERM;
	key = crypt_safe_alloc(key_size ?: 1);
	if (!key)
		return -ENOMEM;
	if (!tcrypt) {
		snprintf(prompt, sizeof(prompt), "Enter passphrase for %s: ", device);
		r = vs_read_passphrase(cd, prompt, opt.key_file, opt.keyfile_offset,
				       opt.keyfile_size, VS_PASS_EMPTY_OK, &pass, &len);
		if (r < 0)
			goto out;
	}
	/* TCRYPT's key comes with its header: no messages, no key file. */
	r = tcrypt ? crypt_volume_key_get(cd, CRYPT_ANY_SLOT, key, &key_size, NULL, 0) :
		     vs_volume_key_get(cd, key, &key_size, pass, len);
	if (r < 0)
		goto out;
	if (tcrypt || bitlk) {
		printf("%s header information for %s\n", crypt_get_type(cd),
		       crypt_get_device_name(cd));
		printf(tcrypt ? "Cipher chain:  \t%s\n" : "Cipher name:   \t%s\n",
		       crypt_get_cipher(cd));
		printf("Cipher mode:   \t%s\n", crypt_get_cipher_mode(cd));
		if (tcrypt)
			printf("Payload offset:\t%d\n", (int)crypt_get_data_offset(cd));
		else
			printf("UUID:          \t%s\n", crypt_get_uuid(cd));
		r = vs_print_mk(key, key_size, bitlk ? opt.volume_key_file : NULL);
	} else {
		r = crypt_dump(cd);
		if (r < 0)
			goto out;
		printf("Volume key:       \t");
		r = vs_print_key_hex(key, key_size, 0);
	}
out:
	crypt_safe_free(pass);
	crypt_safe_free(key);
	return r < 0 ? r : 0;
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
		r = opt.dump_volume_key ? dump_volume_key(cd, argv[0]) : crypt_dump(cd);
	crypt_free(cd);
	return r < 0 ? r : 0;
}
