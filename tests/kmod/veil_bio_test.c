// SPDX-License-Identifier: GPL-2.0
/*
 * veil_bio_test: sends a bio that user space cannot make to a block device,
 * once, when loaded, and logs what came back:
 *
 *   insmod veil_bio_test.ko dev=/dev/mapper/NAME op=empty_fua
 *   -> "veil_bio_test: empty_fua on /dev/mapper/NAME: status 0"
 *
 * op=empty_fua: a write with REQ_FUA and no data (what a file system may
 * send to make earlier writes durable); op=empty_write: a write with no
 * data and no flags. Unload the module afterwards; it holds nothing.
 *
 * Opening a block device by path changed twice after 6.1: the Kbuild
 * probe sets VEIL_HAVE_BDEV_FILE_OPEN (6.9+, a struct file) or leaves
 * 6.1's blkdev_get_by_path().
 */
#include <linux/bio.h>
#include <linux/blkdev.h>
#include <linux/module.h>

static char *dev;
module_param(dev, charp, 0444);
MODULE_PARM_DESC(dev, "block device to send the bio to");

static char *op = "empty_fua";
module_param(op, charp, 0444);
MODULE_PARM_DESC(op, "empty_fua or empty_write");

#ifdef VEIL_HAVE_BDEV_FILE_OPEN
static struct file *bdev_handle;

static struct block_device *veil_test_open(const char *path)
{
	bdev_handle = bdev_file_open_by_path(path, BLK_OPEN_READ | BLK_OPEN_WRITE,
					     NULL, NULL);
	return IS_ERR(bdev_handle) ? ERR_CAST(bdev_handle) : file_bdev(bdev_handle);
}

static void veil_test_close(struct block_device *bdev)
{
	fput(bdev_handle);
}
#else
static struct block_device *veil_test_open(const char *path)
{
	return blkdev_get_by_path(path, FMODE_READ | FMODE_WRITE, NULL);
}

static void veil_test_close(struct block_device *bdev)
{
	blkdev_put(bdev, FMODE_READ | FMODE_WRITE);
}
#endif

static int __init veil_bio_test_init(void)
{
	struct block_device *bdev;
	struct bio *bio;
	blk_opf_t opf;
	int ret;

	if (!dev)
		return -EINVAL;
	if (!strcmp(op, "empty_fua"))
		opf = REQ_OP_WRITE | REQ_FUA | REQ_SYNC;
	else if (!strcmp(op, "empty_write"))
		opf = REQ_OP_WRITE;
	else
		return -EINVAL;

	bdev = veil_test_open(dev);
	if (IS_ERR(bdev))
		return PTR_ERR(bdev);
	bio = bio_alloc(bdev, 0, opf, GFP_KERNEL);
	ret = submit_bio_wait(bio);
	bio_put(bio);
	veil_test_close(bdev);
	pr_info("veil_bio_test: %s on %s: status %d\n", op, dev, ret);
	return 0;
}

static void __exit veil_bio_test_exit(void)
{
}

module_init(veil_bio_test_init);
module_exit(veil_bio_test_exit);
MODULE_DESCRIPTION("Send bios user space cannot make, for dm-veil's tests");
MODULE_LICENSE("GPL");
