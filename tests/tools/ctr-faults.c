// SPDX-License-Identifier: GPL-2.0
/*
 * ctr-faults: a table load with each of its kernel allocations failed in
 * turn, through the task's fail-nth (Documentation/fault-injection): the
 * N-th fault-injection point the load passes fails, for N = 1, 2, ...
 * until a load passes fewer than N points.
 *
 *   ctr-faults NAME SECTORS "PARAMS"
 *
 * NAME is an existing device-mapper device with no table (dmsetup create
 * NAME --notable); each load gives it an inactive veil table of SECTORS
 * sectors with PARAMS, which is cleared again. A load may fail, with
 * ENOMEM or the errno of a constructor that could not allocate, or
 * succeed if the failed allocation had a fallback; either way nothing of
 * it may stay: after a failed load the device has no inactive table.
 * Between arming and disarming the task makes one system call, the load's
 * ioctl, so no other call of its own takes the failure. Prints a summary,
 * the errnos of the failed loads, and a BAD: line per misbehaviour.
 *
 * Exit status: 0 if every load behaved, 1 if one did not, 2 on bad
 * arguments or setup failure.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <sys/ioctl.h>
#include <linux/dm-ioctl.h>
#include <libdevmapper.h>

#define MAX_POINTS	100000
#define LOAD_BUF	16384

static const char *name;
static int nth_fd, ctl_fd;

static void die(const char *what)
{
	fprintf(stderr, "ctr-faults: %s\n", what);
	exit(2);
}

/* Arm fail-nth of this thread: the @n-th fault point it passes fails. */
static void arm(unsigned int n)
{
	char buf[16];
	int len = snprintf(buf, sizeof(buf), "%u", n);

	if (pwrite(nth_fd, buf, len, 0) != len)
		die("cannot write fail-nth");
}

/* Disarm fail-nth; whether the armed failure happened. */
static int disarm(void)
{
	char buf[16] = "";

	if (pread(nth_fd, buf, sizeof(buf) - 1, 0) < 0)
		die("cannot read fail-nth");
	if (pwrite(nth_fd, "0", 1, 0) != 1)
		die("cannot clear fail-nth");
	return atoi(buf) == 0;
}

/*
 * DM_TABLE_LOAD of one veil target, as its own ioctl: the load's errno,
 * or 0. @io is LOAD_BUF bytes.
 */
static int load(struct dm_ioctl *io, unsigned long long sectors, const char *params,
		unsigned int n)
{
	struct dm_target_spec *spec = (void *)(io + 1);
	int err;

	memset(io, 0, LOAD_BUF);
	io->version[0] = DM_VERSION_MAJOR;
	io->data_size = LOAD_BUF;
	io->data_start = sizeof(*io);
	io->target_count = 1;
	io->flags = DM_SECURE_DATA_FLAG;
	snprintf(io->name, sizeof(io->name), "%s", name);
	spec->length = sectors;
	snprintf(spec->target_type, sizeof(spec->target_type), "veil");
	snprintf((char *)(spec + 1), LOAD_BUF - sizeof(*io) - sizeof(*spec), "%s", params);
	arm(n);
	err = ioctl(ctl_fd, DM_TABLE_LOAD, io) ? errno : 0;
	return err;
}

static struct dm_task *task(int type)
{
	struct dm_task *dmt = dm_task_create(type);

	if (!dmt || !dm_task_set_name(dmt, name))
		die("cannot create a device-mapper task");
	return dmt;
}

/* Whether the device has an inactive table. */
static int has_inactive(void)
{
	struct dm_task *dmt = task(DM_DEVICE_INFO);
	struct dm_info info;
	int r;

	if (!dm_task_run(dmt) || !dm_task_get_info(dmt, &info) || !info.exists)
		die("the device is gone");
	r = info.inactive_table;
	dm_task_destroy(dmt);
	return r;
}

static void clear_inactive(void)
{
	struct dm_task *dmt = task(DM_DEVICE_CLEAR);

	if (!dm_task_run(dmt))
		die("cannot clear the inactive table");
	dm_task_destroy(dmt);
}

int main(int argc, char **argv)
{
	unsigned int n, failed = 0, passed = 0, bad = 0, by_errno[256] = { 0 };
	static char buf[LOAD_BUF] __attribute__((aligned(8)));
	unsigned long long sectors;
	int err, fired, e;

	if (argc != 4)
		die("usage: ctr-faults NAME SECTORS PARAMS");
	name = argv[1];
	sectors = strtoull(argv[2], NULL, 10);
	if (strlen(argv[3]) > LOAD_BUF / 2)
		die("the table's parameters are too long");
	nth_fd = open("/proc/thread-self/fail-nth", O_RDWR);
	if (nth_fd < 0)
		die("no /proc/thread-self/fail-nth (CONFIG_FAULT_INJECTION)");
	ctl_fd = open("/dev/mapper/control", O_RDWR);
	if (ctl_fd < 0)
		die("cannot open /dev/mapper/control");
	dm_log_init_verbose(0);
	if (has_inactive())
		clear_inactive();
	for (n = 1; n < MAX_POINTS; n++) {
		err = load((struct dm_ioctl *)buf, sectors, argv[3], n);
		fired = disarm();
		if (!fired) {
			/* The whole load passed fewer than n fault points. */
			if (err) {
				printf("BAD: the load failed with no fault: %s\n", strerror(err));
				bad++;
			}
			break;
		}
		if (!err) {
			passed++;
		} else {
			failed++;
			by_errno[err < 256 ? err : 0]++;
			if (err != ENOMEM && err != EINVAL) {
				printf("BAD: fault %u: unexpected errno %d (%s)\n", n, err,
				       strerror(err));
				bad++;
			}
			if (has_inactive()) {
				printf("BAD: fault %u: a failed load left an inactive table\n", n);
				bad++;
			}
		}
		if (has_inactive())
			clear_inactive();
	}
	if (n == MAX_POINTS)
		die("the load never ran out of fault points");
	printf("points: %u, loads failed: %u, passed despite the fault: %u, problems: %u\n",
	       n - 1, failed, passed, bad);
	for (e = 0; e < 256; e++)
		if (by_errno[e])
			printf("  failed with %s: %u\n", strerror(e), by_errno[e]);
	return bad ? 1 : 0;
}
