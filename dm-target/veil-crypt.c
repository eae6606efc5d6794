// SPDX-License-Identifier: GPL-2.0
/*
 * dm-veil cipher calls: one chunk of a bio through the cipher, sector by
 * sector, and the XOR that turns CTR ciphertext into plaintext once its
 * keystream is ready.
 *
 * Every encryption sector is one cipher request with its own IV. Where the
 * caller may sleep, a request waits for async drivers (-EINPROGRESS, or
 * -EBUSY once backlogged); elsewhere only synchronous transforms are used.
 * The time inside each cipher call is read from local_clock(), the cheap
 * per-CPU clock (the time-stamp counter on x86), and summed per CPU.
 */
#include <linux/bio.h>
#include <linux/highmem.h>
#include <linux/sched/clock.h>
#include <linux/scatterlist.h>
#include <crypto/algapi.h>

#include "dm-veil.h"

/* The IV sector of a target-relative sector, as dm-crypt computes it. */
static sector_t veil_iv_sector(const struct veil_c *vc, sector_t sector)
{
	sector += vc->iv_offset;
	return vc->iv_large_sectors ? sector >> vc->sector_shift : sector;
}

static int veil_cipher(struct veil_req *r, struct scatterlist *src,
		       struct scatterlist *dst, sector_t sector, bool encrypt,
		       bool may_sleep)
{
	struct veil_c *vc = r->io->vc;
	struct skcipher_request *req = &r->req;
	DECLARE_CRYPTO_WAIT(wait);
	int ret;

	veil_iv_gen(vc, r->iv, veil_iv_sector(vc, sector));
	skcipher_request_set_tfm(req, vc->tfm);
	skcipher_request_set_callback(req, may_sleep ?
				      CRYPTO_TFM_REQ_MAY_BACKLOG |
				      CRYPTO_TFM_REQ_MAY_SLEEP : 0,
				      crypto_req_done, &wait);
	skcipher_request_set_crypt(req, src, dst, vc->sector_size, r->iv);
	ret = encrypt ? crypto_skcipher_encrypt(req) :
			crypto_skcipher_decrypt(req);
	return crypto_wait_req(ret, &wait);
}

/* Byte @pos of the write ciphertext or keystream, whose pages are in order. */
static void veil_out_sg(struct veil_io *io, unsigned int pos,
			struct scatterlist *sg)
{
	sg_set_page(sg, io->out->bi_io_vec[pos >> PAGE_SHIFT].bv_page,
		    io->vc->sector_size, offset_in_page(pos));
}

/**
 * veil_crypt_chunk() - run one chunk of a job through the cipher
 * @io: the job.
 * @r: the participant's cipher request.
 * @idx: chunk number; the chunk is @io->chunk_bytes from @idx times that.
 * @kind: what this chunk does: @io->kind, or VEIL_JOB_READ for a chunk of
 *	a keystream job whose read has completed.
 * @may_sleep: the caller may sleep (process context).
 *
 * Writes encrypt the bio's data into @io->out, reads decrypt it in place,
 * keystream chunks encrypt zeros into @io->out.
 *
 * Return: 0, or -EIO for a sector split over pages, or the cipher's error.
 */
int veil_crypt_chunk(struct veil_io *io, struct veil_req *r, unsigned int idx,
		     enum veil_job_kind kind, bool may_sleep)
{
	struct veil_c *vc = io->vc;
	unsigned int off = idx * io->chunk_bytes;
	unsigned int len = min(io->chunk_bytes, io->iter.bi_size - off);
	bool encrypt = kind != VEIL_JOB_READ;
	int dir = kind == VEIL_JOB_WRITE;
	sector_t sector = io->sector + (off >> SECTOR_SHIFT);
	struct bvec_iter iter = io->iter;
	struct scatterlist sg_in, sg_out;
	unsigned int done;
	struct bio_vec in;
	u64 t0, ns = 0;
	int ret = 0;

	if (kind != VEIL_JOB_KEYSTREAM)
		bio_advance_iter(io->base, &iter, off);

	for (done = 0; done < len; done += vc->sector_size) {
		sg_init_table(&sg_in, 1);
		sg_init_table(&sg_out, 1);
		if (kind == VEIL_JOB_KEYSTREAM) {
			sg_set_page(&sg_in, ZERO_PAGE(0), vc->sector_size, 0);
		} else {
			in = bio_iter_iovec(io->base, iter);
			/* The block layer keeps sectors whole within a page. */
			if (unlikely(in.bv_len < vc->sector_size)) {
				ret = -EIO;
				break;
			}
			sg_set_page(&sg_in, in.bv_page, vc->sector_size,
				    in.bv_offset);
			bio_advance_iter_single(io->base, &iter, vc->sector_size);
		}
		if (kind != VEIL_JOB_READ)
			veil_out_sg(io, off + done, &sg_out);

		t0 = local_clock();
		ret = veil_cipher(r, &sg_in, kind == VEIL_JOB_READ ?
				  &sg_in : &sg_out, sector, encrypt, may_sleep);
		ns += local_clock() - t0;
		if (ret)
			break;
		sector += vc->sector_size >> SECTOR_SHIFT;
	}

	this_cpu_add(vc->stats->bytes[dir], done);
	this_cpu_add(vc->stats->cipher_ns[dir], ns);
	this_cpu_inc(vc->stats->chunks);
	return ret;
}

/* XOR the keystream into @len bytes of the read's data from byte @off. */
static void veil_xor_range(struct veil_io *io, unsigned int off,
			   unsigned int len)
{
	struct bvec_iter start = io->iter, iter;
	unsigned int pos = off, done, n, koff;
	struct bio_vec bv;
	u8 *data, *ks;

	bio_advance_iter(io->base, &start, off);
	start.bi_size = len;
	__bio_for_each_segment(bv, io->base, iter, start) {
		data = bvec_kmap_local(&bv);
		for (done = 0; done < bv.bv_len; done += n) {
			koff = offset_in_page(pos + done);
			n = min_t(unsigned int, bv.bv_len - done, PAGE_SIZE - koff);
			ks = kmap_local_page(io->out->bi_io_vec[(pos + done) >>
								PAGE_SHIFT].bv_page);
			crypto_xor(data + done, ks + koff, n);
			kunmap_local(ks);
		}
		kunmap_local(data);
		pos += bv.bv_len;
	}
}

/**
 * veil_crypt_xor_keystream() - decrypt the CTR chunks whose keystream is ready
 * @io: a keystream job whose read completed.
 *
 * XORs each chunk marked in @io->ks_chunks into the data and clears its
 * mark; a chunk another caller clears first is left to it, so participants
 * may call this at the same time. Chunks never marked were decrypted in
 * place. Safe in any context: it only maps pages and XORs.
 */
void veil_crypt_xor_keystream(struct veil_io *io)
{
	unsigned int idx, off;

	for_each_set_bit(idx, io->ks_chunks, io->nr_chunks) {
		if (!test_and_clear_bit(idx, io->ks_chunks))
			continue;
		off = idx * io->chunk_bytes;
		veil_xor_range(io, off, min(io->chunk_bytes,
					    io->iter.bi_size - off));
	}
}
