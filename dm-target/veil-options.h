/* SPDX-License-Identifier: GPL-2.0 */
/*
 * dm-veil's table-line options: the one list of their words, read by the
 * kernel's parser and status output, by veilsetup (which builds and
 * parses table lines) and by the tests, which fail when their lists and
 * this one differ. VEIL_OPT_* words stand alone in a table line;
 * VEIL_OPTV_* words take a value, "<word>:<value>". The limits veilsetup
 * must know follow them.
 * docs/table-line.md says what each does.
 */
#ifndef VEIL_OPTIONS_H
#define VEIL_OPTIONS_H

#define VEIL_OPT_ALLOW_DISCARDS		"allow_discards"
#define VEIL_OPT_SAME_CPU		"same_cpu_crypt"
#define VEIL_OPT_HIGH_PRIORITY		"high_priority"
#define VEIL_OPT_SUBMIT_FROM_CRYPT	"submit_from_crypt_cpus"
#define VEIL_OPT_NO_READ_WQ		"no_read_workqueue"
#define VEIL_OPT_NO_WRITE_WQ		"no_write_workqueue"
#define VEIL_OPT_IV_LARGE_SECTORS	"iv_large_sectors"
#define VEIL_OPT_NO_FANOUT		"no_fanout"
#define VEIL_OPT_NO_KS_AHEAD		"no_keystream_ahead"

#define VEIL_OPTV_SECTOR_SIZE		"sector_size"
#define VEIL_OPTV_FANOUT_CHUNK		"fanout_chunk"
#define VEIL_OPTV_KS_AHEAD_MAX		"keystream_ahead_max"
#define VEIL_OPTV_INTEGRITY		"integrity"
#define VEIL_OPTV_INTEGRITY_KEY_SIZE	"integrity_key_size"
#define VEIL_OPTV_AEAD_MASKS		"aead_masks"

/* The two kinds of integrity:<bytes>:<kind>. */
#define VEIL_INTEGRITY_AEAD		"aead"
#define VEIL_INTEGRITY_NONE		"none"

/* The most options one table line can give: each word above once. */
#define VEIL_MAX_OPTS			15

/* Longest key, in bytes: a multi-key table's keys together. */
#define VEIL_MAX_KEY_SIZE		4096

#endif /* VEIL_OPTIONS_H */
