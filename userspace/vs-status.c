// SPDX-License-Identifier: GPL-2.0
/*
 * veilsetup status: one mapping as cryptsetup status prints the same
 * volume mapped with dm-crypt (a LUKS volume's header read through
 * libcryptsetup, as cryptsetup reads it; the veil table, which
 * libcryptsetup cannot read, for the rest), with veil's engine options
 * and counters; or as JSON (--json).
 */
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <json-c/json.h>
#include <libcryptsetup.h>

#include "veilsetup.h"
#include "veil-options.h"

/* What status prints of a veil mapping, as cryptsetup's status does. */
struct status_info {
	const char *type;
	char cipher[160];
	size_t key_bits;
	unsigned int sector_size;
	char integrity[64];		/* "" without integrity protection */
	unsigned int integrity_key_bits;
	uint32_t flags;			/* CRYPT_ACTIVATE_*, the dm-integrity device's too */
	char engine[512];		/* the table's words cryptsetup's status has not */
	int in_use;
};

static const char *type_name(const struct vs_table *t)
{
	const char *type = t->foreign[0] ? t->foreign : vs_uuid_type(t->uuid);

	if (!type)
		return "n/a";
	if (!strcmp(type, CRYPT_PLAIN))
		return "PLAIN";
	return type;
}

/*
 * The table's view: its cipher, key size and sector size, the dm-crypt
 * flags of its words (and the device's read-only and suspended state);
 * the words that are neither flags nor shown on other lines of
 * cryptsetup's status (veil's engine options) go to @s->engine.
 */
static void status_from_table(const char *name, const struct vs_table *t,
			      struct status_info *s)
{
	char words[sizeof(t->features)], *tok, *save = NULL;
	size_t used = 0;
	uint32_t flag;

	s->type = type_name(t);
	snprintf(s->cipher, sizeof(s->cipher), "%s", t->cipher);
	s->key_bits = t->key_bits;
	s->sector_size = 512;
	s->flags = (t->read_only ? CRYPT_ACTIVATE_READONLY : 0) |
		   (t->suspended ? CRYPT_ACTIVATE_SUSPENDED : 0);
	s->in_use = vs_dm_open_count(name) > 0;
	snprintf(words, sizeof(words), "%s", t->features);
	for (tok = strtok_r(words, " ", &save); tok; tok = strtok_r(NULL, " ", &save)) {
		flag = vs_flag_of_word(tok);
		if (flag)
			s->flags |= flag;
		else if (!strncmp(tok, VEIL_OPTV_SECTOR_SIZE ":", strlen(VEIL_OPTV_SECTOR_SIZE ":")))
			s->sector_size = strtoul(tok + strlen(VEIL_OPTV_SECTOR_SIZE ":"), NULL, 10);
		/* shown as cryptsetup shows them: the integrity lines, or not at all */
		else if (strcmp(tok, VEIL_OPT_IV_LARGE_SECTORS) &&
			 strncmp(tok, VEIL_OPTV_INTEGRITY, strlen(VEIL_OPTV_INTEGRITY)))
			used += snprintf(s->engine + used, sizeof(s->engine) - used, "%s%s",
					 used ? " " : "", tok);
		if (used >= sizeof(s->engine))
			used = sizeof(s->engine) - 1;
	}
}

/*
 * A LUKS mapping's header, as cryptsetup's status reads it (--header
 * honoured): the cipher, volume key size and sector size are the
 * header's, and so are the integrity algorithm and its key size; the
 * flags of the dm-integrity device below (read-only, discards) are added
 * to the mapping's, by libcryptsetup (crypt_get_active_device()). A
 * header that cannot be read, or another volume's, leaves the table's.
 */
static void status_from_header(const char *name, const struct vs_table *t,
			       struct status_info *s)
{
	const char *type = vs_uuid_type(t->uuid);
	struct crypt_params_integrity ip = { 0 };
	struct crypt_active_device cad;
	struct crypt_device *cd = NULL;
	char uuid[VS_DM_UUID_LEN];

	if (t->foreign[0] || !type || !strcmp(type, CRYPT_PLAIN) ||
	    vs_crypt_init(opt.header, t->path, &cd))
		return;
	if (crypt_load(cd, type, NULL) < 0)
		goto out;
	/* As libcryptsetup checks a dm-crypt mapping's header against its uuid. */
	vs_luks_dm_uuid(cd, name, uuid, sizeof(uuid));
	if (strcmp(uuid, t->uuid) || !crypt_get_cipher(cd) || !crypt_get_cipher_mode(cd))
		goto out;
	snprintf(s->cipher, sizeof(s->cipher), "%s-%s", crypt_get_cipher(cd),
		 crypt_get_cipher_mode(cd));
	s->key_bits = (size_t)crypt_get_volume_key_size(cd) * 8;
	s->sector_size = crypt_get_sector_size(cd);
	if (!crypt_get_integrity_info(cd, &ip) && ip.integrity) {
		snprintf(s->integrity, sizeof(s->integrity), "%s", ip.integrity);
		s->integrity_key_bits = ip.integrity_key_size * 8;
	}
	if (t->dif[0] && !crypt_get_active_device(cd, t->dif, &cad))
		s->flags |= cad.flags;
out:
	crypt_free(cd);
}

/* cryptsetup's flags line: the dm-crypt flags it knows, in its words. */
static void print_flags(uint32_t flags)
{
	if (!(flags & (CRYPT_ACTIVATE_ALLOW_DISCARDS | CRYPT_ACTIVATE_SAME_CPU_CRYPT |
		       CRYPT_ACTIVATE_SUBMIT_FROM_CRYPT_CPUS | CRYPT_ACTIVATE_NO_READ_WORKQUEUE |
		       CRYPT_ACTIVATE_NO_WRITE_WORKQUEUE)))
		return;
	printf("  flags:   %s%s%s%s%s\n",
	       (flags & CRYPT_ACTIVATE_ALLOW_DISCARDS) ? "discards " : "",
	       (flags & CRYPT_ACTIVATE_SAME_CPU_CRYPT) ? "same_cpu_crypt " : "",
	       (flags & CRYPT_ACTIVATE_SUBMIT_FROM_CRYPT_CPUS) ? "submit_from_crypt_cpus " : "",
	       (flags & CRYPT_ACTIVATE_NO_READ_WORKQUEUE) ? "no_read_workqueue " : "",
	       (flags & CRYPT_ACTIVATE_NO_WRITE_WORKQUEUE) ? "no_write_workqueue" : "");
}

/*
 * Print one mapping as cryptsetup status does (the same lines, in its
 * order, but "dm-veil" for a key in the table, veil's engine options and
 * its counters), or as JSON.
 */
static int print_status(const char *name, const char *shown, struct vs_table *t,
			char *info)
{
	const char *location = t->keyring ? "keyring" : "dm-veil";
	struct json_object *o, *counters, *words;
	struct status_info s = { 0 };
	char backing[512] = "", *p, *save = NULL, *tok;
	int read_only, suspended;

	status_from_table(name, t, &s);
	status_from_header(name, t, &s);
	read_only = !!(s.flags & CRYPT_ACTIVATE_READONLY);
	suspended = !!(s.flags & CRYPT_ACTIVATE_SUSPENDED);
	vs_loop_backing_file(t->path, backing, sizeof(backing));
	if (!opt.json) {
		printf("%s is active%s.\n", shown, s.in_use ? " and is in use" : "");
		printf("  type:    %s\n", s.type);
		printf("  cipher:  %s\n", s.cipher);
		printf("  keysize: %zu bits\n", s.key_bits);
		printf("  key location: %s\n", location);
		if (s.integrity[0])
			printf("  integrity: %s\n", s.integrity);
		if (s.integrity_key_bits)
			printf("  integrity keysize: %u bits\n", s.integrity_key_bits);
		printf("  device:  %s\n", t->path);
		if (backing[0])
			printf("  loop:    %s\n", backing);
		printf("  sector size:  %u\n", s.sector_size);
		printf("  offset:  %" PRIu64 " sectors\n", t->offset);
		printf("  size:    %" PRIu64 " sectors\n", t->len);
		if (t->iv_offset)
			printf("  skipped: %" PRIu64 " sectors\n", t->iv_offset);
		printf("  mode:    %s%s\n", read_only ? "readonly" : "read/write",
		       suspended ? " (suspended)" : "");
		print_flags(s.flags);
		if (s.engine[0])
			printf("  engine:  %s\n", s.engine);
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
	json_object_object_add(o, "in_use", json_object_new_boolean(s.in_use));
	json_object_object_add(o, "type", json_object_new_string(s.type));
	json_object_object_add(o, "uuid", json_object_new_string(t->uuid));
	json_object_object_add(o, "cipher", json_object_new_string(s.cipher));
	json_object_object_add(o, "key_bits", json_object_new_int64(s.key_bits));
	json_object_object_add(o, "key_location", json_object_new_string(location));
	if (s.integrity[0])
		json_object_object_add(o, "integrity", json_object_new_string(s.integrity));
	if (s.integrity_key_bits)
		json_object_object_add(o, "integrity_key_bits",
				       json_object_new_int(s.integrity_key_bits));
	json_object_object_add(o, "device", json_object_new_string(t->path));
	if (backing[0])
		json_object_object_add(o, "loop", json_object_new_string(backing));
	json_object_object_add(o, "sector_size", json_object_new_int(s.sector_size));
	json_object_object_add(o, "offset", json_object_new_int64(t->offset));
	json_object_object_add(o, "skip", json_object_new_int64(t->iv_offset));
	json_object_object_add(o, "size", json_object_new_int64(t->len));
	json_object_object_add(o, "read_only", json_object_new_boolean(read_only));
	json_object_object_add(o, "suspended", json_object_new_boolean(suspended));
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

/*
 * A dm-integrity device (the <name>_dif below a LUKS2 volume with
 * integrity, or integritysetup's): libcryptsetup knows its target, so
 * its status is cryptsetup's, from the same calls: the device's state
 * and type, and nothing more (libcryptsetup gives no cipher for it).
 */
static int print_integrity_status(const char *name, const char *shown)
{
	crypt_status_info ci = crypt_status(NULL, name);
	struct crypt_device *cd = NULL;
	struct json_object *o;
	int r;

	if (ci != CRYPT_ACTIVE && ci != CRYPT_BUSY)
		return -EINVAL;
	if (!opt.json)
		printf("%s is active%s.\n", shown,
		       ci == CRYPT_BUSY ? " and is in use" : "");
	r = crypt_init_by_name_and_header(&cd, name, opt.header);
	vs_dm_log_default();
	if (r < 0)
		return r;
	if (!opt.json) {
		printf("  type:    %s\n", crypt_get_type(cd) ?: "n/a");
	} else {
		o = json_object_new_object();
		json_object_object_add(o, "name", json_object_new_string(name));
		json_object_object_add(o, "active", json_object_new_boolean(1));
		json_object_object_add(o, "in_use", json_object_new_boolean(ci == CRYPT_BUSY));
		json_object_object_add(o, "type", json_object_new_string(crypt_get_type(cd) ?: "n/a"));
		printf("%s\n", json_object_to_json_string_ext(o, JSON_C_TO_STRING_PRETTY));
		json_object_put(o);
	}
	crypt_free(cd);
	return 0;
}

int vs_action_status(int argc, char **argv)
{
	char info[4096] = "", type[32] = "", name[128], shown[4096];
	struct vs_table t;
	uint64_t len;
	int r, mapped;

	(void)argc;
	/*
	 * As cryptsetup: an argument with a '/' is a device path (any node
	 * or link of the mapping: /dev/dm-0, /dev/mapper/<name>) and its
	 * lines name it as given; a bare name is /dev/mapper/<name>.
	 */
	if (strchr(argv[0], '/')) {
		snprintf(shown, sizeof(shown), "%s", argv[0]);
		mapped = vs_dm_name_of_path(argv[0], name, sizeof(name));
	} else {
		snprintf(shown, sizeof(shown), "%s/%s", crypt_get_dir(), argv[0]);
		snprintf(name, sizeof(name), "%s", argv[0]);
		mapped = vs_dm_exists(name);
	}
	if (mapped < 0)
		return mapped;
	if (!mapped) {
		if (opt.json) {
			struct json_object *o = json_object_new_object();

			json_object_object_add(o, "name", json_object_new_string(argv[0]));
			json_object_object_add(o, "active", json_object_new_boolean(0));
			printf("%s\n", json_object_to_json_string_ext(o, JSON_C_TO_STRING_PRETTY));
			json_object_put(o);
		} else
			printf("%s is inactive.\n", shown);
		return -ENODEV;
	}
	/* The status line: no key in it. veil's counters follow its first words. */
	vs_dm_get(name, 1, type, sizeof(type), info, sizeof(info), &len, NULL, 0,
		  NULL, NULL);
	if (!strcmp(type, "integrity"))
		return print_integrity_status(name, shown);
	r = vs_table_get(name, &t);
	explicit_bzero(t.key, sizeof(t.key));
	if (r)
		return r;
	r = print_status(name, shown, &t, info);
	explicit_bzero(&t, sizeof(t));
	return r;
}
