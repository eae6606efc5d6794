/* SPDX-License-Identifier: GPL-2.0 */
/*
 * veilsetup: shared declarations of the tool's files.
 */
#ifndef VEILSETUP_H
#define VEILSETUP_H

#include <stddef.h>
#include <stdint.h>
#include <signal.h>
#include <sys/time.h>

#include "veil-options.h"

struct crypt_device;

#define VS_TARGET		"veil"
/* dm uuid prefixes: VEIL-<TYPE>-<LUKS uuid>-<name>, VEIL-PLAIN-<name> */
#define VS_UUID_PREFIX		"VEIL-"
#define VS_UUID_PLAIN		"VEIL-PLAIN-"
#define VS_UUID_LUKS1		"VEIL-LUKS1-"
#define VS_UUID_LUKS2		"VEIL-LUKS2-"
#define VS_KEY_PREFIX		"veil:"
#define VS_PLAIN_HASH		"ripemd160"	/* cryptsetup 2.6's plain default */
#define VS_MAX_KEY		128	/* --key-size and benchmark rows */
/* A loaded table's key field: hex of the longest key, or a keyring name. */
#define VS_KEY_FIELD_MAX	(2 * VEIL_MAX_KEY_SIZE + 160)
#define VS_TABLE_MAX		(VS_KEY_FIELD_MAX + 4096)
#define VS_DM_UUID_LEN		129	/* device-mapper's limit, with the NUL */

/* cryptsetup's exit codes (cryptsetup(8), RETURN CODES). */
enum {
	VS_EXIT_OK = 0,
	VS_EXIT_PARAMS = 1,	/* wrong parameters, anything else */
	VS_EXIT_PERM = 2,	/* no permission, bad passphrase */
	VS_EXIT_NOMEM = 3,
	VS_EXIT_DEVICE = 4,	/* wrong device */
	VS_EXIT_BUSY = 5,	/* device exists or is busy */
};

/* The command line, with cryptsetup's option names. */
#define VS_MAX_KEY_FILES	32	/* cryptsetup's MAX_KEYFILES: TCRYPT key files */

struct vs_opts {
	const char *type, *cipher, *hash, *key_file, *new_key_file, *pbkdf;
	const char *key_files[VS_MAX_KEY_FILES];	/* every -d, in order; key_file is the last */
	int key_file_count;
	const char *header, *backup_file, *uuid, *label, *integrity;
	const char *token_type, *key_description, *json_file;
	int key_bits, key_slot, verify, batch, disable_keyring, read_only;
	int token_id, token_only, token_replace;	/* token_id: CRYPT_ANY_TOKEN unless given */
	int json, iv_large_sectors, test_passphrase, tries, timeout, verbose;
	int debug, persistent, allow_discards, integrity_no_wipe, integrity_legacy_padding;
	uint64_t keyfile_offset, keyfile_size, new_keyfile_offset;
	uint64_t new_keyfile_size, offset, skip, size;
	uint32_t sector_size, pbkdf_memory, pbkdf_parallel, iter_time;
	uint32_t pbkdf_iterations, align_payload;
	uint32_t perf_flags;		/* CRYPT_ACTIVATE_* of --perf-*, --integrity-no-journal */
	uint32_t tcrypt_flags;		/* CRYPT_TCRYPT_* of --tcrypt-*, --disable-veracrypt */
	uint32_t veracrypt_pim;
	int veracrypt_query_pim;
	char features[256];		/* veil's own engine options */
	uint64_t luks2_metadata_size, luks2_keyslots_size;	/* bytes; 0: default */
	const char *keyslot_cipher;	/* --keyslot-cipher, with keyslot_key_bits */
	uint32_t keyslot_key_bits;
	int new_key_slot;		/* --new-key-slot: CRYPT_ANY_SLOT unless given */
	int new_token_id;		/* --new-token-id: CRYPT_ANY_TOKEN unless given */
	int deferred, cancel_deferred;	/* close */
	int dump_volume_key, dump_json;	/* luksDump */
	const char *volume_key_file;	/* the raw volume key, read or written */
	int shared;			/* plain open: the device may be mapped already */
	int refresh;			/* open --refresh: the refresh action */
	int rng_type;			/* luksFormat: CRYPT_RNG_*, or -1: libcryptsetup's */
	uint32_t progress_frequency;	/* seconds between progress lines; 0: redrawn */
	int progress_json;
	const char *subsystem;		/* luksFormat, config: the LUKS2 subsystem label */
	int priority;			/* config: CRYPT_SLOT_PRIORITY_* of --priority */
	int unbound;			/* a keyslot with no data segment */
};

extern struct vs_opts opt;

/* What a mapping needs, from the command line or a LUKS header. */
struct vs_map {
	const char *name;
	const char *device;		/* block device (a loop for files) */
	const char *uuid;		/* dm uuid */
	char cipher[128];		/* e.g. aes-xts-plain64 */
	unsigned char *key;		/* crypt_safe_alloc() */
	size_t key_size;
	uint64_t offset;		/* sectors on device */
	uint64_t iv_offset;		/* sectors */
	uint64_t size;			/* sectors; 0 = to the end */
	unsigned int sector_size;
	int iv_large_sectors;
	uint32_t flags;			/* CRYPT_ACTIVATE_* */
};

/* veilsetup.c: the command line, libcryptsetup's messages */
int vs_option_given(const char *name);
void vs_log(int level, const char *msg, void *usrptr);

/* vs-util.c: what every action uses */
int vs_confirm(const char *question, const char *aborted);
int vs_number_arg(const char *s, const char *what, uint64_t max, uint64_t *out);
int vs_size_arg(const char *s, const char *option, uint64_t *out);
int vs_read_volume_key(const char *file, size_t key_size, char **key);
int vs_write_volume_key(const char *file, const char *key, size_t key_size);
int vs_print_key_hex(const char *key, size_t len, size_t wrap);
int vs_volume_key_get(struct crypt_device *cd, char *key, size_t *key_size,
		      const char *pass, size_t len);
int vs_print_mk(const char *key, size_t key_size, const char *stored);
int vs_tries_tty(void);
int vs_crypt_init(const char *header, const char *device, struct crypt_device **cd);
void vs_signals_hold(sigset_t *old);
void vs_signals_release(const sigset_t *old);

/* A veil table's parameters, split. */
struct vs_table {
	char cipher[128];
	char key[VS_KEY_FIELD_MAX];	/* hex, or :<size>:logon:<desc> */
	uint64_t iv_offset, offset, len;
	char dev[64];			/* major:minor */
	char path[128];			/* /dev/...: the LUKS2 device below any dif */
	char dif[128];			/* the dm-integrity device below, or "" */
	char foreign[16];		/* TCRYPT, BITLK, FVAULT2, LOOPAES, or "" */
	char features[1024];		/* without the count */
	char uuid[160];
	size_t key_bits;
	int keyring;			/* the key is a keyring reference */
	int read_only, suspended;
};

/* The fields of a veil or dm-crypt target's parameters (vs_table_split()). */
struct vs_target_fields {
	char cipher[128];
	char key[VS_KEY_FIELD_MAX];	/* hex, or :<size>:logon:<desc> */
	uint64_t iv_offset, offset;	/* sectors */
	char dev[64];			/* major:minor */
	char words[1024];		/* the optional words, without the count */
};

/* A temporary mapping of veilsetup's own (vs_dm_temp_begin()). */
struct vs_temp {
	char name[64];
	char uuid[VS_DM_UUID_LEN];
	char path[96];
	sigset_t old_mask;		/* the signal mask to restore */
};

/* One target of a loaded table (vs_dm_targets_get()). */
struct vs_dm_target {
	uint64_t start, len;		/* sectors */
	char type[32];
	char *params;			/* crypt_safe_alloc(VS_TABLE_MAX): may hold a key */
};

#define VS_DM_MAX_TARGETS	16	/* BitLocker maps 10 at most */

/* vs-table.c: veil table lines */
uint32_t vs_flag_of_word(const char *word);
uint64_t vs_device_sectors(const char *device);
void vs_dev_path(const char *majmin, char *out, size_t len);
int vs_dm_sysfs(const char *majmin, const char *what, char *out, size_t len);
int vs_table_split(const char *params, struct vs_target_fields *c);
size_t vs_key_bits(const char *key);
int vs_key_from_hex(const char *hex, struct vs_map *m);
int vs_key_equal_hex(const unsigned char *key, size_t len, const char *hex);
int vs_table_get(const char *name, struct vs_table *t);
int vs_table_get_closing(const char *name, struct vs_table *t);
const char *vs_uuid_type(const char *uuid);
int vs_cipher_is_null(const char *spec);
int vs_check_cipher(const char *spec, size_t key_bytes);
char *vs_table_build(const struct vs_map *m, uint64_t len, const char *key,
		     const char *words);
int vs_key_field(const struct vs_map *m, int keyring, const char *desc,
		 int32_t *key_id, char **out);
void vs_table_flags(const struct vs_table *t, struct vs_map *m);
void vs_keep_engine_words(const struct vs_table *t);

/* vs-open.c: mappings */
int vs_action_open(int argc, char **argv);
int vs_action_luks_open(int argc, char **argv);
int vs_action_create(int argc, char **argv);
int vs_action_close(int argc, char **argv);
int vs_action_resize(int argc, char **argv);
int vs_action_refresh(int argc, char **argv);
int vs_action_suspend(int argc, char **argv);
int vs_action_resume(int argc, char **argv);

/* vs-luks.c: LUKS headers and keyslots */
int vs_load_luks(const char *device, struct crypt_device **cd);
void vs_luks_dm_uuid(struct crypt_device *cd, const char *name, char *out, size_t len);
int vs_action_luks_format(int argc, char **argv);
int vs_action_add_key(int argc, char **argv);
int vs_action_remove_key(int argc, char **argv);
int vs_action_change_key(int argc, char **argv);
int vs_action_kill_slot(int argc, char **argv);
int vs_action_dump(int argc, char **argv);
int vs_action_uuid(int argc, char **argv);
int vs_action_is_luks(int argc, char **argv);
int vs_action_header_backup(int argc, char **argv);
int vs_action_header_restore(int argc, char **argv);
int vs_action_erase(int argc, char **argv);
int vs_action_convert(int argc, char **argv);
int vs_action_repair(int argc, char **argv);
int vs_action_config(int argc, char **argv);
int vs_action_convert_key(int argc, char **argv);

/* vs-token.c: LUKS2 tokens */
int vs_token_preferred(void);
int vs_token_volume_key(struct crypt_device *cd, char *key, size_t *key_size, int pin_tries);
struct crypt_keyslot_context;
int vs_token_add_key(struct crypt_device *cd, int slot_old, struct crypt_keyslot_context *kc,
		     int slot_new, struct crypt_keyslot_context *kc_new);
int vs_action_token(int argc, char **argv);

/* vs-dm.c: every libdevmapper call */
void vs_dm_log_default(void);
int vs_dm_temp_begin(struct vs_temp *tmp);
void vs_dm_temp_end(struct vs_temp *tmp);
int vs_dm_exists(const char *name);
int vs_dm_name_of_path(const char *path, char *name, size_t len);
int vs_dm_open_count(const char *name);
int vs_dm_uuid(const char *name, char *uuid, size_t len);
int vs_dm_create(const struct vs_map *m, const char *table, int read_only);
void vs_dm_create_failed(const char *name);
int vs_dm_create_linear(const struct vs_temp *tmp, const char *dev, uint64_t len);
int vs_dm_reload(const char *name, const char *table, int read_only);
void vs_dm_temp_remove_failed(const struct vs_temp *tmp);
int vs_dm_remove(const char *name);
int vs_dm_remove_deferred(const char *name);
int vs_dm_cancel_deferred(const char *name);
int vs_dm_suspend(const char *name);
int vs_dm_resume(const char *name);
int vs_dm_message(const char *name, const char *msg);
int vs_dm_get(const char *name, int status, char *type, size_t type_len,
	      char *params, size_t params_len, uint64_t *len, char *uuid,
	      size_t uuid_len, int *read_only, int *suspended);
int vs_dm_target_loaded(void);
int vs_dm_targets_get(const char *name, struct vs_dm_target *tg, int max, int *n,
		      char *uuid, size_t uuid_len, int *read_only);
void vs_dm_targets_free(struct vs_dm_target *tg, int n);
int vs_dm_targets_swap(const char *name, const struct vs_dm_target *tg, int n,
		       int read_only, int private_dev);

/* vs-key.c: passphrases, key files, the thread keyring */
#define VS_PASS_VERIFY		1	/* vs_read_passphrase(): ask twice */
#define VS_PASS_EMPTY_OK	2	/* an empty passphrase from a file or stdin */
int vs_read_passphrase(struct crypt_device *cd, const char *prompt,
		       const char *key_file, uint64_t offset, uint64_t size,
		       int flags, char **pass, size_t *len);
int vs_keyring_add(const char *desc, const unsigned char *key, size_t len);
void vs_keyring_drop(int32_t id);

/* vs-plain.c: plain volume keys */
int vs_plain_key(const char *path, struct vs_map *m);
int vs_plain_key_check(const struct vs_table *t, const struct vs_map *m, const char *key,
		       const char *loopaes);

/* vs-integrity.c: LUKS2 with dm-integrity below veil */
void vs_integrity_lower(const char *name, struct vs_table *t);
int vs_integrity_open(struct crypt_device *cd, struct vs_map *m, int keyring);
int vs_integrity_wipe(struct crypt_device *cd);

/* vs-signature.c: other signatures on a device luksFormat writes */
int vs_signatures_report(const char *path, size_t *count);
int vs_signatures_wipe(const char *path);

/* Progress of a long write (vs-progress.c): crypt_wipe()'s callback. */
struct vs_progress {
	const char *device;		/* as the JSON names it */
	int started;
	struct timeval start, last;
	uint64_t start_offset;
};
int vs_progress(uint64_t size, uint64_t offset, void *usrptr);

/* vs-foreign.c: TCRYPT, BITLK, FVAULT2, loop-AES */
int vs_foreign_type(const char *type);
int vs_foreign_check_options(const char *type);
int vs_foreign_open(const char *type, const char *device, const char *name);
int vs_foreign_volume_key(const char *name, const struct vs_table *t, struct vs_map *m);
const char *vs_foreign_uuid_type(const char *uuid);
void vs_foreign_table(const char *name, struct vs_table *t);
int vs_foreign_close(const char *name, const struct vs_table *t, int deferred);
int vs_action_foreign_dump(int argc, char **argv);

/* vs-status.c */
int vs_action_status(int argc, char **argv);

/* vs-loop.c: image files */
int vs_loop_attach(const char *file, int read_only, char *dev, size_t dev_len);
int vs_loop_backing_file(const char *dev, char *file, size_t len);
void vs_loop_refresh_capacity(const char *dev);

/* vs-nbd.c: network block devices */
void vs_nbd_explain(const char *dev);

/* vs-bench.c: cipher and PBKDF speed */
int vs_action_benchmark(int argc, char **argv);

#endif /* VEILSETUP_H */
