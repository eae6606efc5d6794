// SPDX-License-Identifier: GPL-2.0
/*
 * dm-veil data path.
 *
 * Reads are remapped to the device as they are; when the device completes
 * them, the plaintext is produced in place, in process context, before the
 * bio is handed back to dm. Writes never touch the caller's pages: the
 * ciphertext goes into pages from a mempool, in a bio of our own bio_set,
 * and the caller's bio completes when that bio does.
 *
 * Every encryption sector is one cipher request with its own IV; the
 * request waits for async drivers (-EINPROGRESS, or -EBUSY when backlogged).
 */
#include <linux/bio.h>
#include <linux/blkdev.h>
#include <linux/scatterlist.h>
#include <linux/slab.h>

#include "dm-veil.h"

/* The IV sector of a target-relative sector, as dm-crypt computes it. */
static sector_t veil_iv_sector(const struct veil_c *vc, sector_t sector)
{
	sector += vc->iv_offset;
	return vc->iv_large_sectors ? sector >> vc->sector_shift : sector;
}

static int veil_crypt_sector(struct veil_io *io, struct scatterlist *src,
			     struct scatterlist *dst, sector_t sector,
			     bool encrypt)
{
	struct veil_c *vc = io->vc;
	struct skcipher_request *req = &io->req;
	DECLARE_CRYPTO_WAIT(wait);
	int ret;

	veil_iv_gen(vc, io->iv, veil_iv_sector(vc, sector));
	skcipher_request_set_tfm(req, vc->tfm);
	skcipher_request_set_callback(req, CRYPTO_TFM_REQ_MAY_BACKLOG |
				      CRYPTO_TFM_REQ_MAY_SLEEP,
				      crypto_req_done, &wait);
	skcipher_request_set_crypt(req, src, dst, vc->sector_size, io->iv);
	ret = encrypt ? crypto_skcipher_encrypt(req) :
			crypto_skcipher_decrypt(req);
	return crypto_wait_req(ret, &wait);
}

/*
 * Run the cipher over io->base's data, sector by sector. With @out, the
 * result goes to @out's pages (one bio_vec per page, filled from offset 0);
 * without, it replaces the data in place.
 */
static int veil_convert(struct veil_io *io, struct bio *out, bool encrypt)
{
	struct veil_c *vc = io->vc;
	struct bvec_iter in_iter = io->iter;
	struct bvec_iter out_iter = out ? out->bi_iter : io->iter;
	struct bio *dst_bio = out ? out : io->base;
	struct scatterlist sg_in, sg_out;
	sector_t sector = io->sector;
	struct bio_vec in, dst;
	int ret;

	while (in_iter.bi_size) {
		in = bio_iter_iovec(io->base, in_iter);
		dst = bio_iter_iovec(dst_bio, out_iter);
		/* The block layer keeps sectors whole within one page. */
		if (unlikely(in.bv_len < vc->sector_size ||
			     dst.bv_len < vc->sector_size))
			return -EIO;

		sg_init_table(&sg_in, 1);
		sg_set_page(&sg_in, in.bv_page, vc->sector_size, in.bv_offset);
		sg_init_table(&sg_out, 1);
		sg_set_page(&sg_out, dst.bv_page, vc->sector_size, dst.bv_offset);

		ret = veil_crypt_sector(io, &sg_in, &sg_out, sector, encrypt);
		if (ret)
			return ret;

		bio_advance_iter_single(io->base, &in_iter, vc->sector_size);
		bio_advance_iter_single(dst_bio, &out_iter, vc->sector_size);
		sector += vc->sector_size >> SECTOR_SHIFT;
	}
	return 0;
}

static void veil_read_work(struct work_struct *work)
{
	struct veil_io *io = container_of(work, struct veil_io, work);
	struct bio *bio = io->base;

	if (!bio->bi_status && veil_convert(io, NULL, false))
		bio->bi_status = BLK_STS_IOERR;

	bio->bi_end_io = io->orig_end_io;
	bio->bi_private = io->orig_private;
	bio_endio(bio);
}

static void veil_read_end_io(struct bio *bio)
{
	struct veil_io *io = bio->bi_private;

	INIT_WORK(&io->work, veil_read_work);
	queue_work(io->vc->wq, &io->work);
}

static void veil_free_pages(struct veil_c *vc, struct bio *clone)
{
	struct bvec_iter_all iter;
	struct bio_vec *bv;

	bio_for_each_segment_all(bv, clone, iter)
		mempool_free(bv->bv_page, &vc->page_pool);
}

static void veil_write_end_io(struct bio *clone)
{
	struct veil_io *io = clone->bi_private;
	struct bio *base = io->base;

	if (clone->bi_status)
		base->bi_status = clone->bi_status;
	veil_free_pages(io->vc, clone);
	bio_put(clone);
	bio_endio(base);
}

/*
 * A bio with pages for the ciphertext of io->base. The first attempt does
 * not wait; if the pool runs dry, the pages are given back and the whole
 * allocation is retried under alloc_lock with waiting allowed, so that two
 * writers can never each hold half of the pool and wait for the other.
 */
static struct bio *veil_alloc_clone(struct veil_io *io)
{
	struct veil_c *vc = io->vc;
	unsigned int size = io->iter.bi_size;
	unsigned int nr = DIV_ROUND_UP(size, PAGE_SIZE);
	gfp_t gfp = GFP_NOWAIT | __GFP_NOWARN;
	unsigned int i, len, left;
	struct bio *clone;
	struct page *page;

retry:
	if (gfp & __GFP_DIRECT_RECLAIM)
		mutex_lock(&vc->alloc_lock);

	clone = bio_alloc_bioset(vc->dev->bdev, nr, io->base->bi_opf, GFP_NOIO,
				 &vc->bs);
	clone->bi_private = io;
	clone->bi_end_io = veil_write_end_io;
	clone->bi_ioprio = io->base->bi_ioprio;
	clone->bi_iter.bi_sector = vc->start + io->sector;

	for (i = 0, left = size; i < nr; i++, left -= len) {
		page = mempool_alloc(&vc->page_pool, gfp);
		if (!page) {
			veil_free_pages(vc, clone);
			bio_put(clone);
			gfp = GFP_NOIO;
			goto retry;
		}
		len = min_t(unsigned int, left, PAGE_SIZE);
		__bio_add_page(clone, page, len, 0);
	}

	if (gfp & __GFP_DIRECT_RECLAIM)
		mutex_unlock(&vc->alloc_lock);
	return clone;
}

static void veil_write_work(struct work_struct *work)
{
	struct veil_io *io = container_of(work, struct veil_io, work);
	struct bio *clone = veil_alloc_clone(io);

	if (veil_convert(io, clone, true)) {
		veil_free_pages(io->vc, clone);
		bio_put(clone);
		io->base->bi_status = BLK_STS_IOERR;
		bio_endio(io->base);
		return;
	}
	submit_bio_noacct(clone);
}

/**
 * veil_crypt_map() - start a read or write through the cipher
 * @vc: the target.
 * @bio: a data bio, aligned to and a multiple of the encryption sector,
 *	at most BIO_MAX_VECS pages for writes.
 * @sector: target-relative first sector of @bio.
 *
 * Return: DM_MAPIO_REMAPPED for reads (dm submits the bio; decryption
 * runs on completion), DM_MAPIO_SUBMITTED for writes.
 */
int veil_crypt_map(struct veil_c *vc, struct bio *bio, sector_t sector)
{
	struct veil_io *io = dm_per_bio_data(bio, vc->per_bio_data_size);

	io->vc = vc;
	io->base = bio;
	io->iter = bio->bi_iter;
	io->sector = sector;

	if (bio_data_dir(bio) == READ) {
		io->orig_end_io = bio->bi_end_io;
		io->orig_private = bio->bi_private;
		bio->bi_end_io = veil_read_end_io;
		bio->bi_private = io;
		bio_set_dev(bio, vc->dev->bdev);
		bio->bi_iter.bi_sector = vc->start + sector;
		return DM_MAPIO_REMAPPED;
	}

	INIT_WORK(&io->work, veil_write_work);
	queue_work(vc->wq, &io->work);
	return DM_MAPIO_SUBMITTED;
}

/**
 * veil_crypt_init() - set up the pools and workqueue of the data path
 * @ti: the target; ti->error is set on failure, per-bio data size is set.
 * @vc: the target instance; its transform must already be allocated.
 *
 * Return: 0 or a negative errno; veil_crypt_exit() undoes a partial setup.
 */
int veil_crypt_init(struct dm_target *ti, struct veil_c *vc)
{
	int ret;

	vc->per_bio_data_size = ALIGN(sizeof(struct veil_io) +
				      crypto_skcipher_reqsize(vc->tfm),
				      ARCH_KMALLOC_MINALIGN);
	ti->per_io_data_size = vc->per_bio_data_size;

	/* One full bio's worth, so that one writer always makes progress. */
	ret = mempool_init_page_pool(&vc->page_pool, BIO_MAX_VECS, 0);
	if (ret) {
		ti->error = "Cannot allocate page mempool";
		return ret;
	}
	ret = bioset_init(&vc->bs, BIO_POOL_SIZE, 0, BIOSET_NEED_BVECS);
	if (ret) {
		ti->error = "Cannot allocate bioset";
		return ret;
	}
	mutex_init(&vc->alloc_lock);

	/*
	 * The cipher runs here, in process context, because async drivers
	 * and the SIMD ciphers may sleep or need a usable FPU. The queue is
	 * per-CPU, so a write is encrypted on the CPU that submitted it, and
	 * WQ_MEM_RECLAIM because writeback under memory pressure goes through
	 * it.
	 */
	vc->wq = alloc_workqueue("kveild/%s", WQ_MEM_RECLAIM | WQ_CPU_INTENSIVE,
				 0, dm_table_device_name(ti->table));
	if (!vc->wq) {
		ti->error = "Cannot allocate workqueue";
		return -ENOMEM;
	}
	return 0;
}

/**
 * veil_crypt_exit() - tear down what veil_crypt_init() set up
 * @vc: the target instance; no I/O may be in flight.
 */
void veil_crypt_exit(struct veil_c *vc)
{
	if (vc->wq)
		destroy_workqueue(vc->wq);
	bioset_exit(&vc->bs);
	mempool_exit(&vc->page_pool);
}
