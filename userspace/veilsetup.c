// SPDX-License-Identifier: GPL-2.0
/*
 * veilsetup: cryptsetup's everyday actions, options, messages and exit
 * codes, on the veil target. Headers, keyslots, PBKDF, plain-mode hashing
 * and key files are libcryptsetup's; veilsetup maps the volume key with the
 * veil target (vs-open.c) instead of crypt.
 */
#include <errno.h>
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
};

static const struct action actions[] = {
	{ "open", vs_action_open, 1, 2, "<device> [--type <type>] [<name>]",
	  "open device as <name>", NULL },
	{ "close", vs_action_close, 1, 1, "<name>", "close device (remove mapping)", NULL },
	{ "status", vs_action_status, 1, 1, "<name>", "show device status", NULL },
	{ "resize", vs_action_resize, 1, 1, "<name>", "resize active device", NULL },
	{ "refresh", vs_action_refresh, 1, 1, "<name>",
	  "refresh device with new flags (--allow-discards, --perf-*)", "open" },
	{ "luksFormat", vs_action_luks_format, 1, 2, "<device> [<new key file>]",
	  "formats a LUKS device", NULL },
	{ "luksAddKey", vs_action_add_key, 1, 2, "<device> [<new key file>]",
	  "add key to LUKS device", NULL },
	{ "luksRemoveKey", vs_action_remove_key, 1, 2, "<device> [<key file>]",
	  "removes supplied key or key file from LUKS device", NULL },
	{ "luksChangeKey", vs_action_change_key, 1, 2, "<device> [<key file>]",
	  "changes supplied key or key file of LUKS device", NULL },
	{ "luksKillSlot", vs_action_kill_slot, 2, 2, "<device> <key slot>",
	  "wipes key with number <key slot> from LUKS device", NULL },
	{ "luksUUID", vs_action_uuid, 1, 1, "<device>", "print UUID of LUKS device", NULL },
	{ "isLuks", vs_action_is_luks, 1, 1, "<device>",
	  "tests <device> for LUKS partition header", NULL },
	{ "luksDump", vs_action_dump, 1, 1, "<device>", "dump LUKS partition information", NULL },
	{ "luksSuspend", vs_action_suspend, 1, 1, "<name>",
	  "Suspend LUKS device and wipe key (all IOs are frozen)", NULL },
	{ "luksResume", vs_action_resume, 1, 1, "<name>", "Resume suspended LUKS device", NULL },
	{ "luksHeaderBackup", vs_action_header_backup, 1, 1, "<device>",
	  "Backup LUKS device header and keyslots", NULL },
	{ "luksHeaderRestore", vs_action_header_restore, 1, 1, "<device>",
	  "Restore LUKS device header and keyslots", NULL },
	{ "erase", vs_action_erase, 1, 1, "<device>",
	  "erase all keyslots (remove encryption key)", NULL },
	{ "benchmark", vs_action_benchmark, 0, 0, "[--cipher <cipher>]", "benchmark cipher", NULL },
	/* cryptsetup's older spellings */
	{ "luksOpen", vs_action_luks_open, 1, 2, "<device> <name>", "open LUKS device as <name>",
	  "open" },
	{ "luksClose", vs_action_close, 1, 1, "<name>", "close device (remove mapping)", "close" },
	{ "create", vs_action_create, 2, 2, "<name> <device>", "create plain device <name>",
	  "open" },
	{ "remove", vs_action_close, 1, 1, "<name>", "remove device", "close" },
	{ "luksErase", vs_action_erase, 1, 1, "<device>", "erase all keyslots", "erase" },
	{ NULL, NULL, 0, 0, NULL, NULL, NULL },
};

/* Options with a value, parsed before any action runs. */
enum {
	OPT_KEYFILE_OFFSET = 256, OPT_NEW_KEYFILE_OFFSET, OPT_NEW_KEYFILE_SIZE,
	OPT_SECTOR_SIZE, OPT_ALLOW_DISCARDS, OPT_DISABLE_KEYRING, OPT_PBKDF,
	OPT_PBKDF_MEMORY, OPT_PBKDF_PARALLEL, OPT_PBKDF_ITERATIONS, OPT_JSON,
	OPT_VALUE_FEATURE, OPT_FEATURE, OPT_IV_LARGE, OPT_HEADER,
	OPT_BACKUP_FILE, OPT_TEST_PASSPHRASE, OPT_DEBUG, OPT_UUID, OPT_LABEL,
	OPT_PERSISTENT, OPT_PERF, OPT_ALIGN_PAYLOAD,
};

static const struct option long_opts[] = {
	{ "cipher", required_argument, NULL, 'c' },
	{ "key-size", required_argument, NULL, 's' },
	{ "hash", required_argument, NULL, 'h' },
	{ "key-file", required_argument, NULL, 'd' },
	{ "keyfile-offset", required_argument, NULL, OPT_KEYFILE_OFFSET },
	{ "keyfile-size", required_argument, NULL, 'l' },
	{ "new-keyfile-offset", required_argument, NULL, OPT_NEW_KEYFILE_OFFSET },
	{ "new-keyfile-size", required_argument, NULL, OPT_NEW_KEYFILE_SIZE },
	{ "key-slot", required_argument, NULL, 'S' },
	{ "verify-passphrase", no_argument, NULL, 'y' },
	{ "offset", required_argument, NULL, 'o' },
	{ "skip", required_argument, NULL, 'p' },
	{ "size", required_argument, NULL, 'b' },
	{ "sector-size", required_argument, NULL, OPT_SECTOR_SIZE },
	{ "iv-large-sectors", no_argument, NULL, OPT_IV_LARGE },
	{ "allow-discards", no_argument, NULL, OPT_ALLOW_DISCARDS },
	{ "readonly", no_argument, NULL, 'r' },
	{ "disable-keyring", no_argument, NULL, OPT_DISABLE_KEYRING },
	{ "hex-key", no_argument, NULL, OPT_DISABLE_KEYRING },
	{ "type", required_argument, NULL, 'M' },
	{ "header", required_argument, NULL, OPT_HEADER },
	{ "header-backup-file", required_argument, NULL, OPT_BACKUP_FILE },
	{ "test-passphrase", no_argument, NULL, OPT_TEST_PASSPHRASE },
	{ "tries", required_argument, NULL, 'T' },
	{ "timeout", required_argument, NULL, 't' },
	{ "pbkdf", required_argument, NULL, OPT_PBKDF },
	{ "pbkdf-memory", required_argument, NULL, OPT_PBKDF_MEMORY },
	{ "pbkdf-parallel", required_argument, NULL, OPT_PBKDF_PARALLEL },
	{ "pbkdf-force-iterations", required_argument, NULL, OPT_PBKDF_ITERATIONS },
	{ "iter-time", required_argument, NULL, 'i' },
	{ "uuid", required_argument, NULL, OPT_UUID },
	{ "label", required_argument, NULL, OPT_LABEL },
	{ "align-payload", required_argument, NULL, OPT_ALIGN_PAYLOAD },
	{ "persistent", no_argument, NULL, OPT_PERSISTENT },
	{ "perf-same_cpu_crypt", no_argument, NULL, OPT_PERF },
	{ "perf-submit_from_crypt_cpus", no_argument, NULL, OPT_PERF },
	{ "perf-no_read_workqueue", no_argument, NULL, OPT_PERF },
	{ "perf-no_write_workqueue", no_argument, NULL, OPT_PERF },
	{ "batch-mode", no_argument, NULL, 'q' },
	{ "verbose", no_argument, NULL, 'v' },
	{ "debug", no_argument, NULL, OPT_DEBUG },
	{ "version", no_argument, NULL, 'V' },
	{ "json", no_argument, NULL, OPT_JSON },
	{ "help", no_argument, NULL, '?' },
	/* veil's own engine options (docs/table-line.md) */
	{ "fanout-chunk", required_argument, NULL, OPT_VALUE_FEATURE },
	{ "keystream-ahead-max", required_argument, NULL, OPT_VALUE_FEATURE },
	{ "no-fanout", no_argument, NULL, OPT_FEATURE },
	{ "no-keystream-ahead", no_argument, NULL, OPT_FEATURE },
	/* the --perf-* options under veil's older names */
	{ "same-cpu-crypt", no_argument, NULL, OPT_PERF },
	{ "submit-from-crypt-cpus", no_argument, NULL, OPT_PERF },
	{ "no-read-workqueue", no_argument, NULL, OPT_PERF },
	{ "no-write-workqueue", no_argument, NULL, OPT_PERF },
	{ NULL, 0, NULL, 0 },
};

static void usage(FILE *f)
{
	const struct action *a;

	fprintf(f, "veilsetup " VS_VERSION "\n"
		"Usage: veilsetup [OPTION...] <action> <action-specific>\n\n"
		"<action> is one of:\n");
	for (a = actions; a->name; a++)
		fprintf(f, "\t%s %s - %s\n", a->name, a->arg_help, a->help);
	fprintf(f, "\nOptions (as cryptsetup's; veilsetup(8) has them all):\n"
		"  -M/--type plain|luks|luks1|luks2, -c/--cipher, -s/--key-size, -h/--hash,\n"
		"  -d/--key-file, --keyfile-offset, -l/--keyfile-size, --new-keyfile-offset,\n"
		"  --new-keyfile-size, -S/--key-slot, -y/--verify-passphrase, -o/--offset,\n"
		"  -p/--skip, -b/--size, --sector-size, --iv-large-sectors, --allow-discards,\n"
		"  -r/--readonly, --disable-keyring (--hex-key), --header,\n"
		"  --header-backup-file, --test-passphrase, -T/--tries, -t/--timeout,\n"
		"  --pbkdf, --pbkdf-memory, --pbkdf-parallel, --pbkdf-force-iterations,\n"
		"  -i/--iter-time, --uuid, --label, --align-payload, --persistent,\n"
		"  --perf-same_cpu_crypt, --perf-submit_from_crypt_cpus,\n"
		"  --perf-no_read_workqueue, --perf-no_write_workqueue, -q/--batch-mode,\n"
		"  -v/--verbose, --debug, -V/--version, --json (status, benchmark), -?/--help\n"
		"veil's engine: --fanout-chunk BYTES, --keystream-ahead-max BYTES,\n"
		"  --no-fanout, --no-keystream-ahead (docs/table-line.md)\n"
		"\nDefault compiled-in device cipher parameters:\n"
		"\tplain: aes-cbc-essiv:sha256, Key: 256 bits, Password hashing: ripemd160\n"
		"\tLUKS: aes-xts-plain64, Key: 256 bits (512 with XTS), PBKDF: libcryptsetup's\n");
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

/* libcryptsetup's messages: errors always, the rest with -v / --debug. */
static void log_cb(int level, const char *msg, void *usrptr)
{
	(void)usrptr;
	if (level == CRYPT_LOG_ERROR)
		fputs(msg, stderr);
	else if (level == CRYPT_LOG_NORMAL || (level == CRYPT_LOG_VERBOSE && opt.verbose) ||
		 (level == CRYPT_LOG_DEBUG && opt.debug))
		fputs(msg, stdout);
}

static void add_feature(const char *word)
{
	size_t n = strlen(opt.features);

	snprintf(opt.features + n, sizeof(opt.features) - n, " %s", word);
}

/* --fanout-chunk 8192 -> fanout_chunk:8192 */
static int add_engine_option(const char *name, const char *value)
{
	char feat[64], what[64], *p;
	uint64_t v;
	int n;

	n = snprintf(feat, sizeof(feat), "%s", name);
	for (p = feat; *p; p++)
		if (*p == '-')
			*p = '_';
	if (value) {
		snprintf(what, sizeof(what), "--%s", name);
		if (vs_number_arg(value, what, UINT32_MAX, &v))
			return -EINVAL;
		snprintf(feat + n, sizeof(feat) - n, ":%" PRIu64, v);
	}
	add_feature(feat);
	return 0;
}

/* --perf-no_read_workqueue and the older --no-read-workqueue */
static void add_perf(const char *name)
{
	if (strstr(name, "same"))
		opt.perf_flags |= CRYPT_ACTIVATE_SAME_CPU_CRYPT;
	else if (strstr(name, "submit"))
		opt.perf_flags |= CRYPT_ACTIVATE_SUBMIT_FROM_CRYPT_CPUS;
	else if (strstr(name, "read"))
		opt.perf_flags |= CRYPT_ACTIVATE_NO_READ_WORKQUEUE;
	else
		opt.perf_flags |= CRYPT_ACTIVATE_NO_WRITE_WORKQUEUE;
}

/* A numeric option into @out (at most @max); a message and -EINVAL else. */
static int num(const char *what, uint64_t max, uint64_t *out)
{
	return vs_number_arg(optarg, what, max, out);
}

/*
 * The options cryptsetup 2.6 allows only with some actions (the action
 * lists of its src/cryptsetup_args.h), and veil's own that belong to a
 * mapping or to one action. Any other option goes with every action.
 * Checked before any action runs, as cryptsetup's tools_check_args():
 * an option is refused (exit 1), never ignored: "erase -S 1" must not
 * erase every keyslot.
 */
static const struct limited_option {
	int c;			/* getopt_long()'s value */
	const char *name;	/* NULL: the engine option given */
	const char *actions;	/* " action action ... " */
} limited_options[] = {
	{ 's', "key-size", " open luksFormat luksAddKey benchmark " },
	{ 'S', "key-slot", " open luksFormat luksAddKey luksChangeKey luksDump luksResume " },
	{ 'o', "offset", " open luksFormat " },
	{ 'p', "skip", " open " },
	{ 'b', "size", " open resize " },
	{ OPT_SECTOR_SIZE, "sector-size", " open luksFormat " },
	{ OPT_IV_LARGE, "iv-large-sectors", " open " },
	{ OPT_ALLOW_DISCARDS, "allow-discards", " open " },
	{ OPT_TEST_PASSPHRASE, "test-passphrase", " open " },
	{ OPT_PBKDF, "pbkdf", " luksFormat luksAddKey luksChangeKey benchmark " },
	{ OPT_PBKDF_ITERATIONS, "pbkdf-force-iterations", " luksFormat luksAddKey luksChangeKey " },
	{ 'i', "iter-time", " luksFormat luksAddKey luksChangeKey benchmark " },
	{ OPT_UUID, "uuid", " luksFormat luksUUID " },
	{ OPT_LABEL, "label", " luksFormat " },
	{ OPT_ALIGN_PAYLOAD, "align-payload", " luksFormat " },
	{ OPT_PERSISTENT, "persistent", " open " },
	/* veil's own: a mapping's engine options, and --json */
	{ OPT_FEATURE, NULL, " open " },
	{ OPT_JSON, "json", " status benchmark " },
	{ 0, NULL, NULL },
};

static int option_given[OPT_ALIGN_PAYLOAD + 1];
static const char *engine_option;

/* cryptsetup's refusal of an option the action does not take. */
static int check_options(const struct action *a)
{
	const char *action = a->options_as ?: a->name;
	const struct limited_option *l;
	char word[64];

	snprintf(word, sizeof(word), " %s ", action);
	for (l = limited_options; l->actions; l++) {
		int given = l->c == OPT_FEATURE ? engine_option != NULL : option_given[l->c];

		if (given && !strstr(l->actions, word)) {
			fprintf(stderr, "veilsetup: Option --%s is not allowed with %s action.\n",
				l->name ?: engine_option, action);
			return -EINVAL;
		}
	}
	return 0;
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
	case 'd': opt.key_file = optarg; break;
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
	case OPT_IV_LARGE:
		opt.iv_large_sectors = 1;
		break;
	case 'r': opt.read_only = 1; break;
	case OPT_DISABLE_KEYRING: opt.disable_keyring = 1; break;
	case 'M': opt.type = optarg; break;
	case OPT_HEADER: opt.header = optarg; break;
	case OPT_BACKUP_FILE: opt.backup_file = optarg; break;
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
	case OPT_ALIGN_PAYLOAD:
		r = num("align payload", UINT32_MAX, &v);
		opt.align_payload = v;
		break;
	case OPT_PERSISTENT:
		opt.persistent = 1;
		break;
	case OPT_PERF: add_perf(long_opts[idx].name); break;
	case 'q': opt.batch = 1; break;
	case 'v': opt.verbose = 1; break;
	case OPT_DEBUG:
		opt.debug = opt.verbose = 1;
		crypt_set_debug_level(CRYPT_DEBUG_ALL);
		break;
	case OPT_JSON: opt.json = 1; break;
	case OPT_VALUE_FEATURE:
	case OPT_FEATURE:
		/* a mapping's options: a LUKS header has no place for them */
		r = add_engine_option(long_opts[idx].name, c == OPT_VALUE_FEATURE ? optarg : NULL);
		engine_option = long_opts[idx].name;
		break;
	default: r = -EINVAL; break;
	}
	return r;
}

int main(int argc, char **argv)
{
	const struct action *a;
	int c, idx = 0, nargs, r;

	crypt_set_log_callback(NULL, log_cb, NULL);
	opterr = 0;
	while ((c = getopt_long(argc, argv, "c:s:h:d:l:S:yo:p:b:rT:t:i:M:qvV?", long_opts,
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
		if (parse_option(c, idx))
			return VS_EXIT_PARAMS;
		if (c > 0 && c < (int)(sizeof(option_given) / sizeof(option_given[0])))
			option_given[c] = 1;
		idx = 0;
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
	if (check_options(a))
		return VS_EXIT_PARAMS;
	nargs = argc - optind - 1;
	if (nargs < a->min_args || nargs > a->max_args) {
		fprintf(stderr, "%s: requires %s as arguments.\n", a->name, a->arg_help);
		return VS_EXIT_PARAMS;
	}
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
