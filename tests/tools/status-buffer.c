// SPDX-License-Identifier: GPL-2.0
/*
 * status-buffer: ask device-mapper for a device's table or status with
 * every buffer size from the bare header up to one that holds it all, the
 * way libdevmapper does before it retries with a larger buffer. Whenever
 * the kernel does not flag the buffer as full (DM_BUFFER_FULL_FLAG), what
 * it returned must be the whole answer: a target that drops a field when
 * the buffer is short, instead of filling it, gives a wrong table line
 * that no caller can tell from a right one.
 *
 *   status-buffer table|status NAME
 *
 * Prints the number of sizes tried; exits 1 on the first size that returns
 * a short answer without the flag (printing both answers), 2 on errors.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <unistd.h>
#include <linux/dm-ioctl.h>

/* One DM_TABLE_STATUS call with a buffer of @size bytes; NULL on errors. */
static struct dm_ioctl *table_status(int fd, const char *name, int table,
				     size_t size)
{
	struct dm_ioctl *dmi = calloc(1, size);

	if (!dmi) {
		perror("status-buffer");
		exit(2);
	}
	dmi->version[0] = DM_VERSION_MAJOR;
	dmi->data_size = size;
	dmi->data_start = sizeof(*dmi);
	dmi->flags = table ? DM_STATUS_TABLE_FLAG : 0;
	snprintf(dmi->name, sizeof(dmi->name), "%s", name);
	if (ioctl(fd, DM_TABLE_STATUS, dmi)) {
		fprintf(stderr, "status-buffer: DM_TABLE_STATUS %s (%zu bytes): %s\n",
			name, size, strerror(errno));
		exit(2);
	}
	return dmi;
}

/* The targets' lines, "start length type params" each, into @out. */
static void lines(const struct dm_ioctl *dmi, char *out, size_t outlen)
{
	const char *data = (const char *)dmi + dmi->data_start;
	size_t pos = 0, off = 0;
	unsigned int i;

	out[0] = '\0';
	for (i = 0; i < dmi->target_count; i++) {
		const struct dm_target_spec *spec = (const void *)(data + off);

		pos += snprintf(out + pos, outlen - pos, "%llu %llu %s %s\n",
				(unsigned long long)spec->sector_start,
				(unsigned long long)spec->length, spec->target_type,
				(const char *)(spec + 1));
		if (pos >= outlen) {
			fprintf(stderr, "status-buffer: answer too long\n");
			exit(2);
		}
		off = spec->next;
	}
}

int main(int argc, char **argv)
{
	size_t size, full_size = 1 << 20;
	struct dm_ioctl *dmi;
	char *want, *got;
	unsigned int tried = 0;
	int fd, table;

	if (argc != 3 || (strcmp(argv[1], "table") && strcmp(argv[1], "status"))) {
		fprintf(stderr, "usage: status-buffer table|status NAME\n");
		return 2;
	}
	table = !strcmp(argv[1], "table");
	fd = open("/dev/mapper/control", O_RDWR);
	if (fd < 0) {
		perror("status-buffer: /dev/mapper/control");
		return 2;
	}
	want = malloc(full_size);
	got = malloc(full_size);
	if (!want || !got) {
		perror("status-buffer");
		return 2;
	}
	dmi = table_status(fd, argv[2], table, full_size);
	if (dmi->flags & DM_BUFFER_FULL_FLAG) {
		fprintf(stderr, "status-buffer: %s does not fit in %zu bytes\n",
			argv[2], full_size);
		return 2;
	}
	lines(dmi, want, full_size);
	free(dmi);

	for (size = sizeof(*dmi); size < sizeof(*dmi) + strlen(want) + 256; size++) {
		dmi = table_status(fd, argv[2], table, size);
		tried++;
		if (!(dmi->flags & DM_BUFFER_FULL_FLAG)) {
			lines(dmi, got, full_size);
			if (strcmp(got, want)) {
				printf("buffer of %zu bytes: not flagged full, but the answer is\n%s"
				       "instead of\n%s", size, got, want);
				return 1;
			}
		}
		free(dmi);
	}
	printf("%u buffer sizes: each answer whole or flagged full\n", tried);
	return 0;
}
