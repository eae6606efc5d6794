// SPDX-License-Identifier: GPL-2.0
/*
 * veilsetup and LUKS2 tokens, as cryptsetup 2.6: the volume key through a
 * header's tokens (the builtin luks2-keyring one, or a plugin's such as
 * systemd's TPM2, FIDO2 and PKCS#11 ones), and the token action that adds,
 * removes, imports, exports and unassigns them. Everything about tokens is
 * libcryptsetup's: their JSON, their plugins and which keyslot a token
 * opens. Unlike cryptsetup, veilsetup never lets libcryptsetup activate the
 * volume by token: it takes the volume key through a keyslot context and
 * maps it with the veil target as it maps a passphrase's.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>
#include <libcryptsetup.h>

#include "veilsetup.h"

/* cryptsetup's limit for a token's JSON (src/utils_luks.c). */
#define VS_TOKEN_JSON_MAX	0x400000

/* cryptsetup's -v line after a keyslot opened (tools_keyslot_msg()). */
static void keyslot_msg(int keyslot)
{
	if (keyslot >= 0 && opt.verbose)
		printf("Key slot %i unlocked.\n", keyslot);
}

/*
 * cryptsetup's -v lines after no token gave the key (tools_token_error_msg()):
 * @error from libcryptsetup, @pin_given after a PIN, for the tokens @token
 * (or any) of @type (or any).
 */
static void token_msg(int error, int pin_given, int token, const char *type)
{
	if (error >= 0 || !opt.verbose)
		return;
	if (error == -ENOANO) {
		if (pin_given)
			printf("No token could be unlocked with this PIN.\n");
		else if (token != CRYPT_ANY_TOKEN)
			printf("Token %i requires PIN.\n", token);
		else if (type)
			printf("Token (type %s) requires PIN.\n", type);
	} else if (error == -EPERM) {
		if (token != CRYPT_ANY_TOKEN)
			printf("Token %i cannot unlock assigned keyslot(s) (wrong keyslot passphrase).\n",
			       token);
		else if (type)
			printf("Token (type %s) cannot unlock assigned keyslot(s) (wrong keyslot passphrase).\n",
			       type);
	} else if (error == -EAGAIN) {
		if (token != CRYPT_ANY_TOKEN)
			printf("Token %i requires additional missing resource.\n", token);
		else if (type)
			printf("Token (type %s) requires additional missing resource.\n", type);
	} else if (error == -ENOENT) {
		if (type)
			printf("No usable token (type %s) is available.\n", type);
		else
			printf("No usable token is available.\n");
	}
}

/* token_msg() for the tokens --token-id and --token-type name. */
static void token_error_msg(int error, int pin_given)
{
	token_msg(error, pin_given, opt.token_id, opt.token_type);
}

/*
 * The volume key from the token --token-id names (or any, in libcryptsetup's
 * order) of type --token-type (or any), given @pin if not NULL: the keyslot
 * it opened, or libcryptsetup's error: -ENOENT no usable token, -EPERM its
 * secret opens no keyslot, -EAGAIN its device is missing, -ENOANO it needs
 * a PIN or this one is wrong.
 */
static int token_key(struct crypt_device *cd, const char *pin, size_t pin_len, char *key,
		     size_t *key_size)
{
	struct crypt_keyslot_context *kc = NULL;
	int r;

	r = crypt_keyslot_context_init_by_token(cd, opt.token_id, opt.token_type, pin, pin_len,
						NULL, &kc);
	if (r < 0)
		return r;
	r = crypt_volume_key_get_by_keyslot_context(cd, CRYPT_ANY_SLOT, key, key_size, kc);
	crypt_keyslot_context_free(kc);
	return r;
}

/*
 * cryptsetup's PIN of token @token (or any): a terminal without echo, else
 * a line of standard input.
 */
static int read_pin(struct crypt_device *cd, int token, char **pin, size_t *pin_len)
{
	char prompt[64];

	if (token == CRYPT_ANY_TOKEN)
		snprintf(prompt, sizeof(prompt), "Enter token PIN: ");
	else
		snprintf(prompt, sizeof(prompt), "Enter token %d PIN: ", token);
	return vs_read_passphrase(cd, prompt, NULL, 0, 0, 0, pin, pin_len);
}

/* cryptsetup's _try_token_pin_unlock(): the PIN asked up to @tries times. */
static int token_pin_unlock(struct crypt_device *cd, char *key, size_t *key_size, int tries)
{
	char *pin = NULL;
	size_t pin_len = 0;
	int r;

	do {
		r = read_pin(cd, opt.token_id, &pin, &pin_len);
		if (r < 0)
			break;
		r = token_key(cd, pin, pin_len, key, key_size);
		crypt_safe_free(pin);
		pin = NULL;
		keyslot_msg(r);
		token_error_msg(r, 1);
	} while (r == -ENOANO && --tries > 0);
	return r;
}

/**
 * vs_token_preferred() - whether the command line prefers tokens
 *
 * cryptsetup's test before it asks for a token's PIN, and before luksAddKey
 * opens the old keyslot by token: --token-only, --token-id or --token-type.
 *
 * Return: 1 if so, else 0.
 */
int vs_token_preferred(void)
{
	return opt.token_only || opt.token_type || opt.token_id != CRYPT_ANY_TOKEN;
}

/**
 * vs_token_volume_key() - the volume key of a LUKS2 header through its tokens
 * @cd: the loaded header.
 * @key: room for the volume key (crypt_get_volume_key_size() bytes).
 * @key_size: its size; on success the key's.
 * @pin_tries: how often a PIN may be asked.
 *
 * As cryptsetup 2.6 before it asks for a passphrase (open, luksResume,
 * resize): the tokens --token-id and --token-type allow are tried without
 * a PIN; when one needs a PIN, it is asked for only if the command line
 * prefers tokens (vs_token_preferred()). The messages
 * are cryptsetup's, with --verbose only. A LUKS1 header has no tokens:
 * -EINVAL without a message, as libcryptsetup's token calls.
 *
 * Return: the keyslot the token opened, or a negative errno; the caller
 * asks for a passphrase next unless --token-only.
 */
int vs_token_volume_key(struct crypt_device *cd, char *key, size_t *key_size, int pin_tries)
{
	int r;

	if (strcmp(crypt_get_type(cd) ?: "", CRYPT_LUKS2))
		return -EINVAL;
	r = token_key(cd, NULL, 0, key, key_size);
	keyslot_msg(r);
	token_error_msg(r, 0);
	if (r == -ENOANO && vs_token_preferred())
		r = token_pin_unlock(cd, key, key_size, pin_tries);
	return r;
}

/*
 * One try of cryptsetup's try_keyslot_add(): the new keyslot, or an error
 * after the -v lines of a token context that failed; @pin_old, @pin_new:
 * whether a PIN was given to @kc, @kc_new.
 */
static int add_by_context(struct crypt_device *cd, int slot_old,
			  struct crypt_keyslot_context *kc, int slot_new,
			  struct crypt_keyslot_context *kc_new, int pin_old, int pin_new)
{
	int r = crypt_keyslot_add_by_keyslot_context(cd, slot_old, kc, slot_new, kc_new, 0);

	if (crypt_keyslot_context_get_type(kc) == CRYPT_KC_TYPE_TOKEN)
		token_error_msg(crypt_keyslot_context_get_error(kc), pin_old);
	if (crypt_keyslot_context_get_type(kc_new) == CRYPT_KC_TYPE_TOKEN)
		token_msg(crypt_keyslot_context_get_error(kc_new), pin_new, opt.new_token_id,
			  NULL);
	return r;
}

/* A token context that needs a PIN gets one (read_pin()) for @token. */
static int set_pin(struct crypt_device *cd, struct crypt_keyslot_context *kc, int token,
		   char **pin)
{
	size_t pin_len = 0;

	return read_pin(cd, token, pin, &pin_len) ?:
	       crypt_keyslot_context_set_pin(cd, *pin, pin_len, kc);
}

/**
 * vs_token_add_key() - luksAddKey's new keyslot through keyslot contexts
 * @cd: the loaded header.
 * @slot_old: the keyslot @kc opens, or CRYPT_ANY_SLOT.
 * @kc: what opens it: a passphrase, a volume key or a LUKS2 token.
 * @slot_new: the new keyslot, or CRYPT_ANY_SLOT for the first free one.
 * @kc_new: its passphrase: a passphrase, or a token (--new-token-id).
 *
 * As cryptsetup 2.6's luksAddKey: when a token context needs a PIN, the
 * PIN is asked once (the old token's first, then the new one's) and the
 * add tried again.
 *
 * Return: the new keyslot, or a negative errno.
 */
int vs_token_add_key(struct crypt_device *cd, int slot_old, struct crypt_keyslot_context *kc,
		     int slot_new, struct crypt_keyslot_context *kc_new)
{
	char *pin = NULL, *pin_new = NULL;
	int r;

	r = add_by_context(cd, slot_old, kc, slot_new, kc_new, 0, 0);
	if (r == -ENOANO && crypt_keyslot_context_get_error(kc) == -ENOANO) {
		r = set_pin(cd, kc, opt.token_id, &pin) ?:
		    add_by_context(cd, slot_old, kc, slot_new, kc_new, 1, 0);
	}
	if (r == -ENOANO && crypt_keyslot_context_get_error(kc_new) == -ENOANO) {
		r = set_pin(cd, kc_new, opt.new_token_id, &pin_new) ?:
		    add_by_context(cd, slot_old, kc, slot_new, kc_new, pin != NULL, 1);
	}
	crypt_safe_free(pin);
	crypt_safe_free(pin_new);
	return r;
}

/*
 * cryptsetup's check of the --token-id an add or import may write to:
 * free, or in use and --token-replace given.
 */
static int token_id_free(struct crypt_device *cd)
{
	crypt_token_info ti;

	if (opt.token_id == CRYPT_ANY_TOKEN)
		return 0;
	ti = crypt_token_status(cd, opt.token_id, NULL);
	if (ti < CRYPT_TOKEN_INACTIVE) {
		fprintf(stderr, "Token %d is invalid.\n", opt.token_id);
		return -EINVAL;
	}
	if (ti > CRYPT_TOKEN_INACTIVE && !opt.token_replace) {
		fprintf(stderr, "Token %d in use.\n", opt.token_id);
		return -EINVAL;
	}
	return 0;
}

static int key_slot_active(struct crypt_device *cd)
{
	if (crypt_keyslot_status(cd, opt.key_slot) != CRYPT_SLOT_INACTIVE)
		return 0;
	fprintf(stderr, "Keyslot %d is not active.\n", opt.key_slot);
	return -EINVAL;
}

/* Assign new token @token to --key-slot (any: all), or remove it again. */
static int assign_new(struct crypt_device *cd, int token)
{
	int r = crypt_token_assign_keyslot(cd, token, opt.key_slot);

	if (r >= 0)
		return token;
	fprintf(stderr, "Failed to assign token %d to keyslot %d.\n", token, opt.key_slot);
	crypt_token_json_set(cd, token, NULL);
	return r;
}

/* token add: a luks2-keyring token, the only type cryptsetup adds. */
static int token_add(struct crypt_device *cd)
{
	const struct crypt_token_params_luks2_keyring params = {
		.key_description = opt.key_description,
	};
	int r;

	r = token_id_free(cd) ?: key_slot_active(cd);
	if (r)
		return r;
	r = crypt_token_luks2_keyring_set(cd, opt.token_id, &params);
	if (r < 0) {
		fprintf(stderr, "Failed to add luks2-keyring token %d.\n", opt.token_id);
		return r;
	}
	/* --unbound: a token of no keyslot */
	return opt.unbound ? r : assign_new(cd, r);
}

static int token_remove(struct crypt_device *cd)
{
	crypt_token_info ti = crypt_token_status(cd, opt.token_id, NULL);

	if (ti < CRYPT_TOKEN_INACTIVE) {
		fprintf(stderr, "Token %d is invalid.\n", opt.token_id);
		return -EINVAL;
	}
	if (ti == CRYPT_TOKEN_INACTIVE) {
		fprintf(stderr, "Token %d is not in use.\n", opt.token_id);
		return -EINVAL;
	}
	return crypt_token_json_set(cd, opt.token_id, NULL);
}

/*
 * cryptsetup's tools_read_json_file(): all of --json-file, or of standard
 * input, into *@json (malloc(), NUL-terminated).
 */
static int read_json(char **json)
{
	const char *file = opt.json_file;
	int fd = STDIN_FILENO, r = 0;
	size_t len = 0;
	ssize_t n;
	char *buf;

	if (file && strcmp(file, "-")) {
		fd = open(file, O_RDONLY | O_CLOEXEC);
		if (fd < 0) {
			fprintf(stderr, "Failed to open file %s in read-only mode.\n", file);
			return -EINVAL;
		}
	}
	buf = malloc(VS_TOKEN_JSON_MAX);
	if (!buf) {
		r = -ENOMEM;
		goto out;
	}
	if (isatty(fd) && !opt.batch)
		printf("Provide valid LUKS2 token JSON:\n");
	fflush(stdout);
	while (len < VS_TOKEN_JSON_MAX - 1) {
		n = read(fd, buf + len, VS_TOKEN_JSON_MAX - 1 - len);
		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0) {
			fprintf(stderr, "Failed to read JSON file.\n");
			r = -EIO;
			goto out;
		}
		if (!n)
			break;
		len += n;
	}
	buf[len] = '\0';
	*json = buf;
	buf = NULL;
out:
	free(buf);
	if (fd != STDIN_FILENO)
		close(fd);
	return r;
}

static int token_import(struct crypt_device *cd)
{
	char *json = NULL;
	int r;

	r = token_id_free(cd) ?: key_slot_active(cd) ?: read_json(&json);
	if (r)
		return r;
	r = crypt_token_json_set(cd, opt.token_id, json);
	free(json);
	if (r < 0) {
		fprintf(stderr, "Failed to import token from file.\n");
		return r;
	}
	/* Unlike add: no --key-slot, no keyslot assigned but the JSON's own. */
	return opt.key_slot == CRYPT_ANY_SLOT ? r : assign_new(cd, r);
}

/* All @len bytes of @buf to @fd: 0, or -EIO. */
static int write_all(int fd, const char *buf, size_t len)
{
	ssize_t n;

	while (len) {
		n = write(fd, buf, len);
		if (n < 0 && errno == EINTR)
			continue;
		if (n <= 0)
			return -EIO;
		buf += n;
		len -= n;
	}
	return 0;
}

/*
 * cryptsetup's tools_write_json_file(): @json to --json-file, or to
 * standard output (a newline after it on a terminal). An existing file is
 * truncated first, where cryptsetup 2.6 writes over its start only.
 */
static int write_json(const char *json)
{
	const char *file = opt.json_file;
	size_t len = json ? strlen(json) : 0;
	int fd = STDOUT_FILENO, r;

	if (!len || len >= VS_TOKEN_JSON_MAX)
		return -EINVAL;
	if (file && strcmp(file, "-"))
		fd = open(file, O_CREAT | O_WRONLY | O_TRUNC | O_CLOEXEC, S_IRUSR | S_IWUSR);
	if (fd < 0) {
		fprintf(stderr, "Failed to open file %s in write mode.\n", file);
		return -EINVAL;
	}
	fflush(stdout);
	r = write_all(fd, json, len);
	if (r)
		fprintf(stderr, "Failed to write JSON file.\n");
	else if (isatty(fd))
		write_all(fd, "\n", 1);
	if (fd != STDOUT_FILENO)
		close(fd);
	return r;
}

static int token_export(struct crypt_device *cd)
{
	const char *json;
	int r = crypt_token_json_get(cd, opt.token_id, &json);

	if (r < 0) {
		fprintf(stderr, "Failed to get token %d for export.\n", opt.token_id);
		return r;
	}
	return write_json(json);
}

static int token_unassign(struct crypt_device *cd)
{
	const char *failed = "Failed to unassign token %d from keyslot %d.\n";
	int r = crypt_token_is_assigned(cd, opt.token_id, opt.key_slot);

	if (r < 0) {
		fprintf(stderr, r == -ENOENT ? "Token %d is not assigned to keyslot %d.\n" : failed,
			opt.token_id, opt.key_slot);
		return r;
	}
	r = crypt_token_unassign_keyslot(cd, opt.token_id, opt.key_slot);
	if (r < 0)
		fprintf(stderr, failed, opt.token_id, opt.key_slot);
	return r;
}

/* cryptsetup's token actions, and its -v line after each (%i: the token). */
static const struct token_action {
	const char *name;
	int (*fn)(struct crypt_device *cd);
	const char *done;
} token_actions[] = {
	{ "add", token_add, "Token %i created.\n" },
	{ "remove", token_remove, "Token %i removed.\n" },
	{ "import", token_import, "Token %i created.\n" },
	{ "export", token_export, NULL },
	{ "unassign", token_unassign, NULL },
};

/* cryptsetup's verify_token(): what the command line lacks, or NULL. */
static const char *token_args_missing(const struct token_action *ta)
{
	const char *name = ta->name;

	if (!strcmp(name, "add") && !opt.key_description)
		return "--key-description parameter is mandatory for token add action.";
	if (opt.token_id == CRYPT_ANY_TOKEN && (!strcmp(name, "remove") || !strcmp(name, "export")))
		return "Action requires specific token. Use --token-id parameter.";
	if (opt.unbound && strcmp(name, "add"))
		return "Option --unbound is valid only with token add action.";
	if (opt.unbound && vs_option_given("key-slot"))
		return "Options --key-slot and --unbound cannot be combined.";
	if (!strcmp(name, "unassign") && opt.key_slot == CRYPT_ANY_SLOT)
		return "Action requires specific keyslot. Use --key-slot parameter.";
	if (!strcmp(name, "unassign") && opt.token_id == CRYPT_ANY_TOKEN)
		return "Action requires specific token. Use --token-id parameter.";
	return NULL;
}

/**
 * vs_action_token() - token <add|remove|import|export|unassign> <device>
 * @argc: 2.
 * @argv: the token action and the device (its header: --header if given).
 *
 * cryptsetup 2.6's action_token(), with its messages and exit codes:
 * add writes a luks2-keyring token for --key-description, assigned to
 * --key-slot or to every keyslot; import writes the JSON of --json-file
 * (or standard input); export prints a token's JSON; remove and unassign
 * take --token-id (and --key-slot).
 *
 * Return: the token's number or 0, or a negative errno after a message.
 */
int vs_action_token(int argc, char **argv)
{
	const char *device = opt.header ?: argv[1], *missing;
	const struct token_action *ta = NULL;
	struct crypt_device *cd = NULL;
	size_t i;
	int r;

	(void)argc;
	for (i = 0; i < sizeof(token_actions) / sizeof(token_actions[0]); i++)
		if (!strcmp(argv[0], token_actions[i].name))
			ta = &token_actions[i];
	missing = ta ? token_args_missing(ta) : "Invalid token action.";
	if (missing) {
		fprintf(stderr, "veilsetup: %s\n", missing);
		return -EINVAL;
	}
	r = crypt_init(&cd, device);
	if (r < 0)
		return r;
	r = crypt_load(cd, CRYPT_LUKS2, NULL);
	if (r < 0) {
		fprintf(stderr, "Device %s is not a valid LUKS2 device.\n", device);
		crypt_free(cd);
		return r;
	}
	r = ta->fn(cd);
	if (r >= 0 && ta->done && opt.verbose)
		printf(ta->done, r);
	crypt_free(cd);
	return r;
}
