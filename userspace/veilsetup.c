// SPDX-License-Identifier: GPL-2.0
/*
 * veilsetup: cryptsetup's everyday actions, options, messages and exit
 * codes, on the veil target. Headers, keyslots, PBKDF, plain-mode hashing
 * and key files are libcryptsetup's; veilsetup maps the volume key with the
 * veil target (vs-open.c) instead of crypt.
 */
#include <ctype.h>
#include <errno.h>
#include <limits.h>
#include <getopt.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <libcryptsetup.h>

#include "veilsetup.h"

#ifndef VS_VERSION
#define VS_VERSION	"unknown"
#endif

struct action {
	const char *name;
	int (*fn)(int argc, char **argv);
	int min_args, max_args;
	const char *arg_help;
	const char *help;
	const char *options_as;	/* the action whose options it takes; NULL: its own */
	const char *type;	/* the device type it implies, over --type; NULL: none */
};

static const struct action actions[] = {
	{ "open", vs_action_open, 1, 2, "<device> [--type <type>] [<name>]",
	  "open device as <name>", NULL, NULL },
	{ "close", vs_action_close, 1, 1, "<name>", "close device (remove mapping)", NULL, NULL },
	{ "status", vs_action_status, 1, 1, "<name>", "show device status", NULL, NULL },
	{ "resize", vs_action_resize, 1, 1, "<name>", "resize active device", NULL, NULL },
	{ "refresh", vs_action_refresh, 1, 1, "<name>",
	  "refresh device with new flags (--allow-discards, --perf-*)", "open", NULL },
	{ "luksFormat", vs_action_luks_format, 1, 2, "<device> [<new key file>]",
	  "formats a LUKS device", NULL, NULL },
	{ "luksAddKey", vs_action_add_key, 1, 2, "<device> [<new key file>]",
	  "add key to LUKS device", NULL, NULL },
	{ "luksRemoveKey", vs_action_remove_key, 1, 2, "<device> [<key file>]",
	  "removes supplied key or key file from LUKS device", NULL, NULL },
	{ "luksChangeKey", vs_action_change_key, 1, 2, "<device> [<key file>]",
	  "changes supplied key or key file of LUKS device", NULL, NULL },
	/* As cryptsetup 2.6.1: <key file> is taken and not read; -d is. */
	{ "luksConvertKey", vs_action_convert_key, 1, 2, "<device> [<key file>]",
	  "converts a key to new pbkdf parameters", NULL, NULL },
	{ "luksKillSlot", vs_action_kill_slot, 2, 2, "<device> <key slot>",
	  "wipes key with number <key slot> from LUKS device", NULL, NULL },
	{ "luksUUID", vs_action_uuid, 1, 1, "<device>", "print UUID of LUKS device", NULL, NULL },
	{ "isLuks", vs_action_is_luks, 1, 1, "<device>",
	  "tests <device> for LUKS partition header", NULL, NULL },
	{ "luksDump", vs_action_dump, 1, 1, "<device>", "dump LUKS partition information",
	  NULL, NULL },
	{ "luksSuspend", vs_action_suspend, 1, 1, "<name>",
	  "Suspend LUKS device and wipe key (all IOs are frozen)", NULL, NULL },
	{ "luksResume", vs_action_resume, 1, 1, "<name>", "Resume suspended LUKS device",
	  NULL, NULL },
	{ "luksHeaderBackup", vs_action_header_backup, 1, 1, "<device>",
	  "Backup LUKS device header and keyslots", NULL, NULL },
	{ "luksHeaderRestore", vs_action_header_restore, 1, 1, "<device>",
	  "Restore LUKS device header and keyslots", NULL, NULL },
	{ "repair", vs_action_repair, 1, 1, "<device>", "try to repair on-disk metadata",
	  NULL, NULL },
	{ "erase", vs_action_erase, 1, 1, "<device>",
	  "erase all keyslots (remove encryption key)", NULL, NULL },
	{ "convert", vs_action_convert, 1, 1, "<device>", "convert LUKS from/to LUKS2 format",
	  NULL, NULL },
	{ "config", vs_action_config, 1, 1, "<device>",
	  "set permanent configuration options for LUKS2", NULL, NULL },
	{ "token", vs_action_token, 2, 2, "<add|remove|import|export|unassign> <device>",
	  "Manipulate LUKS2 tokens", NULL, NULL },
	{ "benchmark", vs_action_benchmark, 0, 0, "[--cipher <cipher>]", "benchmark cipher",
	  NULL, NULL },
	{ "tcryptDump", vs_action_foreign_dump, 1, 1, "<device>", "dump TCRYPT device information",
	  NULL, "tcrypt" },
	{ "bitlkDump", vs_action_foreign_dump, 1, 1, "<device>", "dump BITLK device information",
	  NULL, "bitlk" },
	{ "fvault2Dump", vs_action_foreign_dump, 1, 1, "<device>",
	  "dump FVAULT2 device information", NULL, "fvault2" },
	/* cryptsetup's older spellings */
	{ "luksOpen", vs_action_luks_open, 1, 2, "<device> <name>", "open LUKS device as <name>",
	  "open", NULL },
	{ "luksClose", vs_action_close, 1, 1, "<name>", "close device (remove mapping)",
	  "close", NULL },
	{ "create", vs_action_create, 2, 2, "<name> <device>", "create plain device <name>",
	  "open", NULL },
	{ "remove", vs_action_close, 1, 1, "<name>", "remove device", "close", NULL },
	{ "plainOpen", vs_action_open, 2, 2, "<device> <name>", "open plain device as <name>",
	  "open", "plain" },
	{ "loopaesOpen", vs_action_open, 2, 2, "<device> <name>",
	  "open loop-AES device as <name>", "open", "loopaes" },
	{ "tcryptOpen", vs_action_open, 1, 2, "<device> [<name>]",
	  "open TCRYPT device as <name>", "open", "tcrypt" },
	{ "bitlkOpen", vs_action_open, 1, 2, "<device> [<name>]",
	  "open BITLK device as <name>", "open", "bitlk" },
	{ "fvault2Open", vs_action_open, 1, 2, "<device> [<name>]",
	  "open FVAULT2 device as <name>", "open", "fvault2" },
	{ "plainClose", vs_action_close, 1, 1, "<name>", "close device", "close", NULL },
	{ "loopaesClose", vs_action_close, 1, 1, "<name>", "close device", "close", NULL },
	{ "tcryptClose", vs_action_close, 1, 1, "<name>", "close device", "close", NULL },
	{ "bitlkClose", vs_action_close, 1, 1, "<name>", "close device", "close", NULL },
	{ "fvault2Close", vs_action_close, 1, 1, "<name>", "close device", "close", NULL },
	{ "luksErase", vs_action_erase, 1, 1, "<device>", "erase all keyslots", "erase", NULL },
	{ "luksConfig", vs_action_config, 1, 1, "<device>",
	  "set permanent configuration options for LUKS2", "config", "luks2" },
	{ NULL, NULL, 0, 0, NULL, NULL, NULL, NULL },
};

/* Options with a value, parsed before any action runs. */
enum {
	OPT_KEYFILE_OFFSET = 256, OPT_NEW_KEYFILE_OFFSET, OPT_NEW_KEYFILE_SIZE,
	OPT_SECTOR_SIZE, OPT_ALLOW_DISCARDS, OPT_DISABLE_KEYRING, OPT_PBKDF,
	OPT_PBKDF_MEMORY, OPT_PBKDF_PARALLEL, OPT_PBKDF_ITERATIONS, OPT_JSON,
	OPT_VALUE_FEATURE, OPT_FEATURE, OPT_IV_LARGE, OPT_HEADER,
	OPT_BACKUP_FILE, OPT_TEST_PASSPHRASE, OPT_DEBUG, OPT_UUID, OPT_LABEL,
	OPT_PERSISTENT, OPT_PERF, OPT_ALIGN_PAYLOAD, OPT_NO_JOURNAL,
	OPT_NO_WIPE, OPT_LEGACY_PADDING, OPT_PROGRESS_FREQUENCY, OPT_PROGRESS_JSON, OPT_TOKEN_ID, OPT_TOKEN_ONLY, OPT_TOKEN_TYPE, OPT_TOKEN_REPLACE,
	OPT_DISABLE_EXTERNAL_TOKENS, OPT_KEY_DESCRIPTION, OPT_JSON_FILE,
	OPT_TCRYPT_FLAG, OPT_VERACRYPT, OPT_VERACRYPT_PIM, OPT_VERACRYPT_QUERY_PIM,
	OPT_LUKS2_METADATA_SIZE, OPT_LUKS2_KEYSLOTS_SIZE, OPT_KEYSLOT_CIPHER,
	OPT_KEYSLOT_KEY_SIZE, OPT_DEVICE_SIZE, OPT_NEW_KEYFILE, OPT_NEW_KEY_SLOT,
	OPT_NEW_TOKEN_ID, OPT_DEFERRED, OPT_CANCEL_DEFERRED, OPT_DUMP_VOLUME_KEY,
	OPT_DUMP_JSON, OPT_VOLUME_KEY_FILE, OPT_SHARED, OPT_REFRESH, OPT_USE_RANDOM,
	OPT_FORCE_PASSWORD, OPT_SUBSYSTEM, OPT_PRIORITY, OPT_UNBOUND, OPT_DISABLE_LOCKS,
	OPT_DEBUG_JSON, OPT_TEST_ARGS, OPT_USAGE,
};

/*
 * Every option, once: its name, value, short letter or OPT_*, its line in
 * --help (which the bash completion reads) and, for those only some
 * actions take, the actions that take them (cryptsetup 2.6's lists of its
 * src/cryptsetup_args.h, and veil's own that belong to a mapping or to
 * one action). Checked before any action runs, as cryptsetup's
 * tools_check_args(): an option is refused (exit 1), never ignored:
 * "erase -S 1" must not erase every keyslot.
 */
static const struct vs_option {
	const char *name;
	int has_arg;
	int val;
	const char *value;	/* the value's name in --help; NULL: none */
	const char *help;	/* NULL: an older spelling, not in --help */
	const char *only;	/* the actions that take it, or NULL: all */
	const char *word;	/* the table-line word it adds (veil-options.h) */
} options[] = {
	{ "type", required_argument, 'M', "TYPE",
	  "plain, luks, luks1, luks2, tcrypt, bitlk, fvault2, loopaes", NULL, NULL },
	{ "cipher", required_argument, 'c', "STRING", "the cipher spec", NULL, NULL },
	{ "key-size", required_argument, 's', "BITS", "the key size",
	  "open luksFormat luksAddKey benchmark", NULL },
	{ "hash", required_argument, 'h', "STRING", "plain mode's passphrase hash", NULL, NULL },
	{ "key-file", required_argument, 'd', "FILE", "read the key from a file", NULL, NULL },
	{ "keyfile-offset", required_argument, OPT_KEYFILE_OFFSET, "BYTES",
	  "skip this much of the key file", NULL, NULL },
	{ "keyfile-size", required_argument, 'l', "BYTES",
	  "read at most this much of the key file", NULL, NULL },
	{ "new-keyfile-offset", required_argument, OPT_NEW_KEYFILE_OFFSET, "BYTES",
	  "skip this much of the new key file", NULL, NULL },
	{ "new-keyfile-size", required_argument, OPT_NEW_KEYFILE_SIZE, "BYTES",
	  "read at most this much of the new key file", NULL, NULL },
	{ "new-keyfile", required_argument, OPT_NEW_KEYFILE, "FILE",
	  "luksAddKey: the new passphrase from a file", "luksAddKey", NULL },
	{ "new-key-slot", required_argument, OPT_NEW_KEY_SLOT, "NUM",
	  "luksAddKey: the new keyslot (then -S is the old one)", "luksAddKey", NULL },
	{ "new-token-id", required_argument, OPT_NEW_TOKEN_ID, "NUM",
	  "luksAddKey: the new passphrase from this LUKS2 token", "luksAddKey", NULL },
	{ "key-slot", required_argument, 'S', "NUM", "the keyslot to use",
	  "open config luksFormat luksAddKey luksChangeKey luksConvertKey luksDump luksResume token",
	  NULL },
	{ "verify-passphrase", no_argument, 'y', NULL, "ask for the passphrase twice", NULL, NULL },
	{ "offset", required_argument, 'o', "SECTORS", "where the data starts on the device",
	  "open luksFormat", NULL },
	{ "skip", required_argument, 'p', "SECTORS", "the IV offset", "open", NULL },
	{ "size", required_argument, 'b', "SECTORS", "the size of the mapping", "open resize", NULL },
	{ "device-size", required_argument, OPT_DEVICE_SIZE, "BYTES",
	  "the size of the mapping in bytes (K, M, G, S units)", "open resize", NULL },
	{ "sector-size", required_argument, OPT_SECTOR_SIZE, "BYTES",
	  "the encryption sector size", "open luksFormat", NULL },
	{ "iv-large-sectors", no_argument, OPT_IV_LARGE, NULL,
	  "count IVs in encryption sectors", "open", NULL },
	{ "allow-discards", no_argument, OPT_ALLOW_DISCARDS, NULL, "pass discards down", "open", NULL },
	{ "integrity", required_argument, 'I', "STRING",
	  "LUKS2 integrity: hmac-sha256, hmac-sha512, hmac-sha1, cmac-aes, aead, poly1305",
	  "luksFormat", NULL },
	/* cryptsetup 2.6 takes it with any action (luksFormat's wipe has no journal anyway) */
	{ "integrity-no-journal", no_argument, OPT_NO_JOURNAL, NULL,
	  "dm-integrity without its journal", NULL, NULL },
	{ "integrity-no-wipe", no_argument, OPT_NO_WIPE, NULL,
	  "leave the tags of a new volume unwritten", "luksFormat", NULL },
	/* cryptsetup 2.6 takes it with any action; only luksFormat's wipe prints progress */
	{ "progress-frequency", required_argument, OPT_PROGRESS_FREQUENCY, "SECS",
	  "luksFormat's wipe: a progress line every SECS seconds", NULL, NULL },
	{ "progress-json", no_argument, OPT_PROGRESS_JSON, NULL,
	  "luksFormat's wipe: progress as JSON lines", "luksFormat", NULL },
	/* cryptsetup 2.6 takes it with any action; only luksFormat uses it */
	{ "integrity-legacy-padding", no_argument, OPT_LEGACY_PADDING, NULL,
	  "luksFormat: dm-integrity's larger padding, for old kernels", NULL, NULL },
	{ "readonly", no_argument, 'r', NULL, "map read-only", NULL, NULL },
	{ "disable-keyring", no_argument, OPT_DISABLE_KEYRING, NULL,
	  "the key in the table, not the keyring", NULL, NULL },
	{ "hex-key", no_argument, OPT_DISABLE_KEYRING, NULL, "the same as --disable-keyring",
	  NULL, NULL },
	{ "header", required_argument, OPT_HEADER, "FILE", "a detached LUKS header", NULL, NULL },
	{ "header-backup-file", required_argument, OPT_BACKUP_FILE, "FILE",
	  "the file of luksHeaderBackup and luksHeaderRestore", NULL, NULL },
	{ "token-id", required_argument, OPT_TOKEN_ID, "NUM",
	  "the LUKS2 token to open with, or for the token action", NULL, NULL },
	{ "token-only", no_argument, OPT_TOKEN_ONLY, NULL,
	  "no passphrase if no token opens the volume", NULL, NULL },
	{ "token-type", required_argument, OPT_TOKEN_TYPE, "STRING",
	  "open only with tokens of this type", NULL, NULL },
	{ "token-replace", no_argument, OPT_TOKEN_REPLACE, NULL,
	  "token add, import: replace the token --token-id names", "token", NULL },
	{ "disable-external-tokens", no_argument, OPT_DISABLE_EXTERNAL_TOKENS, NULL,
	  "no LUKS2 token plugins (TPM2, FIDO2, PKCS#11)", NULL, NULL },
	{ "key-description", required_argument, OPT_KEY_DESCRIPTION, "STRING",
	  "token add: the user keyring key with the passphrase", NULL, NULL },
	{ "json-file", required_argument, OPT_JSON_FILE, "FILE",
	  "token import, export: a file, not stdin or stdout", NULL, NULL },
	{ "tcrypt-hidden", no_argument, OPT_TCRYPT_FLAG, NULL,
	  "TCRYPT: the hidden volume's header", "open tcryptDump", NULL },
	{ "tcrypt-system", no_argument, OPT_TCRYPT_FLAG, NULL,
	  "TCRYPT: a system volume (with boot loader)", "open tcryptDump", NULL },
	{ "tcrypt-backup", no_argument, OPT_TCRYPT_FLAG, NULL,
	  "TCRYPT: the backup header", "open tcryptDump", NULL },
	{ "veracrypt", no_argument, OPT_VERACRYPT, NULL,
	  "TCRYPT: VeraCrypt too (the default)", NULL, NULL },
	{ "disable-veracrypt", no_argument, OPT_VERACRYPT, NULL,
	  "TCRYPT: TrueCrypt headers only", "open tcryptDump", NULL },
	{ "veracrypt-pim", required_argument, OPT_VERACRYPT_PIM, "INT",
	  "VeraCrypt's Personal Iteration Multiplier", "open tcryptDump", NULL },
	/* cryptsetup 2.6 takes it with any action too */
	{ "veracrypt-query-pim", no_argument, OPT_VERACRYPT_QUERY_PIM, NULL,
	  "ask for VeraCrypt's PIM", NULL, NULL },
	{ "test-passphrase", no_argument, OPT_TEST_PASSPHRASE, NULL,
	  "check the passphrase, map nothing", "open", NULL },
	{ "tries", required_argument, 'T', "NUM", "passphrase attempts", NULL, NULL },
	{ "timeout", required_argument, 't', "SECONDS", "passphrase prompt timeout", NULL, NULL },
	{ "pbkdf", required_argument, OPT_PBKDF, "STRING", "argon2id, argon2i or pbkdf2",
	  "luksFormat luksAddKey luksChangeKey luksConvertKey benchmark", NULL },
	{ "pbkdf-memory", required_argument, OPT_PBKDF_MEMORY, "KIB", "argon2's memory cost",
	  NULL, NULL },
	{ "pbkdf-parallel", required_argument, OPT_PBKDF_PARALLEL, "NUM", "argon2's threads",
	  NULL, NULL },
	{ "pbkdf-force-iterations", required_argument, OPT_PBKDF_ITERATIONS, "NUM",
	  "PBKDF iterations, no benchmark", "luksFormat luksAddKey luksChangeKey luksConvertKey",
	  NULL },
	{ "iter-time", required_argument, 'i', "MS", "PBKDF time",
	  "luksFormat luksAddKey luksChangeKey luksConvertKey benchmark", NULL },
	{ "uuid", required_argument, OPT_UUID, "UUID", "the LUKS header's UUID",
	  "luksFormat luksUUID", NULL },
	{ "label", required_argument, OPT_LABEL, "STRING", "the LUKS2 header's label",
	  "config luksFormat", NULL },
	{ "subsystem", required_argument, OPT_SUBSYSTEM, "STRING",
	  "the LUKS2 header's subsystem label", "config luksFormat", NULL },
	{ "priority", required_argument, OPT_PRIORITY, "STRING",
	  "config: the keyslot's priority: ignore, normal, prefer", "config", NULL },
	{ "unbound", no_argument, OPT_UNBOUND, NULL,
	  "a LUKS2 keyslot of no data segment, or a token of no keyslot",
	  "luksAddKey luksDump open token", NULL },
	{ "align-payload", required_argument, OPT_ALIGN_PAYLOAD, "SECTORS",
	  "align the data to this many sectors", "luksFormat", NULL },
	{ "luks2-metadata-size", required_argument, OPT_LUKS2_METADATA_SIZE, "BYTES",
	  "each LUKS2 JSON metadata copy, with its binary header", "luksFormat", NULL },
	{ "luks2-keyslots-size", required_argument, OPT_LUKS2_KEYSLOTS_SIZE, "BYTES",
	  "the LUKS2 keyslots area", "luksFormat", NULL },
	{ "keyslot-cipher", required_argument, OPT_KEYSLOT_CIPHER, "STRING",
	  "the cipher of the new LUKS2 keyslot",
	  "luksFormat luksAddKey luksChangeKey luksConvertKey", NULL },
	{ "keyslot-key-size", required_argument, OPT_KEYSLOT_KEY_SIZE, "BITS",
	  "the key size of --keyslot-cipher", "luksFormat luksAddKey luksChangeKey luksConvertKey",
	  NULL },
	{ "volume-key-file", required_argument, OPT_VOLUME_KEY_FILE, "FILE",
	  "the raw volume key: read by open, luksFormat, luksAddKey; written by luksDump",
	  NULL, NULL },
	{ "master-key-file", required_argument, OPT_VOLUME_KEY_FILE, "FILE", NULL, NULL, NULL },
	{ "dump-volume-key", no_argument, OPT_DUMP_VOLUME_KEY, NULL,
	  "luksDump: the volume key (asks YES, then the passphrase)", NULL, NULL },
	{ "dump-master-key", no_argument, OPT_DUMP_VOLUME_KEY, NULL, NULL, NULL, NULL },
	{ "dump-json-metadata", no_argument, OPT_DUMP_JSON, NULL,
	  "luksDump: the LUKS2 JSON metadata", NULL, NULL },
	{ "deferred", no_argument, OPT_DEFERRED, NULL,
	  "close: remove once the last user closes it", "close", NULL },
	{ "cancel-deferred", no_argument, OPT_CANCEL_DEFERRED, NULL,
	  "close: cancel a deferred removal", "close", NULL },
	{ "persistent", no_argument, OPT_PERSISTENT, NULL,
	  "store the flags in the LUKS2 header", "open", NULL },
	{ "shared", no_argument, OPT_SHARED, NULL,
	  "plain: map a device that is mapped already", "open", NULL },
	{ "refresh", no_argument, OPT_REFRESH, NULL,
	  "open --refresh NAME: the refresh action", "open", NULL },
	{ "use-random", no_argument, OPT_USE_RANDOM, NULL,
	  "luksFormat: the volume key from /dev/random", "luksFormat", NULL },
	{ "use-urandom", no_argument, OPT_USE_RANDOM, NULL,
	  "luksFormat: the volume key from /dev/urandom", "luksFormat", NULL },
	{ "force-password", no_argument, OPT_FORCE_PASSWORD, NULL,
	  "no password quality check (veilsetup makes none)", NULL, NULL },
	{ "perf-" VEIL_OPT_SAME_CPU, no_argument, OPT_PERF, NULL,
	  "dm-crypt's flag (table-line.md)", NULL, VEIL_OPT_SAME_CPU },
	{ "perf-" VEIL_OPT_SUBMIT_FROM_CRYPT, no_argument, OPT_PERF, NULL,
	  "dm-crypt's flag (table-line.md)", NULL, VEIL_OPT_SUBMIT_FROM_CRYPT },
	{ "perf-" VEIL_OPT_NO_READ_WQ, no_argument, OPT_PERF, NULL,
	  "dm-crypt's flag (table-line.md)", NULL, VEIL_OPT_NO_READ_WQ },
	{ "perf-" VEIL_OPT_NO_WRITE_WQ, no_argument, OPT_PERF, NULL,
	  "dm-crypt's flag (table-line.md)", NULL, VEIL_OPT_NO_WRITE_WQ },
	{ "batch-mode", no_argument, 'q', NULL, "no questions", NULL, NULL },
	{ "verbose", no_argument, 'v', NULL, "say how the command ended", NULL, NULL },
	{ "debug", no_argument, OPT_DEBUG, NULL, "libcryptsetup's debug messages", NULL, NULL },
	{ "debug-json", no_argument, OPT_DEBUG_JSON, NULL, "--debug with the JSON metadata",
	  NULL, NULL },
	{ "disable-locks", no_argument, OPT_DISABLE_LOCKS, NULL,
	  "no locking of the on-disk metadata", NULL, NULL },
	{ "test-args", no_argument, OPT_TEST_ARGS, NULL,
	  "check the command line, run no action", NULL, NULL },
	{ "version", no_argument, 'V', NULL, "print the version", NULL, NULL },
	{ "json", no_argument, OPT_JSON, NULL, "JSON output", "status benchmark", NULL },
	{ "help", no_argument, '?', NULL, "this text", NULL, NULL },
	{ "usage", no_argument, OPT_USAGE, NULL, "a brief usage", NULL, NULL },
	/* veil's own engine options (docs/table-line.md): a mapping's */
	{ "fanout-chunk", required_argument, OPT_VALUE_FEATURE, "BYTES",
	  "veil: the chunk spread over CPUs", "open", VEIL_OPTV_FANOUT_CHUNK },
	{ "keystream-ahead-max", required_argument, OPT_VALUE_FEATURE, "BYTES",
	  "veil: the largest CTR read with keystream ahead", "open", VEIL_OPTV_KS_AHEAD_MAX },
	{ "no-fanout", no_argument, OPT_FEATURE, NULL, "veil: one CPU per request", "open",
	  VEIL_OPT_NO_FANOUT },
	{ "no-keystream-ahead", no_argument, OPT_FEATURE, NULL,
	  "veil: no CTR keystream during reads", "open", VEIL_OPT_NO_KS_AHEAD },
	/* the --perf-* options under veil's older names */
	{ "same-cpu-crypt", no_argument, OPT_PERF, NULL, NULL, NULL, VEIL_OPT_SAME_CPU },
	{ "submit-from-crypt-cpus", no_argument, OPT_PERF, NULL, NULL, NULL,
	  VEIL_OPT_SUBMIT_FROM_CRYPT },
	{ "no-read-workqueue", no_argument, OPT_PERF, NULL, NULL, NULL, VEIL_OPT_NO_READ_WQ },
	{ "no-write-workqueue", no_argument, OPT_PERF, NULL, NULL, NULL, VEIL_OPT_NO_WRITE_WQ },
};

#define N_OPTIONS	(sizeof(options) / sizeof(options[0]))

/* getopt_long()'s view of options[], filled in by main(). */
static struct option long_opts[N_OPTIONS + 1];
/* Which of options[] the command line gave. */
static int option_given[N_OPTIONS];

/**
 * vs_option_given() - whether the command line gave an option
 * @name: its long name, without the dashes.
 *
 * For the checks that depend on an option being given at all, not on its
 * value (cryptsetup's ARG_SET()).
 *
 * Return: 1 if given, else 0.
 */
int vs_option_given(const char *name)
{
	size_t i;

	for (i = 0; i < N_OPTIONS; i++)
		if (option_given[i] && !strcmp(options[i].name, name))
			return 1;
	return 0;
}


static void usage(FILE *f)
{
	const struct vs_option *o;
	const struct action *a;
	const char *plugins;

	fprintf(f, "veilsetup " VS_VERSION "\n"
		"Usage: veilsetup [OPTION...] <action> <action-specific>\n\n"
		"<action> is one of:\n");
	for (a = actions; a->name; a++)
		fprintf(f, "\t%s %s - %s\n", a->name, a->arg_help, a->help);
	fprintf(f, "\nOptions (as cryptsetup's; veilsetup(8) says more):\n");
	for (o = options; o < options + N_OPTIONS; o++) {
		char left[64];

		if (!o->help)
			continue;
		if (o->val < 128)
			snprintf(left, sizeof(left), "-%c, --%s%s%s", o->val, o->name,
				 o->value ? "=" : "", o->value ?: "");
		else
			snprintf(left, sizeof(left), "    --%s%s%s", o->name,
				 o->value ? "=" : "", o->value ?: "");
		fprintf(f, "  %-36s %s\n", left, o->help);
	}
	fprintf(f, "\nDefault compiled-in device cipher parameters:\n"
		"\tplain: aes-cbc-essiv:sha256, Key: 256 bits, Password hashing: ripemd160\n"
		"\tLUKS: aes-xts-plain64, Key: 256 bits (512 with XTS), PBKDF: libcryptsetup's\n");
	/* libcryptsetup's, which loads the plugins (TPM2, FIDO2, PKCS#11) */
	plugins = crypt_token_external_path();
	if (plugins)
		fprintf(f, "\nLUKS2 external token plugin support is compiled-in.\n"
			"LUKS2 external token plugin path: %s.\n", plugins);
	else
		fprintf(f, "\nLUKS2 external token plugin support is disabled.\n");
}

/* One "[...]" of usage_brief(), wrapped as popt wraps at 79 columns. */
static void usage_item(const char *item, size_t *col)
{
	size_t len = strlen(item);

	if (*col + 1 + len > 79) {
		printf("\n       ");
		*col = 7;
	}
	printf(" %s", item);
	*col += 1 + len;
}

/* --usage: every option, help's first, as popt's. */
static void usage_brief(void)
{
	char flags[32] = "[-?V", item[80];
	const struct vs_option *o;
	size_t col, n = 4;

	for (o = options; o < options + N_OPTIONS; o++)
		if (o->val < 128 && !o->has_arg && !strchr(flags, o->val) && n < sizeof(flags) - 2)
			flags[n++] = o->val;
	flags[n++] = ']';
	flags[n] = '\0';
	col = printf("Usage: veilsetup");
	usage_item(flags, &col);
	usage_item("[-?|--help]", &col);
	usage_item("[--usage]", &col);
	usage_item("[-V|--version]", &col);
	for (o = options; o < options + N_OPTIONS; o++) {
		if (o->val == '?' || o->val == 'V' || o->val == OPT_USAGE)
			continue;
		if (o->val < 128)
			snprintf(item, sizeof(item), "[-%c|--%s%s%s]", o->val, o->name,
				 o->value ? "=" : "", o->value ?: "");
		else
			snprintf(item, sizeof(item), "[--%s%s%s]", o->name,
				 o->value ? "=" : "", o->value ?: "");
		usage_item(item, &col);
	}
	usage_item("[OPTION...] <action> <action-specific>", &col);
	printf("\n");
}

/* What each exit code means, in cryptsetup's words. */
static const char *const exit_text[] = {
	[VS_EXIT_OK] = "success",
	[VS_EXIT_PARAMS] = "wrong or missing parameters",
	[VS_EXIT_PERM] = "no permission or bad passphrase",
	[VS_EXIT_NOMEM] = "out of memory",
	[VS_EXIT_DEVICE] = "wrong device or file specified",
	[VS_EXIT_BUSY] = "device already exists or device is busy",
};

/* cryptsetup's exit code for an errno. */
static int exit_code(int r)
{
	switch (r) {
	case 0:
		return VS_EXIT_OK;
	case -EEXIST:
	case -EBUSY:
		return VS_EXIT_BUSY;
	case -ENOTBLK:
	case -ENODEV:
		return VS_EXIT_DEVICE;
	case -ENOMEM:
		return VS_EXIT_NOMEM;
	case -EPERM:
		return VS_EXIT_PERM;
	default:
		return VS_EXIT_PARAMS;
	}
}

static void add_feature(const char *word)
{
	size_t n = strlen(opt.features);

	snprintf(opt.features + n, sizeof(opt.features) - n, " %s", word);
}

/* --fanout-chunk 8192 -> fanout_chunk:8192: @word and @value of --@name */
static int add_engine_option(const char *name, const char *word, const char *value)
{
	char feat[64], what[64];
	uint64_t v;
	int n;

	n = snprintf(feat, sizeof(feat), "%s", word);
	if (value) {
		snprintf(what, sizeof(what), "--%s", name);
		if (vs_number_arg(value, what, UINT32_MAX, &v))
			return -EINVAL;
		snprintf(feat + n, sizeof(feat) - n, ":%" PRIu64, v);
	}
	add_feature(feat);
	return 0;
}

/* A numeric option into @out (at most @max); a message and -EINVAL else. */
static int num(const char *what, uint64_t max, uint64_t *out)
{
	return vs_number_arg(optarg, what, max, out);
}

/* Whether the space-separated @list names @word. */
static int in_list(const char *list, const char *word)
{
	size_t n = strlen(word);
	const char *p;

	for (p = list; (p = strstr(p, word)); p += n)
		if ((p == list || p[-1] == ' ') && (p[n] == ' ' || !p[n]))
			return 1;
	return 0;
}

/* cryptsetup's refusal of an option the action does not take. */
static int check_options(const struct action *a)
{
	const char *action = a->options_as ?: a->name;
	size_t i;

	for (i = 0; i < N_OPTIONS; i++) {
		if (option_given[i] && options[i].only && !in_list(options[i].only, action)) {
			fprintf(stderr, "veilsetup: Option --%s is not allowed with %s action.\n",
				options[i].name, action);
			return -EINVAL;
		}
	}
	return 0;
}

/* --device-size in 512-byte sectors; opt.size takes it in main(). */
static uint64_t device_size;

/*
 * cryptsetup's checks of options that go together or exclude each other,
 * made before any action runs, with its messages (exit code 1).
 */
static int check_combinations(const struct action *a)
{
	const char *action = a->options_as ?: a->name, *msg = NULL;

	if (!opt.keyslot_cipher != !opt.keyslot_key_bits)
		msg = "Options --keyslot-cipher and --keyslot-key-size must be used together.";
	else if (device_size && vs_option_given("size"))
		msg = "Options --device-size and --size cannot be combined.";
	else if (!strcmp(action, "close") && opt.deferred && opt.cancel_deferred)
		msg = "Options --cancel-deferred and --deferred cannot be used at the same time.";
	else if (vs_option_given("use-random") && vs_option_given("use-urandom"))
		msg = "Only one of --use-[u]random options is allowed.";
	else if (opt.persistent && opt.test_passphrase)
		msg = "Option --persistent is not allowed with --test-passphrase.";
	else if (opt.refresh && opt.test_passphrase)
		msg = "Options --refresh and --test-passphrase are mutually exclusive.";
	else if (!strcmp(action, "luksFormat") && opt.offset && opt.align_payload)
		msg = "Options --align-payload and --offset cannot be combined.";
	else if (!strcmp(action, "luksFormat") && opt.integrity_no_wipe && !opt.integrity)
		msg = "Option --integrity-no-wipe can be used only for format action with integrity extension.";
	else if (!strcmp(action, "config") && vs_option_given("priority") &&
		 opt.key_slot == CRYPT_ANY_SLOT)
		msg = "Keyslot specification is required.";
	else if (!strcmp(action, "luksAddKey") && opt.unbound && !opt.key_bits)
		msg = "Key size is required with --unbound option.";
	else if (!strcmp(action, "luksDump") && opt.unbound && opt.key_slot == CRYPT_ANY_SLOT)
		msg = "Keyslot specification is required.";
	if (!msg)
		return 0;
	fprintf(stderr, "veilsetup: %s\n", msg);
	return -EINVAL;
}

static int parse_option(int c, int idx)
{
	uint64_t v = 0;
	int r = 0;

	switch (c) {
	case 'c': opt.cipher = optarg; break;
	case 's':
		r = num("key size", VS_MAX_KEY * 8, &v);
		if (!r && (!v || v % 8)) {
			fprintf(stderr, "Key size in bits must be a multiple of 8 bits.\n");
			r = -EINVAL;
		}
		opt.key_bits = v;
		break;
	case 'h': opt.hash = optarg; break;
	case 'd':
		/* As cryptsetup: more than one only for TCRYPT (main()). */
		if (opt.key_file_count == VS_MAX_KEY_FILES) {
			fprintf(stderr, "Too many --key-file options.\n");
			r = -EINVAL;
			break;
		}
		opt.key_files[opt.key_file_count++] = optarg;
		opt.key_file = optarg;
		break;
	case 'l': r = num("keyfile size", 8 * 1024 * 1024, &opt.keyfile_size); break;
	case OPT_KEYFILE_OFFSET:
		r = num("keyfile offset", UINT64_MAX, &opt.keyfile_offset);
		break;
	case OPT_NEW_KEYFILE_OFFSET:
		r = num("new keyfile offset", UINT64_MAX, &opt.new_keyfile_offset);
		break;
	case OPT_NEW_KEYFILE_SIZE:
		r = num("new keyfile size", 8 * 1024 * 1024, &opt.new_keyfile_size);
		break;
	case 'S':
		r = num("key slot", 31, &v);
		opt.key_slot = v;
		break;
	case OPT_TOKEN_ID:
		r = num("token id", INT32_MAX, &v);
		opt.token_id = v;
		break;
	case OPT_TOKEN_ONLY: opt.token_only = 1; break;
	case OPT_TOKEN_TYPE: opt.token_type = optarg; break;
	case OPT_TOKEN_REPLACE: opt.token_replace = 1; break;
	/* As cryptsetup: before any header is loaded. */
	case OPT_DISABLE_EXTERNAL_TOKENS: crypt_token_external_disable(); break;
	case OPT_KEY_DESCRIPTION: opt.key_description = optarg; break;
	case OPT_JSON_FILE: opt.json_file = optarg; break;
	case 'y': opt.verify = 1; break;
	case 'o': r = num("offset", UINT64_MAX >> 9, &opt.offset); break;
	case 'p':
		r = num("skip", UINT64_MAX >> 9, &opt.skip);
		break;
	case 'b':
		r = num("size", UINT64_MAX >> 9, &opt.size);
		break;
	case OPT_SECTOR_SIZE:
		r = num("sector size", 4096, &v);
		if (!r && (v < 512 || (v & (v - 1)))) {
			fprintf(stderr, "Unsupported encryption sector size.\n");
			r = -EINVAL;
		}
		opt.sector_size = v;
		break;
	case OPT_ALLOW_DISCARDS:
		opt.allow_discards = 1;
		break;
	case 'I': opt.integrity = optarg; break;
	case OPT_NO_WIPE: opt.integrity_no_wipe = 1; break;
	case OPT_LEGACY_PADDING: opt.integrity_legacy_padding = 1; break;
	case OPT_PROGRESS_FREQUENCY:
		r = num("progress frequency", UINT32_MAX, &v);
		opt.progress_frequency = v;
		break;
	case OPT_PROGRESS_JSON: opt.progress_json = 1; break;
	case OPT_NO_JOURNAL:
		opt.perf_flags |= CRYPT_ACTIVATE_NO_JOURNAL;
		break;
	case OPT_IV_LARGE:
		opt.iv_large_sectors = 1;
		break;
	case 'r': opt.read_only = 1; break;
	case OPT_DISABLE_KEYRING: opt.disable_keyring = 1; break;
	case 'M': opt.type = optarg; break;
	case OPT_HEADER: opt.header = optarg; break;
	case OPT_BACKUP_FILE: opt.backup_file = optarg; break;
	case OPT_TCRYPT_FLAG:
		opt.tcrypt_flags |= !strcmp(options[idx].name, "tcrypt-hidden") ?
				    CRYPT_TCRYPT_HIDDEN_HEADER :
				    !strcmp(options[idx].name, "tcrypt-system") ?
				    CRYPT_TCRYPT_SYSTEM_HEADER : CRYPT_TCRYPT_BACKUP_HEADER;
		break;
	/* --veracrypt is the default; vs_foreign_check_options() checks both. */
	case OPT_VERACRYPT: break;
	case OPT_VERACRYPT_PIM:
		r = num("VeraCrypt PIM", UINT32_MAX, &v);
		opt.veracrypt_pim = v;
		break;
	case OPT_VERACRYPT_QUERY_PIM: opt.veracrypt_query_pim = 1; break;
	case OPT_TEST_PASSPHRASE:
		opt.test_passphrase = 1;
		break;
	case 'T':
		r = num("tries", 1000, &v);
		opt.tries = v ?: 1;
		break;
	case 't':
		r = num("timeout", 86400 * 365, &v);
		opt.timeout = v;
		break;
	case OPT_PBKDF: opt.pbkdf = optarg; break;
	case OPT_PBKDF_MEMORY:
		r = num("PBKDF memory", 4 * 1024 * 1024, &v);
		opt.pbkdf_memory = v;
		break;
	case OPT_PBKDF_PARALLEL:
		r = num("PBKDF parallel threads", 64, &v);
		opt.pbkdf_parallel = v;
		break;
	case OPT_PBKDF_ITERATIONS:
		r = num("PBKDF iterations", UINT32_MAX, &v);
		opt.pbkdf_iterations = v;
		break;
	case 'i':
		r = num("iteration time", UINT32_MAX, &v);
		opt.iter_time = v;
		break;
	case OPT_UUID: opt.uuid = optarg; break;
	case OPT_LABEL: opt.label = optarg; break;
	case OPT_SUBSYSTEM: opt.subsystem = optarg; break;
	case OPT_PRIORITY:
		/* As cryptsetup: while parsing, before the action is known. */
		if (!strcmp(optarg, "ignore"))
			opt.priority = CRYPT_SLOT_PRIORITY_IGNORE;
		else if (!strcmp(optarg, "normal"))
			opt.priority = CRYPT_SLOT_PRIORITY_NORMAL;
		else if (!strcmp(optarg, "prefer"))
			opt.priority = CRYPT_SLOT_PRIORITY_PREFER;
		else {
			fprintf(stderr, "veilsetup: Option --priority can be only ignore/normal/prefer.\n");
			r = -EINVAL;
		}
		break;
	case OPT_UNBOUND: opt.unbound = 1; break;
	/* main() acts on these once the command line is checked */
	case OPT_DISABLE_LOCKS:
	case OPT_TEST_ARGS:
		break;
	case OPT_ALIGN_PAYLOAD:
		r = num("align payload", UINT32_MAX, &v);
		opt.align_payload = v;
		break;
	case OPT_PERSISTENT:
		opt.persistent = 1;
		break;
	/* --perf-no_read_workqueue and the older --no-read-workqueue */
	case OPT_PERF: opt.perf_flags |= vs_flag_of_word(options[idx].word); break;
	case 'q': opt.batch = 1; break;
	case 'v': opt.verbose = 1; break;
	/* the level is set in main(): --debug-json wins, in any order */
	case OPT_DEBUG:
	case OPT_DEBUG_JSON:
		opt.debug = opt.verbose = 1;
		break;
	case OPT_JSON: opt.json = 1; break;
	case OPT_LUKS2_METADATA_SIZE:
		r = vs_size_arg(optarg, options[idx].name, &opt.luks2_metadata_size);
		break;
	case OPT_LUKS2_KEYSLOTS_SIZE:
		r = vs_size_arg(optarg, options[idx].name, &opt.luks2_keyslots_size);
		break;
	case OPT_KEYSLOT_CIPHER: opt.keyslot_cipher = optarg; break;
	case OPT_KEYSLOT_KEY_SIZE:
		/* As cryptsetup: a number over 0, whole bytes. */
		r = num("keyslot key size", UINT32_MAX, &v);
		if (!r && (!v || v % 8)) {
			fprintf(stderr, v ? "veilsetup: Key size must be a multiple of 8 bits\n" :
				"veilsetup: invalid numeric value\n");
			r = -EINVAL;
		}
		opt.keyslot_key_bits = v;
		break;
	case OPT_DEVICE_SIZE:
		/* bytes, kept in opt.size as 512-byte sectors (main()) */
		r = vs_size_arg(optarg, options[idx].name, &v);
		if (!r && !v) {
			fprintf(stderr, "veilsetup: invalid numeric value\n");
			r = -EINVAL;
		} else if (!r && v % 512) {
			fprintf(stderr, "veilsetup: Device size must be multiple of 512 bytes sector.\n");
			r = -EINVAL;
		}
		device_size = v / 512;
		break;
	case OPT_NEW_KEYFILE: opt.new_key_file = optarg; break;
	case OPT_NEW_KEY_SLOT:
		r = num("new key slot", 31, &v);
		opt.new_key_slot = v;
		break;
	case OPT_NEW_TOKEN_ID:
		r = num("new token id", INT32_MAX, &v);
		opt.new_token_id = v;
		break;
	case OPT_DEFERRED: opt.deferred = 1; break;
	case OPT_CANCEL_DEFERRED: opt.cancel_deferred = 1; break;
	case OPT_DUMP_VOLUME_KEY: opt.dump_volume_key = 1; break;
	case OPT_DUMP_JSON: opt.dump_json = 1; break;
	case OPT_VOLUME_KEY_FILE: opt.volume_key_file = optarg; break;
	case OPT_SHARED: opt.shared = 1; break;
	case OPT_REFRESH: opt.refresh = 1; break;
	case OPT_USE_RANDOM:
		opt.rng_type = strcmp(options[idx].name, "use-random") ? CRYPT_RNG_URANDOM :
			       CRYPT_RNG_RANDOM;
		break;
	/* As a cryptsetup built without pwquality or passwdqc: nothing to skip. */
	case OPT_FORCE_PASSWORD: break;
	case OPT_VALUE_FEATURE:
	case OPT_FEATURE:
		/* a mapping's options: a LUKS header has no place for them */
		r = add_engine_option(options[idx].name, options[idx].word,
				      c == OPT_VALUE_FEATURE ? optarg : NULL);
		break;
	default: r = -EINVAL; break;
	}
	return r;
}

/*
 * Whether the long option getopt_long() just took for options[@idx] was
 * typed in full. cryptsetup's popt takes no abbreviations: "--verb" is an
 * unknown option there, and "--perf-no_" no choice between two. The word
 * is at optind - 1 ("--name", "--name=value"), or at optind - 2 when the
 * value was the next word.
 */
static int typed_in_full(char **argv, int idx)
{
	const char *w = argv[optind - 1];
	size_t len;

	if (options[idx].has_arg == required_argument && optind >= 3 &&
	    !(!strncmp(w, "--", 2) && strchr(w, '=')))
		w = argv[optind - 2];
	len = strcspn(w + 2, "=");
	if (!strncmp(w, "--", 2) && len == strlen(options[idx].name) &&
	    !strncmp(w + 2, options[idx].name, len))
		return 1;
	fprintf(stderr, "veilsetup: %.*s: unknown option or missing value.\n",
		(int)len + 2, w);
	return 0;
}

/*
 * cryptsetup's UUID=<uuid> for a device: /dev/disk/by-uuid/<uuid> in
 * lower case, into @buf; @spec itself if it is not one (or NULL).
 */
static const char *uuid_or_device(const char *spec, char *buf, size_t len)
{
	const char *hex;
	size_t n;

	if (!spec || strncmp(spec, "UUID=", 5))
		return spec;
	n = snprintf(buf, len, "/dev/disk/by-uuid/");
	for (hex = spec + 5; *hex && n + 1 < len; hex++) {
		if (!isxdigit((unsigned char)*hex) && *hex != '-')
			return spec;
		buf[n++] = tolower((unsigned char)*hex);
	}
	buf[n] = '\0';
	return buf;
}

int main(int argc, char **argv)
{
	static char header_path[PATH_MAX], device_path[PATH_MAX];
	const struct action *a;
	int c, idx, nargs, r;
	size_t i;

	crypt_set_log_callback(NULL, vs_log, NULL);
	for (i = 0; i < N_OPTIONS; i++)
		long_opts[i] = (struct option){ options[i].name, options[i].has_arg, NULL,
						options[i].val };
	opterr = 0;
	idx = -1;
	while ((c = getopt_long(argc, argv, "c:s:h:d:l:S:yo:p:b:rT:t:i:M:I:qvV?", long_opts,
				&idx)) != -1) {
		if (c == '?') {
			/* -? and --help are help; anything else is a bad option. */
			if (!strcmp(argv[optind - 1], "-?") || !strcmp(argv[optind - 1], "--help")) {
				usage(stdout);
				return VS_EXIT_OK;
			}
			fprintf(stderr, "veilsetup: %s: unknown option or missing value.\n",
				argv[optind - 1]);
			return VS_EXIT_PARAMS;
		}
		if (c == 'V') {
			printf("veilsetup " VS_VERSION "\n");
			return VS_EXIT_OK;
		}
		if (c == OPT_USAGE) {
			usage_brief();
			return VS_EXIT_OK;
		}
		if (idx >= 0 && !typed_in_full(argv, idx))
			return VS_EXIT_PARAMS;
		/* A short option: the first of options[] with its letter. */
		for (i = 0; idx < 0 && i < N_OPTIONS; i++)
			if (options[i].val == c)
				idx = i;
		if (idx < 0 || parse_option(c, idx))
			return VS_EXIT_PARAMS;
		option_given[idx] = 1;
		idx = -1;
	}
	if (optind >= argc) {
		fprintf(stderr, "Argument <action> missing.\n");
		usage(stderr);
		return VS_EXIT_PARAMS;
	}
	for (a = actions; a->name; a++)
		if (!strcmp(a->name, argv[optind]))
			break;
	if (!a->name) {
		fprintf(stderr, "Unknown action.\n");
		return VS_EXIT_PARAMS;
	}
	if (check_options(a) || check_combinations(a))
		return VS_EXIT_PARAMS;
	if (device_size)
		opt.size = device_size;
	/* As cryptsetup: tcryptOpen is open --type tcrypt, whatever --type says. */
	if (a->type)
		opt.type = a->type;
	if (opt.key_file_count > 1 && strcmp(opt.type ?: "", "tcrypt")) {
		fprintf(stderr, "veilsetup: Only one --key-file argument is allowed.\n");
		return VS_EXIT_PARAMS;
	}
	nargs = argc - optind - 1;
	if (nargs < a->min_args || nargs > a->max_args) {
		fprintf(stderr, "%s: requires %s as arguments.\n", a->name, a->arg_help);
		return VS_EXIT_PARAMS;
	}
	if (vs_option_given("test-args")) {
		printf("No action taken. Invoked with --test-args option.\n");
		return VS_EXIT_OK;
	}
	if (opt.debug)
		crypt_set_debug_level(vs_option_given("debug-json") ? CRYPT_DEBUG_JSON :
				      CRYPT_DEBUG_ALL);
	if (vs_option_given("disable-locks") && crypt_metadata_locking(NULL, 0)) {
		printf("Cannot disable metadata locking.");
		return VS_EXIT_PARAMS;
	}
	/* As cryptsetup: UUID=<uuid> names /dev/disk/by-uuid/<uuid>. */
	opt.header = uuid_or_device(opt.header, header_path, sizeof(header_path));
	if (nargs && !strncmp(a->arg_help, "<device>", 8))
		argv[optind + 1] = (char *)uuid_or_device(argv[optind + 1], device_path,
							  sizeof(device_path));
	/* As cryptsetup: a mapping may be named by its /dev/mapper path. */
	if (nargs && !strncmp(a->arg_help, "<name>", 6) &&
	    !strncmp(argv[optind + 1], "/dev/mapper/", 12))
		argv[optind + 1] += 12;
	r = a->fn(nargs, argv + optind + 1);
	if (r < 0 && nargs)
		vs_nbd_explain(argv[optind + 1]);
	r = exit_code(r < 0 ? r : 0);
	if (opt.verbose && r)
		printf("Command failed with code %i (%s).\n", -r, exit_text[r]);
	else if (opt.verbose)
		printf("Command successful.\n");
	return r;
}
