// SPDX-License-Identifier: GPL-2.0
/*
 * odirect: one O_DIRECT read or write whose buffer starts at a chosen
 * offset into a page, to see what the block layer and the target make of
 * a buffer aligned to less than the device's sector.
 *
 *   odirect read|write DEVICE BUFFER_OFFSET LENGTH
 *
 * Prints "ok" or the error name and exits 0 on success, 1 on an I/O
 * error, 2 on bad arguments.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

int main(int argc, char **argv)
{
	size_t off, len;
	char *buf;
	ssize_t n;
	int fd, wr;

	if (argc != 5 || (strcmp(argv[1], "read") && strcmp(argv[1], "write"))) {
		fprintf(stderr, "usage: odirect read|write DEVICE BUFFER_OFFSET LENGTH\n");
		return 2;
	}
	wr = !strcmp(argv[1], "write");
	off = strtoul(argv[3], NULL, 0);
	len = strtoul(argv[4], NULL, 0);
	if (posix_memalign((void **)&buf, 65536, off + len + 65536)) {
		fprintf(stderr, "odirect: out of memory\n");
		return 2;
	}
	memset(buf, 0x5a, off + len);
	fd = open(argv[2], (wr ? O_WRONLY : O_RDONLY) | O_DIRECT);
	if (fd < 0) {
		fprintf(stderr, "odirect: %s: %s\n", argv[2], strerror(errno));
		return 2;
	}
	n = wr ? pwrite(fd, buf + off, len, 0) : pread(fd, buf + off, len, 0);
	if (n < 0) {
		printf("%s\n", strerrorname_np(errno));
		return 1;
	}
	printf(n == (ssize_t)len ? "ok\n" : "short\n");
	return n == (ssize_t)len ? 0 : 1;
}
