// SPDX-License-Identifier: GPL-2.0
/*
 * dm-veil engine: who runs the cipher for a bio, where and when.
 *
 * A bio's data is a job cut into chunks: at most fanout_chunk bytes, and
 * at least VEIL_CHUNKS_PER_CPU per online CPU where 4 KiB chunks allow it
 * (one chunk if fan-out is off), so that a helper that starts late simply
 * takes fewer. Participants take chunks in turn from an atomic counter
 * until none are left; the last participant to leave finishes the job. One
 * participant needs no allocation (it lives in the per-bio data); helpers
 * come from per-CPU pools without waiting and are queued one each on the
 * other online CPUs, so that a large bio keeps every online CPU busy. A CPU
 * that goes offline before its helper runs has the work run on another CPU
 * by the workqueue code. If no helper can be had, the one participant does
 * the whole job: progress never waits for a helper.
 *
 * Helpers are added only while fewer jobs than online CPUs are running:
 * beyond that, the queue depth already keeps the CPUs busy, and a
 * multi-chunk job runs whole on the unbound queue, wherever a CPU is free.
 *
 * Writes: a job runs in veil_map() on the submitting CPU, no queueing hop,
 * once the ciphertext pages are had without waiting (unless it is large
 * and the CPUs are busy, see above); otherwise it runs from the per-CPU
 * workqueue, which may wait on the page pool. Whoever finishes the last
 * chunk submits the ciphertext: no writer thread.
 *
 * Reads, XTS and CBC: the job starts when the device completes the bio, on
 * the completing CPU's queue and the helpers' CPUs (or in the completion
 * itself for one chunk with no_read_workqueue and a synchronous cipher).
 *
 * Reads, CTR, up to keystream_ahead_max: the keystream depends only on key
 * and sector, so veil_map() starts a keystream job on the other CPUs and
 * lets dm submit the read; the read's completion lends its CPU to the job.
 * A chunk taken after the read completed is decrypted in place instead:
 * the data is there, and that saves its XOR. Of the read's completion and
 * the keystream job, the second to finish XORs what keystream is left into
 * the data and completes the bio: a hit when the keystream was ready
 * first, a miss otherwise.
 */
#include <linux/bio.h>
#include <linux/blkdev.h>
#include <linux/cpumask.h>
#include <linux/percpu.h>
#include <linux/slab.h>

#include "dm-veil.h"

/* Fan-out helper requests kept in reserve per CPU. */
#define VEIL_REQS_PER_CPU	4

static void veil_free_pages(struct veil_c *vc, struct bio *bio)
{
	struct bvec_iter_all iter;
	struct bio_vec *bv;

	bio_for_each_segment_all(bv, bio, iter)
		mempool_free(bv->bv_page, &vc->page_pool);
	bio_put(bio);
}

/*
 * A bio holding enough pool pages for io->base's data. Without
 * __GFP_DIRECT_RECLAIM in @gfp it never waits and may return NULL. With it,
 * it never fails; it runs under alloc_lock so that two waiters cannot each
 * hold part of the pool while waiting for the rest.
 */
static struct bio *veil_alloc_pages(struct veil_io *io, gfp_t gfp)
{
	struct veil_c *vc = io->vc;
	unsigned int size = io->iter.bi_size;
	unsigned int nr = DIV_ROUND_UP(size, PAGE_SIZE);
	bool wait = gfp & __GFP_DIRECT_RECLAIM;
	unsigned int i, len;
	struct page *page;
	struct bio *bio;

	if (wait)
		mutex_lock(&vc->alloc_lock);
	else
		gfp |= __GFP_NOWARN;

	bio = bio_alloc_bioset(vc->dev->bdev, nr, io->base->bi_opf, gfp, &vc->bs);
	for (i = 0; bio && i < nr; i++, size -= len) {
		page = mempool_alloc(&vc->page_pool, gfp);
		if (!page) {
			veil_free_pages(vc, bio);
			bio = NULL;
			break;
		}
		len = min_t(unsigned int, size, PAGE_SIZE);
		__bio_add_page(bio, page, len, 0);
	}

	if (wait)
		mutex_unlock(&vc->alloc_lock);
	return bio;
}

static bool veil_may_fanout(struct veil_c *vc, enum veil_job_kind kind)
{
	if (test_bit(VEIL_NO_FANOUT, &vc->flags) ||
	    test_bit(VEIL_SAME_CPU, &vc->flags))
		return false;
	if (kind == VEIL_JOB_WRITE && test_bit(VEIL_NO_WRITE_WQ, &vc->flags))
		return false;
	return num_online_cpus() > 1;
}

static void veil_job_plan(struct veil_io *io, enum veil_job_kind kind)
{
	unsigned int size = io->iter.bi_size;
	unsigned int share;

	io->kind = kind;
	io->error = false;
	io->chunk_bytes = size;
	if (veil_may_fanout(io->vc, kind)) {
		share = DIV_ROUND_UP(size, num_online_cpus() *
				     VEIL_CHUNKS_PER_CPU);
		share = round_up(share, VEIL_FANOUT_CHUNK_MIN);
		io->chunk_bytes = min3(io->vc->fanout_chunk, share, size);
	}
	io->nr_chunks = DIV_ROUND_UP(size, io->chunk_bytes);
	if (kind == VEIL_JOB_KEYSTREAM) {
		io->read_done = false;
		bitmap_zero(io->ks_chunks, io->nr_chunks);
	}
	atomic_set(&io->next_chunk, 0);
	atomic_set(&io->participants, 1);
	io->shared = false;
}

static void veil_read_done(struct veil_io *io)
{
	struct bio *bio = io->base;

	if (io->error && !bio->bi_status)
		bio->bi_status = BLK_STS_IOERR;
	this_cpu_inc(io->vc->stats->reqs[0]);
	bio->bi_end_io = io->orig_end_io;
	bio->bi_private = io->orig_private;
	bio_endio(bio);
}

static void veil_read_ahead_done(struct veil_io *io)
{
	if (!io->base->bi_status && !io->error)
		veil_crypt_xor_keystream(io);
	veil_free_pages(io->vc, io->out);
	veil_read_done(io);
}

static void veil_write_end_io(struct bio *out)
{
	struct veil_io *io = out->bi_private;
	struct bio *base = io->base;

	if (out->bi_status)
		base->bi_status = out->bi_status;
	veil_free_pages(io->vc, out);
	this_cpu_inc(io->vc->stats->reqs[1]);
	bio_endio(base);
}

static void veil_job_done(struct veil_io *io)
{
	atomic_dec(&io->vc->active_jobs);
	if (io->shared)
		this_cpu_inc(io->vc->stats->fanout);
	switch (io->kind) {
	case VEIL_JOB_WRITE:
		if (io->error) {
			veil_free_pages(io->vc, io->out);
			io->base->bi_status = BLK_STS_IOERR;
			bio_endio(io->base);
			return;
		}
		submit_bio_noacct(io->out);
		return;
	case VEIL_JOB_READ:
		veil_read_done(io);
		return;
	case VEIL_JOB_KEYSTREAM:
		if (atomic_dec_and_test(&io->ahead_pending)) {
			this_cpu_inc(io->vc->stats->ahead_miss);
			veil_read_ahead_done(io);
		}
		return;
	}
}

/* A keystream job's read has completed: its data may be used. */
static bool veil_read_is_done(struct veil_io *io)
{
	/* Pairs with the release in veil_read_end_io(). */
	return smp_load_acquire(&io->read_done);
}

/*
 * Take chunks until none are left; the last participant out finishes. In a
 * keystream job, a keystream chunk is marked for the XOR. A participant
 * that sees the read complete XORs the chunks marked so far and decrypts
 * its further chunks in place; marks left behind are XORed when the job
 * and the read are both done.
 */
static void veil_participate(struct veil_req *r, bool may_sleep)
{
	struct veil_io *io = r->io;
	enum veil_job_kind kind = io->kind;
	unsigned int idx;

	while ((idx = atomic_inc_return(&io->next_chunk) - 1) < io->nr_chunks) {
		if (kind == VEIL_JOB_KEYSTREAM && veil_read_is_done(io)) {
			kind = VEIL_JOB_READ;
			veil_crypt_xor_keystream(io);
		}
		if (veil_crypt_chunk(io, r, idx, kind, may_sleep))
			WRITE_ONCE(io->error, true);
		else if (kind == VEIL_JOB_KEYSTREAM)
			set_bit(idx, io->ks_chunks);
	}

	if (r->pool)
		mempool_free(r, r->pool);
	if (atomic_dec_and_test(&io->participants))
		veil_job_done(io);
}

static void veil_participant_work(struct work_struct *work)
{
	veil_participate(container_of(work, struct veil_req, work), true);
}

/* As many jobs run as there are CPUs: no more helpers. */
static bool veil_cpus_busy(struct veil_c *vc)
{
	return atomic_read(&vc->active_jobs) > num_online_cpus();
}

/* The online CPU after @cpu, wrapping around. */
static int veil_next_cpu(int cpu)
{
	cpu = cpumask_next(cpu, cpu_online_mask);
	return cpu < nr_cpu_ids ? cpu : cpumask_first(cpu_online_mask);
}

/* A helper for @io from this CPU's pool, or NULL without waiting. */
static struct veil_req *veil_helper(struct veil_io *io, int cpu)
{
	mempool_t *pool = per_cpu_ptr(io->vc->req_pools, cpu);
	struct veil_req *r;

	r = mempool_alloc(pool, GFP_NOWAIT | __GFP_NOWARN);
	if (r) {
		r->pool = pool;
		r->io = io;
		INIT_WORK(&r->work, veil_participant_work);
	}
	return r;
}

/*
 * Start the participants of a planned job. While the CPUs are not all busy
 * with other jobs, one helper goes to each other online CPU (as many as
 * there are chunks), and req0 runs here (@run_here: process context that
 * may sleep) or on this CPU's queue. Without helpers, a job of several
 * chunks goes to the unbound queue.
 *
 * A keystream job starts while the submitter still has the read to submit:
 * it leaves this CPU alone (req0 goes to the next CPU, or to the unbound
 * queue when it may not be spread), and the read's completion lends its
 * CPU to the job later (veil_job_join()). With same_cpu_crypt, everything
 * stays on this CPU.
 */
static void veil_job_start(struct veil_io *io, bool run_here)
{
	struct veil_c *vc = io->vc;
	unsigned int i, total = 1, cpus = num_online_cpus();
	int this_cpu = raw_smp_processor_id(), cpu = this_cpu;
	bool ahead = io->kind == VEIL_JOB_KEYSTREAM;
	bool same_cpu = test_bit(VEIL_SAME_CPU, &vc->flags);
	bool spread;
	struct veil_req *r;

	atomic_inc(&vc->active_jobs);
	spread = !veil_cpus_busy(vc) && veil_may_fanout(vc, io->kind);
	if (spread)
		total = min(io->nr_chunks, ahead ? cpus - 1 : cpus);
	for (i = 1; i < total; i++) {
		r = veil_helper(io, this_cpu);
		if (!r)
			break;
		atomic_inc(&io->participants);
		io->shared = true;
		cpu = veil_next_cpu(cpu);
		queue_work_on(cpu, vc->wq, &r->work);
	}

	if (run_here && (i > 1 || io->nr_chunks == 1)) {
		veil_participate(&io->req0, true);
		return;
	}
	INIT_WORK(&io->req0.work, veil_participant_work);
	if (ahead && spread)
		queue_work_on(veil_next_cpu(cpu), vc->wq, &io->req0.work);
	else if (i == 1 && (io->nr_chunks > 1 || ahead) && !same_cpu)
		queue_work(vc->fanout_wq, &io->req0.work);
	else
		queue_work_on(this_cpu, vc->wq, &io->req0.work);
}

/*
 * The read of a keystream job completed while chunks are left: add a
 * helper on this CPU, unless the job has just ended, the table keeps work
 * on one CPU, this is the only CPU (the job already runs on it), or the
 * CPUs are busy.
 * Called before the read drops its hold on @io (ahead_pending).
 */
static void veil_job_join(struct veil_io *io)
{
	struct veil_c *vc = io->vc;
	struct veil_req *r;

	if (atomic_read(&io->next_chunk) >= io->nr_chunks ||
	    !veil_may_fanout(vc, VEIL_JOB_KEYSTREAM) || veil_cpus_busy(vc))
		return;
	r = veil_helper(io, raw_smp_processor_id());
	if (!r)
		return;
	if (!atomic_inc_not_zero(&io->participants)) {
		mempool_free(r, r->pool);
		return;
	}
	io->shared = true;
	queue_work(vc->wq, &r->work);
}

static void veil_read_end_io(struct bio *bio)
{
	struct veil_io *io = bio->bi_private;
	struct veil_c *vc = io->vc;

	if (io->kind == VEIL_JOB_KEYSTREAM) {
		/* Keystream chunks taken from now on decrypt the data. */
		smp_store_release(&io->read_done, !bio->bi_status);
		if (!bio->bi_status)
			veil_job_join(io);
		if (atomic_dec_and_test(&io->ahead_pending)) {
			this_cpu_inc(vc->stats->ahead_hit);
			veil_read_ahead_done(io);
		}
		return;
	}
	if (bio->bi_status) {
		veil_read_done(io);
		return;
	}

	veil_job_plan(io, VEIL_JOB_READ);
	if (io->nr_chunks == 1 && test_bit(VEIL_NO_READ_WQ, &vc->flags) &&
	    test_bit(VEIL_SYNC_TFM, &vc->flags) && !in_hardirq() &&
	    !irqs_disabled()) {
		if (veil_crypt_chunk(io, &io->req0, 0, VEIL_JOB_READ, false))
			io->error = true;
		veil_read_done(io);
		return;
	}
	veil_job_start(io, false);
}

static int veil_map_read(struct veil_io *io)
{
	struct veil_c *vc = io->vc;
	struct bio *bio = io->base;

	io->kind = VEIL_JOB_READ;
	io->orig_end_io = bio->bi_end_io;
	io->orig_private = bio->bi_private;
	bio->bi_end_io = veil_read_end_io;
	bio->bi_private = io;
	bio_set_dev(bio, vc->dev->bdev);
	bio->bi_iter.bi_sector = vc->start + io->sector;

	if (test_bit(VEIL_CTR, &vc->flags) &&
	    !test_bit(VEIL_NO_KS_AHEAD, &vc->flags) &&
	    io->iter.bi_size <= vc->ks_ahead_max) {
		io->out = veil_alloc_pages(io, GFP_NOWAIT);
		if (io->out) {
			veil_job_plan(io, VEIL_JOB_KEYSTREAM);
			atomic_set(&io->ahead_pending, 2);
			veil_job_start(io, false);
		} else {
			this_cpu_inc(vc->stats->ahead_skip);
		}
	}
	return DM_MAPIO_REMAPPED;
}

static void veil_write_start(struct veil_io *io, bool may_sleep_here)
{
	io->out->bi_private = io;
	io->out->bi_end_io = veil_write_end_io;
	io->out->bi_iter.bi_sector = io->vc->start + io->sector;
	io->out->bi_ioprio = io->base->bi_ioprio;
	veil_job_plan(io, VEIL_JOB_WRITE);
	veil_job_start(io, may_sleep_here);
}

static void veil_write_work(struct work_struct *work)
{
	struct veil_io *io = container_of(work, struct veil_io, req0.work);

	io->out = veil_alloc_pages(io, GFP_NOIO);
	veil_write_start(io, true);
}

static int veil_map_write(struct veil_io *io)
{
	struct veil_c *vc = io->vc;

	io->out = veil_alloc_pages(io, GFP_NOWAIT);
	if (!io->out) {
		if (!test_bit(VEIL_NO_WRITE_WQ, &vc->flags)) {
			INIT_WORK(&io->req0.work, veil_write_work);
			queue_work(vc->wq, &io->req0.work);
			return DM_MAPIO_SUBMITTED;
		}
		io->out = veil_alloc_pages(io, GFP_NOIO);
	}
	veil_write_start(io, true);
	return DM_MAPIO_SUBMITTED;
}

/**
 * veil_engine_map() - start a read or write through the cipher
 * @vc: the target.
 * @bio: a data bio, aligned to and a multiple of the encryption sector,
 *	at most BIO_MAX_VECS pages.
 * @sector: target-relative first sector of @bio.
 *
 * Return: DM_MAPIO_REMAPPED for reads (dm submits the bio; decryption
 * runs on completion), DM_MAPIO_SUBMITTED for writes.
 */
int veil_engine_map(struct veil_c *vc, struct bio *bio, sector_t sector)
{
	struct veil_io *io = dm_per_bio_data(bio, vc->per_bio_data_size);

	io->vc = vc;
	io->base = bio;
	io->out = NULL;
	io->iter = bio->bi_iter;
	io->sector = sector;
	io->req0.io = io;
	io->req0.pool = NULL;

	if (bio_data_dir(bio) == READ)
		return veil_map_read(io);
	return veil_map_write(io);
}

/**
 * veil_engine_init() - set up the pools and workqueues of the engine
 * @ti: the target; ti->error is set on failure, per-bio data size is set.
 * @vc: the target instance; its transform must already be allocated.
 *
 * Return: 0 or a negative errno; veil_engine_exit() undoes a partial setup.
 */
int veil_engine_init(struct dm_target *ti, struct veil_c *vc)
{
	const char *name = dm_table_device_name(ti->table);
	unsigned int reqsize = crypto_skcipher_reqsize(vc->tfm);
	int cpu, ret;

	vc->per_bio_data_size = ALIGN(sizeof(struct veil_io) + reqsize,
				      ARCH_KMALLOC_MINALIGN);
	ti->per_io_data_size = vc->per_bio_data_size;
	vc->req_size = sizeof(struct veil_req) + reqsize;

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

	vc->req_pools = alloc_percpu(mempool_t);
	if (!vc->req_pools) {
		ti->error = "Cannot allocate request pools";
		return -ENOMEM;
	}
	for_each_possible_cpu(cpu) {
		ret = mempool_init_kmalloc_pool(per_cpu_ptr(vc->req_pools, cpu),
						VEIL_REQS_PER_CPU, vc->req_size);
		if (ret) {
			ti->error = "Cannot allocate request pools";
			return ret;
		}
	}

	/*
	 * Per-CPU queue: work that should stay where it was queued (a read's
	 * first participant on the CPU that completed it, writes that had to
	 * wait for pages). Unbound queue: fan-out helpers, which the scheduler
	 * puts on whichever CPU is idle. Both are on the writeback path, hence
	 * WQ_MEM_RECLAIM; the per-CPU one is CPU_INTENSIVE so that long cipher
	 * runs do not hold up other per-CPU work.
	 */
	vc->wq = alloc_workqueue("kveild/%s", WQ_MEM_RECLAIM | WQ_CPU_INTENSIVE,
				 0, name);
	vc->fanout_wq = alloc_workqueue("kveild_fan/%s",
					WQ_MEM_RECLAIM | WQ_UNBOUND, 0, name);
	if (!vc->wq || !vc->fanout_wq) {
		ti->error = "Cannot allocate workqueue";
		return -ENOMEM;
	}
	return 0;
}

/**
 * veil_engine_exit() - tear down what veil_engine_init() set up
 * @vc: the target instance; no I/O may be in flight.
 */
void veil_engine_exit(struct veil_c *vc)
{
	int cpu;

	if (vc->fanout_wq)
		destroy_workqueue(vc->fanout_wq);
	if (vc->wq)
		destroy_workqueue(vc->wq);
	if (vc->req_pools) {
		for_each_possible_cpu(cpu)
			mempool_exit(per_cpu_ptr(vc->req_pools, cpu));
		free_percpu(vc->req_pools);
	}
	bioset_exit(&vc->bs);
	mempool_exit(&vc->page_pool);
}
