/* SPDX-License-Identifier: GPL-2.0 */
/*
 * dm-veil cipher calls (veil-crypt.c): a chunk of a job through the
 * cipher, and the keystream XOR.
 */
#ifndef DM_VEIL_CRYPT_H
#define DM_VEIL_CRYPT_H

#include <linux/scatterlist.h>
#include <crypto/skcipher.h>

#include "dm-veil.h"
#include "veil-stats.h"

/* Most requests a sleeping context keeps in flight with an async driver. */
#define VEIL_ASYNC_DEPTH		32

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
 * @vc: the target (a request from its pool goes back there).
 * @window: the sleeping context's requests in flight (veil-crypt.c).
 * @sg_in: source of @req.
 * @sg_out: destination of @req (unused when decrypting in place).
 * @iv_buf: holds the IV of @req, at veil_req_iv().
 * @req: the cipher request; the transform's request context follows it.
 *
 * An async driver reads @sg_in, @sg_out and the IV after the call that
 * queued @req returned: they live here, never on the caller's stack.
 */
struct veil_req {
	struct veil_c *vc;
	struct veil_window *window;
	struct scatterlist sg_in;
	struct scatterlist sg_out;
	u8 iv_buf[VEIL_MAX_IV_SIZE + VEIL_MAX_IV_ALIGNMASK];
	struct skcipher_request req;
};

/*
 * The IV of @r, aligned as @vc's transform asks: a misaligned IV makes the
 * cipher walk allocate an aligned copy for every request.
 */
static inline u8 *veil_req_iv(const struct veil_c *vc, struct veil_req *r)
{
	return PTR_ALIGN(&r->iv_buf[0], vc->iv_align);
}

int veil_crypt_chunk(struct veil_io *io, struct veil_req *r, unsigned int idx,
		     enum veil_job_kind kind, unsigned int *done,
		     crypto_completion_t async_done);
void veil_crypt_xor(struct veil_io *io, unsigned int idx);

#endif /* DM_VEIL_CRYPT_H */
