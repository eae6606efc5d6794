// SPDX-License-Identifier: GPL-2.0
/*
 * veilsetup: the signatures (file systems, partition tables, RAID, an old
 * LUKS header) that libblkid finds on a device luksFormat is about to
 * write, reported before the question and wiped before the header is
 * written, as cryptsetup 2.6 does: nothing but the new header then
 * identifies the device.
 */
#include <blkid/blkid.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <sys/stat.h>
#include <unistd.h>

#include "veilsetup.h"

/* Partition tables and superblocks, with what a wipe needs (magic). */
static void probe_everything(blkid_probe pr)
{
	blkid_probe_enable_partitions(pr, 1);
	blkid_probe_set_partitions_flags(pr, BLKID_PARTS_MAGIC);
	blkid_probe_enable_superblocks(pr, 1);
	blkid_probe_set_superblocks_flags(pr, BLKID_SUBLKS_LABEL | BLKID_SUBLKS_UUID |
					  BLKID_SUBLKS_TYPE | BLKID_SUBLKS_USAGE |
					  BLKID_SUBLKS_VERSION | BLKID_SUBLKS_MAGIC |
					  BLKID_SUBLKS_BADCSUM);
}

/* The probe's signature: a partition table's type (*@table set) or not. */
static const char *signature(blkid_probe pr, int *table)
{
	const char *value = NULL;

	*table = blkid_probe_has_value(pr, "PTTYPE");
	blkid_probe_lookup_value(pr, *table ? "PTTYPE" : "TYPE", &value, NULL);
	return value ?: "unknown";
}

/**
 * vs_signatures_report() - say which signatures @path holds
 * @path: the device (or header file) luksFormat writes.
 * @count: how many were found.
 *
 * Each is named on stdout, cryptsetup's "WARNING: Device ... already
 * contains a '...' superblock signature." (or partition signature),
 * unless --batch-mode.
 *
 * Return: 0, or -EINVAL with a message if @path cannot be probed.
 */
int vs_signatures_report(const char *path, size_t *count)
{
	blkid_probe pr = blkid_new_probe_from_filename(path);
	const char *what;
	int r, table;

	*count = 0;
	if (!pr) {
		fprintf(stderr, "Failed to initialize device signature probes.\n");
		return -EINVAL;
	}
	probe_everything(pr);
	while ((r = blkid_do_probe(pr)) == 0) {
		what = signature(pr, &table);
		if (!opt.batch)
			printf("WARNING: Device %s already contains a '%s' %s signature.\n",
			       path, what, table ? "partition" : "superblock");
		(*count)++;
	}
	blkid_free_probe(pr);
	return r == 1 ? 0 : -EINVAL;
}

/**
 * vs_signatures_wipe() - wipe every signature libblkid finds on @path
 * @path: the device (opened exclusively) or header file.
 *
 * Each signature's magic bytes are zeroed (blkid_do_wipe()), named with
 * --verbose, as cryptsetup's.
 *
 * Return: 0, or -EINVAL with cryptsetup's message.
 */
int vs_signatures_wipe(const char *path)
{
	const char *what;
	blkid_probe pr;
	struct stat st;
	int fd, r, table;

	if (stat(path, &st)) {
		fprintf(stderr, "Failed to stat device %s.\n", path);
		return -EINVAL;
	}
	fd = open(path, O_RDWR | (S_ISBLK(st.st_mode) ? O_EXCL : 0));
	if (fd < 0) {
		if (errno == EBUSY)
			fprintf(stderr, "Cannot exclusively open %s, device in use.\n", path);
		else
			fprintf(stderr, "Failed to open file %s in read/write mode.\n", path);
		return -EINVAL;
	}
	pr = blkid_new_probe();
	if (!pr || blkid_probe_set_device(pr, fd, 0, 0)) {
		fprintf(stderr, "Failed to initialize device signature probes.\n");
		r = -EINVAL;
		goto out;
	}
	probe_everything(pr);
	while ((r = blkid_do_probe(pr)) == 0) {
		what = signature(pr, &table);
		if (opt.verbose)
			printf("Existing '%s' %s signature on device %s will be wiped.\n",
			       what, table ? "partition" : "superblock", path);
		if (blkid_do_wipe(pr, 0) || fsync(fd)) {
			fprintf(stderr, "Failed to wipe device signature.\n");
			r = -EINVAL;
			goto out;
		}
	}
	if (r != 1) {
		fprintf(stderr, "Failed to probe device %s for a signature.\n", path);
		r = -EINVAL;
	} else {
		r = 0;
	}
out:
	if (pr)
		blkid_free_probe(pr);
	close(fd);
	return r;
}
