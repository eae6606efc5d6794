// SPDX-License-Identifier: GPL-2.0
/*
 * veilsetup key material: passphrases from the terminal (no echo, no stdio
 * buffer, the terminal restored on a signal), key files and standard input
 * through libcryptsetup's own reader, all in libcryptsetup's secure memory;
 * volume keys reach the kernel through the thread keyring only for the
 * table load, as cryptsetup does.
 */
#include <errno.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <string.h>
#include <sys/syscall.h>
#include <termios.h>
#include <time.h>
#include <unistd.h>
#include <linux/keyctl.h>
#include <libcryptsetup.h>

#include "veilsetup.h"

/* cryptsetup's limit for a typed passphrase. */
#define VS_MAX_PASSPHRASE	512

static struct termios tty_saved;
static volatile sig_atomic_t tty_changed;

/* A signal at the prompt: give the terminal its echo back, then die of it. */
static void tty_restore_and_raise(int sig)
{
	if (tty_changed)
		tcsetattr(STDIN_FILENO, TCSAFLUSH, &tty_saved);
	signal(sig, SIG_DFL);
	raise(sig);
}

/* Not SIGTSTP: after fg the prompt must still be without echo. */
static const int tty_signals[] = { SIGINT, SIGTERM, SIGHUP, SIGQUIT };

static void tty_signals_set(void (*handler)(int))
{
	struct sigaction sa = { .sa_handler = handler };
	size_t i;

	sigemptyset(&sa.sa_mask);
	for (i = 0; i < sizeof(tty_signals) / sizeof(tty_signals[0]); i++)
		sigaction(tty_signals[i], &sa, NULL);
}

/* Milliseconds left until @deadline (0: no deadline, -1 for poll). */
static int ms_left(const struct timespec *deadline)
{
	struct timespec now;
	long ms;

	if (!deadline->tv_sec)
		return -1;
	clock_gettime(CLOCK_MONOTONIC, &now);
	ms = (deadline->tv_sec - now.tv_sec) * 1000 +
	     (deadline->tv_nsec - now.tv_nsec) / 1000000;
	return ms > 0 ? (int)ms : 0;
}

/*
 * One line from the terminal, byte by byte with read(2), into secure
 * memory; the newline is not kept. Returns 0, -ETIMEDOUT or -EIO.
 */
static int tty_read_line(const char *prompt, char *buf, size_t size)
{
	struct timespec deadline = { 0 };
	struct pollfd pfd = { .fd = STDIN_FILENO, .events = POLLIN };
	struct termios noecho;
	size_t n = 0;
	int r = 0;
	char c;

	if (opt.timeout) {
		clock_gettime(CLOCK_MONOTONIC, &deadline);
		deadline.tv_sec += opt.timeout;
	}
	if (tcgetattr(STDIN_FILENO, &tty_saved))
		return -EIO;
	noecho = tty_saved;
	noecho.c_lflag &= ~(ECHO | ECHOE | ECHOK | ECHONL);
	tty_signals_set(tty_restore_and_raise);
	tty_changed = 1;
	tcsetattr(STDIN_FILENO, TCSAFLUSH, &noecho);
	if (write(STDERR_FILENO, prompt, strlen(prompt)) < 0)
		r = -EIO;
	while (!r) {
		int ready = poll(&pfd, 1, ms_left(&deadline));

		if (ready == 0) {
			r = -ETIMEDOUT;
			break;
		}
		if (ready < 0 && errno == EINTR)
			continue;
		if (ready < 0 || read(STDIN_FILENO, &c, 1) != 1) {
			r = n ? 0 : -EIO;
			break;
		}
		if (c == '\n' || c == '\r')
			break;
		if (n < size - 1)
			buf[n++] = c;
	}
	c = 0;
	buf[n] = '\0';
	tcsetattr(STDIN_FILENO, TCSAFLUSH, &tty_saved);
	tty_changed = 0;
	tty_signals_set(SIG_DFL);
	if (write(STDERR_FILENO, "\n", 1) < 0)
		r = r ?: -EIO;
	if (r == -ETIMEDOUT)
		fprintf(stderr, "Operation timed out.\n");
	return r;
}

static int tty_passphrase(const char *prompt, int verify, char **pass, size_t *len)
{
	char *a = crypt_safe_alloc(VS_MAX_PASSPHRASE + 1);
	char *b = NULL;
	int r;

	if (!a)
		return -ENOMEM;
	r = tty_read_line(prompt, a, VS_MAX_PASSPHRASE + 1);
	if (!r && verify) {
		b = crypt_safe_alloc(VS_MAX_PASSPHRASE + 1);
		r = b ? tty_read_line("Verify passphrase: ", b, VS_MAX_PASSPHRASE + 1) : -ENOMEM;
		if (!r && strcmp(a, b)) {
			fprintf(stderr, "Passphrases do not match.\n");
			r = -EPERM;
		}
	}
	crypt_safe_free(b);
	if (r) {
		crypt_safe_free(a);
		return r;
	}
	*pass = a;
	*len = strlen(a);
	return 0;
}

/**
 * vs_read_passphrase() - a passphrase or key file's bytes, in secure memory
 * @cd: the device the key is for (libcryptsetup logs against it), or NULL.
 * @prompt: what to ask on a terminal.
 * @key_file: a file to read instead ("-" is standard input), or NULL.
 * @offset: bytes of @key_file to skip.
 * @size: bytes of @key_file to read at most (0: libcryptsetup's limit).
 * @flags: VS_PASS_VERIFY: on a terminal, ask twice; VS_PASS_EMPTY_OK: an
 *         empty line of standard input (or an empty key file) is an empty
 *         passphrase, as for TCRYPT with key files, not an error.
 * @pass: the bytes, to be freed with crypt_safe_free().
 * @len: their number.
 *
 * Without a key file, a terminal is asked without echo; otherwise one line
 * of standard input is read, as cryptsetup does.
 *
 * Return: 0, or a negative errno after a message.
 */
int vs_read_passphrase(struct crypt_device *cd, const char *prompt,
		       const char *key_file, uint64_t offset, uint64_t size,
		       int flags, char **pass, size_t *len)
{
	uint32_t read_flags = 0;
	int r;

	if (!key_file && isatty(STDIN_FILENO))
		return tty_passphrase(prompt, (flags & VS_PASS_VERIFY) || opt.verify, pass, len);
	if (!key_file)
		read_flags = CRYPT_KEYFILE_STOP_EOL;
	/* NULL: libcryptsetup reads descriptor 0 itself, as for cryptsetup. */
	if (key_file && !strcmp(key_file, "-"))
		key_file = NULL;
	/* libcryptsetup says what went wrong. */
	r = crypt_keyfile_device_read(cd, key_file, pass, len, offset, size, read_flags);
	if (r < 0)
		return r;
	if (!*len && !(flags & VS_PASS_EMPTY_OK)) {
		crypt_safe_free(*pass);
		*pass = NULL;
		fprintf(stderr, "Nothing to read on input.\n");
		return -EPIPE;
	}
	return 0;
}

/**
 * vs_keyring_add() - put a volume key in this thread's keyring
 * @desc: the logon key's description, which the table line names.
 * @key: the key bytes.
 * @len: their number.
 *
 * The table load, made by this thread, finds the key there; the caller
 * drops it with vs_keyring_drop() right after.
 *
 * Return: the key's serial, or a negative errno after a message.
 */
int vs_keyring_add(const char *desc, const unsigned char *key, size_t len)
{
	long id = syscall(SYS_add_key, "logon", desc, key, len,
			  KEY_SPEC_THREAD_KEYRING);
	int err = errno;

	if (id >= 0)
		return (int)id;
	fprintf(stderr, "Cannot add the key to the kernel keyring: %s.\n", strerror(err));
	/* No keyring at all, or one this process may not use: not a passphrase error. */
	if (err == ENOSYS || err == EPERM || err == EACCES) {
		fprintf(stderr, "Without a keyring, --disable-keyring puts the key into the "
			"table, where 'dmsetup table' prints it.\n");
		return -EINVAL;
	}
	return -err;
}

/**
 * vs_keyring_drop() - revoke and unlink a key from vs_keyring_add()
 * @id: its serial; nothing happens for a negative one.
 */
void vs_keyring_drop(int32_t id)
{
	if (id < 0)
		return;
	syscall(SYS_keyctl, KEYCTL_INVALIDATE, id);
	syscall(SYS_keyctl, KEYCTL_UNLINK, id, KEY_SPEC_THREAD_KEYRING);
}
