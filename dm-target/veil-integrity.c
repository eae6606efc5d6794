// SPDX-License-Identifier: GPL-2.0
/*
 * dm-veil over dm-integrity: authenticated encryption
 * (integrity:<bytes>:aead) and IVs kept beside the data (the random IV),
 * in the per-sector metadata of a device that stores opaque tags:
 * dm-integrity without an internal hash.
 *
 * Each encryption sector has tuple_size bytes of metadata on the device:
 * the AEAD's tag (auth_size bytes), then the random IV (iv_stored bytes),
 * then zeros. A bio's sectors have their tuples in one buffer, which goes
 * down as the integrity payload of the bio that reaches the device: a
 * write fills it as it encrypts (veil-crypt.c), a read's device fills it
 * before the read decrypts. The layout is dm-crypt's, so either target
 * reads what the other wrote.
 *
 * The buffer comes from kmalloc without retries, else from a mempool of
 * VEIL_TAG_POOL_BYTES buffers, and the bio is cut to what one of those
 * holds: the I/O path never waits for memory but for a buffer that a
 * completing bio gives back. The payloads come from the pool of the
 * target's bioset.
 */
#include <linux/bio.h>
#include <linux/blkdev.h>
#include <linux/blk-integrity.h>
#include <linux/rtnetlink.h>
#include <linux/slab.h>
#include <crypto/aead.h>
#include <crypto/authenc.h>
#include <crypto/hash.h>

#include "dm-veil.h"
#include "veil-compat.h"
#include "veil-integrity.h"
#include "veil-job.h"

/* One metadata buffer of the pool, and how many the pool keeps. */
#define VEIL_TAG_POOL_BYTES	PAGE_SIZE
#define VEIL_TAG_POOL_MIN	16

/*
 * authenc(<mac>,<cipher>) takes its key as an rtattr blob; the table's key
 * is the cipher's key followed by the MAC's, as dm-crypt's. The MAC's key
 * is as long as its digest unless integrity_key_size says otherwise.
 */
static int veil_aead_mac_size(struct dm_target *ti, struct veil_c *vc,
			      const char *base)
{
	char mac[CRYPTO_MAX_ALG_NAME];
	const char *start, *end;
	struct crypto_ahash *hash;

	if (!strstarts(base, "authenc("))
		return 0;
	start = base + strlen("authenc(");
	end = strchr(start, ',');
	if (!end || end == start || end - start >= sizeof(mac)) {
		ti->error = "Invalid AEAD cipher spec";
		return -EINVAL;
	}
	memcpy(mac, start, end - start);
	mac[end - start] = '\0';
	hash = crypto_alloc_ahash(mac, 0, CRYPTO_ALG_ALLOCATES_MEMORY);
	if (IS_ERR(hash)) {
		ti->error = "Invalid AEAD cipher spec";
		return PTR_ERR(hash);
	}
	if (!vc->mac_key_size_set)
		vc->mac_key_size = crypto_ahash_digestsize(hash);
	crypto_free_ahash(hash);
	return 0;
}

/**
 * veil_aead_alloc() - allocate the authenticated cipher of a table line
 * @ti: the target; ti->error is set on failure.
 * @vc: receives the transform (and the MAC's key size for authenc).
 * @base: the Crypto API name of the capi: spec ("gcm(aes)",
 *	"authenc(hmac(sha256),xts(aes))").
 * @api: the name to allocate: @base, or its essiv() wrapper.
 *
 * Return: 0 or a negative errno.
 */
int veil_aead_alloc(struct dm_target *ti, struct veil_c *vc, const char *base,
		    const char *api)
{
	struct crypto_aead *aead;
	int ret;

	ret = veil_aead_mac_size(ti, vc, base);
	if (ret)
		return ret;
	/* As dm-crypt: no driver that allocates memory on the I/O path. */
	aead = crypto_alloc_aead(api, 0, CRYPTO_ALG_ALLOCATES_MEMORY);
	if (IS_ERR(aead)) {
		ti->error = "Error allocating crypto tfm";
		return PTR_ERR(aead);
	}
	vc->aead = aead;
	return 0;
}

/**
 * veil_aead_setkey() - key the authenticated cipher
 * @vc: the target.
 * @key: the table's key (IV generators' parts taken off).
 * @size: bytes of @key.
 *
 * Context: process; allocates authenc's key blob, wiped after use.
 * Return: 0 or the cipher's error.
 */
int veil_aead_setkey(struct veil_c *vc, const u8 *key, unsigned int size)
{
	struct crypto_authenc_key_param *param;
	unsigned int enc, len;
	struct rtattr *rta;
	u8 *blob;
	int ret;

	if (!vc->mac_key_size)
		return crypto_aead_setkey(vc->aead, key, size);
	if (size < vc->mac_key_size)
		return -EINVAL;
	enc = size - vc->mac_key_size;
	len = RTA_SPACE(sizeof(*param)) + size;
	blob = kmalloc(len, GFP_KERNEL);
	if (!blob)
		return -ENOMEM;
	rta = (struct rtattr *)blob;
	rta->rta_type = CRYPTO_AUTHENC_KEYA_PARAM;
	rta->rta_len = RTA_LENGTH(sizeof(*param));
	param = RTA_DATA(rta);
	param->enckeylen = cpu_to_be32(enc);
	memcpy(blob + RTA_SPACE(sizeof(*param)), key + enc, vc->mac_key_size);
	memcpy(blob + RTA_SPACE(sizeof(*param)) + vc->mac_key_size, key, enc);
	ret = crypto_aead_setkey(vc->aead, blob, len);
	kfree_sensitive(blob);
	return ret;
}

/* Bytes of one pool buffer: a page, or one tuple if that is larger. */
static unsigned int veil_tag_buf_bytes(const struct veil_c *vc)
{
	return max_t(unsigned int, VEIL_TAG_POOL_BYTES, vc->tuple_size);
}

/**
 * veil_integrity_init() - check the device's metadata and set up its use
 * @ti: the target; ti->error is set on failure.
 * @vc: the target instance, after veil_io_init().
 *
 * An AEAD or a random IV needs a device with opaque per-sector metadata
 * (dm-integrity without an internal hash) of at least the table's
 * integrity:<bytes>, one tuple per encryption sector. Anything else keeps
 * nothing there.
 *
 * Return: 0 or a negative errno.
 */
int veil_integrity_init(struct dm_target *ti, struct veil_c *vc)
{
	struct blk_integrity *bi;
	int ret;

	if (vc->iv_mode == VEIL_IV_RANDOM)
		vc->iv_stored = vc->iv_size;
	if (!vc->aead && !vc->iv_stored)
		return 0;

	bi = blk_get_integrity(vc->dev->bdev->bd_disk);
	if (!veil_integrity_opaque(bi)) {
		ti->error = "Integrity profile not supported.";
		return -EINVAL;
	}
	if (bi->tuple_size < vc->tag_size_used) {
		ti->error = "Integrity profile tag size mismatch.";
		return -EINVAL;
	}
	if ((1U << bi->interval_exp) != vc->sector_size) {
		ti->error = "Integrity profile sector size mismatch.";
		return -EINVAL;
	}
	if (vc->aead) {
		if (vc->tag_size_used < vc->iv_stored ||
		    crypto_aead_setauthsize(vc->aead,
					    vc->tag_size_used - vc->iv_stored)) {
			ti->error = "Integrity AEAD auth tag size is not supported.";
			return -EINVAL;
		}
		vc->auth_size = vc->tag_size_used - vc->iv_stored;
	}
	if (vc->auth_size + vc->iv_stored > bi->tuple_size) {
		ti->error = "Not enough space for integrity tag in the profile.";
		return -EINVAL;
	}
	vc->tuple_size = bi->tuple_size;

	ret = mempool_init_kmalloc_pool(&vc->tag_pool, VEIL_TAG_POOL_MIN,
					veil_tag_buf_bytes(vc));
	if (ret) {
		ti->error = "Cannot allocate integrity tags mempool";
		return ret;
	}
	ret = bioset_integrity_create(&vc->bs, BIO_POOL_SIZE);
	if (ret) {
		ti->error = "Cannot allocate integrity payload pool";
		return ret;
	}
	return 0;
}

/**
 * veil_integrity_exit() - free what the metadata and the AEAD use
 * @vc: the target instance; no I/O may be in flight.
 */
void veil_integrity_exit(struct veil_c *vc)
{
	mempool_exit(&vc->tag_pool);
	if (vc->aead)
		crypto_free_aead(vc->aead);
}

/* Bytes of metadata of @bytes of data. */
static unsigned int veil_tags_len(const struct veil_c *vc, unsigned int bytes)
{
	return (bytes >> (SECTOR_SHIFT + vc->sector_shift)) * vc->tuple_size;
}

/**
 * veil_integrity_map() - the metadata buffer of a bio being mapped
 * @io: the bio's state; @io->tags is set, NULL when the target keeps no
 *	metadata.
 * @bio: the bio, in veil_map(); cut to what a pool buffer holds when
 *	kmalloc has no buffer for all of it.
 *
 * Context: veil_map(); may reclaim memory without I/O, and wait for a pool
 * buffer.
 */
void veil_integrity_map(struct veil_io *io, struct bio *bio)
{
	struct veil_c *vc = io->vc;
	unsigned int sectors;
	size_t len;

	io->tags = NULL;
	io->tags_from_pool = false;
	if (!vc->tuple_size)
		return;
	len = veil_tags_len(vc, bio->bi_iter.bi_size);
	if (len <= KMALLOC_MAX_SIZE)
		io->tags = kmalloc(len, GFP_NOIO | __GFP_NORETRY |
				   __GFP_NOMEMALLOC | __GFP_NOWARN);
	if (io->tags)
		return;

	/* Whole encryption sectors, in 512-byte sectors. */
	sectors = (veil_tag_buf_bytes(vc) / vc->tuple_size) << vc->sector_shift;
	if (bio_sectors(bio) > sectors)
		dm_accept_partial_bio(bio, sectors);
	io->tags = mempool_alloc(&vc->tag_pool, GFP_NOIO);
	io->tags_from_pool = true;
}

/**
 * veil_integrity_attach() - attach a bio's metadata buffer as its payload
 * @io: the bio's state, with its metadata buffer.
 * @bio: the bio that goes to the device: a write's ciphertext, a read's
 *	clone, or the pages a read is read again into.
 *
 * Context: process; may wait for the bioset's payload pool.
 * Return: 0 or -ENOMEM.
 */
int veil_integrity_attach(struct veil_io *io, struct bio *bio)
{
	struct veil_c *vc = io->vc;
	unsigned int len = veil_tags_len(vc, io->iter.bi_size);
	struct bio_integrity_payload *bip;

	bip = bio_integrity_alloc(bio, GFP_NOIO, 1);
	if (IS_ERR(bip))
		return PTR_ERR(bip);
	bip_set_seed(bip, vc->start + io->sector);
	if (bio_integrity_add_page(bio, virt_to_page(io->tags), len,
				   offset_in_page(io->tags)) != len)
		return -ENOMEM;
	/* 6.1's add_page leaves the size to the caller; 6.12's sets it. */
	bip->bip_iter.bi_size = len;
	return 0;
}

/**
 * veil_integrity_free() - give back a bio's metadata buffer
 * @io: the bio's state; the bio that carried the buffer is done with it.
 */
void veil_integrity_free(struct veil_io *io)
{
	if (!io->tags)
		return;
	if (io->tags_from_pool)
		mempool_free(io->tags, &io->vc->tag_pool);
	else
		kfree(io->tags);
	io->tags = NULL;
}
