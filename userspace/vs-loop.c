// SPDX-License-Identifier: GPL-2.0
/*
 * veilsetup image files: like cryptsetup, a regular file is mapped through
 * a loop device that veilsetup attaches with autoclear, so the loop goes
 * away by itself when the mapping that holds it is removed.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <string.h>
#include <sys/ioctl.h>
#include <unistd.h>
#include <linux/loop.h>

#include "veilsetup.h"

/**
 * vs_loop_attach() - attach @file to a free loop device, autoclear
 * @file: a regular file.
 * @read_only: attach read-only.
 * @dev: where the loop's path goes ("/dev/loopN").
 * @dev_len: its size.
 *
 * Return: an open descriptor of the loop device, which the caller keeps
 * until the mapping holds the device (autoclear detaches the loop on the
 * last close otherwise), or a negative errno after a message.
 */
int vs_loop_attach(const char *file, int read_only, char *dev, size_t dev_len)
{
	struct loop_config cfg = { .info.lo_flags = LO_FLAGS_AUTOCLEAR };
	int ctl, fd, loop = -1, nr, tries;

	fd = open(file, (read_only ? O_RDONLY : O_RDWR) | O_CLOEXEC);
	if (fd < 0) {
		fprintf(stderr, "Cannot open image file %s: %s.\n", file, strerror(errno));
		return -errno;
	}
	ctl = open("/dev/loop-control", O_RDWR | O_CLOEXEC);
	if (ctl < 0) {
		fprintf(stderr, "Cannot attach %s to a loop device: no /dev/loop-control (%s).\n",
			file, strerror(errno));
		close(fd);
		return -ENODEV;
	}
	if (read_only)
		cfg.info.lo_flags |= LO_FLAGS_READ_ONLY;
	cfg.fd = fd;
	snprintf((char *)cfg.info.lo_file_name, sizeof(cfg.info.lo_file_name), "%s", file);
	/* Another program may take the free loop first: try again. */
	for (tries = 0; tries < 16; tries++) {
		nr = ioctl(ctl, LOOP_CTL_GET_FREE);
		if (nr < 0)
			break;
		snprintf(dev, dev_len, "/dev/loop%d", nr);
		loop = open(dev, (read_only ? O_RDONLY : O_RDWR) | O_CLOEXEC);
		if (loop < 0)
			continue;
		if (!ioctl(loop, LOOP_CONFIGURE, &cfg))
			break;
		close(loop);
		loop = -1;
		if (errno != EBUSY)
			break;
	}
	close(ctl);
	close(fd);
	if (loop < 0) {
		fprintf(stderr, "Cannot attach %s to a loop device.\n", file);
		return -ENODEV;
	}
	return loop;
}

/**
 * vs_loop_refresh_capacity() - a loop device takes its file's new size
 * @dev: a block device path; anything but a loop device is left alone.
 */
void vs_loop_refresh_capacity(const char *dev)
{
	char file[512];
	int fd;

	if (vs_loop_backing_file(dev, file, sizeof(file)))
		return;
	fd = open(dev, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return;
	if (ioctl(fd, LOOP_SET_CAPACITY, 0))
		fprintf(stderr, "WARNING: cannot refresh the size of %s: %s.\n", dev,
			strerror(errno));
	close(fd);
}

/**
 * vs_loop_backing_file() - the file behind a loop device
 * @dev: a block device path.
 * @file: where the file name goes.
 * @len: its size.
 *
 * Return: 0 if @dev is a loop device with a file, else -ENOENT.
 */
int vs_loop_backing_file(const char *dev, char *file, size_t len)
{
	char path[128];
	const char *base = strrchr(dev, '/');
	FILE *f;
	int r = -ENOENT;

	if (!base || strncmp(base + 1, "loop", 4))
		return -ENOENT;
	snprintf(path, sizeof(path), "/sys/block/%s/loop/backing_file", base + 1);
	f = fopen(path, "r");
	if (!f)
		return -ENOENT;
	if (fgets(file, len, f)) {
		file[strcspn(file, "\n")] = '\0';
		r = 0;
	}
	fclose(f);
	return r;
}
