// SPDX-License-Identifier: GPL-2.0
/*
 * log-replay: read the log that the kernel's dm-log-writes target keeps and
 * apply its entries, in order, to a copy of the device it logged, so that a
 * test can look at the device as it was at any point of the log: after
 * each flush, each FUA write, each mark.
 *
 *   log-replay list LOG
 *	one line per entry: "INDEX OFFSET FLAGS SECTOR NR_SECTORS MARK"
 *	(OFFSET: byte offset of the entry in LOG; FLAGS: FLUSH,FUA,DISCARD,
 *	MARK,META joined by commas, or "-"; SECTOR and NR_SECTORS in units of
 *	the logged device's sector size; MARK: the mark's text, or "-")
 *   log-replay replay [-o OFFSET] [-c COPY] [-f DEVICE] LOG TARGET FIRST LAST
 *	apply entries FIRST..LAST (inclusive) to TARGET (a file or a device
 *	the size of the logged one);
 *	-o OFFSET: where entry FIRST starts (from "list"), so that a long log
 *	   need not be walked from the start for every step;
 *	-c COPY: then copy all of TARGET over COPY, for a check that may
 *	   write (a mount replays the journal) while the replay goes on;
 *	-f DEVICE: then drop DEVICE's cached pages (BLKFLSBUF): the bytes
 *	   below it changed without going through it.
 * One process does all of it: in the guest every process started costs
 * a good part of a second.
 *
 * The log, as dm-log-writes writes it (all numbers little endian):
 *   sector 0: the super block, {u64 magic, u64 version, u64 nr_entries,
 *	u32 sectorsize}; nr_entries is updated after FUA writes, marks and
 *	when the target is removed.
 *   from sector 1 on, nr_entries entries, each one sector (of sectorsize
 *	bytes) of header {u64 sector, u64 nr_sectors, u64 flags, u64
 *	data_len}, followed by the text of a mark (data_len bytes, in the
 *	same sector) or by nr_sectors sectors of written data. A discard has
 *	nr_sectors set but no data in the log.
 * The target logs writes in the order they became durable: the writes
 * that had completed when a flush was issued come before that flush's
 * entry, a FUA write comes as soon as it completes. A prefix of the log
 * that ends with a flush, a FUA write or a mark is therefore what a
 * device that lost power at that moment could hold.
 *
 * Exit status: 0 on success, 1 on an I/O or format error, 2 on bad
 * arguments.
 */
#define _GNU_SOURCE
#include <endian.h>
#include <errno.h>
#include <fcntl.h>
#include <getopt.h>
#include <inttypes.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/stat.h>
#include <unistd.h>
#include <linux/fs.h>

/* Values of the on-disk format, as the kernel defines them. */
#define LW_MAGIC	0x6a736677736872ULL
#define LW_VERSION	1
#define LW_FLUSH	(1 << 0)
#define LW_FUA		(1 << 1)
#define LW_DISCARD	(1 << 2)
#define LW_MARK		(1 << 3)
#define LW_META		(1 << 4)

#define ENTRY_BYTES	32	/* the header's four u64 */
#define CHUNK		(1 << 20)

struct log {
	int fd;
	uint64_t nr_entries;
	uint32_t sectorsize;
};

struct entry {
	uint64_t sector, nr_sectors, flags, data_len;
	char mark[4096];
};

static void die(const char *what)
{
	fprintf(stderr, "log-replay: %s: %s\n", what, strerror(errno));
	exit(1);
}

static void bad(const char *what)
{
	fprintf(stderr, "log-replay: %s\n", what);
	exit(1);
}

/* pread all LEN bytes or fail: a short read means a truncated log */
static void read_at(int fd, void *buf, size_t len, off_t off)
{
	size_t done = 0;
	ssize_t n;

	while (done < len) {
		n = pread(fd, (char *)buf + done, len - done, off + done);
		if (n < 0)
			die("read");
		if (n == 0)
			bad("log ends inside an entry");
		done += n;
	}
}

static void write_at(int fd, const void *buf, size_t len, off_t off)
{
	size_t done = 0;
	ssize_t n;

	while (done < len) {
		n = pwrite(fd, (const char *)buf + done, len - done, off + done);
		if (n < 0)
			die("write");
		done += n;
	}
}

static uint64_t le64_at(const unsigned char *p)
{
	uint64_t v;

	memcpy(&v, p, sizeof(v));
	return le64toh(v);
}

static void open_log(struct log *lg, const char *path)
{
	unsigned char sb[512];
	uint32_t ss;

	lg->fd = open(path, O_RDONLY);
	if (lg->fd < 0)
		die(path);
	read_at(lg->fd, sb, sizeof(sb), 0);
	if (le64_at(sb) != LW_MAGIC)
		bad("no dm-log-writes super block (bad magic)");
	if (le64_at(sb + 8) != LW_VERSION)
		bad("unknown log version");
	lg->nr_entries = le64_at(sb + 16);
	memcpy(&ss, sb + 24, sizeof(ss));
	lg->sectorsize = le32toh(ss);
	/* One header sector must hold the header and a mark's text. */
	if (lg->sectorsize < 512 || lg->sectorsize > 4096 ||
	    (lg->sectorsize & (lg->sectorsize - 1)))
		bad("bad sector size in the super block");
}

/* read the entry at OFF; return the offset of the next one */
static off_t read_entry(const struct log *lg, off_t off, struct entry *e)
{
	unsigned char hdr[4096];
	size_t len;

	read_at(lg->fd, hdr, lg->sectorsize, off);
	e->sector = le64_at(hdr);
	e->nr_sectors = le64_at(hdr + 8);
	e->flags = le64_at(hdr + 16);
	e->data_len = le64_at(hdr + 24);
	e->mark[0] = 0;
	if (e->flags & LW_MARK) {
		len = e->data_len;
		if (len > lg->sectorsize - ENTRY_BYTES)
			bad("mark longer than its sector");
		memcpy(e->mark, hdr + ENTRY_BYTES, len);
		e->mark[len] = 0;
		/* A mark carries text, never data sectors. */
		return off + lg->sectorsize;
	}
	off += lg->sectorsize;
	/* Discards are logged without data: nothing follows the header. */
	if (!(e->flags & LW_DISCARD))
		off += (off_t)e->nr_sectors * lg->sectorsize;
	return off;
}

static void flag_names(uint64_t flags, char *out)
{
	static const struct { uint64_t bit; const char *name; } names[] = {
		{ LW_FLUSH, "FLUSH" }, { LW_FUA, "FUA" }, { LW_DISCARD, "DISCARD" },
		{ LW_MARK, "MARK" }, { LW_META, "META" },
	};
	size_t i;

	out[0] = 0;
	for (i = 0; i < sizeof(names) / sizeof(names[0]); i++) {
		if (!(flags & names[i].bit))
			continue;
		if (out[0])
			strcat(out, ",");
		strcat(out, names[i].name);
	}
	if (!out[0])
		strcpy(out, "-");
}

static int list(const char *path)
{
	struct log lg;
	struct entry e;
	char fl[64], *c;
	off_t off, next;
	uint64_t i;

	open_log(&lg, path);
	off = lg.sectorsize;
	for (i = 0; i < lg.nr_entries; i++) {
		next = read_entry(&lg, off, &e);
		/* Marks are one word in the output: no blanks in them. */
		for (c = e.mark; *c; c++)
			if (*c == ' ' || *c == '\t' || *c == '\n')
				*c = '_';
		flag_names(e.flags, fl);
		printf("%" PRIu64 " %lld %s %" PRIu64 " %" PRIu64 " %s\n", i,
		       (long long)off, fl, e.sector, e.nr_sectors,
		       e.mark[0] ? e.mark : "-");
		off = next;
	}
	return 0;
}

/* copy the data of one write entry, in pieces, to where it was written */
static void apply(const struct log *lg, int tfd, off_t off,
		  const struct entry *e, char *buf)
{
	off_t src = off + lg->sectorsize;
	off_t dst = (off_t)e->sector * lg->sectorsize;
	off_t left = (off_t)e->nr_sectors * lg->sectorsize;
	size_t n;

	if (e->flags & LW_MARK)
		return;
	if (e->flags & LW_DISCARD) {
		/*
		 * What a discarded range reads back is up to the device; the
		 * logged device is a loop file, which punches a hole: zeros.
		 */
		memset(buf, 0, CHUNK);
		while (left > 0) {
			n = left < CHUNK ? left : CHUNK;
			write_at(tfd, buf, n, dst);
			dst += n;
			left -= n;
		}
		return;
	}
	while (left > 0) {
		n = left < CHUNK ? left : CHUNK;
		read_at(lg->fd, buf, n, src);
		write_at(tfd, buf, n, dst);
		src += n;
		dst += n;
		left -= n;
	}
}

/* copy all of SRC over DST, in the kernel where it can */
static void copy_file(const char *src, const char *dst, char *buf)
{
	struct stat st;
	off_t off = 0;
	ssize_t n;
	int in, out;

	in = open(src, O_RDONLY);
	if (in < 0)
		die(src);
	out = open(dst, O_WRONLY);
	if (out < 0)
		die(dst);
	if (fstat(in, &st))
		die(src);
	while (off < st.st_size) {
		loff_t o1 = off, o2 = off;

		n = copy_file_range(in, &o1, out, &o2, st.st_size - off, 0);
		if (n < 0 && (errno == EXDEV || errno == ENOSYS ||
			      errno == EINVAL || errno == EOPNOTSUPP)) {
			/* No in-kernel copy between these two: by hand. */
			n = st.st_size - off < CHUNK ? st.st_size - off : CHUNK;
			read_at(in, buf, n, off);
			write_at(out, buf, n, off);
		} else if (n <= 0) {
			die("copy_file_range");
		}
		off += n;
	}
	if (fsync(out))
		die("fsync");
	close(in);
	close(out);
}

static int replay(const char *path, const char *target, uint64_t first,
		  uint64_t last, off_t off, const char *copy, const char *flush)
{
	struct log lg;
	struct entry e;
	uint64_t i;
	char *buf;
	int tfd, fd;

	open_log(&lg, path);
	if (last >= lg.nr_entries || first > last)
		bad("entry range outside the log");
	tfd = open(target, O_WRONLY);
	if (tfd < 0)
		die(target);
	buf = malloc(CHUNK);
	if (!buf)
		die("malloc");
	if (off < 0) {
		/* No offset given: walk the headers up to entry FIRST. */
		off = lg.sectorsize;
		for (i = 0; i < first; i++)
			off = read_entry(&lg, off, &e);
	}
	for (i = first; i <= last; i++) {
		off_t next = read_entry(&lg, off, &e);

		apply(&lg, tfd, off, &e, buf);
		off = next;
	}
	/* The caller looks at TARGET next, maybe through another device. */
	if (fsync(tfd))
		die("fsync");
	close(tfd);
	if (copy)
		copy_file(target, copy, buf);
	if (flush) {
		fd = open(flush, O_RDONLY);
		if (fd < 0)
			die(flush);
		if (ioctl(fd, BLKFLSBUF, 0))
			die("BLKFLSBUF");
		close(fd);
	}
	free(buf);
	return 0;
}

static int usage(void)
{
	fprintf(stderr, "usage: log-replay list LOG\n"
		"       log-replay replay [-o OFFSET] [-c COPY] [-f DEVICE] LOG TARGET FIRST LAST\n");
	return 2;
}

int main(int argc, char **argv)
{
	const char *copy = NULL, *flush = NULL;
	off_t off = -1;
	int c;

	if (argc == 3 && !strcmp(argv[1], "list"))
		return list(argv[2]);
	if (argc < 2 || strcmp(argv[1], "replay"))
		return usage();
	optind = 2;
	while ((c = getopt(argc, argv, "o:c:f:")) != -1) {
		switch (c) {
		case 'o': off = (off_t)strtoll(optarg, NULL, 0); break;
		case 'c': copy = optarg; break;
		case 'f': flush = optarg; break;
		default: return usage();
		}
	}
	if (argc - optind != 4)
		return usage();
	return replay(argv[optind], argv[optind + 1],
		      strtoull(argv[optind + 2], NULL, 0),
		      strtoull(argv[optind + 3], NULL, 0), off, copy, flush);
}
