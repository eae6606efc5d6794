// SPDX-License-Identifier: GPL-2.0
/*
 * veilsetup benchmark: PBKDF speed (libcryptsetup's own benchmark) and raw
 * cipher speed of the kernel's ciphers through AF_ALG, memory only, the way
 * cryptsetup benchmark reports them.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/uio.h>
#include <time.h>
#include <unistd.h>
#include <linux/if_alg.h>
#include <libcryptsetup.h>

#include "veilsetup.h"

#ifndef SOL_ALG
#define SOL_ALG 279
#endif

#define BENCH_BUF	(64 * 1024)
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

static double now(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec + ts.tv_nsec / 1e9;
}

/* One direction: MiB/s over about @ms milliseconds, or a negative errno. */
static double run_op(int op, int encrypt, unsigned int ivlen, int ms,
		     unsigned char *buf)
{
	char cbuf[CMSG_SPACE(sizeof(__u32)) + CMSG_SPACE(sizeof(struct af_alg_iv) + 16)] = { 0 };
	struct iovec iov = { .iov_base = buf, .iov_len = BENCH_BUF };
	struct msghdr msg = { .msg_control = cbuf, .msg_controllen = sizeof(cbuf),
			      .msg_iov = &iov, .msg_iovlen = 1 };
	struct af_alg_iv *iv;
	struct cmsghdr *c;
	double t0 = now(), t;
	long bytes = 0;

	c = CMSG_FIRSTHDR(&msg);
	c->cmsg_level = SOL_ALG;
	c->cmsg_type = ALG_SET_OP;
	c->cmsg_len = CMSG_LEN(sizeof(__u32));
	*(__u32 *)CMSG_DATA(c) = encrypt ? ALG_OP_ENCRYPT : ALG_OP_DECRYPT;
	c = CMSG_NXTHDR(&msg, c);
	c->cmsg_level = SOL_ALG;
	c->cmsg_type = ALG_SET_IV;
	c->cmsg_len = CMSG_LEN(sizeof(*iv) + 16);
	iv = (struct af_alg_iv *)CMSG_DATA(c);
	iv->ivlen = ivlen;

	do {
		if (sendmsg(op, &msg, 0) != BENCH_BUF ||
		    read(op, buf, BENCH_BUF) != BENCH_BUF)
			return -errno;
		bytes += BENCH_BUF;
		t = now() - t0;
	} while (t * 1000 < ms);
	return bytes / t / (1024 * 1024);
}

static int bench_one(const struct bench_row *row, int ms, double *enc, double *dec)
{
	struct sockaddr_alg sa = { .salg_family = AF_ALG, .salg_type = "skcipher" };
	unsigned char key[VS_MAX_KEY], *buf;
	int tfm, op = -1, r = 0;
	unsigned int ivlen = strcmp(row->cipher, "blowfish") ? 16 : 8;

	snprintf((char *)sa.salg_name, sizeof(sa.salg_name), "%s(%s)", row->mode, row->cipher);
	if (row->bits < 8 || row->bits / 8 > (int)sizeof(key))
		return -EINVAL;
	tfm = socket(AF_ALG, SOCK_SEQPACKET, 0);
	if (tfm < 0)
		return -errno;
	for (size_t i = 0; i < sizeof(key); i++)
		key[i] = (unsigned char)(i * 37 + 11);
	buf = calloc(1, BENCH_BUF);
	if (!buf || bind(tfm, (struct sockaddr *)&sa, sizeof(sa)) ||
	    setsockopt(tfm, SOL_ALG, ALG_SET_KEY, key, row->bits / 8) ||
	    (op = accept(tfm, NULL, 0)) < 0) {
		r = buf ? -errno : -ENOMEM;
		goto out;
	}
	*enc = run_op(op, 1, ivlen, ms, buf);
	*dec = run_op(op, 0, ivlen, ms, buf);
	if (*enc < 0 || *dec < 0)
		r = -EIO;
out:
	if (op >= 0)
		close(op);
	close(tfm);
	free(buf);
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
		       hash, pbkdf.iterations * 1000 / pbkdf.time_ms);
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
 * Print PBKDF speeds (unless a cipher is asked for) and cipher speeds: every row of the table, or those matching @spec
 * ("aes", "aes-xts", "aes-xts-plain64") and @key_bits (0 = any).
 */
int vs_benchmark(const char *spec, int key_bits, int json)
{
	char cipher[32] = "", mode[32] = "";
	const char *env = getenv("VEILSETUP_BENCH_MS");
	int ms = env ? atoi(env) : 250, n = 0, failed = 0;
	struct bench_row custom;
	double enc = 0, dec = 0;
	size_t i;

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
		if (bench_one(row, ms, &enc, &dec)) {
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
