// SPDX-License-Identifier: GPL-2.0
/*
 * veilsetup's veil table lines: the dm-crypt flags and their table words,
 * a new table built from a mapping, a loaded table (veil's or dm-crypt's:
 * the same fields) split back into its fields, and the checks a table
 * must pass before the kernel sees it.
 */
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/socket.h>
#include <unistd.h>
#include <linux/fs.h>
#include <linux/if_alg.h>
#include <libcryptsetup.h>

#include "veilsetup.h"
#include "veil-options.h"

#define SOL_ALG_LEVEL		279

/* The dm-crypt flags veil takes, with their table words. */
static const struct {
	uint32_t flag;
	const char *word;
} flag_words[] = {
	{ CRYPT_ACTIVATE_ALLOW_DISCARDS, VEIL_OPT_ALLOW_DISCARDS },
	{ CRYPT_ACTIVATE_SAME_CPU_CRYPT, VEIL_OPT_SAME_CPU },
	{ CRYPT_ACTIVATE_SUBMIT_FROM_CRYPT_CPUS, VEIL_OPT_SUBMIT_FROM_CRYPT },
	{ CRYPT_ACTIVATE_NO_READ_WORKQUEUE, VEIL_OPT_NO_READ_WQ },
	{ CRYPT_ACTIVATE_NO_WRITE_WORKQUEUE, VEIL_OPT_NO_WRITE_WQ },
};

#define N_FLAGS	(sizeof(flag_words) / sizeof(flag_words[0]))

/* The CRYPT_ACTIVATE_* flag of table word @word, or 0. */
uint32_t vs_flag_of_word(const char *word)
{
	size_t i;

	for (i = 0; i < N_FLAGS; i++)
		if (!strcmp(word, flag_words[i].word))
			return flag_words[i].flag;
	return 0;
}

uint64_t vs_device_sectors(const char *device)
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
void vs_dev_path(const char *majmin, char *out, size_t len)
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

/**
 * vs_dm_sysfs() - a device-mapper attribute of a device, from sysfs
 * @majmin: the device, "major:minor" (as tables name devices).
 * @what: the attribute: "name" or "uuid".
 * @out: its value, without the newline.
 * @len: the size of @out.
 *
 * Return: 0, or -ENODEV when @majmin is no device-mapper device.
 */
int vs_dm_sysfs(const char *majmin, const char *what, char *out, size_t len)
{
	char path[96];
	FILE *f;
	int r = -ENODEV;

	snprintf(path, sizeof(path), "/sys/dev/block/%s/dm/%s", majmin, what);
	f = fopen(path, "r");
	if (!f)
		return r;
	if (fgets(out, len, f)) {
		out[strcspn(out, "\n")] = '\0';
		r = 0;
	}
	fclose(f);
	return r;
}

/**
 * vs_table_split() - the fields of a veil or dm-crypt target
 * @params: "<cipher> <key> <iv_offset> <dev> <offset> [<n> <words>]".
 * @c: the fields, the optional words without their count; allocate it
 *     with crypt_safe_alloc(): the key field may be a key in hex.
 *
 * Return: 0, or -EINVAL when a field is missing.
 */
int vs_table_split(const char *params, struct vs_target_fields *c)
{
	c->words[0] = '\0';
	/* The key field's width: VS_KEY_FIELD_MAX - 1. */
	_Static_assert(VS_KEY_FIELD_MAX == 8352, "update the %8351s below");
	return sscanf(params, "%127s %8351s %" SCNu64 " %63s %" SCNu64 " %*u %1023[^\n]",
		      c->cipher, c->key, &c->iv_offset, c->dev, &c->offset, c->words) >= 5 ?
	       0 : -EINVAL;
}

/*
 * The size in bits of key field @key: hex, ":<bytes>:logon:<desc>", or
 * "-" (no key: 0, as libcryptsetup reads it).
 */
size_t vs_key_bits(const char *key)
{
	return key[0] == ':' ? strtoul(key + 1, NULL, 10) * 8 : strlen(key) / 2 * 8;
}

/*
 * The value of hex digit @c, or 0x100 for no hex digit; no branch or table
 * lookup on @c, so that decoding a key leaves no trace of it in timing.
 */
static unsigned int hex_nibble(unsigned char c)
{
	int digit = c - '0', letter = (c | 0x20) - 'a';
	unsigned int is_digit = -(unsigned int)((digit >= 0) & (digit < 10));
	unsigned int is_letter = -(unsigned int)((letter >= 0) & (letter < 6));

	return ((unsigned int)digit & is_digit) | ((unsigned int)(letter + 10) & is_letter) |
	       (0x100 & ~(is_digit | is_letter));
}

/*
 * @hex (2 * @len digits) into @out; nonzero when a character is no hex
 * digit.
 */
static unsigned int hex_decode(const char *hex, unsigned char *out, size_t len)
{
	unsigned int hi, lo, bad = 0;
	size_t i;

	for (i = 0; i < len; i++) {
		hi = hex_nibble(hex[2 * i]);
		lo = hex_nibble(hex[2 * i + 1]);
		bad |= (hi | lo) & 0x100;
		out[i] = (hi << 4 | lo) & 0xff;
	}
	return bad;
}

/**
 * vs_key_from_hex() - a table's hex key field as a key
 * @hex: the field.
 * @m: m->key (crypt_safe_alloc(), the caller frees it) and m->key_size;
 *     a key_size already set is the size @hex must have.
 *
 * Return: 0, -EINVAL for a field that is no key in hex (a keyring
 * reference) or not of the size, -ENOMEM.
 */
int vs_key_from_hex(const char *hex, struct vs_map *m)
{
	size_t len = strlen(hex);

	if (!len || len % 2 || (m->key_size && len != 2 * m->key_size))
		return -EINVAL;
	m->key_size = len / 2;
	m->key = crypt_safe_alloc(m->key_size);
	if (!m->key)
		return -ENOMEM;
	return hex_decode(hex, m->key, m->key_size) ? -EINVAL : 0;
}

/**
 * vs_key_equal_hex() - is a key the one of a table's hex key field?
 * @key: the key.
 * @len: its size in bytes.
 * @hex: the field.
 *
 * The field is decoded into memory of crypt_safe_alloc() and compared
 * whole: the time taken depends on the sizes only, not on where the keys
 * differ.
 *
 * Return: 1 when they are the same key, 0 when not (or @hex is no hex
 * key of @len bytes), -ENOMEM.
 */
int vs_key_equal_hex(const unsigned char *key, size_t len, const char *hex)
{
	unsigned char *dec;
	unsigned int diff;
	size_t i;

	if (!len || strlen(hex) != 2 * len)
		return 0;
	dec = crypt_safe_alloc(len);
	if (!dec)
		return -ENOMEM;
	diff = hex_decode(hex, dec, len);
	for (i = 0; i < len; i++)
		diff |= dec[i] ^ key[i];
	crypt_safe_free(dec);
	return !diff;
}

/*
 * The table of veil mapping @name; a message and an errno otherwise. With
 * @foreign_crypt, also a dm-crypt device with libcryptsetup's dm uuid of
 * a TCRYPT, BITLK, FVAULT2 or loop-AES mapping, as veilsetup open may
 * leave one when a removal fails.
 */
static int table_get(const char *name, struct vs_table *t, int foreign_crypt)
{
	struct vs_target_fields *c = crypt_safe_alloc(sizeof(*c));
	char type[32], *params = crypt_safe_alloc(VS_TABLE_MAX);
	int r;

	memset(t, 0, sizeof(*t));
	if (!params || !c) {
		r = -ENOMEM;
		goto out;
	}
	r = vs_dm_get(name, 0, type, sizeof(type), params, VS_TABLE_MAX, &t->len,
		      t->uuid, sizeof(t->uuid), &t->read_only, &t->suspended);
	if (r) {
		fprintf(stderr, "Device %s is not active.\n", name);
		r = -ENODEV;
	} else if (strcmp(type, VS_TARGET) &&
		   !(foreign_crypt && !strcmp(type, "crypt") && vs_foreign_uuid_type(t->uuid))) {
		fprintf(stderr, "Device %s is not a veil device (target %s).\n", name, type);
		r = -EINVAL;
	} else {
		r = vs_table_split(params, c);
		snprintf(t->cipher, sizeof(t->cipher), "%s", c->cipher);
		memcpy(t->key, c->key, sizeof(t->key));
		snprintf(t->dev, sizeof(t->dev), "%s", c->dev);
		snprintf(t->features, sizeof(t->features), "%s", c->words);
		t->iv_offset = c->iv_offset;
		t->offset = c->offset;
		vs_dev_path(t->dev, t->path, sizeof(t->path));
		vs_integrity_lower(name, t);
		t->keyring = t->key[0] == ':';
		t->key_bits = vs_key_bits(t->key);
		vs_foreign_table(name, t);
	}
out:
	crypt_safe_free(params);
	crypt_safe_free(c);
	return r;
}

/* The table of veil mapping @name; a message and an errno otherwise. */
int vs_table_get(const char *name, struct vs_table *t)
{
	return table_get(name, t, 0);
}

/*
 * As vs_table_get(), for close: also a device libcryptsetup made for a
 * TCRYPT, BITLK, FVAULT2 or loop-AES mapping that is still dm-crypt.
 */
int vs_table_get_closing(const char *name, struct vs_table *t)
{
	return table_get(name, t, 1);
}

/* The LUKS version a mapping's dm uuid names, or NULL. */
const char *vs_uuid_type(const char *uuid)
{
	if (!strncmp(uuid, VS_UUID_LUKS2, strlen(VS_UUID_LUKS2)))
		return CRYPT_LUKS2;
	if (!strncmp(uuid, VS_UUID_LUKS1, strlen(VS_UUID_LUKS1)))
		return CRYPT_LUKS1;
	if (!strncmp(uuid, VS_UUID_PLAIN, strlen(VS_UUID_PLAIN)))
		return CRYPT_PLAIN;
	return NULL;
}

/**
 * vs_cipher_is_null() - whether a cipher spec is the null cipher
 * @spec: a cipher spec (cipher_null-ecb, ...).
 *
 * As libcryptsetup's own test: its tables of such a cipher have no key
 * ("-"), and its key size is not checked.
 *
 * Return: 1 for the null cipher, else 0.
 */
int vs_cipher_is_null(const char *spec)
{
	return strstr(spec, "cipher_null") || !strcmp(spec, "null");
}

/*
 * Check with the kernel's crypto API, through AF_ALG, that the cipher and
 * mode exist and take a key of @key_bytes: the kernel would refuse the
 * table otherwise, with no message that reaches the user. capi: specs are
 * left to the kernel. A multi-key spec ("aes:64-...") is checked with the
 * size of one of its keys.
 */
int vs_check_cipher(const char *spec, size_t key_bytes)
{
	struct sockaddr_alg sa = { .salg_family = AF_ALG, .salg_type = "skcipher" };
	unsigned char key[VS_MAX_KEY] = { 0 };
	char cipher[64], mode[64], *keycount;
	int fd, r = 0;

	/* The null cipher uses no key, whatever its size. */
	if (!strncmp(spec, "capi:", 5) || vs_cipher_is_null(spec))
		return 0;
	if (sscanf(spec, "%63[^-]-%63[^-]-", cipher, mode) != 2) {
		fprintf(stderr, "No known cipher specification pattern detected.\n");
		return -EINVAL;
	}
	keycount = strchr(cipher, ':');
	if (keycount) {
		*keycount++ = '\0';
		key_bytes /= strtoul(keycount, NULL, 10) ?: 1;
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
		used += snprintf(out + used, len - used, " " VEIL_OPTV_SECTOR_SIZE ":%u", m->sector_size);
		if (m->iv_large_sectors)
			used += snprintf(out + used, len - used, " " VEIL_OPT_IV_LARGE_SECTORS);
	}
	snprintf(out + used, len - used, "%s", opt.features);
}

/*
 * "<len> <cipher> <key> <iv_offset> <dev> <offset> [<n> <words>]": the
 * optional words are @words if given, else those of @m and the options.
 */
char *vs_table_build(const struct vs_map *m, uint64_t len, const char *key,
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
 * The table's key field for @m into *@out: "-" for the null cipher,
 * ":<size>:logon:<desc>" with the key added to the thread keyring
 * (*@key_id set, drop it after the load) when @keyring, else the key in
 * hex. Returns 0 or a negative errno.
 */
int vs_key_field(const struct vs_map *m, int keyring, const char *desc,
		     int32_t *key_id, char **out)
{
	size_t len = 2 * m->key_size + strlen(desc) + 32, i;
	char *field = crypt_safe_alloc(len);
	int id;

	*key_id = -1;
	*out = NULL;
	if (!field)
		return -ENOMEM;
	/* As libcryptsetup: the null cipher takes no key, whatever was derived. */
	if (vs_cipher_is_null(m->cipher)) {
		strcpy(field, "-");
		*out = field;
		return 0;
	}
	if (!keyring) {
		fprintf(stderr, "WARNING: the key goes into the table, where 'dmsetup "
			"table' prints it (dmsetup hides the keys of crypt tables only).\n");
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

/* The sector size and flags of @t's optional words, into @m. */
void vs_table_flags(const struct vs_table *t, struct vs_map *m)
{
	const char *p = strstr(t->features, VEIL_OPTV_SECTOR_SIZE ":");
	size_t i;

	m->sector_size = p ? strtoul(p + strlen(VEIL_OPTV_SECTOR_SIZE ":"), NULL, 10) : 512;
	for (i = 0; i < N_FLAGS; i++)
		if (strstr(t->features, flag_words[i].word))
			m->flags |= flag_words[i].flag;
}

/*
 * veil's own engine words of @t, kept when the command line gives none;
 * its integrity words in any case.
 */
void vs_keep_engine_words(const struct vs_table *t)
{
	char words[sizeof(t->features)], *tok, *save = NULL;
	int given = opt.features[0] != '\0';
	size_t i, n;

	snprintf(words, sizeof(words), "%s", t->features);
	for (tok = strtok_r(words, " ", &save); tok; tok = strtok_r(NULL, " ", &save)) {
		for (i = 0; i < N_FLAGS && strcmp(tok, flag_words[i].word); i++)
			;
		if (i < N_FLAGS ||
		    !strncmp(tok, VEIL_OPTV_SECTOR_SIZE ":", strlen(VEIL_OPTV_SECTOR_SIZE ":")) ||
		    !strcmp(tok, VEIL_OPT_IV_LARGE_SECTORS))
			continue;
		/* The metadata layout over dm-integrity is the volume's, always. */
		if (given && strncmp(tok, VEIL_OPTV_INTEGRITY, strlen(VEIL_OPTV_INTEGRITY)))
			continue;
		n = strlen(opt.features);
		snprintf(opt.features + n, sizeof(opt.features) - n, " %s", tok);
	}
}
