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
 * data and no flags; op=write and op=read: one bio of bytes= bytes (1 to
 * 4096, any size, not only whole sectors) at 512-byte sector sector=, from
 * or into a page of marker bytes 0x5a. A read also logs how many bytes of
 * its page changed:
 *   -> "veil_bio_test: read 256 at 0 on /dev/mapper/NAME: status -5, 0
 *       bytes changed"
 * Unload the module afterwards; it holds nothing.
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
MODULE_PARM_DESC(op, "empty_fua, empty_write, write or read");

static unsigned int bytes = 512;
module_param(bytes, uint, 0444);
MODULE_PARM_DESC(bytes, "op=write/read: bytes of data, 1 to 4096");

static unsigned long long sector;
module_param(sector, ullong, 0444);
MODULE_PARM_DESC(sector, "op=write/read: first 512-byte sector");

#define VEIL_TEST_MARKER	0x5a

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

/* One bio of @bytes bytes of a marker page; a read counts what changed. */
static int veil_test_data(struct block_device *bdev, blk_opf_t opf)
{
	struct page *page = alloc_page(GFP_KERNEL);
	unsigned int i, changed = 0;
	struct bio *bio;
	u8 *data;
	int ret;

	if (!page)
		return -ENOMEM;
	data = page_address(page);
	memset(data, VEIL_TEST_MARKER, PAGE_SIZE);
	bio = bio_alloc(bdev, 1, opf, GFP_KERNEL);
	bio->bi_iter.bi_sector = sector;
	__bio_add_page(bio, page, bytes, 0);
	ret = submit_bio_wait(bio);
	bio_put(bio);
	for (i = 0; i < PAGE_SIZE; i++)
		changed += data[i] != VEIL_TEST_MARKER;
	__free_page(page);
	if (op_is_write(opf))
		pr_info("veil_bio_test: write %u at %llu on %s: status %d\n",
			bytes, sector, dev, ret);
	else
		pr_info("veil_bio_test: read %u at %llu on %s: status %d, %u bytes changed\n",
			bytes, sector, dev, ret, changed);
	return 0;
}

static int __init veil_bio_test_init(void)
{
	struct block_device *bdev;
	bool data = false;
	struct bio *bio;
	blk_opf_t opf;
	int ret;

	if (!dev)
		return -EINVAL;
	if (!strcmp(op, "empty_fua")) {
		opf = REQ_OP_WRITE | REQ_FUA | REQ_SYNC;
	} else if (!strcmp(op, "empty_write")) {
		opf = REQ_OP_WRITE;
	} else if (!strcmp(op, "write") || !strcmp(op, "read")) {
		opf = op[0] == 'w' ? REQ_OP_WRITE | REQ_SYNC : REQ_OP_READ;
		data = true;
		if (!bytes || bytes > PAGE_SIZE)
			return -EINVAL;
	} else {
		return -EINVAL;
	}

	bdev = veil_test_open(dev);
	if (IS_ERR(bdev))
		return PTR_ERR(bdev);
	if (data) {
		ret = veil_test_data(bdev, opf);
		veil_test_close(bdev);
		return ret;
	}
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
