// SPDX-License-Identifier: GPL-2.0
/*
 * dm-veil pages: the reserve of pages that carry a write's ciphertext, and
 * the pages of a CTR read's keystream.
 *
 * Rules:
 * - veil_map() only takes pages without waiting. A write that gets none
 *   waits on the page-wait queue (or in veil_map() with
 *   no_write_workqueue), never on the crypt or helper queues.
 * - One writer at a time waits (page_wait_lock), so two writers can never
 *   each hold part of the reserve while waiting for the rest. The waiter
 *   waits only for writes already submitted to the device, and for reads
 *   read again that the crypt queue decrypts, whose items never wait for
 *   pages.
 * - While a writer waits, nothing takes pages without waiting: later
 *   writes queue behind it, in order, and keystream goes without. A
 *   reservation over the cap never touches the count, so a waiter woken
 *   by a completion sees only pages really in flight.
 * - The mempool holds one full bio's worth (BIO_MAX_VECS pages), so the
 *   one waiter always gets its pages once earlier writes complete.
 * - Pages in flight per target (ciphertext and keystream) are capped at
 *   VEIL_PAGES_PERCENT of memory: beyond the cap writes wait. The cap is
 *   at least two maximal writes, so a write always fits once the pages in
 *   flight drain.
 * - Keystream takes pages only while the pages in flight stay within half
 *   of the cap, and reads go without keystream-ahead beyond that: a burst
 *   of CTR reads leaves writes at least half of the cap.
 * - Every page given back goes to mempool_free(), which refills the
 *   reserve first and wakes a writer waiting there. Only once the reserve
 *   is full does it call the mempool's free function, which keeps the page
 *   in a stash of up to VEIL_STASH_PAGES free pages for the next write or
 *   keystream while no writer waits for pages, and frees it otherwise
 *   (a writer waits when the cap is reached or the allocator had no page
 *   at once: memory may be short, and the system gets the pages back).
 *   The mempool's alloc function takes a stashed page before the
 *   allocator, so a write's pages come from the stash, the allocator, then
 *   the reserve. A page from the allocator is zeroed on every allocation
 *   (Debian's kernels set init_on_alloc), 1 MiB of memset per 1 MiB write,
 *   which a page whose old ciphertext or keystream is overwritten anyway
 *   does not need. Only this target's ciphertext and keystream sit in its
 *   stash (a read's pages read again are zeroed before they go back),
 *   a bio carries only the bytes the cipher wrote, and the stash is
 *   freed on suspend. Keystream takes from the stash or the allocator,
 *   never the reserve.
 * - The mempool's functions take the stash's lock with interrupts off:
 *   mempool_free() runs in write and read completions, in any context.
 */
#include <linux/bio.h>
#include <linux/highmem.h>
#include <linux/mm.h>
#include <linux/slab.h>
#include <linux/wait.h>

#include "veil-job.h"
#include "veil-pages.h"

/* Cap on one target's pages in flight, in percent of memory, as dm-crypt. */
#define VEIL_PAGES_PERCENT	2
/* Free pages kept for reuse, per target: one maximal write's worth. */
#define VEIL_STASH_PAGES	BIO_MAX_VECS

/* A page from the stash, or NULL. */
static struct page *veil_stash_pop(struct veil_c *vc)
{
	struct page *page;
	unsigned long flags;

	spin_lock_irqsave(&vc->stash_lock, flags);
	page = list_first_entry_or_null(&vc->stash, struct page, lru);
	if (page) {
		list_del(&page->lru);
		vc->stash_pages--;
	}
	spin_unlock_irqrestore(&vc->stash_lock, flags);
	return page;
}

/* Keep @page in the stash if it has room. */
static bool veil_stash_push(struct veil_c *vc, struct page *page)
{
	unsigned long flags;
	bool kept = false;

	spin_lock_irqsave(&vc->stash_lock, flags);
	if (vc->stash_pages < VEIL_STASH_PAGES) {
		list_add(&page->lru, &vc->stash);
		vc->stash_pages++;
		kept = true;
	}
	spin_unlock_irqrestore(&vc->stash_lock, flags);
	return kept;
}

/*
 * A free page from the stash or the allocator (never the write reserve),
 * or NULL. Any context; waits only as @gfp lets the allocator wait.
 */
static struct page *veil_page_get(struct veil_c *vc, gfp_t gfp)
{
	return veil_stash_pop(vc) ?: alloc_page(gfp);
}

/* The mempool's alloc function: a stashed page first, then the allocator. */
static void *veil_pool_page_alloc(gfp_t gfp, void *data)
{
	return veil_page_get(data, gfp);
}

/*
 * The mempool's free function, called by mempool_free() once the reserve
 * is full: into the stash while it has room and no writer waits for pages,
 * otherwise back to the allocator. Any context.
 */
static void veil_pool_page_free(void *element, void *data)
{
	struct veil_c *vc = data;
	struct page *page = element;

	if (!atomic_read(&vc->page_waiters) && veil_stash_push(vc, page))
		return;
	__free_page(page);
}

/**
 * veil_pages_init() - set up the page reserve and the ciphertext bio set
 * @ti: the target; ti->error is set on failure.
 * @vc: the target instance.
 *
 * Return: 0 or a negative errno; veil_pages_exit() undoes a partial setup.
 */
int veil_pages_init(struct dm_target *ti, struct veil_c *vc)
{
	int ret;

	mutex_init(&vc->page_wait_lock);
	init_waitqueue_head(&vc->pages_freed);
	spin_lock_init(&vc->stash_lock);
	INIT_LIST_HEAD(&vc->stash);
	vc->stash_pages = 0;
	atomic_set(&vc->pages_in_flight, 0);
	atomic_set(&vc->page_waiters, 0);
	vc->pages_max = max_t(unsigned long,
			      totalram_pages() * VEIL_PAGES_PERCENT / 100,
			      2 * BIO_MAX_VECS);

	ret = mempool_init(&vc->page_pool, BIO_MAX_VECS, veil_pool_page_alloc,
			   veil_pool_page_free, vc);
	if (ret) {
		ti->error = "Cannot allocate page mempool";
		return ret;
	}
	ret = bioset_init(&vc->bs, BIO_POOL_SIZE, 0, BIOSET_NEED_BVECS);
	if (ret) {
		ti->error = "Cannot allocate bioset";
		return ret;
	}
	return 0;
}

/**
 * veil_pages_exit() - free the reserve
 * @vc: the target instance; no I/O may be in flight.
 */
void veil_pages_exit(struct veil_c *vc)
{
	bioset_exit(&vc->bs);
	/* Gives the reserve to veil_pool_page_free(): the stash goes after. */
	mempool_exit(&vc->page_pool);
	/* A constructor that failed early never set the stash up. */
	if (vc->stash.next)
		veil_pages_drain(vc);
	mutex_destroy(&vc->page_wait_lock);
}

/* Count @nr pages if the pages in flight stay within @limit. */
static bool veil_pages_count(struct veil_c *vc, unsigned int nr,
			     unsigned long limit)
{
	int cur = atomic_read(&vc->pages_in_flight);

	/* Never counted unless taken: a waiter's check sees only real pages. */
	do {
		if (cur + nr > limit)
			return false;
	} while (!atomic_try_cmpxchg(&vc->pages_in_flight, &cur, cur + nr));
	return true;
}

/* Whether @nr more pages fit under the cap now; counts nothing. */
static bool veil_pages_fit(struct veil_c *vc, unsigned int nr)
{
	return atomic_read(&vc->pages_in_flight) + nr <= vc->pages_max;
}

/*
 * Count @nr pages about to be taken against the cap, without waiting: false,
 * counting nothing, if over the cap. Fails while a writer waits for pages,
 * so that later writes and keystream cannot keep taking what the waiter
 * needs.
 */
static bool veil_pages_reserve(struct veil_c *vc, unsigned int nr)
{
	if (atomic_read(&vc->page_waiters))
		return false;
	return veil_pages_count(vc, nr, vc->pages_max);
}

/*
 * As veil_pages_reserve(), within half of the cap, for keystream: it is
 * optional and must not make writes wait.
 */
static bool veil_pages_reserve_keystream(struct veil_c *vc, unsigned int nr)
{
	if (atomic_read(&vc->page_waiters))
		return false;
	return veil_pages_count(vc, nr, vc->pages_max / 2);
}

/* Uncount @nr pages given back; wake a waiting writer. */
static void veil_pages_unreserve(struct veil_c *vc, unsigned int nr)
{
	atomic_sub(nr, &vc->pages_in_flight);
	if (wq_has_sleeper(&vc->pages_freed))
		wake_up(&vc->pages_freed);
}

/**
 * veil_pages_drain() - free the stash
 * @vc: the target; no I/O in flight (suspended, or being destroyed).
 */
void veil_pages_drain(struct veil_c *vc)
{
	struct page *page, *next;
	unsigned long flags;
	LIST_HEAD(pages);

	spin_lock_irqsave(&vc->stash_lock, flags);
	list_splice_init(&vc->stash, &pages);
	vc->stash_pages = 0;
	spin_unlock_irqrestore(&vc->stash_lock, flags);
	list_for_each_entry_safe(page, next, &pages, lru)
		__free_page(page);
}

/*
 * Give back pages linked by page->lru (@pages is empty on return), each to
 * mempool_free(), which refills the reserve and wakes a writer waiting
 * there, or hands it to veil_pool_page_free() for the stash. Any context.
 */
static void veil_pages_put(struct veil_c *vc, struct list_head *pages)
{
	struct page *page, *next;

	list_for_each_entry_safe(page, next, pages, lru) {
		list_del(&page->lru);
		mempool_free(page, &vc->page_pool);
	}
}

/**
 * veil_pages_free() - give back a ciphertext bio and its pages
 * @vc: the target.
 * @bio: from veil_pages_alloc().
 */
void veil_pages_free(struct veil_c *vc, struct bio *bio)
{
	unsigned int nr = bio->bi_vcnt;
	struct bvec_iter_all iter;
	struct bio_vec *bv;

	bio_for_each_segment_all(bv, bio, iter)
		mempool_free(bv->bv_page, &vc->page_pool);
	bio_put(bio);
	veil_pages_unreserve(vc, nr);
}

/* Fill a bio with @nr reserved pages; on failure the reservation is undone. */
static struct bio *veil_pages_fill(struct veil_io *io, unsigned int nr,
				   gfp_t gfp)
{
	struct veil_c *vc = io->vc;
	unsigned int i, len, size = io->iter.bi_size;
	struct page *page;
	struct bio *bio;

	/*
	 * Not polled: device-mapper polls only the clone it gave the target,
	 * and nobody would poll this bio for its completion.
	 */
	bio = bio_alloc_bioset(vc->dev->bdev, nr,
			       io->base->bi_opf & ~REQ_POLLED, gfp, &vc->bs);
	if (!bio) {
		veil_pages_unreserve(vc, nr);
		return NULL;
	}
	for (i = 0; i < nr; i++, size -= len) {
		/* Stashed pages first (veil_pool_page_alloc()): no zeroing. */
		page = mempool_alloc(&vc->page_pool, gfp);
		if (!page) {
			/* Give back what was taken; count the rest as given. */
			veil_pages_free(vc, bio);
			veil_pages_unreserve(vc, nr - i);
			return NULL;
		}
		len = min_t(unsigned int, size, PAGE_SIZE);
		__bio_add_page(bio, page, len, 0);
	}
	return bio;
}

/**
 * veil_pages_alloc() - a bio with pages for a write's ciphertext, or for
 *	a read over dm-integrity read again
 * @io: the write or read.
 * @may_wait: wait for pages (process context, GFP_NOIO); never fails then.
 *
 * Return: the bio, or NULL when @may_wait is false and pages are short.
 */
struct bio *veil_pages_alloc(struct veil_io *io, bool may_wait)
{
	struct veil_c *vc = io->vc;
	unsigned int nr = DIV_ROUND_UP(io->iter.bi_size, PAGE_SIZE);
	struct bio *bio;

	if (!may_wait) {
		if (!veil_pages_reserve(vc, nr))
			return NULL;
		return veil_pages_fill(io, nr, GFP_NOWAIT | __GFP_NOWARN);
	}

	this_cpu_inc(vc->stats->page_waits);
	atomic_inc(&vc->page_waiters);
	mutex_lock(&vc->page_wait_lock);
	/*
	 * The wait's condition only looks; the count is taken outside it. A
	 * reservation that began before page_waiters was raised may still
	 * take what the wait saw free: then wait again.
	 */
	while (!veil_pages_count(vc, nr, vc->pages_max))
		wait_event(vc->pages_freed, veil_pages_fit(vc, nr));
	bio = veil_pages_fill(io, nr, GFP_NOIO);
	mutex_unlock(&vc->page_wait_lock);
	atomic_dec(&vc->page_waiters);
	return bio;
}

/**
 * veil_pages_put_keystream() - clear and give back a CTR read's keystream
 * @io: the read, finished or never started; no-op without keystream.
 *
 * Keystream decrypts every version of the sectors it covers, as the key
 * does: each page is cleared before it is given back, so none outlives
 * its read (and "key wipe" leaves none in memory).
 *
 * Context: any; in hard IRQ only for a read that holds no keystream
 * (clearing up to keystream_ahead_max bytes is no work for hard IRQ).
 */
void veil_pages_put_keystream(struct veil_io *io)
{
	unsigned int i, nr = DIV_ROUND_UP(io->iter.bi_size, PAGE_SIZE);
	LIST_HEAD(pages);

	if (!io->ks_pages)
		return;
	for (i = 0; i < nr; i++) {
		if (!io->ks_pages[i])
			continue;
		clear_highpage(io->ks_pages[i]);
		list_add_tail(&io->ks_pages[i]->lru, &pages);
	}
	veil_pages_put(io->vc, &pages);
	kfree(io->ks_pages);
	io->ks_pages = NULL;
	veil_pages_unreserve(io->vc, nr);
}

/**
 * veil_pages_get_keystream() - pages for a CTR read's keystream
 * @io: a read, not yet submitted; sets @io->ks_pages, one page per 4 KiB.
 *
 * From the stash or the allocator without waiting, never the write reserve
 * nor the allocator's emergency reserves, within half of the cap.
 *
 * Return: true if every page was taken; false, holding none, otherwise.
 */
bool veil_pages_get_keystream(struct veil_io *io)
{
	unsigned int i, nr = DIV_ROUND_UP(io->iter.bi_size, PAGE_SIZE);
	/* Optional pages: never from the emergency reserves. */
	const gfp_t gfp = GFP_NOWAIT | __GFP_NOWARN | __GFP_NOMEMALLOC;

	if (!veil_pages_reserve_keystream(io->vc, nr))
		return false;
	io->ks_pages = kcalloc(nr, sizeof(*io->ks_pages), gfp);
	if (!io->ks_pages) {
		veil_pages_unreserve(io->vc, nr);
		return false;
	}
	for (i = 0; i < nr; i++) {
		io->ks_pages[i] = veil_page_get(io->vc, gfp);
		if (!io->ks_pages[i]) {
			veil_pages_put_keystream(io);
			return false;
		}
	}
	return true;
}
