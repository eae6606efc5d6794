// SPDX-License-Identifier: GPL-2.0
/*
 * dm-veil cipher calls: one chunk of a bio through the cipher, sector by
 * sector, and the XOR that turns CTR ciphertext into plaintext once its
 * keystream is ready.
 *
 * Every encryption sector is one cipher request with its own IV. A caller
 * that may sleep keeps up to VEIL_ASYNC_DEPTH requests in flight with an
 * async driver (a window): its own request first; once the driver takes
 * that one asynchronously, the next ones come from the target's request
 * mempool, and the caller waits for the whole window when it is full, when
 * the driver backlogs a request (-EBUSY: its queue is full, so the window
 * ends there, as dm-crypt treats -EBUSY) and at the end of the chunk. A
 * driver that completes at once (a sync cipher, or x86's AES-NI glue in a
 * task) never takes a request from the mempool. An atomic caller (a read's
 * completion) never waits: once a driver goes async, it hands the chunk's
 * next sectors over at once, as dm-crypt does, each in a request taken
 * from the mempool without waiting, up to VEIL_ASYNC_DEPTH in flight; the
 * driver's callback for the last of them goes on with the job
 * (veil-job.c). Where it had to stop (no request without waiting, the
 * depth reached, or the driver's queue full: -ENOSPC without a backlog),
 * the rest of the chunk goes on from a queue.
 * The time a chunk spends in its cipher loop (the cipher calls and each
 * sector's set-up around them) is read from local_clock(), the cheap
 * per-CPU clock, once per chunk, and summed per CPU.
 *
 * An AEAD (integrity:<bytes>:aead) takes each sector as dm-crypt lays it
 * out: associated data of the sector number (64 bits, little endian) and
 * the IV, then the data, then the tag in the sector's metadata tuple
 * (veil-integrity.c). A random IV is kept in the tuple after the tag; a
 * read takes it from there. The rest of a written tuple is zeroed.
 */
#include <linux/bio.h>
#include <linux/highmem.h>
#include <linux/sched/clock.h>
#include <linux/scatterlist.h>
#include <crypto/algapi.h>

#include "veil-compat.h"
#include "veil-crypt.h"
#include "veil-integrity.h"
#include "veil-iv.h"
#include "veil-job.h"
#include "veil-masks.h"

/* The IV sector of a target-relative sector, as dm-crypt computes it. */
static sector_t veil_iv_sector(const struct veil_c *vc, sector_t sector)
{
	sector += vc->iv_offset;
	return vc->iv_large_sectors ? sector >> vc->sector_shift : sector;
}

/**
 * struct veil_window - a sleeping caller's requests in flight
 * @own: the caller's own request.
 * @own_busy: @own is in flight: the next requests come from the mempool.
 * @inflight: requests in flight, plus one held by the caller while it
 *	submits; the callback that drops it to zero completes @drained.
 * @err: the first error a request finished with.
 * @drained: every request of the window finished.
 *
 * Lives on the caller's stack: the caller waits for @drained before it
 * returns (a completion is safe to wait for on the stack).
 */
struct veil_window {
	struct veil_req *own;
	bool own_busy;
	atomic_t inflight;
	int err;
	struct completion drained;
};

static void veil_window_init(struct veil_window *w, struct veil_req *own)
{
	w->own = own;
	w->own_busy = false;
	atomic_set(&w->inflight, 1);
	w->err = 0;
	init_completion(&w->drained);
}

/* Wait for every request of @w; returns the first error among them. */
static int veil_window_drain(struct veil_window *w)
{
	if (!atomic_dec_and_test(&w->inflight))
		wait_for_completion(&w->drained);
	reinit_completion(&w->drained);
	atomic_set(&w->inflight, 1);
	w->own_busy = false;
	return READ_ONCE(w->err);
}

/* Give back @r unless it is the caller's @own: it came from the pool. */
static void veil_req_put(struct veil_c *vc, struct veil_req *own,
			 struct veil_req *r)
{
	if (r != own)
		mempool_free(r, &vc->req_pool);
}

static void veil_window_put(struct veil_c *vc, struct veil_window *w,
			    struct veil_req *r)
{
	veil_req_put(vc, w->own, r);
}

/**
 * veil_crypt_bad_tag() - report an AEAD sector whose tag did not match
 * @r: the request that failed with -EBADMSG.
 */
void veil_crypt_bad_tag(const struct veil_req *r)
{
	/* As dm-crypt: a read is read again first, and the second tells. */
	if (r->io->recheck)
		DMERR_LIMIT("%pg: INTEGRITY AEAD ERROR, sector %llu",
			    r->io->vc->dev->bdev, le64_to_cpu(r->ad_sector));
}

/* A request of a window finished asynchronously. */
static void veil_window_done(veil_crypto_done_arg arg, int err)
{
	struct veil_req *r = veil_crypto_done_data(arg);
	struct veil_window *w = r->window;

	/* Taken out of the driver's backlog: it finishes later. */
	if (err == -EINPROGRESS)
		return;
	if (err == -EBADMSG)
		veil_crypt_bad_tag(r);
	if (err)
		cmpxchg(&w->err, 0, err);
	veil_window_put(r->io->vc, w, r);
	if (atomic_dec_and_test(&w->inflight))
		complete(&w->drained);
}

/* The request for the next sector: the caller's own, or one from the pool. */
static struct veil_req *veil_window_req(struct veil_c *vc,
					struct veil_window *w)
{
	if (!w->own_busy)
		return w->own;
	return mempool_alloc(&vc->req_pool, GFP_NOIO);
}

/* Start the set-up request @r; a driver that goes async calls @done. */
static int veil_req_start(struct veil_c *vc, struct veil_req *r, bool encrypt,
			  u32 flags, crypto_completion_t done, void *data)
{
	struct skcipher_request *sk = veil_req_sk(r);
	struct aead_request *ae = veil_req_aead(r);

	if (vc->aead) {
		aead_request_set_callback(ae, flags, done, data);
		return encrypt ? crypto_aead_encrypt(ae) :
				 crypto_aead_decrypt(ae);
	}
	skcipher_request_set_callback(sk, flags, done, data);
	return encrypt ? crypto_skcipher_encrypt(sk) :
			 crypto_skcipher_decrypt(sk);
}

/*
 * Submit @r in @w. Returns 0 when the driver finished it or took it
 * asynchronously, or its error; sets *@drain when the window must drain
 * before the next request: the driver backlogged @r, or the window is
 * full.
 */
static int veil_window_submit(struct veil_c *vc, struct veil_window *w,
			      struct veil_req *r, bool encrypt, bool *drain)
{
	int ret;

	r->window = w;
	atomic_inc(&w->inflight);
	ret = veil_req_start(vc, r, encrypt, CRYPTO_TFM_REQ_MAY_BACKLOG |
			     CRYPTO_TFM_REQ_MAY_SLEEP, veil_window_done, r);
	if (ret == -EINPROGRESS || ret == -EBUSY) {
		if (r == w->own)
			w->own_busy = true;
		*drain = ret == -EBUSY ||
			 atomic_read(&w->inflight) > VEIL_ASYNC_DEPTH;
		return 0;
	}
	atomic_dec(&w->inflight);
	if (ret == -EBADMSG)
		veil_crypt_bad_tag(r);
	veil_window_put(vc, w, r);
	return ret;
}

/* Copy one sector from @src to @dst (elephant's plaintext copy). */
static void veil_copy_sector(struct scatterlist *dst, struct scatterlist *src)
{
	u8 *to = kmap_local_page(sg_page(dst));
	u8 *from = kmap_local_page(sg_page(src));

	memcpy(to + dst->offset, from + src->offset, dst->length);
	kunmap_local(from);
	kunmap_local(to);
}

/*
 * The IV of a sector into @iv: a read's random IV from its @tuple, any
 * other made by the generator, which may read or change the data @in
 * (lmk, tcw, elephant). A write's random IV is kept in its @tuple.
 */
static int veil_cipher_iv(struct veil_c *vc, u8 *iv, sector_t iv_sector,
			  struct scatterlist *in, u8 *tuple, bool encrypt)
{
	u8 *map = NULL;
	int ret;

	/* A transform without an IV (ecb, the null cipher) needs none. */
	if (!vc->iv_size)
		return 0;
	if (vc->iv_stored && !encrypt) {
		memcpy(iv, tuple + vc->auth_size, vc->iv_stored);
		return 0;
	}
	if (veil_iv_uses_data(vc->iv_mode))
		map = kmap_local_page(sg_page(in));
	ret = veil_iv_gen(vc, iv, iv_sector, map ? map + in->offset : NULL,
			  encrypt);
	if (map)
		kunmap_local(map);
	if (vc->iv_stored)
		memcpy(tuple + vc->auth_size, iv, vc->iv_stored);
	return ret;
}

/*
 * An AEAD sector: @r's first entries hold its data on entry (a read is
 * decrypted in place); the associated data goes before it, the tag in
 * @tuple after it.
 */
static void veil_aead_set(struct veil_c *vc, struct veil_req *r,
			  sector_t sector, u8 *tuple, u8 *iv, bool encrypt)
{
	struct scatterlist *lists[] = { r->sg_in, r->sg_out };
	struct aead_request *req = veil_req_aead(r);
	unsigned int i, off;
	struct page *page;

	r->ad_sector = cpu_to_le64(sector);
	memcpy(r->ad_iv, iv, vc->iv_size);
	for (i = 0; i < (encrypt ? 2 : 1); i++) {
		page = sg_page(&lists[i][0]);
		off = lists[i][0].offset;
		sg_init_table(lists[i], VEIL_AEAD_SG);
		sg_set_buf(&lists[i][0], &r->ad_sector, sizeof(r->ad_sector));
		sg_set_buf(&lists[i][1], r->ad_iv, vc->iv_size);
		sg_set_page(&lists[i][2], page, vc->sector_size, off);
		sg_set_buf(&lists[i][3], tuple, vc->auth_size);
	}
	aead_request_set_tfm(req, vc->aead);
	aead_request_set_ad(req, VEIL_AEAD_AD_SIZE(vc));
	aead_request_set_crypt(req, r->sg_in, encrypt ? r->sg_out : r->sg_in,
			       vc->sector_size + (encrypt ? 0 : vc->auth_size),
			       iv);
}

/*
 * Set @r up for one sector and submit it: an atomic caller's to the
 * driver with @async_done as callback, a sleeping caller's in its window
 * @w. @sector is target-relative; @tuple is the sector's metadata, NULL
 * when the target keeps none.
 */
static int veil_cipher(struct veil_io *io, struct veil_req *r,
		       struct veil_window *w, crypto_completion_t async_done,
		       sector_t sector, u8 *tuple, bool encrypt, bool *drain)
{
	struct veil_c *vc = io->vc;
	sector_t iv_sector = veil_iv_sector(vc, sector);
	bool uses_data = veil_iv_uses_data(vc->iv_mode);
	u8 *iv = veil_req_iv(vc, r), *map;
	struct scatterlist *in = r->sg_in, *out;
	unsigned int used;
	int ret;

	/*
	 * A write sector of gcm(aes) or rfc4106(gcm(aes)) with a random IV:
	 * a mask made ahead leaves only the XOR and GHASH (veil-masks.c).
	 * Not for a write shared with helpers: it keeps the CPUs busy, and
	 * the masks' refill would take its time from the write.
	 */
	if (encrypt && w && vc->masks && !io->shared &&
	    veil_masks_encrypt(vc, sector, r->sg_in, r->sg_out, tuple)) {
		veil_window_put(vc, w, r);
		return 0;
	}
	/* elephant: a copy of the plaintext, processed, encrypted in place. */
	if (encrypt && veil_iv_encrypts_copy(vc->iv_mode)) {
		veil_copy_sector(r->sg_out, r->sg_in);
		in = r->sg_out;
	}
	ret = veil_cipher_iv(vc, iv, iv_sector, in, tuple, encrypt);
	if (ret) {
		if (w)
			veil_window_put(vc, w, r);
		return ret;
	}
	/* What neither the tag nor the IV fills is zero on the device. */
	if (tuple && encrypt) {
		used = vc->auth_size + vc->iv_stored;
		memset(tuple + used, 0, vc->tuple_size - used);
	}
	if (vc->aead) {
		veil_aead_set(vc, r, sector, tuple, iv, encrypt);
	} else {
		/* dm-crypt's keycount: the key of the 512-byte sector number. */
		skcipher_request_set_tfm(veil_req_sk(r),
					 vc->tfms[(sector + vc->iv_offset) &
						  (vc->tfms_count - 1)]);
		skcipher_request_set_crypt(veil_req_sk(r), in,
					   encrypt ? r->sg_out : r->sg_in,
					   vc->sector_size, iv);
	}
	/* A window reports a bad tag itself: @r may be back in the pool. */
	if (w) {
		ret = veil_window_submit(vc, w, r, encrypt, drain);
	} else {
		ret = veil_req_start(vc, r, encrypt, 0, async_done, r);
		if (ret == -EBADMSG)
			veil_crypt_bad_tag(r);
	}
	/*
	 * Their transforms are synchronous: the cipher is done here, and a
	 * window never went past its own request, so @r is still ours. A
	 * sector that went on later or had to be redone would meet tcw's
	 * unwhitening twice.
	 */
	if (uses_data)
		WARN_ON_ONCE(ret == -EINPROGRESS || ret == -EBUSY ||
			     ret == -ENOSPC);
	if (uses_data && !ret) {
		out = encrypt ? r->sg_out : r->sg_in;
		map = kmap_local_page(sg_page(out));
		ret = veil_iv_post(vc, iv_sector, map + out->offset, encrypt);
		kunmap_local(map);
	}
	return ret;
}

/* The metadata tuple of the sector at byte @pos of @io's data. */
static u8 *veil_tuple(const struct veil_io *io, unsigned int pos)
{
	const struct veil_c *vc = io->vc;

	return io->tags + (pos >> (SECTOR_SHIFT + vc->sector_shift)) *
			  vc->tuple_size;
}

/* A page of the write ciphertext or the keystream at byte @pos of the bio. */
static void veil_out_sg(struct veil_io *io, enum veil_job_kind kind,
			unsigned int pos, struct scatterlist *sg)
{
	struct page *page = kind == VEIL_JOB_WRITE ?
		io->out->bi_io_vec[pos >> PAGE_SHIFT].bv_page :
		io->ks_pages[pos >> PAGE_SHIFT];

	sg_set_page(sg, page, io->vc->sector_size, offset_in_page(pos));
}

/*
 * Keep an atomic caller's error for its chunk: the first, but a tag that
 * did not match over any other, so that the read is read again and ends
 * as dm-crypt's does (BLK_STS_PROTECTION).
 */
static void veil_async_err(struct veil_io *io, int err)
{
	if (err == -EBADMSG)
		WRITE_ONCE(io->async_err, err);
	else
		cmpxchg(&io->async_err, 0, err);
}

/**
 * veil_crypt_async_done() - an atomic caller's request finished later
 * @r: the request, which the driver completed (not with -EINPROGRESS).
 * @err: its status.
 *
 * Counts its sector, keeps its error in @r->io->async_err and gives a
 * request from the mempool back.
 *
 * Return: true for the last of the chunk's requests in flight, once its
 * caller has handed over every one it could: the caller of this goes on
 * with the chunk (veil_crypt_chunk() has set @r->io->resume_idx and
 * resume_off).
 */
bool veil_crypt_async_done(struct veil_req *r, int err)
{
	struct veil_io *io = r->io;
	struct veil_c *vc = io->vc;

	if (err == -EBADMSG)
		veil_crypt_bad_tag(r);
	if (err)
		veil_async_err(io, err);
	else
		veil_stats_cipher(vc, veil_kind_dir(io->kind), vc->sector_size,
				  0);
	veil_req_put(vc, &io->req, r);
	return atomic_dec_and_test(&io->async_inflight);
}

/*
 * The request for an atomic caller's next sector: its own until a driver
 * took that one; then one from the mempool, without waiting, while fewer
 * than VEIL_ASYNC_DEPTH are in flight. NULL: the chunk goes on later.
 */
static struct veil_req *veil_atomic_req(struct veil_io *io, bool own_busy)
{
	if (!own_busy)
		return &io->req;
	/* The caller's hold counts too. */
	if (atomic_read(&io->async_inflight) > VEIL_ASYNC_DEPTH)
		return NULL;
	return mempool_alloc(&io->vc->req_pool, GFP_NOWAIT);
}

/*
 * An atomic caller has handed over what it could of a chunk, up to byte
 * @pos, and ends with @ret (-ENOSPC: the rest goes on later): drop its
 * hold. Returns -EINPROGRESS if requests are still in flight (the last
 * one's callback goes on), else the chunk's error, -ENOSPC or 0.
 */
static int veil_atomic_end(struct veil_io *io, unsigned int pos, int ret)
{
	bool later = ret == -ENOSPC;

	io->resume_off = pos;
	if (ret && !later)
		veil_async_err(io, ret);
	/* Ordered after the stores above: the last callback reads them. */
	if (!atomic_dec_and_test(&io->async_inflight))
		return -EINPROGRESS;
	ret = READ_ONCE(io->async_err);
	return ret ?: later ? -ENOSPC : 0;
}

/**
 * veil_crypt_chunk() - run one chunk of a job through the cipher
 * @io: the job.
 * @r: the cipher request to use.
 * @idx: chunk number.
 * @kind: what this chunk does: @io->kind, or VEIL_JOB_READ for a chunk of
 *	a keystream job whose read has completed.
 * @from: bytes of the chunk already done.
 * @async_done: NULL if the caller may sleep: it keeps several requests in
 *	flight with an async driver, @r first, and returns once all of them
 *	finished. Otherwise the caller may not sleep, @r must be &@io->req,
 *	and each sector the driver completes later ends in @async_done (with
 *	its request as data), which calls veil_crypt_async_done().
 *
 * Writes encrypt the bio's data into @io->out, reads decrypt @io->src's
 * data in place, keystream chunks encrypt zeros into @io->ks_pages.
 *
 * Return: 0, or -EIO for a sector split over pages, or the cipher's error.
 * With @async_done: -EINPROGRESS while sectors are in flight (the last
 * one's veil_crypt_async_done() returns true, and the chunk's error comes
 * there, in @io->async_err); -ENOSPC when every sector handed over is done
 * and the rest goes on later (no request without waiting, 32 in flight,
 * or the driver's queue full). Then @io->resume_idx and @io->resume_off
 * say where the chunk goes on (@resume_off is the chunk's length when
 * every sector was handed over).
 */
int veil_crypt_chunk(struct veil_io *io, struct veil_req *r, unsigned int idx,
		     enum veil_job_kind kind, unsigned int from,
		     crypto_completion_t async_done)
{
	bool atomic = !!async_done;
	struct veil_c *vc = io->vc;
	/* A transform without CRYPTO_ALG_ASYNC completes every call in it. */
	bool count = atomic && veil_cipher_is_async(vc);
	unsigned int off = idx * io->chunk_bytes, pos = from;
	unsigned int len = veil_chunk_len(io, idx);
	unsigned int step = vc->sector_size;
	enum veil_dir dir = veil_kind_dir(kind);
	sector_t sector = io->sector + ((off + pos) >> SECTOR_SHIFT);
	struct bvec_iter iter = io->iter;
	struct veil_window window, *w = NULL;
	unsigned int start = pos, async_bytes = 0;
	bool drain = false, own_busy = false;
	struct veil_req *q = r;
	struct bio_vec in;
	int ret = 0, wret;
	s64 ns;
	u64 t0;

	if (kind != VEIL_JOB_KEYSTREAM)
		bio_advance_iter(io->src, &iter, off + pos);
	t0 = local_clock();
	this_cpu_inc(vc->stats->chunks);
	if (atomic) {
		/* The caller's hold: nothing goes on before it is dropped. */
		atomic_set(&io->async_inflight, 1);
		io->async_err = 0;
		io->resume_idx = idx;
	} else {
		veil_window_init(&window, r);
		w = &window;
	}

	for (; pos < len; pos += step) {
		if (w) {
			q = veil_window_req(vc, w);
		} else {
			q = veil_atomic_req(io, own_busy);
			if (!q) {
				ret = -ENOSPC;
				break;
			}
		}
		q->io = io;
		sg_init_table(q->sg_in, 1);
		if (kind == VEIL_JOB_KEYSTREAM) {
			sg_set_page(q->sg_in, ZERO_PAGE(0), vc->sector_size, 0);
		} else {
			in = bio_iter_iovec(io->src, iter);
			/* dma_alignment keeps sectors whole within a page. */
			if (unlikely(in.bv_len < vc->sector_size)) {
				/* Either way @r is the caller's own. */
				veil_req_put(vc, r, q);
				ret = -EIO;
				break;
			}
			sg_set_page(q->sg_in, in.bv_page, vc->sector_size,
				    in.bv_offset);
			bio_advance_iter_single(io->src, &iter, vc->sector_size);
		}
		/* A read is decrypted in place. */
		if (kind != VEIL_JOB_READ) {
			sg_init_table(q->sg_out, 1);
			veil_out_sg(io, kind, off + pos, q->sg_out);
		}

		if (count)
			atomic_inc(&io->async_inflight);
		ret = veil_cipher(io, q, w, async_done, sector,
				  io->tags ? veil_tuple(io, off + pos) : NULL,
				  kind != VEIL_JOB_READ, &drain);
		if (drain) {
			ret = veil_window_drain(w);
			drain = false;
		}
		/*
		 * Without MAY_BACKLOG a full queue refuses (-ENOSPC); -EBUSY
		 * would be a request backlogged all the same: in flight.
		 */
		if (atomic && WARN_ON_ONCE(ret == -EBUSY))
			ret = -EINPROGRESS;
		if (atomic && ret == -EINPROGRESS) {
			/* Counted and given back by the driver's callback. */
			WARN_ON_ONCE(!count);
			own_busy |= q == r;
			async_bytes += step;
			ret = 0;
		} else if (atomic) {
			if (count)
				atomic_dec(&io->async_inflight);
			veil_req_put(vc, r, q);
		}
		/* -ENOSPC: not taken, this sector goes on later. */
		if (ret)
			break;
		sector += step >> SECTOR_SHIFT;
	}

	if (w) {
		wret = veil_window_drain(w);
		if (!ret)
			ret = wret;
	}
	/* A sleeping caller may have moved to a CPU whose clock is behind. */
	ns = max_t(s64, local_clock() - t0, 0);
	veil_stats_cipher(vc, dir, pos - start - async_bytes, ns);
	/* What a helper would save: the whole first chunk of a large bio. */
	if (!idx && io->nr_chunks > 1 && io->iter.bi_size >= VEIL_COST_BIO_MIN &&
	    !from && pos == len && !async_bytes)
		veil_stats_chunk_cost(vc, dir, len, ns);
	if (atomic)
		return veil_atomic_end(io, pos, ret);
	return ret;
}

/**
 * veil_crypt_xor() - decrypt a CTR chunk whose keystream is ready
 * @io: a keystream job whose read completed.
 * @idx: the chunk.
 *
 * XORs the chunk's keystream into the read's data. Only maps pages and
 * XORs, but over up to a chunk: never called in hard-IRQ context.
 */
void veil_crypt_xor(struct veil_io *io, unsigned int idx)
{
	unsigned int pos = idx * io->chunk_bytes, done, n, koff;
	struct bvec_iter start = io->iter, iter;
	struct bio_vec bv;
	u8 *data, *ks;

	bio_advance_iter(io->base, &start, pos);
	start.bi_size = veil_chunk_len(io, idx);
	__bio_for_each_segment(bv, io->base, iter, start) {
		data = bvec_kmap_local(&bv);
		for (done = 0; done < bv.bv_len; done += n) {
			koff = offset_in_page(pos + done);
			n = min_t(unsigned int, bv.bv_len - done,
				  PAGE_SIZE - koff);
			ks = kmap_local_page(io->ks_pages[(pos + done) >>
							  PAGE_SHIFT]);
			crypto_xor(data + done, ks + koff, n);
			kunmap_local(ks);
		}
		kunmap_local(data);
		pos += bv.bv_len;
	}
}
