// SPDX-License-Identifier: GPL-2.0
/*
 * dm-veil: device-mapper block encryption target.
 *
 * This file is the device-mapper glue: construction and teardown, map,
 * status, messages and queue limits. The table line is dm-crypt's:
 *
 *   <cipher> <key> <iv_offset> <dev_path> <start> [<#opt_params> <opts>...]
 *
 * See docs/table-line.md for every field.
 */
#include <linux/blkdev.h>
#include <linux/module.h>
#include <linux/slab.h>

#include "dm-veil.h"
#include "veil-integrity.h"
#include "veil-io.h"
#include "veil-masks.h"
#include "veil-pages.h"
#include "veil-stats.h"
#include "veil-table.h"

#define VEIL_FIXED_ARGS	5

static void veil_dtr(struct dm_target *ti)
{
	struct veil_c *vc = ti->private;
	unsigned int i;

	if (!vc)
		return;
	veil_masks_exit(vc);
	veil_io_exit(vc);
	veil_integrity_exit(vc);
	veil_stats_exit(vc);
	veil_iv_exit(vc);
	for (i = 0; vc->tfms && i < vc->tfms_count; i++)
		if (vc->tfms[i])
			crypto_free_skcipher(vc->tfms[i]);
	kfree(vc->tfms);
	veil_key_free(&vc->key);
	if (vc->dev)
		dm_put_device(ti, vc->dev);
	kfree(vc->cipher_string);
	mutex_destroy(&vc->key_lock);
	kfree(vc);
	ti->private = NULL;
}

static int veil_ctr(struct dm_target *ti, unsigned int argc, char **argv)
{
	struct veil_key key = { };
	unsigned long long tmpll;
	struct veil_c *vc;
	char dummy;
	int ret;

	if (argc < VEIL_FIXED_ARGS) {
		ti->error = "Not enough arguments";
		return -EINVAL;
	}

	vc = kzalloc(sizeof(*vc), GFP_KERNEL);
	if (!vc) {
		ti->error = "Cannot allocate veil context";
		return -ENOMEM;
	}
	ti->private = vc;
	mutex_init(&vc->key_lock);

	/* Features first: sector_size decides what the other fields may be. */
	ret = veil_parse_options(ti, vc, argc - VEIL_FIXED_ARGS,
				 argv + VEIL_FIXED_ARGS);
	if (ret)
		goto bad;

	ret = veil_parse_cipher(ti, vc, argv[0]);
	if (ret)
		goto bad;

	ret = veil_key_decode(&key, argv[1], &ti->error);
	if (ret)
		goto bad;
	ret = veil_key_load(vc, &key, &ti->error);
	if (ret)
		goto bad;

	ret = -EINVAL;
	if (sscanf(argv[2], "%llu%c", &tmpll, &dummy) != 1 ||
	    (tmpll & ((vc->sector_size >> SECTOR_SHIFT) - 1))) {
		ti->error = "Invalid iv_offset sector";
		goto bad;
	}
	vc->iv_offset = tmpll;

	ret = dm_get_device(ti, argv[3], dm_table_get_mode(ti->table), &vc->dev);
	if (ret) {
		ti->error = "Device lookup failed";
		goto bad;
	}

	ret = -EINVAL;
	if (sscanf(argv[4], "%llu%c", &tmpll, &dummy) != 1 ||
	    tmpll != (sector_t)tmpll) {
		ti->error = "Invalid device sector";
		goto bad;
	}
	vc->start = tmpll;
	if (vc->start + ti->len < vc->start ||
	    vc->start + ti->len > bdev_nr_sectors(vc->dev->bdev)) {
		ti->error = "Device too small for offset and length";
		goto bad;
	}

	ret = veil_stats_init(vc);
	if (ret) {
		ti->error = "Cannot allocate counters";
		goto bad;
	}
	ret = veil_io_init(ti, vc);
	if (ret)
		goto bad;
	ret = veil_integrity_init(ti, vc);
	if (ret)
		goto bad;
	ret = veil_masks_init(ti, vc);
	if (ret)
		goto bad;

	ti->num_flush_bios = 1;
	/* Writes start dm's accounting when submitted (dm_submit_bio_remap). */
	ti->accounts_remapped_io = true;
	/* Swap-out needs pages from the reserve: bound how many bios take them. */
	ti->limit_swap_bios = true;
	return 0;
bad:
	veil_dtr(ti);
	return ret;
}

static int veil_map(struct dm_target *ti, struct bio *bio)
{
	struct veil_c *vc = ti->private;
	sector_t sector = dm_target_offset(ti, bio->bi_iter.bi_sector);

	/*
	 * Flushes, discards and empty bios (an empty REQ_FUA write) carry no
	 * data to transform. Empty means no bytes: bio_sectors() rounds a
	 * short bio down to none. A flush covers the writes completed before it,
	 * and a veil write completes only after its ciphertext did: passing
	 * the flush on is enough. A discard is ordered against writes only by
	 * the caller's own flushes.
	 */
	if (unlikely(bio->bi_opf & REQ_PREFLUSH ||
		     bio_op(bio) == REQ_OP_DISCARD || !bio->bi_iter.bi_size)) {
		bio_set_dev(bio, vc->dev->bdev);
		if (bio_sectors(bio))
			bio->bi_iter.bi_sector = vc->start + sector;
		return DM_MAPIO_REMAPPED;
	}

	/* A key wiped as the device resumed: errors, not a random key. */
	if (unlikely(!READ_ONCE(vc->key.valid)))
		return DM_MAPIO_KILL;

	/*
	 * A write's ciphertext must fit in one bio of pool pages, and so must
	 * a read over dm-integrity, which may be read again into such pages.
	 */
	if ((bio_data_dir(bio) == WRITE || vc->tuple_size) &&
	    bio->bi_iter.bi_size > (BIO_MAX_VECS << PAGE_SHIFT))
		dm_accept_partial_bio(bio, (BIO_MAX_VECS << PAGE_SHIFT) >>
				      SECTOR_SHIFT);

	/*
	 * Whole encryption sectors only, in bytes as dm-crypt checks: a part
	 * of a sector can be neither encrypted nor decrypted. (The dm core
	 * already cuts a bio to whole 512-byte sectors: docs/table-line.md.)
	 */
	if (unlikely((sector & ((vc->sector_size >> SECTOR_SHIFT) - 1)) ||
		     (bio->bi_iter.bi_size & (vc->sector_size - 1))))
		return DM_MAPIO_KILL;

	return veil_io_map(vc, bio, sector);
}

static void veil_status(struct dm_target *ti, status_type_t type,
			unsigned int status_flags, char *result,
			unsigned int maxlen)
{
	struct veil_c *vc = ti->private;
	unsigned int sz = 0;

	switch (type) {
	case STATUSTYPE_INFO:
		veil_stats_emit(vc, result, maxlen);
		break;

	case STATUSTYPE_TABLE:
		DMEMIT("%s ", vc->cipher_string);
		/* A key message may be replacing the key bytes right now. */
		mutex_lock(&vc->key_lock);
		sz += veil_key_emit(&vc->key, result + sz, maxlen - sz);
		mutex_unlock(&vc->key_lock);
		DMEMIT(" %llu %s %llu", vc->iv_offset, vc->dev->name,
		       (unsigned long long)vc->start);
		sz += veil_emit_options(ti, vc, result + sz, maxlen - sz);
		break;

	case STATUSTYPE_IMA:
		DMEMIT_TARGET_NAME_VERSION(ti->type);
		DMEMIT(",cipher_string=%s,key_size=%u,allow_discards=%c",
		       vc->cipher_string, vc->key.size,
		       ti->num_discard_bios ? 'y' : 'n');
		DMEMIT(",sector_size=%u,iv_large_sectors=%c;", vc->sector_size,
		       vc->iv_large_sectors ? 'y' : 'n');
		break;
	}
}

/*
 * Messages:
 *   stats reset                 zero the counters; any time
 *   key set <hex key | :<size>:<logon|user>:<description>>
 *   key wipe                    these two only while suspended
 * The new key must have the table's key size. After "key wipe", resume is
 * refused until "key set" has loaded a key.
 */
static int veil_message(struct dm_target *ti, unsigned int argc, char **argv,
			char *result, unsigned int maxlen)
{
	struct veil_c *vc = ti->private;
	struct veil_key key = { };
	bool running;
	char *error;
	int ret;

	if (argc == 2 && !strcasecmp(argv[0], "stats") &&
	    !strcasecmp(argv[1], "reset")) {
		veil_stats_reset(vc);
		return 0;
	}
	if (argc < 2 || strcasecmp(argv[0], "key"))
		goto invalid;

	if (!(argc == 3 && !strcasecmp(argv[1], "set")) &&
	    !(argc == 2 && !strcasecmp(argv[1], "wipe")))
		goto invalid;

	/* Refused at once on a live device, before any keyring lookup. */
	mutex_lock(&vc->key_lock);
	running = vc->running;
	mutex_unlock(&vc->key_lock);
	if (running)
		goto live;

	if (argc == 3) {
		/* Without key_lock: the lookup may wait on another process. */
		ret = veil_key_decode(&key, argv[2], &error);
		if (ret) {
			DMWARN("key set: %s", error);
			return ret;
		}
	}

	mutex_lock(&vc->key_lock);
	if (vc->running) {
		mutex_unlock(&vc->key_lock);
		veil_key_free(&key);
		goto live;
	}
	if (argc == 3) {
		ret = veil_key_load(vc, &key, &error);
		if (ret)
			DMWARN("key set: %s", error);
	} else {
		ret = veil_key_wipe(vc);
		if (ret)
			DMERR("key wipe: cipher refused the random key (%d)",
			      ret);
	}
	mutex_unlock(&vc->key_lock);
	return ret;
live:
	DMWARN("key messages need a suspended device");
	return -EINVAL;
invalid:
	DMWARN("unrecognised message received");
	return -EINVAL;
}

/*
 * @running is true from resume to the end of the next suspend, when I/O
 * may run: key messages, which take key_lock, are refused then. A message
 * that got the lock first finishes before resume lets I/O in. One that
 * lands between preresume's key check and resume (dm takes no lock of
 * ours between them) can only leave the key set or wiped: veil_map()
 * fails data bios while there is no valid key, so a wipe there gives
 * I/O errors, never data under a random key.
 */
static void veil_postsuspend(struct dm_target *ti)
{
	struct veil_c *vc = ti->private;

	mutex_lock(&vc->key_lock);
	vc->running = false;
	mutex_unlock(&vc->key_lock);
	/* No I/O until resume: give the idle pages back. */
	veil_pages_drain(vc);
}

static int veil_preresume(struct dm_target *ti)
{
	struct veil_c *vc = ti->private;
	bool valid;

	mutex_lock(&vc->key_lock);
	valid = vc->key.valid;
	mutex_unlock(&vc->key_lock);
	if (!valid) {
		DMERR("aborting resume: no key is set");
		return -EAGAIN;
	}
	return 0;
}

static void veil_resume(struct dm_target *ti)
{
	struct veil_c *vc = ti->private;

	mutex_lock(&vc->key_lock);
	vc->running = true;
	mutex_unlock(&vc->key_lock);
}

static int veil_iterate_devices(struct dm_target *ti,
				iterate_devices_callout_fn fn, void *data)
{
	struct veil_c *vc = ti->private;

	return fn(ti, vc->dev, vc->start, ti->len, data);
}

static void veil_io_hints(struct dm_target *ti, struct queue_limits *limits)
{
	struct veil_c *vc = ti->private;

	limits->logical_block_size = max_t(unsigned int,
					   limits->logical_block_size,
					   vc->sector_size);
	limits->physical_block_size = max_t(unsigned int,
					    limits->physical_block_size,
					    vc->sector_size);
	limits->io_min = max_t(unsigned int, limits->io_min, vc->sector_size);
	/* A sector must lie whole in one page: the cipher takes it as one. */
	limits->dma_alignment = limits->logical_block_size - 1;
}

static struct target_type veil_target = {
	.name = "veil",
	.version = { 1, 3, 0 },
	.module = THIS_MODULE,
	.ctr = veil_ctr,
	.dtr = veil_dtr,
	.map = veil_map,
	.status = veil_status,
	.message = veil_message,
	.postsuspend = veil_postsuspend,
	.preresume = veil_preresume,
	.resume = veil_resume,
	.iterate_devices = veil_iterate_devices,
	.io_hints = veil_io_hints,
};

static int __init dm_veil_init(void)
{
	return dm_register_target(&veil_target);
}

static void __exit dm_veil_exit(void)
{
	dm_unregister_target(&veil_target);
}

module_init(dm_veil_init);
module_exit(dm_veil_exit);

MODULE_AUTHOR("dm-veil developers");
MODULE_DESCRIPTION(DM_NAME " target for transparent block encryption, dm-crypt compatible");
MODULE_LICENSE("GPL");
