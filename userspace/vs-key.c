// SPDX-License-Identifier: GPL-2.0
/*
 * veilsetup key material: passphrase prompts without echo, key files,
 * logon keys in the kernel keyring, and buffers that are locked in memory
 * and wiped before they are freed.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <termios.h>
#include <unistd.h>
#include <linux/keyctl.h>

#include "veilsetup.h"

#define VS_MAX_PASSPHRASE	512
#define VS_MAX_KEYFILE		(8 * 1024 * 1024)

/* A buffer kept out of swap; vs_secure_free() wipes it. */
void *vs_secure_alloc(size_t size)
{
	void *p = calloc(1, size ? size : 1);

	if (p)
		mlock(p, size);
	return p;
}

void vs_secure_free(void *p, size_t size)
{
	if (!p)
		return;
	explicit_bzero(p, size);
	munlock(p, size);
	free(p);
}

static int read_line(const char *prompt, char *buf, size_t size)
{
	struct termios old, noecho;
	int tty = isatty(STDIN_FILENO);
	size_t n;

	if (tty) {
		fprintf(stderr, "%s", prompt);
		tcgetattr(STDIN_FILENO, &old);
		noecho = old;
		noecho.c_lflag &= ~ECHO;
		tcsetattr(STDIN_FILENO, TCSAFLUSH, &noecho);
	}
	if (!fgets(buf, size, stdin))
		buf[0] = '\0';
	if (tty) {
		tcsetattr(STDIN_FILENO, TCSAFLUSH, &old);
		fprintf(stderr, "\n");
	}
	n = strcspn(buf, "\n");
	buf[n] = '\0';
	return (int)n;
}

/* Prompt (or read stdin) for a passphrase; with @verify ask twice. */
int vs_read_passphrase(const char *prompt, int verify, char **pass, size_t *len)
{
	char *a = vs_secure_alloc(VS_MAX_PASSPHRASE);
	char *b = NULL;
	int r = 0;

	if (!a)
		return -ENOMEM;
	read_line(prompt, a, VS_MAX_PASSPHRASE);
	if (verify) {
		b = vs_secure_alloc(VS_MAX_PASSPHRASE);
		if (!b) {
			r = -ENOMEM;
			goto out;
		}
		read_line("Verify passphrase: ", b, VS_MAX_PASSPHRASE);
		if (strcmp(a, b)) {
			fprintf(stderr, "Passphrases do not match.\n");
			r = -EPERM;
			goto out;
		}
	}
	if (!*a) {
		fprintf(stderr, "No passphrase given.\n");
		r = -EINVAL;
	}
out:
	vs_secure_free(b, VS_MAX_PASSPHRASE);
	if (r) {
		vs_secure_free(a, VS_MAX_PASSPHRASE);
		return r;
	}
	*pass = a;
	*len = strlen(a);
	return 0;
}

/*
 * Read a key file ("-" is stdin) from @offset: @max bytes at most (0: all,
 * up to 8 MiB); with @exact, exactly @max bytes or an error.
 */
int vs_read_keyfile(const char *path, uint64_t offset, size_t max, int exact,
		    char **data, size_t *len)
{
	size_t cap = max ? max : VS_MAX_KEYFILE, got = 0;
	char skip[4096];
	ssize_t n;
	char *buf;
	int fd;

	fd = strcmp(path, "-") ? open(path, O_RDONLY | O_CLOEXEC) : STDIN_FILENO;
	if (fd < 0) {
		fprintf(stderr, "Cannot open key file %s: %s.\n", path, strerror(errno));
		return -errno;
	}
	buf = vs_secure_alloc(cap);
	if (!buf)
		goto nomem;
	while (offset) {
		n = read(fd, skip, offset < sizeof(skip) ? offset : sizeof(skip));
		if (n <= 0)
			break;
		offset -= n;
	}
	while (!offset && got < cap) {
		n = read(fd, buf + got, cap - got);
		if (n <= 0)
			break;
		got += n;
	}
	if (fd != STDIN_FILENO)
		close(fd);
	if (offset || (exact && got < max) || !got) {
		fprintf(stderr, "Key file %s is too short: %zu bytes read, %zu needed.\n",
			path, got, exact ? max : 1);
		vs_secure_free(buf, cap);
		return -EINVAL;
	}
	*data = buf;
	*len = got;
	return 0;
nomem:
	if (fd != STDIN_FILENO)
		close(fd);
	return -ENOMEM;
}

/* Add a logon key "veil:<name>" to the user keyring. */
int vs_keyring_add(const char *desc, const unsigned char *key, size_t len)
{
	long id = syscall(SYS_add_key, "logon", desc, key, len,
			  KEY_SPEC_USER_KEYRING);

	if (id < 0) {
		fprintf(stderr, "Cannot add the key to the kernel keyring: %s.\n",
			strerror(errno));
		return -errno;
	}
	return 0;
}

/* Unlink the logon key @desc from the user keyring, if it is there. */
int vs_keyring_unlink(const char *desc)
{
	long id = syscall(SYS_request_key, "logon", desc, NULL, 0);

	if (id < 0)
		return 0;
	return syscall(SYS_keyctl, KEYCTL_UNLINK, id, KEY_SPEC_USER_KEYRING) ? -errno : 0;
}
