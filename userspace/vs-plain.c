// SPDX-License-Identifier: GPL-2.0
/*
 * Plain volume keys: made from a passphrase or key file as libcryptsetup's
 * plain format makes them, and, for a mapping whose key is in no keyring
 * any more, checked against the mapping before a new table is loaded with
 * it: a plain volume has no header to tell a wrong passphrase, and a table
 * with another key would hand out garbage for every sector.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <sys/ioctl.h>
#include <linux/fs.h>
#include <libcryptsetup.h>

#include "veilsetup.h"

/**
 * vs_plain_key() - a plain volume's key
 * @path: the device below, for libcryptsetup's plain format.
 * @m: cipher, key_size, offset, iv_offset, size and sector_size set;
 *     m->key is allocated here and holds the key on success.
 *
 * A key file other than standard input is the key itself, as in
 * cryptsetup 2.6; a passphrase is hashed with --hash (ripemd160 by
 * default).
 *
 * Return: 0 or a negative errno, with a message.
 */
int vs_plain_key(const char *path, struct vs_map *m)
{
	struct crypt_params_plain params = {
		.hash = opt.hash ?: VS_PLAIN_HASH,
		.offset = m->offset, .skip = m->iv_offset, .size = m->size,
		.sector_size = m->sector_size,
	};
	char cipher[64], mode[96], *pass = NULL;
	struct crypt_device *cd = NULL;
	size_t pass_len = 0, vk_size = m->key_size;
	int r;

	if (opt.key_file && strcmp(opt.key_file, "-")) {
		if (opt.hash)
			fprintf(stderr, "WARNING: The --hash parameter is being ignored in "
				"plain mode with keyfile specified.\n");
		if (opt.keyfile_size && opt.keyfile_size != m->key_size)
			fprintf(stderr, "WARNING: The --keyfile-size option is being ignored, "
				"the read size is the same as the encryption key size.\n");
		r = vs_read_passphrase(NULL, NULL, opt.key_file, opt.keyfile_offset,
				       m->key_size, 0, &pass, &pass_len);
		if (!r && pass_len != m->key_size) {
			fprintf(stderr, "Cannot read %zu bytes from keyfile %s.\n",
				m->key_size, opt.key_file);
			r = -EINVAL;
		}
		if (r) {
			crypt_safe_free(pass);
			return r;
		}
		m->key = (unsigned char *)pass;
		return 0;
	}
	if (sscanf(m->cipher, "%63[^-]-%95s", cipher, mode) != 2) {
		fprintf(stderr, "No known cipher specification pattern detected.\n");
		return -EINVAL;
	}
	m->key = crypt_safe_alloc(m->key_size);
	r = m->key ? vs_read_passphrase(NULL, "Enter passphrase: ", opt.key_file,
					opt.keyfile_offset, opt.keyfile_size, 0,
					&pass, &pass_len) : -ENOMEM;
	if (!r)
		r = crypt_init(&cd, path);
	if (!r)
		r = crypt_format(cd, CRYPT_PLAIN, cipher, mode, NULL, NULL, m->key_size,
				 &params);
	if (!r)
		r = crypt_volume_key_get(cd, CRYPT_ANY_SLOT, (char *)m->key, &vk_size,
					 pass, pass_len);
	crypt_free(cd);
	crypt_safe_free(pass);
	return r < 0 ? r : 0;
}

/* The first @len bytes of @path into @buf, bypassing caches. */
static int read_first_sector(const char *path, void *buf, size_t len)
{
	int fd = open(path, O_RDONLY | O_DIRECT | O_CLOEXEC), err;
	ssize_t n;

	if (fd < 0)
		return -errno;
	n = pread(fd, buf, len, 0);
	err = n < 0 ? errno : EIO;
	close(fd);
	return n == (ssize_t)len ? 0 : -err;
}

/*
 * What the check reads: one encryption sector, or one logical block of the
 * mapping where that is larger (a disk with 4096-byte blocks under
 * 512-byte sectors), which a table and O_DIRECT need whole.
 */
static size_t check_len(const char *path, unsigned int sector_size)
{
	int fd = open(path, O_RDONLY | O_CLOEXEC), block = 0;

	if (fd >= 0) {
		if (ioctl(fd, BLKSSZGET, &block))
			block = 0;
		close(fd);
	}
	return (size_t)block > sector_size ? (size_t)block : sector_size;
}

/*
 * The sectors of a multi-key cipher spec ("aes:64-cbc-lmk": sector i is
 * encrypted with key i mod 64), or 1: the check reads one with each key.
 */
static unsigned long key_count(const char *cipher)
{
	const char *colon = strchr(cipher, ':');
	unsigned long n = colon ? strtoul(colon + 1, NULL, 10) : 1;

	return n ?: 1;
}

/**
 * vs_plain_key_check() - does a key decrypt what a mapping decrypts?
 * @t: the active mapping.
 * @m: its cipher, offsets, sector size and flags, as a new table of it.
 * @key: the table key field to check (hex or a keyring reference, valid
 *       until the caller drops it).
 * @loopaes: for a loop-AES mapping, its name: a wrong key then gets
 *	     cryptsetup's message for a refresh with another key file.
 *
 * The first encryption sector (or logical block, if larger; one sector
 * per key of a multi-key spec, loop-AES's 64, or as many as a shorter
 * mapping has: no data checks the keys of sectors past its end, and a
 * mapping shorter than its keys' sectors stays one that can be resized)
 * is read through the mapping
 * and through a temporary read-only mapping of it with
 * @key (private to udev, removed after; termination waits for that);
 * the mapping is read again after, so that a write in between is not taken
 * for a wrong key. Different keys give different plaintexts of any sector
 * but with a chance of 2^-4096 and less.
 *
 * Return: 0 when the plaintexts are the same, -EPERM (plain: with
 * cryptsetup's message for a wrong passphrase) or -EINVAL (loop-AES) when
 * they differ, another negative errno when the check could not be made.
 */
int vs_plain_key_check(const struct vs_table *t, const struct vs_map *m, const char *key,
		       const char *loopaes)
{
	unsigned char *live = NULL, *again = NULL, *cand = NULL;
	struct vs_map tm = *m;
	struct vs_temp tmp;
	char live_path[160], *table = NULL;
	size_t len;
	int r, tries;

	snprintf(live_path, sizeof(live_path), "/dev/mapper/%s", m->name);
	len = check_len(live_path, m->sector_size);
	if (len < m->sector_size * key_count(m->cipher))
		len = m->sector_size * key_count(m->cipher);
	/* A mapping shorter than its keys' sectors: the sectors there are. */
	if (len > t->len * 512)
		len = t->len * 512;
	if (posix_memalign((void **)&live, 4096, len) ||
	    posix_memalign((void **)&again, 4096, len) ||
	    posix_memalign((void **)&cand, 4096, len)) {
		r = -ENOMEM;
		goto out;
	}
	table = vs_table_build(&tm, len / 512, key, t->features);
	if (!table) {
		r = -ENOMEM;
		goto out;
	}
	r = vs_dm_temp_begin(&tmp);
	if (r)
		goto out;
	tm.name = tmp.name;
	tm.uuid = tmp.uuid;
	tm.flags |= CRYPT_ACTIVATE_PRIVATE;
	r = vs_dm_create(&tm, table, 1);
	if (r) {
		vs_dm_temp_end(&tmp);
		vs_dm_create_failed(tmp.name);
		goto out;
	}
	r = read_first_sector(live_path, live, len);
	for (tries = 0; !r && tries < 3; tries++) {
		r = read_first_sector(tmp.path, cand, len) ?:
		    read_first_sector(live_path, again, len);
		if (r || !memcmp(live, again, len))
			break;
		memcpy(live, again, len);
	}
	if (!r)
		r = memcmp(live, again, len) ? -EBUSY : memcmp(live, cand, len) ? -EPERM : 0;
	if (vs_dm_remove(tmp.name)) {
		vs_dm_temp_remove_failed(&tmp);
		r = r ?: -EBUSY;
	}
	vs_dm_temp_end(&tmp);
out:
	if (r == -EPERM && loopaes) {
		fprintf(stderr, "Mismatching parameters on device %s.\n", loopaes);
		r = -EINVAL;
	} else if (r == -EPERM)
		fprintf(stderr, "No key available with this passphrase (a plain volume: "
			"give the --hash and key file options it was opened with).\n");
	else if (r)
		fprintf(stderr, "Cannot check the key of %s against its data: %s.\n",
			m->name, strerror(-r));
	crypt_safe_free(table);
	if (live)
		explicit_bzero(live, len);
	if (again)
		explicit_bzero(again, len);
	if (cand)
		explicit_bzero(cand, len);
	free(live);
	free(again);
	free(cand);
	return r;
}
