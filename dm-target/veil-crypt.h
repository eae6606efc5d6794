/* SPDX-License-Identifier: GPL-2.0 */
/*
 * dm-veil cipher calls (veil-crypt.c): a chunk of a job through the
 * cipher, and the keystream XOR.
 */
#ifndef DM_VEIL_CRYPT_H
#define DM_VEIL_CRYPT_H

#include <linux/scatterlist.h>
#include <crypto/aead.h>
#include <crypto/skcipher.h>

#include "dm-veil.h"
#include "veil-stats.h"

/* Most requests a context keeps in flight with an async driver. */
#define VEIL_ASYNC_DEPTH		32

/*
 * Scatterlist entries of an AEAD sector: sector number and IV (the
 * associated data), the data, the tag. A skcipher uses the first only.
 */
#define VEIL_AEAD_SG			4

/**
 * enum veil_job_kind - what the chunks of a bio do through the cipher
 * @VEIL_JOB_WRITE: encrypt the bio's data into the ciphertext bio.
 * @VEIL_JOB_READ: decrypt the bio's data in place.
 * @VEIL_JOB_KEYSTREAM: CTR keystream of the bio's sectors, during the read;
 *	chunks taken after the read completed decrypt in place instead.
 */
enum veil_job_kind {
	VEIL_JOB_WRITE,
	VEIL_JOB_READ,
	VEIL_JOB_KEYSTREAM,
};

/* The counters' direction of a job of @kind. */
static inline enum veil_dir veil_kind_dir(enum veil_job_kind kind)
{
	return kind == VEIL_JOB_WRITE ? VEIL_ENCRYPT : VEIL_DECRYPT;
}

struct veil_io;
struct veil_window;

/**
 * struct veil_req - a cipher request with what it points to
 * @io: the job whose sector the request is working on (a request from
 *	its target's pool goes back there).
 * @window: the sleeping context's requests in flight (veil-crypt.c).
 * @sg_in: source of the request: the sector's data, or for an AEAD the
 *	associated data, the data and the tag.
 * @sg_out: destination, laid out as @sg_in (unused when decrypting in
 *	place).
 * @ad_sector: AEAD: the sector number, little endian, in the associated
 *	data.
 * @ad_iv: AEAD: the IV as the associated data holds it; the cipher may
 *	change its own copy.
 * @iv_buf: holds the IV of the request, at veil_req_iv().
 * @req: the skcipher_request or aead_request (veil_req_sk(),
 *	veil_req_aead()), the transform's request context after it.
 *
 * An async driver reads what the scatterlists point to and the IV after
 * the call that queued the request returned: they live here, never on
 * the caller's stack.
 */
struct veil_req {
	struct veil_io *io;
	struct veil_window *window;
	struct scatterlist sg_in[VEIL_AEAD_SG];
	struct scatterlist sg_out[VEIL_AEAD_SG];
	__le64 ad_sector;
	u8 ad_iv[VEIL_MAX_IV_SIZE];
	u8 iv_buf[VEIL_MAX_IV_SIZE + VEIL_MAX_IV_ALIGNMASK];
	void *req[] CRYPTO_MINALIGN_ATTR;
};

/*
 * The IV of @r, aligned as @vc's transform asks: a misaligned IV makes the
 * cipher walk allocate an aligned copy for every request.
 */
static inline u8 *veil_req_iv(const struct veil_c *vc, struct veil_req *r)
{
	return PTR_ALIGN(&r->iv_buf[0], vc->iv_align);
}

static inline struct skcipher_request *veil_req_sk(struct veil_req *r)
{
	return (struct skcipher_request *)r->req;
}

static inline struct aead_request *veil_req_aead(struct veil_req *r)
{
	return (struct aead_request *)r->req;
}

/* Bytes of a struct veil_req with @vc's request and its context. */
static inline size_t veil_req_size(const struct veil_c *vc)
{
	if (vc->aead)
		return sizeof(struct veil_req) + sizeof(struct aead_request) +
		       crypto_aead_reqsize(vc->aead);
	return sizeof(struct veil_req) + sizeof(struct skcipher_request) +
	       crypto_skcipher_reqsize(vc->tfm);
}

/* Whether @vc's cipher may complete a request after the call returned. */
static inline bool veil_cipher_is_async(const struct veil_c *vc)
{
	const struct crypto_alg *alg = vc->aead ?
		&crypto_aead_alg(vc->aead)->base :
		&crypto_skcipher_alg(vc->tfm)->base;

	return alg->cra_flags & CRYPTO_ALG_ASYNC;
}

int veil_crypt_chunk(struct veil_io *io, struct veil_req *r, unsigned int idx,
		     enum veil_job_kind kind, unsigned int from,
		     crypto_completion_t async_done);
void veil_crypt_xor(struct veil_io *io, unsigned int idx);
void veil_crypt_bad_tag(const struct veil_req *r);
bool veil_crypt_async_done(struct veil_req *r, int err);

#endif /* DM_VEIL_CRYPT_H */
