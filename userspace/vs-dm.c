// SPDX-License-Identifier: GPL-2.0
/*
 * veilsetup device-mapper calls: every libdevmapper use of the tool is in
 * this file. Tables that may carry a hex key are marked secure, so that
 * libdevmapper wipes its copies.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>
#include <libdevmapper.h>
#include <libcryptsetup.h>

#include "veilsetup.h"

/* The rules udev skips for a device no one else should see. */
#define PRIVATE_UDEV_FLAGS	(DM_UDEV_DISABLE_SUBSYSTEM_RULES_FLAG | \
				 DM_UDEV_DISABLE_DISK_RULES_FLAG | \
				 DM_UDEV_DISABLE_OTHER_RULES_FLAG)

static struct dm_task *task(int type, const char *name)
{
	struct dm_task *dmt = dm_task_create(type);

	if (!dmt)
		return NULL;
	if (name && !dm_task_set_name(dmt, name)) {
		dm_task_destroy(dmt);
		return NULL;
	}
	return dmt;
}

/*
 * Run @dmt and wait for udev to make or remove the /dev/mapper node;
 * @udev_flags: DM_UDEV_* for the rules udev should skip, or 0.
 */
static int run_synced(struct dm_task *dmt, uint16_t udev_flags)
{
	uint32_t cookie = 0;
	int ok;

	if (!dm_task_set_cookie(dmt, &cookie, udev_flags))
		return 0;
	ok = dm_task_run(dmt);
	dm_udev_wait(cookie);
	return ok;
}

/*
 * libdevmapper's own logging, quiet below errors: libcryptsetup turns it
 * up for its calls and may leave it so.
 */
void vs_dm_log_default(void)
{
	dm_log_init_verbose(0);
	dm_log_with_errno_init(NULL);
}

/**
 * vs_dm_temp_begin() - name a temporary mapping and hold off termination
 * @tmp: its name ("temporary-veilsetup-" and 16 random hex digits, as
 *       libcryptsetup names its own), dm uuid and /dev/mapper path.
 *
 * Termination waits until vs_dm_temp_end() (vs_signals_hold()), so that
 * the mapping, which holds a key, is never left behind; the caller
 * removes it first.
 *
 * Return: 0, -EIO when no random bytes could be read, -EEXIST (with a
 * message) when the name is taken; signals are held only on success.
 */
int vs_dm_temp_begin(struct vs_temp *tmp)
{
	unsigned char rnd[8];
	int fd = open("/dev/urandom", O_RDONLY | O_CLOEXEC), n;
	size_t i;

	if (fd < 0 || read(fd, rnd, sizeof(rnd)) != sizeof(rnd)) {
		if (fd >= 0)
			close(fd);
		return -EIO;
	}
	close(fd);
	n = snprintf(tmp->name, sizeof(tmp->name), "temporary-veilsetup-");
	for (i = 0; i < sizeof(rnd); i++)
		n += snprintf(tmp->name + n, sizeof(tmp->name) - n, "%02x", rnd[i]);
	snprintf(tmp->uuid, sizeof(tmp->uuid), VS_UUID_PREFIX "TEMP-%s", tmp->name);
	snprintf(tmp->path, sizeof(tmp->path), "/dev/mapper/%s", tmp->name);
	if (vs_dm_exists(tmp->name)) {
		fprintf(stderr, "Device %s already exists.\n", tmp->name);
		return -EEXIST;
	}
	vs_signals_hold(&tmp->old_mask);
	return 0;
}

/* The end of vs_dm_temp_begin()'s hold: a held signal is taken now. */
void vs_dm_temp_end(struct vs_temp *tmp)
{
	vs_signals_release(&tmp->old_mask);
}

/*
 * Whether @name is mapped (DM_DEVICE_INFO, no table read); its dm uuid
 * ("" if none) into @uuid, @uuid_len bytes, unless NULL; how many times
 * it is open into @open_count, unless NULL.
 */
static int info(const char *name, char *uuid, size_t uuid_len, int *open_count)
{
	struct dm_task *dmt = task(DM_DEVICE_INFO, name);
	struct dm_info info;
	int r = 0;

	if (dmt && dm_task_run(dmt) && dm_task_get_info(dmt, &info))
		r = info.exists;
	if (r && uuid)
		snprintf(uuid, uuid_len, "%s", dm_task_get_uuid(dmt) ?: "");
	if (r && open_count)
		*open_count = info.open_count;
	if (dmt)
		dm_task_destroy(dmt);
	return r;
}

int vs_dm_exists(const char *name)
{
	return info(name, NULL, 0, NULL);
}

/**
 * vs_dm_name_of_path() - the mapping a device path names
 * @path: a block device node or a link to one (/dev/dm-0,
 *	/dev/mapper/<name>, /dev/disk/by-id/dm-name-<name>)
 * @name: the mapping's name, @len bytes
 * @len: the size of @name
 *
 * Return: 1 when @path is a device-mapper device; 0 when nothing is there
 * (cryptsetup's status calls it inactive); -EINVAL, with libdevmapper's
 * message, when it is something else (a file, a loop device).
 */
int vs_dm_name_of_path(const char *path, char *name, size_t len)
{
	struct dm_task *dmt;
	struct dm_info info;
	struct stat st;
	int r = 0;

	if (stat(path, &st))
		return 0;
	dmt = S_ISBLK(st.st_mode) ? task(DM_DEVICE_INFO, NULL) : NULL;
	if (dmt && dm_task_set_major(dmt, major(st.st_rdev)) &&
	    dm_task_set_minor(dmt, minor(st.st_rdev)) && dm_task_run(dmt) &&
	    dm_task_get_info(dmt, &info) && info.exists && dm_task_get_name(dmt))
		r = snprintf(name, len, "%s", dm_task_get_name(dmt)) < (int)len;
	if (dmt)
		dm_task_destroy(dmt);
	if (r)
		return 1;
	fprintf(stderr, "Device %s not found\n", strrchr(path, '/') + 1);
	return -EINVAL;
}

/*
 * How many times @name's device is open (dm's open count: a file system,
 * a mapping above, any process), or -ENODEV: what makes cryptsetup's
 * status say "in use".
 */
int vs_dm_open_count(const char *name)
{
	int count;

	return info(name, NULL, 0, &count) ? count : -ENODEV;
}

/* The dm uuid of @name into @uuid (@len bytes), or -ENODEV. */
int vs_dm_uuid(const char *name, char *uuid, size_t len)
{
	return info(name, uuid, len, NULL) ? 0 : -ENODEV;
}

/* Whether the kernel has the veil target registered. */
int vs_dm_target_loaded(void)
{
	struct dm_task *dmt = task(DM_DEVICE_LIST_VERSIONS, NULL);
	struct dm_versions *v, *last;
	int found = 0;

	if (!dmt || !dm_task_run(dmt))
		goto out;
	v = dm_task_get_versions(dmt);
	do {
		last = v;
		if (!strcmp(v->name, VS_TARGET))
			found = 1;
		v = (struct dm_versions *)((char *)v + v->next);
	} while (last != v);
out:
	if (dmt)
		dm_task_destroy(dmt);
	return found;
}

/* Load @table ("<len> <params>") into @name's inactive slot. */
static int load_table(struct dm_task *dmt, const char *table)
{
	char *params = strchr(table, ' ');
	char *end;
	uint64_t len;

	errno = 0;
	len = strtoull(table, &end, 10);
	if (errno || !params || end != params)
		return 0;
	return dm_task_secure_data(dmt) &&
	       dm_task_add_target(dmt, 0, len, VS_TARGET, params + 1);
}

int vs_dm_create(const struct vs_map *m, const char *table, int read_only)
{
	struct dm_task *dmt = task(DM_DEVICE_CREATE, m->name);
	int ok;

	if (!dmt)
		return -ENOMEM;
	ok = (!m->uuid || dm_task_set_uuid(dmt, m->uuid)) &&
	     (!read_only || dm_task_set_ro(dmt)) &&
	     load_table(dmt, table) &&
	     run_synced(dmt, (m->flags & CRYPT_ACTIVATE_PRIVATE) ? PRIVATE_UDEV_FLAGS : 0);
	dm_task_destroy(dmt);
	return ok ? 0 : -EINVAL;
}

/**
 * vs_dm_create_linear() - a temporary read-only linear mapping of a device
 * @tmp: the name and uuid, from vs_dm_temp_begin().
 * @dev: the device ("major:minor"), mapped from its first sector.
 * @len: sectors.
 *
 * For libcryptsetup, which opens a device it maps exclusively: the device
 * under an active mapping is held, this one is not. udev leaves it alone.
 *
 * Return: 0 or -EINVAL.
 */
int vs_dm_create_linear(const struct vs_temp *tmp, const char *dev, uint64_t len)
{
	struct dm_task *dmt = task(DM_DEVICE_CREATE, tmp->name);
	char params[96];
	int ok;

	if (!dmt)
		return -ENOMEM;
	snprintf(params, sizeof(params), "%s 0", dev);
	ok = dm_task_set_uuid(dmt, tmp->uuid) && dm_task_set_ro(dmt) &&
	     dm_task_add_target(dmt, 0, len, "linear", params) &&
	     run_synced(dmt, PRIVATE_UDEV_FLAGS);
	dm_task_destroy(dmt);
	return ok ? 0 : -EINVAL;
}

/* Why the table of a new mapping @name was refused, for the user. */
void vs_dm_create_failed(const char *name)
{
	if (!vs_dm_target_loaded())
		fprintf(stderr, "Cannot create device %s: the kernel has no veil "
			"target and could not load the dm-veil module (install "
			"the dm-veil-dkms package, or run 'make dkms-install').\n",
			name);
	else
		fprintf(stderr, "Cannot create device %s: the kernel refused the "
			"veil table (see the kernel log).\n", name);
}

/* Drop the inactive table of @name, which may hold a key. */
static void clear_inactive(const char *name)
{
	struct dm_task *dmt = task(DM_DEVICE_CLEAR, name);

	if (!dmt || !dm_task_run(dmt))
		fprintf(stderr, "Cannot clear the inactive table of %s, which may hold "
			"its key: run 'dmsetup clear %s'.\n", name, name);
	if (dmt)
		dm_task_destroy(dmt);
}

/**
 * vs_dm_temp_remove_failed() - say that a temporary device stays
 * @tmp: the device, which holds a volume's key in its table.
 */
void vs_dm_temp_remove_failed(const struct vs_temp *tmp)
{
	fprintf(stderr, "Cannot deactivate temporary device %s, which holds the "
		"volume's key: remove it with 'dmsetup remove --retry %s'.\n",
		tmp->path, tmp->name);
}

/**
 * vs_dm_reload() - load a new table into a mapping and resume it
 * @name: the mapping.
 * @table: the new table, which may carry a hex key.
 * @read_only: load it read-only.
 *
 * Termination waits until the new table is live or gone
 * (vs_signals_hold()): a table left inactive would keep its key in the
 * kernel, printed by "dmsetup table --inactive". A resume that fails
 * clears the inactive table; the old one stays live.
 *
 * Return: 0 or a negative errno.
 */
int vs_dm_reload(const char *name, const char *table, int read_only)
{
	struct dm_task *dmt = task(DM_DEVICE_RELOAD, name);
	sigset_t old;
	int ok, r;

	if (!dmt)
		return -ENOMEM;
	vs_signals_hold(&old);
	ok = (!read_only || dm_task_set_ro(dmt)) && load_table(dmt, table) &&
	     dm_task_run(dmt);
	dm_task_destroy(dmt);
	r = ok ? vs_dm_resume(name) : -EINVAL;
	if (ok && r)
		clear_inactive(name);
	vs_signals_release(&old);
	return r;
}

int vs_dm_suspend(const char *name)
{
	struct dm_task *dmt = task(DM_DEVICE_SUSPEND, name);
	int ok;

	if (!dmt)
		return -ENOMEM;
	ok = dm_task_run(dmt);
	dm_task_destroy(dmt);
	return ok ? 0 : -EINVAL;
}

/* Resume @name; @udev_flags as for run_synced(). */
static int resume(const char *name, uint16_t udev_flags)
{
	struct dm_task *dmt = task(DM_DEVICE_RESUME, name);
	int ok;

	if (!dmt)
		return -ENOMEM;
	ok = run_synced(dmt, udev_flags);
	dm_task_destroy(dmt);
	return ok ? 0 : -EINVAL;
}

int vs_dm_resume(const char *name)
{
	return resume(name, 0);
}

/* A target message; @msg may hold a key, so libdevmapper wipes its copy. */
int vs_dm_message(const char *name, const char *msg)
{
	struct dm_task *dmt = task(DM_DEVICE_TARGET_MSG, name);
	int ok;

	if (!dmt)
		return -ENOMEM;
	ok = dm_task_secure_data(dmt) && dm_task_set_sector(dmt, 0) &&
	     dm_task_set_message(dmt, msg) && dm_task_run(dmt);
	dm_task_destroy(dmt);
	return ok ? 0 : -EINVAL;
}

/* libdevmapper's messages while a removal may still be retried: none. */
static void quiet_log(int level, const char *file, int line, int dm_errno_or_class,
		      const char *f, ...)
{
	(void)level; (void)file; (void)line; (void)dm_errno_or_class; (void)f;
}

/*
 * Remove @name. A device that is busy for a moment (udev probing it after
 * the last close) is tried again for 5 s, as cryptsetup does, and the
 * caller says "still in use" if it stays busy: libdevmapper's own retry
 * would print every busy try. Any other failure is tried once more with
 * libdevmapper's message.
 */
int vs_dm_remove(const char *name)
{
	struct dm_task *dmt;
	int i, ok = 0, busy = 0, loud = 0;

	for (i = 0; i < 25; i++) {
		if (busy)
			usleep(200000);
		dmt = task(DM_DEVICE_REMOVE, name);
		if (!dmt)
			return -ENOMEM;
		dm_log_with_errno_init(loud ? NULL : quiet_log);
		ok = run_synced(dmt, 0);
		busy = !ok && dm_task_get_errno(dmt) == EBUSY;
		dm_log_with_errno_init(NULL);
		dm_task_destroy(dmt);
		if (ok || loud)
			break;
		loud = !busy;
	}
	return ok ? 0 : -EBUSY;
}

/**
 * vs_dm_remove_deferred() - remove @name, or when it is open, once the
 * last user closes it (device-mapper's deferred remove, close --deferred)
 * @name: the device.
 *
 * Return: 0 (removed, or the removal deferred), or -EBUSY.
 */
int vs_dm_remove_deferred(const char *name)
{
	struct dm_task *dmt = task(DM_DEVICE_REMOVE, name);
	int ok;

	if (!dmt)
		return -ENOMEM;
	ok = dm_task_deferred_remove(dmt) && run_synced(dmt, 0);
	dm_task_destroy(dmt);
	return ok ? 0 : -EBUSY;
}

/**
 * vs_dm_cancel_deferred() - cancel a deferred remove of @name
 * @name: the device.
 *
 * device-mapper's "@cancel_deferred_remove" message, as libcryptsetup
 * sends it (close --cancel-deferred).
 *
 * Return: 0, or -ENOTSUP (no removal was deferred, or the kernel has no
 * deferred remove).
 */
int vs_dm_cancel_deferred(const char *name)
{
	struct dm_task *dmt = task(DM_DEVICE_TARGET_MSG, name);
	int ok;

	if (!dmt)
		return -ENOMEM;
	ok = dm_task_set_sector(dmt, 0) && dm_task_set_message(dmt, "@cancel_deferred_remove") &&
	     dm_task_run(dmt);
	dm_task_destroy(dmt);
	return ok ? 0 : -ENOTSUP;
}

/*
 * The first target of @name: its type, its table (@status = 0, with the key)
 * or status (@status = 1) parameters, its length, the device's uuid and
 * whether it is read-only and suspended (each pointer may be NULL).
 */
int vs_dm_get(const char *name, int status, char *type, size_t type_len,
	      char *params, size_t params_len, uint64_t *len, char *uuid,
	      size_t uuid_len, int *read_only, int *suspended)
{
	struct dm_task *dmt = task(status ? DM_DEVICE_STATUS : DM_DEVICE_TABLE, name);
	char *ttype = NULL, *tparams = NULL;
	uint64_t start, length;
	struct dm_info info;
	int r = -ENODEV;

	if (!dmt)
		return -ENOMEM;
	if (!status && !dm_task_secure_data(dmt))
		goto out;
	if (!dm_task_run(dmt) || !dm_task_get_info(dmt, &info) || !info.exists)
		goto out;
	dm_get_next_target(dmt, NULL, &start, &length, &ttype, &tparams);
	if (!ttype)
		goto out;
	snprintf(type, type_len, "%s", ttype);
	snprintf(params, params_len, "%s", tparams ? tparams : "");
	*len = length;
	if (uuid)
		snprintf(uuid, uuid_len, "%s", dm_task_get_uuid(dmt) ?: "");
	if (read_only)
		*read_only = info.read_only;
	if (suspended)
		*suspended = info.suspended;
	r = 0;
out:
	dm_task_destroy(dmt);
	return r;
}

/**
 * vs_dm_targets_get() - every target of a mapping's table, keys included
 * @name: the mapping.
 * @tg: room for @max targets; each one's params in secure memory.
 * @max: its size.
 * @n: the number of targets.
 * @uuid: the device's dm uuid ("" if none), @uuid_len bytes.
 * @uuid_len: the size of @uuid.
 * @read_only: whether the device is read-only.
 *
 * Free the params with vs_dm_targets_free() on success.
 *
 * Return: 0, -ENODEV when @name is not mapped, -E2BIG for more than @max
 * targets, -ENOMEM.
 */
int vs_dm_targets_get(const char *name, struct vs_dm_target *tg, int max, int *n,
		      char *uuid, size_t uuid_len, int *read_only)
{
	struct dm_task *dmt = task(DM_DEVICE_TABLE, name);
	char *ttype, *tparams;
	uint64_t start, len;
	void *next = NULL;
	struct dm_info info;
	int r = -ENODEV;

	*n = 0;
	if (!dmt)
		return -ENOMEM;
	if (!dm_task_secure_data(dmt) || !dm_task_run(dmt) ||
	    !dm_task_get_info(dmt, &info) || !info.exists)
		goto out;
	r = 0;
	do {
		ttype = tparams = NULL;
		next = dm_get_next_target(dmt, next, &start, &len, &ttype, &tparams);
		if (!ttype)
			break;
		if (*n == max) {
			r = -E2BIG;
			break;
		}
		tg[*n].start = start;
		tg[*n].len = len;
		snprintf(tg[*n].type, sizeof(tg[*n].type), "%s", ttype);
		tg[*n].params = crypt_safe_alloc(VS_TABLE_MAX);
		if (!tg[*n].params) {
			r = -ENOMEM;
			break;
		}
		snprintf(tg[*n].params, VS_TABLE_MAX, "%s", tparams ?: "");
		(*n)++;
	} while (next);
	snprintf(uuid, uuid_len, "%s", dm_task_get_uuid(dmt) ?: "");
	*read_only = info.read_only;
	if (r || !*n) {
		vs_dm_targets_free(tg, *n);
		*n = 0;
		r = r ?: -ENODEV;
	}
out:
	dm_task_destroy(dmt);
	return r;
}

/* Wipe and free the params of @n targets from vs_dm_targets_get(). */
void vs_dm_targets_free(struct vs_dm_target *tg, int n)
{
	int i;

	for (i = 0; i < n; i++) {
		crypt_safe_free(tg[i].params);
		tg[i].params = NULL;
	}
}

/**
 * vs_dm_targets_swap() - replace a mapping's table in place
 * @name: the mapping.
 * @tg: its new targets, as vs_dm_targets_get() gives them.
 * @n: their number.
 * @read_only: load the table read-only (as the device is).
 * @private_dev: udev leaves the device alone at the resume, as at its
 *	creation with CRYPT_ACTIVATE_PRIVATE (the lower layers of a stack).
 *
 * The table is loaded (marked secure: it may hold keys) and the device
 * resumed with it: whoever has it open goes on with the new table.
 *
 * Return: 0, or -EINVAL when the kernel refused the table or the resume
 * (the old table then stays).
 */
int vs_dm_targets_swap(const char *name, const struct vs_dm_target *tg, int n,
		       int read_only, int private_dev)
{
	struct dm_task *dmt = task(DM_DEVICE_RELOAD, name);
	int ok, i;

	if (!dmt)
		return -ENOMEM;
	ok = dm_task_secure_data(dmt) && (!read_only || dm_task_set_ro(dmt));
	for (i = 0; ok && i < n; i++)
		ok = dm_task_add_target(dmt, tg[i].start, tg[i].len, tg[i].type,
					tg[i].params);
	ok = ok && dm_task_run(dmt);
	dm_task_destroy(dmt);
	if (!ok)
		return -EINVAL;
	return resume(name, private_dev ? PRIVATE_UDEV_FLAGS : 0);
}
