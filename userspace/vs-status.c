// SPDX-License-Identifier: GPL-2.0
/*
 * veilsetup status: one mapping as cryptsetup status prints it, with the
 * veil target's counters, or as JSON (--json).
 */
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <json-c/json.h>
#include <libcryptsetup.h>

#include "veilsetup.h"
#include "veil-options.h"

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
 * The integrity algorithm and its key size (bits) of a mapping over
 * dm-integrity, from its LUKS2 header, as cryptsetup's status prints them.
 */
static void integrity_info(const struct vs_table *t, char *alg, size_t len,
			   unsigned int *key_bits)
{
	struct crypt_params_integrity ip = { 0 };
	struct crypt_device *cd = NULL;

	alg[0] = '\0';
	*key_bits = 0;
	if (!t->dif[0] || vs_load_luks(opt.header ?: t->path, &cd))
		return;
	if (!crypt_get_integrity_info(cd, &ip) && ip.integrity) {
		snprintf(alg, len, "%s", ip.integrity);
		*key_bits = ip.integrity_key_size * 8;
	}
	crypt_free(cd);
}

/* Print one mapping as cryptsetup status does, or as JSON. */
static int print_status(const char *name, struct vs_table *t, char *info)
{
	const char *location = t->keyring ? "keyring" : "dm-veil";
	char backing[512] = "", node[192], *p, *save = NULL, *tok;
	struct json_object *o, *counters, *words;
	unsigned int ssize = 512, ikey_bits;
	char integrity[64];
	int in_use = 0, fd;

	p = strstr(t->features, VEIL_OPTV_SECTOR_SIZE ":");
	if (p)
		ssize = strtoul(p + strlen(VEIL_OPTV_SECTOR_SIZE ":"), NULL, 10);
	vs_loop_backing_file(t->path, backing, sizeof(backing));
	integrity_info(t, integrity, sizeof(integrity), &ikey_bits);
	snprintf(node, sizeof(node), "/dev/mapper/%s", name);
	fd = open(node, O_RDONLY | O_EXCL | O_CLOEXEC);
	if (fd < 0 && errno == EBUSY)
		in_use = 1;
	if (fd >= 0)
		close(fd);
	if (!opt.json) {
		printf("/dev/mapper/%s is active%s.\n", name, in_use ? " and is in use" : "");
		printf("  type:    %s\n", type_name(t));
		printf("  cipher:  %s\n", t->cipher);
		printf("  keysize: %zu bits\n", t->key_bits);
		printf("  key location: %s\n", location);
		if (integrity[0])
			printf("  integrity: %s\n", integrity);
		if (ikey_bits)
			printf("  integrity keysize: %u bits\n", ikey_bits);
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
	json_object_object_add(o, "type", json_object_new_string(type_name(t)));
	json_object_object_add(o, "uuid", json_object_new_string(t->uuid));
	json_object_object_add(o, "cipher", json_object_new_string(t->cipher));
	json_object_object_add(o, "key_bits", json_object_new_int64(t->key_bits));
	json_object_object_add(o, "key_location", json_object_new_string(location));
	if (integrity[0])
		json_object_object_add(o, "integrity", json_object_new_string(integrity));
	if (ikey_bits)
		json_object_object_add(o, "integrity_key_bits", json_object_new_int(ikey_bits));
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
	r = vs_table_get(argv[0], &t);
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
