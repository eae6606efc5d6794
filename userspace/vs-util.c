// SPDX-License-Identifier: GPL-2.0
/*
 * veilsetup: what every action uses: the parsed command line, the
 * confirmation before destroying something, a checked number argument,
 * a size with its unit, the number of passphrase tries, libcryptsetup's
 * context of a device and its messages, termination held while a key is
 * mapped, a volume key read from or written to a file or printed in hex.
 */
#include <ctype.h>
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>
#include <libcryptsetup.h>

#include "veilsetup.h"

struct vs_opts opt = { .key_slot = CRYPT_ANY_SLOT, .token_id = CRYPT_ANY_TOKEN, .tries = 3,
		       .new_key_slot = CRYPT_ANY_SLOT, .new_token_id = CRYPT_ANY_TOKEN,
		       .rng_type = -1 };

/**
 * vs_confirm() - cryptsetup's "Are you sure?" before destroying something
 * @question: what will happen.
 * @aborted: cryptsetup's message for any answer but YES, or NULL for none.
 *
 * Asked only on a terminal and without --batch-mode, as cryptsetup does.
 *
 * Return: 0 to go on, -EPERM if the answer is not YES.
 */
int vs_confirm(const char *question, const char *aborted)
{
	char answer[16] = "";
	ssize_t n;

	if (opt.batch || !isatty(STDIN_FILENO))
		return 0;
	fprintf(stderr, "\nWARNING!\n========\n%s\n\nAre you sure? (Type 'yes' in capital "
		"letters): ", question);
	n = read(STDIN_FILENO, answer, sizeof(answer) - 1);
	if (n <= 0 || strncmp(answer, "YES\n", 4)) {
		if (aborted)
			fprintf(stderr, "%s\n", aborted);
		return -EPERM;
	}
	return 0;
}

/**
 * vs_number_arg() - a decimal number from the command line, range-checked
 * @s: the text.
 * @what: its name, for the message.
 * @max: the largest value allowed.
 * @out: the value.
 *
 * The whole 64-bit value is checked before any caller narrows it.
 *
 * Return: 0, or -EINVAL after a message.
 */
int vs_number_arg(const char *s, const char *what, uint64_t max, uint64_t *out)
{
	unsigned long long v;
	char *end;

	errno = 0;
	v = strtoull(s, &end, 10);
	if (errno || *end || end == s || *s == '-' || *s == '+' || v > max) {
		fprintf(stderr, "Invalid %s: %s (a number from 0 to %" PRIu64 ").\n",
			what, s, max);
		return -EINVAL;
	}
	*out = v;
	return 0;
}

/**
 * vs_size_arg() - a size in bytes with cryptsetup's units
 * @s: the text: digits, then nothing, or S (512-byte sectors), or K, M,
 *     G, T (powers of 1024, also as KiB, MiB, ...) or KB, MB, ... (1000).
 * @option: the option's name without the dashes, for the message.
 * @out: the size in bytes.
 *
 * As cryptsetup's tools_string_to_size() for --device-size,
 * --luks2-metadata-size and --luks2-keyslots-size.
 *
 * Return: 0, or -EINVAL after cryptsetup's message.
 */
int vs_size_arg(const char *s, const char *option, uint64_t *out)
{
	uint64_t base, mult = 1;
	unsigned long long v;
	char *end;
	size_t len;

	errno = 0;
	v = strtoull(s, &end, 10);
	if (!isdigit((unsigned char)s[0]) || errno)
		goto bad;
	len = strlen(end);
	if (len > 3 || (len == 3 && (end[1] != 'i' || end[2] != 'B')) ||
	    (len == 2 && end[1] != 'B'))
		goto bad;
	base = len == 2 ? 1000 : 1024;
	switch (len ? end[0] : '\0') {
	case '\0': break;
	case 's': case 'S': mult = 512; break;
	case 't': case 'T': mult *= base; /* fall through */
	case 'g': case 'G': mult *= base; /* fall through */
	case 'm': case 'M': mult *= base; /* fall through */
	case 'k': case 'K': mult *= base; break;
	default: goto bad;
	}
	if (v && (v * mult) / v != mult)
		goto bad;
	*out = v * mult;
	return 0;
bad:
	fprintf(stderr, "veilsetup: Invalid size specification in parameter --%s.\n", option);
	return -EINVAL;
}

/**
 * vs_read_volume_key() - a raw volume key from a file (--volume-key-file)
 * @file: the file.
 * @key_size: the bytes to read: the file must hold at least that many.
 * @key: the key, in crypt_safe_alloc() memory, for crypt_safe_free().
 *
 * As cryptsetup's tools_read_vk(), with its messages.
 *
 * Return: 0, or a negative errno after a message.
 */
int vs_read_volume_key(const char *file, size_t key_size, char **key)
{
	size_t got = 0;
	ssize_t n;
	int fd;

	*key = NULL;
	if (!key_size)
		return -EINVAL;
	*key = crypt_safe_alloc(key_size);
	if (!*key)
		return -ENOMEM;
	fd = open(file, O_RDONLY | O_CLOEXEC);
	if (fd < 0) {
		fprintf(stderr, "Cannot read keyfile %s.\n", file);
		goto bad;
	}
	while (got < key_size) {
		n = read(fd, *key + got, key_size - got);
		if (n < 0 && errno == EINTR)
			continue;
		if (n <= 0)
			break;
		got += n;
	}
	close(fd);
	if (got == key_size)
		return 0;
	fprintf(stderr, "Cannot read %zu bytes from keyfile %s.\n", key_size, file);
bad:
	crypt_safe_free(*key);
	*key = NULL;
	return -EINVAL;
}

/**
 * vs_write_volume_key() - a raw volume key into a new file
 * @file: the file; it must not exist (it is made readable by its owner only).
 * @key: the key.
 * @key_size: its bytes.
 *
 * As cryptsetup's tools_write_mk(), with its messages.
 *
 * Return: 0, or -EINVAL after a message.
 */
int vs_write_volume_key(const char *file, const char *key, size_t key_size)
{
	size_t done = 0;
	ssize_t n;
	int fd;

	fd = open(file, O_CREAT | O_EXCL | O_WRONLY | O_CLOEXEC, S_IRUSR);
	if (fd < 0) {
		fprintf(stderr, "Cannot open keyfile %s for write.\n", file);
		return -EINVAL;
	}
	while (done < key_size) {
		n = write(fd, key + done, key_size - done);
		if (n < 0 && errno == EINTR)
			continue;
		if (n <= 0)
			break;
		done += n;
	}
	if (close(fd) || done != key_size) {
		fprintf(stderr, "Cannot write to keyfile %s.\n", file);
		return -EINVAL;
	}
	return 0;
}

/**
 * vs_print_key_hex() - a volume key in hex, as cryptsetup prints it
 * @key: the key.
 * @len: its bytes.
 * @wrap: bytes to a line (later lines after two tabs), or 0: one line.
 *
 * cryptsetup's crypt_log_hex() layout, "xx " per byte, then a newline;
 * written straight to standard output (after what stdio holds) from
 * libcryptsetup's locked memory, wiped after, never through stdio's
 * buffer.
 *
 * Return: 0, or a negative errno.
 */
int vs_print_key_hex(const char *key, size_t len, size_t wrap)
{
	static const char digits[] = "0123456789abcdef";
	size_t i, n = 0, room = len * 6 + 2;
	char *hex = crypt_safe_alloc(room);
	ssize_t w = 0;
	int r = 0;

	if (!hex)
		return -ENOMEM;
	/* Digit by digit: printf's own buffers would keep pieces of the key. */
	for (i = 0; i < len; i++) {
		if (wrap && i && !(i % wrap)) {
			memcpy(hex + n, "\n\t\t", 3);
			n += 3;
		}
		hex[n++] = digits[(unsigned char)key[i] >> 4];
		hex[n++] = digits[key[i] & 0xf];
		hex[n++] = ' ';
	}
	hex[n++] = '\n';
	fflush(stdout);
	for (i = 0; i < n; i += w) {
		w = write(STDOUT_FILENO, hex + i, n - i);
		if (w < 0 && errno == EINTR) {
			w = 0;
			continue;
		}
		if (w <= 0) {
			r = -EIO;
			break;
		}
	}
	crypt_safe_free(hex);
	return r;
}

/**
 * vs_volume_key_get() - a dump's volume key, unlocked by a passphrase
 * @cd: the device, its header loaded.
 * @key: room for the key; @key_size: its size in, the key's size out.
 * @pass: the passphrase; @len: its bytes.
 *
 * crypt_volume_key_get() with cryptsetup's messages for a wrong
 * passphrase and for no usable keyslot, "Key slot N unlocked." with -v,
 * and the key written to --volume-key-file when it is given.
 *
 * Return: 0, or a negative errno after a message.
 */
int vs_volume_key_get(struct crypt_device *cd, char *key, size_t *key_size,
		      const char *pass, size_t len)
{
	int r = crypt_volume_key_get(cd, CRYPT_ANY_SLOT, key, key_size, pass, len);

	if (r == -EPERM)
		fprintf(stderr, "No key available with this passphrase.\n");
	else if (r == -ENOENT)
		fprintf(stderr, "No usable keyslot is available.\n");
	if (r < 0)
		return r;
	if (opt.verbose)
		printf("Key slot %d unlocked.\n", r);
	return opt.volume_key_file ?
	       vs_write_volume_key(opt.volume_key_file, key, *key_size) : 0;
}

/**
 * vs_print_mk() - the end of a dump with the volume key, as cryptsetup's
 * @key: the key.
 * @key_size: its bytes.
 * @stored: the file it was written to, or NULL to print it.
 *
 * Return: 0, or a negative errno.
 */
int vs_print_mk(const char *key, size_t key_size, const char *stored)
{
	printf("MK bits:       \t%d\n", (int)key_size * 8);
	if (stored) {
		printf("Key stored to file %s.\n", stored);
		return 0;
	}
	printf("MK dump:\t");
	return vs_print_key_hex(key, key_size, 16);
}

/**
 * vs_tries_tty() - how often to ask for a passphrase, as cryptsetup's
 * set_tries_tty()
 *
 * Return: --tries when the passphrase comes from a terminal, else 1.
 */
int vs_tries_tty(void)
{
	return (!opt.key_file || !strcmp(opt.key_file, "-")) && isatty(STDIN_FILENO) ?
	       opt.tries : 1;
}

/**
 * vs_crypt_init() - libcryptsetup's context for a device
 * @header: the file or device with the header (--header), or NULL: @device.
 * @device: the device or image file with the data.
 * @cd: the context, to be freed with crypt_free().
 *
 * Return: 0, or -ENODEV after libcryptsetup's "Device ... does not exist or
 * access denied."
 */
int vs_crypt_init(const char *header, const char *device, struct crypt_device **cd)
{
	int r = header ? crypt_init_data_device(cd, header, device) : crypt_init(cd, device);

	return r < 0 ? -ENODEV : 0;
}

/**
 * vs_signals_hold() - make termination wait
 * @old: the signal mask to give back to vs_signals_release().
 *
 * SIGINT, SIGTERM, SIGHUP and SIGQUIT wait while a device that holds a key
 * in its table (dm-crypt's, a temporary mapping's) is up, so that it is
 * never left behind; a held signal is taken at the release.
 */
void vs_signals_hold(sigset_t *old)
{
	sigset_t term;

	sigemptyset(&term);
	sigaddset(&term, SIGINT);
	sigaddset(&term, SIGTERM);
	sigaddset(&term, SIGHUP);
	sigaddset(&term, SIGQUIT);
	sigprocmask(SIG_BLOCK, &term, old);
}

/* The end of vs_signals_hold(). */
void vs_signals_release(const sigset_t *old)
{
	sigprocmask(SIG_SETMASK, old, NULL);
}

/* libcryptsetup's messages: errors always, the rest with -v / --debug. */
void vs_log(int level, const char *msg, void *usrptr)
{
	(void)usrptr;
	if (level == CRYPT_LOG_ERROR)
		fputs(msg, stderr);
	else if (level == CRYPT_LOG_NORMAL || (level == CRYPT_LOG_VERBOSE && opt.verbose) ||
		 ((level == CRYPT_LOG_DEBUG || level == CRYPT_LOG_DEBUG_JSON) && opt.debug))
		fputs(msg, stdout);
}
