// SPDX-License-Identifier: GPL-2.0
/*
 * memhog: take MiB of anonymous memory and keep touching every page of it
 * for SECONDS, so that a memory cgroup smaller than that must swap.
 * Prints how many passes over the memory it made: progress under pressure.
 *
 *   memhog MIB SECONDS
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

int main(int argc, char **argv)
{
	long page = sysconf(_SC_PAGESIZE);
	size_t size, off;
	time_t end;
	long passes = 0;
	char *mem;

	if (argc != 3) {
		fprintf(stderr, "usage: memhog MIB SECONDS\n");
		return 2;
	}
	size = strtoul(argv[1], NULL, 0) << 20;
	end = time(NULL) + strtol(argv[2], NULL, 0);
	mem = malloc(size);
	if (!mem) {
		perror("memhog");
		return 1;
	}
	memset(mem, 1, size);
	while (time(NULL) < end) {
		for (off = 0; off < size; off += page)
			mem[off]++;
		passes++;
	}
	printf("memhog: %zu MiB, %ld passes\n", size >> 20, passes);
	return 0;
}
