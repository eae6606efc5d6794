// SPDX-License-Identifier: GPL-2.0
/*
 * veilsetup: progress of a long write (luksFormat's wipe of a volume with
 * integrity protection), printed as cryptsetup 2.6 prints it: a line
 * redrawn every half second, or one line every --progress-frequency
 * seconds, or JSON with --progress-json; a termination signal held
 * meanwhile (vs_signals_hold()) stops the write.
 */
#include <errno.h>
#include <inttypes.h>
#include <signal.h>
#include <stdio.h>
#include <string.h>
#include <sys/time.h>

#include "veilsetup.h"

#define US_PER_S	UINT64_C(1000000)
#define US_90_MIN	(90 * 60 * US_PER_S)
#define US_36_HOURS	(36 * 3600 * US_PER_S)

static uint64_t us_between(const struct timeval *a, const struct timeval *b)
{
	return (b->tv_sec - a->tv_sec) * US_PER_S + (b->tv_usec - a->tv_usec);
}

/* "12m44s", "26h12m44s" or "3 days" */
static void human_time(uint64_t us, char *buf, size_t len)
{
	uint64_t s = us / US_PER_S;

	if (us < US_90_MIN)
		snprintf(buf, len, "%02" PRIu64 "m%02" PRIu64 "s", s / 60, s % 60);
	else if (us < US_36_HOURS)
		snprintf(buf, len, "%02" PRIu64 "h%02" PRIu64 "m%02" PRIu64 "s",
			 s / 3600, s / 60 % 60, s % 60);
	else
		snprintf(buf, len, "%02" PRIu64 " days", s / 86400);
}

/* "1234 MiB written": the largest unit that keeps the count below 2^32 */
static void written(uint64_t bytes, char *buf, size_t len)
{
	static const char * const units[] = { "MiB", "GiB", "TiB", "PiB", "EiB" };
	unsigned int i = 0, shift = 20;

	while (i < 4 && bytes >= UINT64_C(1) << (shift + 12)) {
		i++;
		shift += 10;
	}
	snprintf(buf, len, "%4" PRIu64 " %s written", bytes >> shift, units[i]);
}

/* "speed 123.4 MiB/s" */
static void speed(double bytes_per_s, char *buf, size_t len)
{
	const char *unit = "B";

	if (bytes_per_s > 1073741824.0) {
		bytes_per_s /= 1073741824.0;
		unit = "GiB";
	} else if (bytes_per_s > 1048576.0) {
		bytes_per_s /= 1048576.0;
		unit = "MiB";
	} else if (bytes_per_s > 1024.0) {
		bytes_per_s /= 1024.0;
		unit = "KiB";
	}
	snprintf(buf, len, "speed %5.1f %s/s", bytes_per_s, unit);
}

/* Whether a held termination signal waits; if so, it is taken. */
static int termination_waits(void)
{
	static const int signals[] = { SIGINT, SIGTERM, SIGHUP, SIGQUIT };
	const struct timespec now = { 0, 0 };
	sigset_t pending, one;
	size_t i;

	if (sigpending(&pending))
		return 0;
	for (i = 0; i < sizeof(signals) / sizeof(signals[0]); i++) {
		if (!sigismember(&pending, signals[i]))
			continue;
		sigemptyset(&one);
		sigaddset(&one, signals[i]);
		sigtimedwait(&one, NULL, &now);
		return 1;
	}
	return 0;
}

/**
 * vs_progress() - libcryptsetup's progress callback (crypt_wipe())
 * @size: the bytes to write in all.
 * @offset: the bytes written so far.
 * @usrptr: a struct vs_progress, zeroed but for @device before the first
 *	call.
 *
 * Prints nothing with --batch-mode unless --progress-json is given. A
 * termination signal held by vs_signals_hold() ends the write: the
 * signal is taken (the caller cleans up and fails with -EINTR, exit code
 * 1, as cryptsetup's interrupted wipe) and "Wipe interrupted." printed.
 *
 * Return: 0 to go on, 1 to stop.
 */
int vs_progress(uint64_t size, uint64_t offset, void *usrptr)
{
	struct vs_progress *p = usrptr;
	uint64_t every = opt.progress_frequency ?
			 opt.progress_frequency * US_PER_S : US_PER_S / 2;
	char when[64], done[64], rate[64];
	int final = offset == size;
	struct timeval now;
	double secs, rate_bps;

	if (termination_waits()) {
		if (!opt.progress_frequency && !opt.progress_json && !opt.batch)
			printf("\33[2K\r");
		fflush(stdout);
		fprintf(stderr, "\nWipe interrupted.\n");
		return 1;
	}
	if (opt.batch && !opt.progress_json)
		return 0;
	gettimeofday(&now, NULL);
	if (!p->started) {
		p->started = 1;
		p->start = now;
		p->last = now;
		p->start_offset = offset;
		return 0;
	}
	if (!final && us_between(&p->last, &now) < every)
		return 0;
	p->last = now;
	secs = us_between(&p->start, &now) / 1e6;
	if (secs <= 0)
		return 0;
	rate_bps = (offset - p->start_offset) / secs;

	if (opt.progress_json) {
		printf("{\"device\":\"%s\",\"device_bytes\":\"%" PRIu64 "\","
		       "\"device_size\":\"%" PRIu64 "\",\"speed\":\"%" PRIu64 "\","
		       "\"eta_ms\":\"%" PRIu64 "\",\"time_ms\":\"%" PRIu64 "\"}\n",
		       p->device, offset, size, (uint64_t)rate_bps,
		       final || !rate_bps ? 0 : (uint64_t)((size / rate_bps - secs) * 1e3),
		       (uint64_t)(secs * 1e3));
		fflush(stdout);
		return 0;
	}
	if (!opt.progress_frequency)
		printf("\33[2K\r");
	written(offset, done, sizeof(done));
	speed(rate_bps, rate, sizeof(rate));
	if (final) {
		human_time((uint64_t)(secs * 1e6), when, sizeof(when));
		printf("Finished, time %s, %s, %s\n", when, done, rate);
	} else if (rate_bps) {
		human_time((uint64_t)((size / rate_bps - secs) * 1e6), when, sizeof(when));
		printf("Progress: %5.1f%%, ETA %s, %s, %s%s", (double)offset / size * 100.0,
		       when, done, rate, opt.progress_frequency ? "\n" : "");
	}
	fflush(stdout);
	return 0;
}
