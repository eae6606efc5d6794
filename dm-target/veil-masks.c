// SPDX-License-Identifier: GPL-2.0
/*
 * dm-veil write masks: the GCM keystream of a write's random IV, made
 * before the write arrives (capi:gcm(aes)-random and
 * capi:rfc4106(gcm(aes))-random over dm-integrity).
 *
 * GCM is CTR plus GHASH. With K the AES key, H = E_K(0^128) and the
 * counter block J0 = IV || be32(1) (gcm(aes)) or salt || IV || be32(1)
 * (rfc4106, whose key ends with a 4-byte salt), one ctr(aes) call over
 * 16 + sector_size zero bytes from J0 gives E_K(J0), the tag's mask, then
 * the data's keystream (ctr(aes) counts the whole block up, GCM only its
 * low 32 bits: the same for the 257 blocks of a 4 KiB sector from a low
 * word of 1). A write then only XORs and hashes:
 *
 *   C   = P xor keystream
 *   tag = GHASH_H(A || 0-pad, C, be64(bits of A) || be64(bits of C))
 *         xor E_K(J0), cut to the table's tag size
 *
 * where A is dm-crypt's associated data: the sector number (le64) and the
 * IV for gcm(aes); for rfc4106 the sector number only, as the kernel's
 * rfc4106 gives GCM the associated data without its last 8 bytes (the IV,
 * which is in the nonce). These are the kernel's gcm(aes) bytes.
 *
 * Rules:
 * - Correctness never depends on a mask. When a key is loaded, one sector
 *   is encrypted both ways, by the table's AEAD and by the masks, and the
 *   masks are used only if the bytes are the same; a missing transform
 *   or a difference leaves them off for the table (one log line) until
 *   the next key. A write that finds no ready mask, or finds the masks
 *   off, encrypts through the AEAD as before (veil-crypt.c).
 * - The pool is fixed at table load: aead_masks slots of one IV, 16 bytes
 *   of tag mask and sector_size bytes of keystream each (the keystream a
 *   kmalloc'd buffer of its own, exactly a sector: the ctr(aes) driver
 *   writes nothing else's cache lines). Nothing on the I/O path
 *   allocates, waits or sleeps here.
 * - An IV drawn ahead must not outlive the random state it came from: a
 *   restored VM snapshot or hibernation image holds its ready slots a
 *   second time. The kernel's vmfork notifier (after it reseeds) discards
 *   every ready slot (veil_masks_drain()). Hibernation pauses the masks
 *   from its PM notifier's prepare on, before the image is made, and
 *   discards the ready slots: the image holds none, and no write takes
 *   one until the notifier's post, in the restored kernel too (whose
 *   tasks are thawed before it), discards again and resumes them. Slots
 *   are made only once the RNG is initialized.
 * - Masks need the architecture's GHASH ("__ghash", x86's PCLMULQDQ code,
 *   constant-time), called only where crypto_simd_usable(); without it,
 *   in FIPS mode, or where SIMD is unusable at a write, the write goes
 *   through the table's AEAD (the generic ghash is table-driven and
 *   slower than gcm(aes)).
 * - A slot is used once: taken under @lock (a write: veil_map(), a helper
 *   or a queue runner; never a hard interrupt, and bottom halves are
 *   kept off while the lock is held, as dm may map a bio from one), its
 *   bytes cleared with memzero_explicit() right after its sector is
 *   encrypted, then given back as free.
 * - One work item per target makes them, on its own unbound queue (which
 *   follows the workqueue code's cpumask: never an isolated CPU), queued
 *   by a write that leaves fewer than half of the slots ready, and runs
 *   until every slot is ready. Nothing ever waits for it: it is not on
 *   the reclaim path (no WQ_MEM_RECLAIM), and a write without a mask does
 *   not need it. It may sleep (an async ctr(aes)).
 * - Keys: veil_masks_stop() (before every key set and key wipe, while the
 *   device is suspended, and at destruction) turns the masks off, bumps
 *   the generation, waits for the work item, clears every slot and gives
 *   the masks' own transforms a random key (it needs the device
 *   suspended: it checks that no write holds a slot). veil_masks_start() after a
 *   key set keys them, runs the self-test and turns them on. A slot
 *   carries the generation it was made in; the work item makes a slot
 *   ready and a write takes it only in the current generation, so no
 *   slot of an older key is ever used.
 */
#include <linux/error-injection.h>
#include <linux/fips.h>
#include <linux/highmem.h>
#include <linux/mutex.h>
#include <linux/notifier.h>
#include <linux/sched/mm.h>
#include <linux/suspend.h>
#include <linux/random.h>
#include <linux/scatterlist.h>
#include <linux/slab.h>
#include <linux/spinlock.h>
#include <linux/string.h>
#include <linux/workqueue.h>
#include <crypto/aead.h>
#include <crypto/algapi.h>
#include <crypto/hash.h>
#include <asm/simd.h>
#include <crypto/internal/simd.h>
#include <crypto/skcipher.h>

#include "dm-veil.h"
#include "veil-compat.h"
#include "veil-masks.h"
#include "veil-stats.h"

#define VEIL_GCM_BLOCK		16
#define VEIL_GCM_IV_SIZE	12
#define VEIL_RFC4106_IV_SIZE	8
#define VEIL_RFC4106_SALT_SIZE	4
/* Associated data, padded to blocks: sector (8) and IV (up to 12). */
#define VEIL_GCM_AD_MAX		(2 * VEIL_GCM_BLOCK)
/* The counter block, then H or a slot's tag mask; or a key of up to AES-256. */
#define VEIL_MASKS_SCRATCH	32

/**
 * struct veil_mask - one slot: what a write needs besides its data
 * @iv: the random IV (iv_size bytes).
 * @tag_mask: E_K(J0), the mask of the tag.
 * @keystream: the data's keystream (sector_size bytes, a kmalloc'd buffer
 *	of exactly that size, which the ctr(aes) driver writes).
 * @gen: the generation it was made in.
 */
struct veil_mask {
	u8 iv[VEIL_GCM_BLOCK];
	u8 tag_mask[VEIL_GCM_BLOCK];
	u8 *keystream;
	u64 gen;
};

/**
 * struct veil_masks - the write masks of one target
 * @vc: the target.
 * @ctr: ctr(aes), keyed with the AES part of the key.
 * @ghash: the architecture's GHASH (x86's PCLMULQDQ code, "__ghash",
 *	which the async "ghash-clmulni" wraps), keyed with H; used by
 *	writes, one descriptor each. The kernel offers it only as an
 *	internal algorithm, which must not be called where SIMD is unusable
 *	(an interrupt in the middle of another FPU section): a write checks
 *	crypto_simd_usable() and otherwise takes no mask.
 * @req: @ctr's request: the work item's, or veil_masks_start()'s while
 *	the work item is stopped.
 * @scratch: the counter block of @req, then H or a slot's tag mask as
 *	@req makes them: kmalloc'd, not on a stack, since an async driver
 *	reads and writes them.
 * @rfc4106: the AEAD is rfc4106(gcm(aes)): salt in the nonce, the IV
 *	outside the associated data.
 * @salt: rfc4106's salt, the key's last 4 bytes.
 * @mutex: serializes veil_masks_stop() and veil_masks_drain(), which
 *	both clear slots outside @lock.
 * @lock: protects @active, @gen, @nr_held and the two stacks.
 * @active: the self-test passed with the current key: writes may take
 *	slots, the work item may make them.
 * @paused: a hibernation is under way: while set, no write takes a slot
 *	and the work item makes none.
 * @gen: bumped by every stop and drain; a slot of another generation is
 *	never used.
 * @nr_held: slots taken by writes and not yet given back.
 * @nr: slots in @slots.
 * @slots: the pool.
 * @ready: indices of ready slots (a stack of @nr_ready).
 * @nr_ready: entries of @ready.
 * @free: indices of free slots, cleared (a stack of @nr_free).
 * @nr_free: entries of @free.
 * @drained: a stack as long as @ready, which veil_masks_drain() swaps
 *	with it to take every ready slot at once; used under @mutex.
 * @refill: the work item that makes slots ready.
 * @wq: its queue.
 * @vmfork_nb: the kernel's vmfork notifier: veil_masks_drain().
 * @pm_nb: the PM notifier: veil_masks_drain() around hibernation.
 */
struct veil_masks {
	struct veil_c *vc;
	struct crypto_skcipher *ctr;
	struct crypto_shash *ghash;
	struct skcipher_request *req;
	u8 *scratch;
	bool rfc4106;
	u8 salt[VEIL_RFC4106_SALT_SIZE];

	struct mutex mutex;	/* stop and drain */
	spinlock_t lock;	/* @active, @paused, @gen, @nr_held, stacks */
	bool active;
	bool paused;
	u64 gen;
	unsigned int nr_held;
	unsigned int nr;
	struct veil_mask *slots;
	unsigned int *ready;
	unsigned int nr_ready;
	unsigned int *free;
	unsigned int nr_free;
	unsigned int *drained;

	struct work_struct refill;
	struct workqueue_struct *wq;
	struct notifier_block vmfork_nb;
	struct notifier_block pm_nb;
};

/* ctr(aes) of @len zero bytes into @dst from the counter in @scratch. */
static int veil_masks_ctr(struct veil_masks *m, struct scatterlist *dst,
			  unsigned int len)
{
	struct scatterlist src[2];
	DECLARE_CRYPTO_WAIT(wait);

	/* A zero page holds one sector; the tag mask's block comes first. */
	sg_init_table(src, len > VEIL_GCM_BLOCK ? 2 : 1);
	sg_set_page(&src[0], ZERO_PAGE(0), VEIL_GCM_BLOCK, 0);
	if (len > VEIL_GCM_BLOCK)
		sg_set_page(&src[1], ZERO_PAGE(0), len - VEIL_GCM_BLOCK, 0);
	skcipher_request_set_callback(m->req, CRYPTO_TFM_REQ_MAY_SLEEP |
				      CRYPTO_TFM_REQ_MAY_BACKLOG,
				      crypto_req_done, &wait);
	skcipher_request_set_crypt(m->req, src, dst, len, m->scratch);
	return crypto_wait_req(crypto_skcipher_encrypt(m->req), &wait);
}

/* Clear a slot's bytes. */
static void veil_mask_clear(struct veil_masks *m, struct veil_mask *slot)
{
	memzero_explicit(slot->iv, sizeof(slot->iv));
	memzero_explicit(slot->tag_mask, sizeof(slot->tag_mask));
	memzero_explicit(slot->keystream, m->vc->sector_size);
}

/* Give a cleared slot back as free; @held: a write's, taken by it. */
static void veil_mask_free(struct veil_masks *m, unsigned int idx, bool held)
{
	spin_lock_bh(&m->lock);
	if (held)
		m->nr_held--;
	if (!WARN_ON_ONCE(m->nr_free >= m->nr))
		m->free[m->nr_free++] = idx;
	spin_unlock_bh(&m->lock);
}

/* Whether writes may take slots and the work item make them; under @lock. */
static bool veil_masks_on(struct veil_masks *m)
{
	lockdep_assert_held(&m->lock);
	return m->active && !m->paused;
}

/* Queue the refill if the masks are on and fewer than half are ready. */
static void veil_masks_kick(struct veil_masks *m)
{
	bool low;

	spin_lock_bh(&m->lock);
	low = veil_masks_on(m) && m->nr_ready * 2 < m->nr;
	spin_unlock_bh(&m->lock);
	if (low)
		queue_work(m->wq, &m->refill);
}

/*
 * Make @slot: the IV @iv, or a random one as dm-crypt's random IV
 * generator draws it, then E_K(J0) and the keystream. Only one caller at
 * a time: the work item, or the self-test while it is stopped.
 */
static int veil_mask_fill(struct veil_masks *m, struct veil_mask *slot,
			  const u8 *iv)
{
	struct veil_c *vc = m->vc;
	struct scatterlist dst[2];
	u8 *j0 = m->scratch;
	u8 *tag_mask = m->scratch + VEIL_GCM_BLOCK;
	int ret;

	if (iv)
		memcpy(slot->iv, iv, vc->iv_size);
	else
		get_random_bytes(slot->iv, vc->iv_size);
	if (m->rfc4106) {
		memcpy(j0, m->salt, VEIL_RFC4106_SALT_SIZE);
		memcpy(j0 + VEIL_RFC4106_SALT_SIZE, slot->iv,
		       VEIL_RFC4106_IV_SIZE);
	} else {
		memcpy(j0, slot->iv, VEIL_GCM_IV_SIZE);
	}
	put_unaligned_be32(1, j0 + VEIL_GCM_IV_SIZE);

	sg_init_table(dst, 2);
	sg_set_buf(&dst[0], tag_mask, VEIL_GCM_BLOCK);
	sg_set_buf(&dst[1], slot->keystream, vc->sector_size);
	ret = veil_masks_ctr(m, dst, VEIL_GCM_BLOCK + vc->sector_size);
	memcpy(slot->tag_mask, tag_mask, VEIL_GCM_BLOCK);
	memzero_explicit(tag_mask, VEIL_GCM_BLOCK);
	return ret;
}

/*
 * One sector from a slot: @out = @in xor keystream (they may be the
 * same), the whole 16-byte tag into @tag. @sector is the associated
 * data's sector number, as veil-crypt.c gives the AEAD.
 */
static int veil_mask_compose(struct veil_masks *m, struct veil_mask *slot,
			     struct crypto_shash *ghash, __le64 sector,
			     const u8 *in, u8 *out, u8 *tag)
{
	struct veil_c *vc = m->vc;
	SHASH_DESC_ON_STACK(desc, ghash);
	u8 ad[VEIL_GCM_AD_MAX] = { };
	unsigned int ad_len = sizeof(sector);
	__be64 lens[2];
	int ret;

	crypto_xor_cpy(out, in, slot->keystream, vc->sector_size);

	memcpy(ad, &sector, sizeof(sector));
	if (!m->rfc4106) {
		memcpy(ad + ad_len, slot->iv, vc->iv_size);
		ad_len += vc->iv_size;
	}
	lens[0] = cpu_to_be64((u64)ad_len * 8);
	lens[1] = cpu_to_be64((u64)vc->sector_size * 8);

	desc->tfm = ghash;
	ret = crypto_shash_init(desc) ?:
	      crypto_shash_update(desc, ad, ALIGN(ad_len, VEIL_GCM_BLOCK)) ?:
	      crypto_shash_update(desc, out, vc->sector_size) ?:
	      crypto_shash_update(desc, (u8 *)lens, sizeof(lens)) ?:
	      crypto_shash_final(desc, tag);
	shash_desc_zero(desc);
	memzero_explicit(ad, sizeof(ad));
	if (!ret)
		crypto_xor(tag, slot->tag_mask, VEIL_GCM_BLOCK);
	return ret;
}

/* Make free slots ready until none is free, or the masks stop. */
static void veil_masks_refill(struct work_struct *work)
{
	struct veil_masks *m = container_of(work, struct veil_masks, refill);
	struct veil_mask *slot;
	unsigned int idx;
	bool made;
	u64 gen;
	int ret;

	/* No IV drawn ahead before the RNG is seeded: writes draw their own. */
	if (!rng_is_initialized())
		return;
	for (;;) {
		spin_lock_bh(&m->lock);
		if (!veil_masks_on(m) || !m->nr_free) {
			spin_unlock_bh(&m->lock);
			return;
		}
		idx = m->free[--m->nr_free];
		gen = m->gen;
		spin_unlock_bh(&m->lock);

		slot = &m->slots[idx];
		ret = veil_mask_fill(m, slot, NULL);
		slot->gen = gen;

		spin_lock_bh(&m->lock);
		made = !ret && veil_masks_on(m) && gen == m->gen;
		if (made)
			m->ready[m->nr_ready++] = idx;
		spin_unlock_bh(&m->lock);
		if (!made) {
			/* Stopped, paused or drained meanwhile, or the cipher failed. */
			veil_mask_clear(m, slot);
			veil_mask_free(m, idx, false);
			if (ret)
				DMERR_LIMIT("%s: aead write masks: ctr(aes) failed (%d)",
					    m->vc->dev->name, ret);
			return;
		}
		cond_resched();
	}
}

/*
 * Take a ready slot of the current generation, or none (the masks off or
 * paused, or none ready); a slot of an older one (a drain meanwhile) is
 * cleared and freed on the way. *@low: the masks are on and fewer than
 * half of the slots are left ready (the refill is wanted).
 */
static struct veil_mask *veil_masks_take(struct veil_masks *m,
					 unsigned int *idx, bool *low)
{
	bool fresh;

	for (;;) {
		spin_lock_bh(&m->lock);
		if (!veil_masks_on(m) || !m->nr_ready) {
			/* None ready: refill (paused: later, at the resume). */
			*low = veil_masks_on(m);
			spin_unlock_bh(&m->lock);
			return NULL;
		}
		*idx = m->ready[--m->nr_ready];
		*low = m->nr_ready * 2 < m->nr;
		fresh = m->slots[*idx].gen == m->gen;
		if (fresh)
			m->nr_held++;
		spin_unlock_bh(&m->lock);
		if (fresh)
			return &m->slots[*idx];
		veil_mask_clear(m, &m->slots[*idx]);
		veil_mask_free(m, *idx, false);
	}
}

/**
 * veil_masks_encrypt() - encrypt one write sector with a ready mask
 * @vc: the target.
 * @sector: the sector, as the associated data holds it (target-relative).
 * @in: the plaintext sector (one entry).
 * @out: where its ciphertext goes (one entry).
 * @tuple: the sector's metadata: tag, then IV, then zeros.
 *
 * Context: a write's runner or helper, or veil_map(); never sleeps.
 * Return: true if the sector is encrypted; false if the masks are off,
 * SIMD is unusable here or no slot is ready (counted as a miss): the
 * caller uses the AEAD.
 */
bool veil_masks_encrypt(struct veil_c *vc, sector_t sector,
			struct scatterlist *in, struct scatterlist *out,
			u8 *tuple)
{
	struct veil_masks *m = vc->masks;
	u8 tag[VEIL_GCM_BLOCK];
	struct veil_mask *slot = NULL;
	unsigned int idx, used;
	bool low = false;
	u8 *src, *dst;
	int ret;

	if (!m || !READ_ONCE(m->active))
		return false;
	if (crypto_simd_usable())
		slot = veil_masks_take(m, &idx, &low);
	if (low)
		queue_work(m->wq, &m->refill);
	if (!slot) {
		this_cpu_inc(vc->stats->aead_mask_miss);
		return false;
	}

	src = kmap_local_page(sg_page(in));
	dst = kmap_local_page(sg_page(out));
	ret = veil_mask_compose(m, slot, m->ghash, cpu_to_le64(sector),
				src + in->offset, dst + out->offset, tag);
	kunmap_local(dst);
	kunmap_local(src);
	if (!ret) {
		memcpy(tuple, tag, vc->auth_size);
		memcpy(tuple + vc->auth_size, slot->iv, vc->iv_stored);
		used = vc->auth_size + vc->iv_stored;
		memset(tuple + used, 0, vc->tuple_size - used);
	}
	memzero_explicit(tag, sizeof(tag));
	veil_mask_clear(m, slot);
	veil_mask_free(m, idx, true);
	if (ret) {
		this_cpu_inc(vc->stats->aead_mask_miss);
		return false;
	}
	this_cpu_inc(vc->stats->aead_mask_hit);
	return true;
}

/*
 * The self-test: one random sector with a random IV and sector number,
 * through the table's AEAD and through a mask; 0 if the ciphertexts and
 * tags are the same, -EBADMSG if not. Runs while the masks are off (slot
 * 0 is free and not in the ready stack), possibly with the device
 * suspended: its allocations do no I/O. An error can be injected here
 * (fail_function) to test the masks' off path.
 */
static noinline int veil_masks_selftest(struct veil_masks *m)
{
	struct veil_c *vc = m->vc;
	unsigned int ad_len = sizeof(__le64) + vc->iv_size;
	unsigned int len = ad_len + vc->sector_size + vc->auth_size;
	struct veil_mask *slot = &m->slots[0];
	u8 *buf, *plain, *out, *iv, *want;
	u8 tag[VEIL_GCM_BLOCK];
	struct aead_request *req;
	struct scatterlist sg;
	DECLARE_CRYPTO_WAIT(wait);
	__le64 sector;
	int ret;

	if (!crypto_simd_usable())
		return -EOPNOTSUPP;
	buf = kmalloc(len + 2 * vc->sector_size + VEIL_GCM_BLOCK, GFP_NOIO);
	req = aead_request_alloc(vc->aead, GFP_NOIO);
	if (!buf || !req) {
		ret = -ENOMEM;
		goto out;
	}
	plain = buf + len;
	out = plain + vc->sector_size;
	iv = out + vc->sector_size;
	want = buf + ad_len;
	get_random_bytes(plain, vc->sector_size);
	get_random_bytes(iv, vc->iv_size);
	get_random_bytes(&sector, sizeof(sector));

	/* As veil-crypt.c lays a sector out for the AEAD, in place. */
	memcpy(buf, &sector, sizeof(sector));
	memcpy(buf + sizeof(sector), iv, vc->iv_size);
	memcpy(want, plain, vc->sector_size);
	sg_init_one(&sg, buf, len);
	aead_request_set_callback(req, CRYPTO_TFM_REQ_MAY_SLEEP |
				  CRYPTO_TFM_REQ_MAY_BACKLOG,
				  crypto_req_done, &wait);
	aead_request_set_ad(req, ad_len);
	aead_request_set_crypt(req, &sg, &sg, vc->sector_size, iv);
	ret = crypto_wait_req(crypto_aead_encrypt(req), &wait);
	if (ret)
		goto out;
	/* The AEAD may have changed its IV: the one stored is the table's. */
	memcpy(iv, buf + sizeof(sector), vc->iv_size);

	ret = veil_mask_fill(m, slot, iv) ?:
	      veil_mask_compose(m, slot, m->ghash, sector, plain, out, tag);
	veil_mask_clear(m, slot);
	if (!ret && (memcmp(out, want, vc->sector_size) ||
		     memcmp(tag, want + vc->sector_size, vc->auth_size)))
		ret = -EBADMSG;
	memzero_explicit(tag, sizeof(tag));
out:
	aead_request_free(req);
	kfree_sensitive(buf);
	return ret;
}

ALLOW_ERROR_INJECTION(veil_masks_selftest, ERRNO);

/*
 * A random key for the masks' transforms: no volume key left in them. The
 * longest AES key overwrites every round key a shorter one left.
 */
static void veil_masks_forget_key(struct veil_masks *m)
{
	unsigned int aes_len = crypto_skcipher_max_keysize(m->ctr);
	u8 *key = m->scratch;

	get_random_bytes(key, aes_len);
	if (crypto_skcipher_setkey(m->ctr, key, aes_len))
		DMERR("aead write masks: ctr(aes) refused a random key");
	get_random_bytes(key, VEIL_GCM_BLOCK);
	if (crypto_shash_setkey(m->ghash, key, VEIL_GCM_BLOCK))
		DMERR("aead write masks: ghash refused a random key");
	memzero_explicit(key, VEIL_MASKS_SCRATCH);
	memzero_explicit(m->salt, sizeof(m->salt));
}

/**
 * veil_masks_stop() - turn the masks off and clear every slot
 * @vc: the target: suspended (no write holds a slot), or being destroyed.
 *
 * Waits for the work item. The masks' transforms get a random key.
 */
void veil_masks_stop(struct veil_c *vc)
{
	struct veil_masks *m = vc->masks;
	unsigned int i;

	if (!m)
		return;
	mutex_lock(&m->mutex);
	spin_lock_bh(&m->lock);
	m->active = false;
	m->gen++;
	spin_unlock_bh(&m->lock);
	cancel_work_sync(&m->refill);

	spin_lock_bh(&m->lock);
	/* A write holding a slot now would get it back twice: never. */
	WARN_ON_ONCE(m->nr_held);
	m->nr_ready = 0;
	for (i = 0; i < m->nr; i++)
		m->free[i] = i;
	m->nr_free = m->nr;
	spin_unlock_bh(&m->lock);
	for (i = 0; i < m->nr; i++)
		veil_mask_clear(m, &m->slots[i]);
	veil_masks_forget_key(m);
	mutex_unlock(&m->mutex);
}

/*
 * Discard every ready slot: their IVs were drawn from a random state that
 * a restored snapshot or image repeats. Writes go on meanwhile; a slot
 * made before the new generation is never made ready or used.
 */
static void veil_masks_drain(struct veil_masks *m)
{
	unsigned int n, i;

	mutex_lock(&m->mutex);
	spin_lock_bh(&m->lock);
	m->gen++;
	n = m->nr_ready;
	swap(m->ready, m->drained);
	m->nr_ready = 0;
	spin_unlock_bh(&m->lock);
	for (i = 0; i < n; i++) {
		veil_mask_clear(m, &m->slots[m->drained[i]]);
		veil_mask_free(m, m->drained[i], false);
	}
	mutex_unlock(&m->mutex);
}

static int veil_masks_vmfork(struct notifier_block *nb, unsigned long action,
			     void *data)
{
	struct veil_masks *m = container_of(nb, struct veil_masks, vmfork_nb);

	veil_masks_drain(m);
	veil_masks_kick(m);
	return NOTIFY_DONE;
}

/*
 * Hibernation: paused and drained before the image is made; drained and
 * resumed at the end, in the kernel restored from the image as in the one
 * that made it (or when the restore failed).
 */
static int veil_masks_pm(struct notifier_block *nb, unsigned long action,
			 void *data)
{
	struct veil_masks *m = container_of(nb, struct veil_masks, pm_nb);
	bool pause;

	switch (action) {
	case PM_HIBERNATION_PREPARE:
		pause = true;
		break;
	case PM_POST_HIBERNATION:
	case PM_POST_RESTORE:
		pause = false;
		break;
	default:
		return NOTIFY_DONE;
	}
	spin_lock_bh(&m->lock);
	m->paused = pause;
	spin_unlock_bh(&m->lock);
	veil_masks_drain(m);
	if (!pause)
		veil_masks_kick(m);
	return NOTIFY_DONE;
}

/**
 * veil_masks_start() - key the masks, test them, and turn them on
 * @vc: the target, its AEAD keyed with @key; suspended or not yet live.
 * @key: the AEAD's key (rfc4106: the AES key, then the salt).
 * @size: bytes of @key.
 *
 * Leaves the masks off, with one log line, when the key does not fit the
 * transforms or the self-test finds a difference.
 */
void veil_masks_start(struct veil_c *vc, const u8 *key, unsigned int size)
{
	struct veil_masks *m = vc->masks;
	unsigned int aes_len = size;
	struct scatterlist dst;
	u8 *h;
	int ret;

	if (!m)
		return;
	if (m->rfc4106) {
		if (size < VEIL_RFC4106_SALT_SIZE) {
			ret = -EINVAL;
			goto off;
		}
		aes_len -= VEIL_RFC4106_SALT_SIZE;
		memcpy(m->salt, key + aes_len, VEIL_RFC4106_SALT_SIZE);
	}
	ret = crypto_skcipher_setkey(m->ctr, key, aes_len);
	if (ret)
		goto off;
	/* H = E_K(0^128): ctr(aes) of one zero block from a zero counter. */
	memset(m->scratch, 0, VEIL_GCM_BLOCK);
	h = m->scratch + VEIL_GCM_BLOCK;
	sg_init_one(&dst, h, VEIL_GCM_BLOCK);
	ret = veil_masks_ctr(m, &dst, VEIL_GCM_BLOCK) ?:
	      crypto_shash_setkey(m->ghash, h, VEIL_GCM_BLOCK);
	memzero_explicit(h, VEIL_GCM_BLOCK);
	if (ret)
		goto off;
	ret = veil_masks_selftest(m);
	if (ret)
		goto off;

	spin_lock_bh(&m->lock);
	m->active = true;
	spin_unlock_bh(&m->lock);
	queue_work(m->wq, &m->refill);
	return;
off:
	veil_masks_forget_key(m);
	DMWARN("%s: aead write masks off: %s (%d)", vc->dev->name,
	       ret == -EBADMSG ? "self-test differs from the AEAD" :
	       ret == -EOPNOTSUPP ? "SIMD unusable for the self-test" :
				    "cannot key or test them", ret);
}

/* Whether the masks can make the table's AEAD: gcm(aes), rfc4106 of it. */
static bool veil_masks_fit(struct veil_c *vc, bool *rfc4106)
{
	const char *name;

	/* FIPS mode: GCM only from the kernel's validated gcm(aes). */
	if (fips_enabled || !vc->aead || vc->iv_mode != VEIL_IV_RANDOM ||
	    vc->mac_key_size ||
	    !vc->aead_masks || !vc->auth_size ||
	    vc->auth_size > VEIL_GCM_BLOCK || vc->iv_stored != vc->iv_size)
		return false;
	name = crypto_tfm_alg_name(crypto_aead_tfm(vc->aead));
	*rfc4106 = !strcmp(name, "rfc4106(gcm(aes))");
	if (*rfc4106)
		return vc->iv_size == VEIL_RFC4106_IV_SIZE;
	return !strcmp(name, "gcm(aes)") && vc->iv_size == VEIL_GCM_IV_SIZE;
}

/**
 * veil_masks_init() - set up the write masks of a table that can use them
 * @ti: the target; its device name names the queue.
 * @vc: the target, after veil_integrity_init(), with its key loaded.
 *
 * Tables other than capi:gcm(aes)-random and capi:rfc4106(gcm(aes))-random
 * with an AEAD tag, or with aead_masks:0, get none. A transform the
 * kernel lacks leaves the masks off (one log line); only a failed
 * allocation of the pool fails the table.
 *
 * Return: 0 or -ENOMEM.
 */
int veil_masks_init(struct dm_target *ti, struct veil_c *vc)
{
	struct veil_masks *m;
	bool rfc4106 = false;
	unsigned int i;

	if (!veil_masks_fit(vc, &rfc4106))
		return 0;
	m = kzalloc(sizeof(*m), GFP_KERNEL);
	if (!m)
		goto nomem;
	vc->masks = m;
	m->vc = vc;
	m->rfc4106 = rfc4106;
	mutex_init(&m->mutex);
	spin_lock_init(&m->lock);
	INIT_WORK(&m->refill, veil_masks_refill);
	m->nr = vc->aead_masks;
	m->slots = kvcalloc(m->nr, sizeof(*m->slots), GFP_KERNEL);
	m->ready = kvcalloc(m->nr, sizeof(*m->ready), GFP_KERNEL);
	m->free = kvcalloc(m->nr, sizeof(*m->free), GFP_KERNEL);
	m->drained = kvcalloc(m->nr, sizeof(*m->drained), GFP_KERNEL);
	m->scratch = kzalloc(VEIL_MASKS_SCRATCH, GFP_KERNEL);
	if (!m->slots || !m->ready || !m->free || !m->drained || !m->scratch)
		goto nomem;
	for (i = 0; i < m->nr; i++) {
		m->slots[i].keystream = kzalloc(vc->sector_size, GFP_KERNEL);
		if (!m->slots[i].keystream)
			goto nomem;
		m->free[i] = i;
	}
	m->nr_free = m->nr;
	/* Background work, waited for by nobody: no WQ_MEM_RECLAIM. */
	m->wq = alloc_workqueue("kveild_mask/%s", WQ_UNBOUND | WQ_FREEZABLE, 1,
				dm_table_device_name(ti->table));
	if (!m->wq)
		goto nomem;

	/* As the table's own transforms: no driver that allocates per request. */
	m->ctr = crypto_alloc_skcipher("ctr(aes)", 0,
				       CRYPTO_ALG_ALLOCATES_MEMORY);
	if (IS_ERR(m->ctr)) {
		m->ctr = NULL;
		goto missing;
	}
	/* The architecture's GHASH is in the module that offers "ghash". */
	request_module("crypto-ghash");
	m->ghash = crypto_alloc_shash("__ghash", CRYPTO_ALG_INTERNAL,
				      CRYPTO_ALG_INTERNAL);
	if (IS_ERR(m->ghash)) {
		m->ghash = NULL;
		goto missing;
	}
	m->req = skcipher_request_alloc(m->ctr, GFP_KERNEL);
	if (!m->req)
		goto nomem;
	/* Before the first slot is made: a restore meanwhile drains it. */
	m->vmfork_nb.notifier_call = veil_masks_vmfork;
	register_random_vmfork_notifier(&m->vmfork_nb);
	m->pm_nb.notifier_call = veil_masks_pm;
	register_pm_notifier(&m->pm_nb);
	veil_masks_start(vc, vc->key.bytes, vc->key.size);
	return 0;
missing:
	DMWARN("%s: aead write masks off: no ctr(aes) or architecture GHASH",
	       vc->dev->name);
	veil_masks_exit(vc);
	return 0;
nomem:
	ti->error = "Cannot allocate aead write masks";
	return -ENOMEM;
}

/**
 * veil_masks_exit() - clear and free the write masks
 * @vc: the target; no I/O may be in flight.
 */
void veil_masks_exit(struct veil_c *vc)
{
	struct veil_masks *m = vc->masks;
	unsigned int i;

	if (!m)
		return;
	if (m->pm_nb.notifier_call) {
		unregister_pm_notifier(&m->pm_nb);
		unregister_random_vmfork_notifier(&m->vmfork_nb);
	}
	if (m->ctr && m->ghash && m->req)
		veil_masks_stop(vc);
	else
		cancel_work_sync(&m->refill);
	if (m->wq)
		destroy_workqueue(m->wq);
	for (i = 0; m->slots && i < m->nr; i++)
		kfree_sensitive(m->slots[i].keystream);
	kvfree_sensitive(m->slots, m->nr * sizeof(*m->slots));
	kvfree(m->ready);
	kvfree(m->free);
	kvfree(m->drained);
	kfree_sensitive(m->scratch);
	skcipher_request_free(m->req);
	if (m->ghash)
		crypto_free_shash(m->ghash);
	if (m->ctr)
		crypto_free_skcipher(m->ctr);
	kfree(m);
	vc->masks = NULL;
}
