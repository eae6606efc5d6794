// SPDX-License-Identifier: GPL-2.0
/*
 * veilsetup benchmark: PBKDF and cipher speed, both measured by
 * libcryptsetup's own benchmark (ciphers: the kernel's, through AF_ALG),
 * memory only, printed the way cryptsetup benchmark prints them.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <libcryptsetup.h>

#include "veilsetup.h"

#define BENCH_BUF	(1024 * 1024)	/* cryptsetup benchmark's */
#define ARRAY_LEN	(sizeof(rows) / sizeof(rows[0]))

struct bench_row {
	const char *cipher;
	const char *mode;
	int bits;
};

static const struct bench_row rows[] = {
	{ "aes", "cbc", 128 }, { "serpent", "cbc", 128 }, { "twofish", "cbc", 128 },
	{ "cast6", "cbc", 128 }, { "blowfish", "cbc", 128 },
	{ "aes", "cbc", 256 }, { "serpent", "cbc", 256 }, { "twofish", "cbc", 256 },
	{ "cast6", "cbc", 256 }, { "blowfish", "cbc", 448 },
	{ "aes", "ctr", 128 }, { "aes", "ctr", 256 }, { "serpent", "ctr", 256 },
	{ "twofish", "ctr", 256 }, { "cast6", "ctr", 256 }, { "blowfish", "ctr", 448 },
	{ "aes", "xts", 256 }, { "serpent", "xts", 256 }, { "twofish", "xts", 256 },
	{ "cast6", "xts", 256 },
	{ "aes", "xts", 512 }, { "serpent", "xts", 512 }, { "twofish", "xts", 512 },
	{ "cast6", "xts", 512 },
};

/* One cipher row through libcryptsetup's benchmark (the kernel, AF_ALG). */
static int bench_one(const struct bench_row *row, double *enc, double *dec)
{
	size_t ivlen = strcmp(row->cipher, "blowfish") ? 16 : 8;
	size_t buffer = BENCH_BUF;
	int r;

	if (row->bits < 8 || row->bits > VS_MAX_KEY * 8)
		return -EINVAL;
	/* Too small a buffer to time: libcryptsetup says -ERANGE. */
	do {
		r = crypt_benchmark(NULL, row->cipher, row->mode, row->bits / 8, ivlen,
				    buffer, enc, dec);
		buffer *= 4;
	} while (r == -ERANGE && buffer <= 64 * BENCH_BUF);
	return r;
}

/* One PBKDF row, as cryptsetup prints it; time: --iter-time or 1 s. */
static int bench_pbkdf(const char *type, const char *hash, int json, int *n)
{
	struct crypt_pbkdf_type pbkdf = { .type = type, .hash = hash,
					  .time_ms = opt.iter_time ?: 1000 };
	int r;

	if (strcmp(type, CRYPT_KDF_PBKDF2)) {
		pbkdf.max_memory_kb = opt.pbkdf_memory ?: 1048576;
		pbkdf.parallel_threads = opt.pbkdf_parallel ?: 4;
	}
	r = crypt_benchmark_pbkdf(NULL, &pbkdf, "foobarfo", 8,
				  "0123456789abcdef0123456789abcdef", 32, 32, NULL, NULL);
	if (r < 0) {
		fprintf(stderr, "PBKDF %s%s%s is not available.\n", type,
			hash ? "-" : "", hash ?: "");
		return r;
	}
	if (json)
		printf("%s\n {\"pbkdf\": \"%s\", \"hash\": \"%s\", \"iterations\": %u, "
		       "\"memory_kb\": %u, \"parallel\": %u, \"time_ms\": %u}",
		       *n ? "," : "", type, hash ?: "", pbkdf.iterations,
		       pbkdf.max_memory_kb, pbkdf.parallel_threads, pbkdf.time_ms);
	else if (hash)
		printf("%s-%-9s %10u iterations per second for 256-bit key\n", "PBKDF2",
		       hash, (unsigned int)((uint64_t)pbkdf.iterations * 1000 / pbkdf.time_ms));
	else
		printf("%-16s %4u iterations, %7u memory, %u parallel threads (CPUs) for "
		       "256-bit key (requested %u ms time)\n", type, pbkdf.iterations,
		       pbkdf.max_memory_kb, pbkdf.parallel_threads, pbkdf.time_ms);
	(*n)++;
	return 0;
}

/* PBKDF rows: all of cryptsetup's, or --pbkdf's (with --hash for pbkdf2). */
static int bench_pbkdfs(int json, int *n)
{
	static const char *const hashes[] = { "sha1", "sha256", "sha512" };
	int failed = 0;
	size_t i;

	if (!opt.pbkdf || !strcmp(opt.pbkdf, CRYPT_KDF_PBKDF2)) {
		for (i = 0; i < sizeof(hashes) / sizeof(hashes[0]); i++)
			if (!opt.hash || !strcmp(opt.hash, hashes[i]))
				failed |= bench_pbkdf(CRYPT_KDF_PBKDF2, hashes[i], json, n);
		if (opt.hash && !failed && !*n)
			failed |= bench_pbkdf(CRYPT_KDF_PBKDF2, opt.hash, json, n);
	}
	if (!opt.pbkdf || !strcmp(opt.pbkdf, CRYPT_KDF_ARGON2I))
		failed |= bench_pbkdf(CRYPT_KDF_ARGON2I, NULL, json, n);
	if (!opt.pbkdf || !strcmp(opt.pbkdf, CRYPT_KDF_ARGON2ID))
		failed |= bench_pbkdf(CRYPT_KDF_ARGON2ID, NULL, json, n);
	return failed;
}

/*
 * benchmark: PBKDF speeds (unless a cipher is asked for) and cipher speeds,
 * every row of the table or those matching --cipher ("aes", "aes-xts",
 * "aes-xts-plain64") and --key-size; as JSON with --json.
 */
int vs_action_benchmark(int argc, char **argv)
{
	const char *spec = opt.cipher;
	int key_bits = opt.key_bits, json = opt.json;
	char cipher[32] = "", mode[32] = "";
	int n = 0, failed = 0;
	struct bench_row custom;
	double enc = 0, dec = 0;
	size_t i;

	(void)argc;
	(void)argv;
	if (spec)
		sscanf(spec, "%31[^-]-%31[^-]", cipher, mode);
	if (json)
		printf("[");
	else
		printf("# Tests are approximate using memory only (no storage IO).\n");
	if (!spec && bench_pbkdfs(json, &n))
		failed++;
	if (opt.pbkdf && !spec)
		goto out;
	if (!json)
		printf("#%14s | %9s | %15s | %15s\n", "Algorithm", "Key", "Encryption",
		       "Decryption");

	for (i = 0; i <= ARRAY_LEN; i++) {
		const struct bench_row *row = &rows[i < ARRAY_LEN ? i : 0];

		if (i == ARRAY_LEN) {
			/* A spec the table does not have: try it as given. */
			if (n || !*cipher || !*mode)
				break;
			custom.cipher = cipher;
			custom.mode = mode;
			custom.bits = key_bits ? key_bits : 256;
			row = &custom;
		} else if ((*cipher && strcmp(cipher, row->cipher)) ||
			   (*mode && strcmp(mode, row->mode)) ||
			   (key_bits && key_bits != row->bits)) {
			continue;
		}
		if (bench_one(row, &enc, &dec)) {
			fprintf(stderr, "Cipher %s-%s with a %d-bit key is not available.\n",
				row->cipher, row->mode, row->bits);
			failed++;
			n++;
			continue;
		}
		if (json)
			printf("%s\n {\"cipher\": \"%s\", \"mode\": \"%s\", \"key_bits\": %d, "
			       "\"encryption_mib_s\": %.1f, \"decryption_mib_s\": %.1f}",
			       n ? "," : "", row->cipher, row->mode, row->bits, enc, dec);
		else
			printf("%*s-%s   %8db   %10.1f MiB/s   %10.1f MiB/s\n",
			       (int)(11 - strlen(row->mode)), row->cipher, row->mode,
			       row->bits, enc, dec);
		n++;
	}
out:
	if (json)
		printf("\n]\n");
	if (!n) {
		fprintf(stderr, "No cipher matches %s.\n", spec ? spec : "");
		return -EINVAL;
	}
	return failed ? -ENOENT : 0;
}
