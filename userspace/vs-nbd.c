// SPDX-License-Identifier: GPL-2.0
/*
 * veilsetup on network block devices: an NBD device (/dev/nbdN) exists
 * whether or not nbd-client has connected it to an export, and one that is
 * not connected has no size, which libcryptsetup reports as "too small".
 * After such a failure veilsetup says what is wrong and what to do.
 */
#include <stdint.h>
#include <stdio.h>
#include <fcntl.h>
#include <unistd.h>
#include <sys/ioctl.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>
#include <linux/fs.h>

#include "veilsetup.h"

/* The kernel's NBD driver (include/uapi/linux/major.h: NBD_MAJOR). */
#define VS_NBD_MAJOR	43

/**
 * vs_nbd_explain() - after a failed action: is @dev an NBD device with no
 *	export connected? Then say so, on stderr.
 * @dev: the action's device argument (anything else is left alone).
 */
void vs_nbd_explain(const char *dev)
{
	uint64_t size = 0;
	struct stat st;
	int fd;

	if (!dev || dev[0] != '/' || stat(dev, &st) || !S_ISBLK(st.st_mode) ||
	    major(st.st_rdev) != VS_NBD_MAJOR)
		return;
	fd = open(dev, O_RDONLY | O_CLOEXEC);
	if (fd >= 0) {
		if (ioctl(fd, BLKGETSIZE64, &size))
			size = 0;
		close(fd);
	}
	if (!size)
		fprintf(stderr, "%s is a network block device with no export connected: connect it first (nbd-client HOST PORT %s -N EXPORT).\n",
			dev, dev);
}
