// SPDX-License-Identifier: GPL-2.0
/*
 * kcore-scan: look through the machine's memory (/proc/kcore) for CTR
 * keystream of known sectors.
 *
 *   kcore-scan PLAIN CIPHER
 *
 * PLAIN holds what was written through a CTR device, CIPHER what the
 * device below holds for it, from the same first sector on: their XOR is
 * the keystream. The first 16-byte block of each 512-byte sector's
 * keystream is looked for at every 16-byte boundary of RAM. Only masked
 * copies (XORed with a random mask) are kept here, so the search itself
 * leaves no keystream behind, except one planted control: sector 0's
 * block, unmasked, in this process's memory, which the scan must find.
 *
 * Prints how many sectors' blocks were found and which, and exits 0 if
 * the control was found and no other sector's block was, 1 if another
 * sector's keystream is in memory, 2 on errors (the control not found
 * means the scan does not see all of RAM).
 */
#define _GNU_SOURCE
#include <elf.h>
#include <fcntl.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#define BLOCK		16
#define SECTOR		512
#define CHUNK		(1 << 20)
#define FILTER_BITS	24

struct entry {
	uint64_t lo, hi;	/* masked block */
	uint32_t sector;
	uint32_t used;
};

static struct entry *table;
static size_t table_size;
static uint8_t *filter;
static uint64_t mask_lo, mask_hi;

static void *read_file(const char *path, size_t *len)
{
	struct stat st;
	uint8_t *buf;
	int fd = open(path, O_RDONLY);

	if (fd < 0 || fstat(fd, &st) || !(buf = malloc(st.st_size + 1)) ||
	    read(fd, buf, st.st_size) != st.st_size) {
		perror(path);
		exit(2);
	}
	close(fd);
	*len = st.st_size;
	return buf;
}

static size_t slot(uint64_t lo, uint64_t hi)
{
	return (size_t)((lo ^ (hi * 0x9e3779b97f4a7c15ULL)) % table_size);
}

static void insert(uint64_t lo, uint64_t hi, uint32_t sector)
{
	size_t i = slot(lo, hi);

	while (table[i].used)
		i = (i + 1) % table_size;
	table[i] = (struct entry){ lo, hi, sector, 1 };
	filter[(lo & ((1 << FILTER_BITS) - 1)) >> 3] |= 1 << (lo & 7);
}

static long lookup(uint64_t lo, uint64_t hi)
{
	size_t i = slot(lo, hi);

	for (; table[i].used; i = (i + 1) % table_size)
		if (table[i].lo == lo && table[i].hi == hi)
			return table[i].sector;
	return -1;
}

int main(int argc, char **argv)
{
	size_t plen, clen, nsectors, s, n, off;
	uint8_t *plain, *cipher, *buf, *found;
	volatile uint64_t *control;
	uint64_t k[2], w[2];
	unsigned long hits = 0, distinct = 0;
	Elf64_Ehdr eh;
	Elf64_Phdr ph;
	long sector;
	int fd, i;

	if (argc != 3) {
		fprintf(stderr, "usage: kcore-scan PLAIN CIPHER\n");
		return 2;
	}
	plain = read_file(argv[1], &plen);
	cipher = read_file(argv[2], &clen);
	if (plen != clen || plen % SECTOR || !plen) {
		fprintf(stderr, "kcore-scan: want two files of the same length, whole sectors\n");
		return 2;
	}
	nsectors = plen / SECTOR;
	fd = open("/dev/urandom", O_RDONLY);
	if (fd < 0 || read(fd, &mask_lo, 8) != 8 || read(fd, &mask_hi, 8) != 8) {
		perror("/dev/urandom");
		return 2;
	}
	close(fd);
	table_size = nsectors * 4 + 1;
	table = calloc(table_size, sizeof(*table));
	filter = calloc(1, 1 << (FILTER_BITS - 3));
	found = calloc(nsectors, 1);
	control = aligned_alloc(4096, 4096);
	buf = aligned_alloc(4096, CHUNK);
	if (!table || !filter || !found || !control || !buf) {
		fprintf(stderr, "kcore-scan: out of memory\n");
		return 2;
	}
	for (s = 0; s < nsectors; s++) {
		memcpy(k, plain + s * SECTOR, BLOCK);
		memcpy(w, cipher + s * SECTOR, BLOCK);
		k[0] ^= w[0];
		k[1] ^= w[1];
		if (!s) {
			control[0] = k[0];
			control[1] = k[1];
		}
		insert(k[0] ^ mask_lo, k[1] ^ mask_hi, s);
	}
	explicit_bzero(k, sizeof(k));
	explicit_bzero(w, sizeof(w));

	fd = open("/proc/kcore", O_RDONLY);
	if (fd < 0 || pread(fd, &eh, sizeof(eh), 0) != sizeof(eh) ||
	    memcmp(eh.e_ident, ELFMAG, SELFMAG) || eh.e_ident[EI_CLASS] != ELFCLASS64) {
		perror("/proc/kcore");
		return 2;
	}
	for (i = 0; i < eh.e_phnum; i++) {
		if (pread(fd, &ph, sizeof(ph), eh.e_phoff + i * sizeof(ph)) != sizeof(ph)) {
			perror("/proc/kcore: program header");
			return 2;
		}
		/* RAM and kernel text have a physical address; vmalloc and the rest none. */
		if (ph.p_type != PT_LOAD || ph.p_paddr == (Elf64_Addr)-1)
			continue;
		for (off = 0; off < ph.p_filesz; off += n) {
			n = ph.p_filesz - off < CHUNK ? ph.p_filesz - off : CHUNK;
			if (pread(fd, buf, n, ph.p_offset + off) != (ssize_t)n) {
				n = 4096;	/* a hole: step over a page */
				continue;
			}
			for (size_t j = 0; j + BLOCK <= n; j += BLOCK) {
				memcpy(w, buf + j, BLOCK);
				w[0] ^= mask_lo;
				if (!(filter[(w[0] & ((1 << FILTER_BITS) - 1)) >> 3] & (1 << (w[0] & 7))))
					continue;
				w[1] ^= mask_hi;
				sector = lookup(w[0], w[1]);
				if (sector < 0)
					continue;
				hits++;
				if (!found[sector]++) {
					distinct++;
					if (sector && distinct <= 10)
						printf("sector %ld's keystream at physical 0x%llx\n", sector,
						       (unsigned long long)(ph.p_paddr + off + j));
				}
			}
		}
	}
	explicit_bzero(buf, CHUNK);
	printf("found the keystream of %lu of %zu sectors (%lu copies); control %s\n",
	       distinct, nsectors, hits, found[0] ? "found" : "NOT found");
	if (!found[0])
		return 2;
	return distinct > 1 ? 1 : 0;
}
