/* SPDX-License-Identifier: GPL-2.0 */
/*
 * What the seeded table-line fuzzers (table-fuzz.c, crypt-diff.c) share:
 * the PRNG that makes a case the same on every machine, strings split
 * into tokens and joined again, keys, edge numbers, geometry and the
 * token mutations, the libdevmapper calls of one ioctl each, the
 * watchdog that says which case hung, and their common options.
 *
 * Each tool is one file that includes this one (after _GNU_SOURCE); the
 * functions are static inline and the state is per tool.
 */
#ifndef FUZZ_LIB_H
#define FUZZ_LIB_H

#include <ctype.h>
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <libdevmapper.h>
#include <linux/fs.h>
#include <pthread.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>
#include <time.h>
#include <unistd.h>

#define MAX_TOK		64
#define ARRAY_SIZE(a)	(sizeof(a) / sizeof((a)[0]))
#define FZ_UNUSED	__attribute__((unused))

/* Udev must neither scan the device nor make us wait for it. */
#define UDEV_FLAGS	(DM_UDEV_DISABLE_DM_RULES_FLAG | \
			 DM_UDEV_DISABLE_SUBSYSTEM_RULES_FLAG | \
			 DM_UDEV_DISABLE_DISK_RULES_FLAG | \
			 DM_UDEV_DISABLE_OTHER_RULES_FLAG)
/* ---- PRNG: splitmix64, the same sequence on every machine ---- */

static uint64_t rng FZ_UNUSED;

static inline uint64_t splitmix(uint64_t *s)
{
	uint64_t z = (*s += 0x9e3779b97f4a7c15ULL);

	z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
	z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
	return z ^ (z >> 31);
}

static inline uint64_t rnd64(void)
{
	return splitmix(&rng);
}

static inline unsigned int rnd(unsigned int n)
{
	return n ? rnd64() % n : 0;
}

static inline bool chance(unsigned int pct)
{
	return rnd(100) < pct;
}

static inline void seed_case(uint64_t seed, uint64_t idx)
{
	uint64_t s = seed ^ (idx * 0xd1342543de82ef95ULL);

	rng = splitmix(&s);
	rng ^= splitmix(&s);
}

/* ---- small helpers ---- */

static bool verbose FZ_UNUSED, dry_run FZ_UNUSED;

static inline void die(const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	fprintf(stderr, "%s: ", program_invocation_short_name);
	vfprintf(stderr, fmt, ap);
	fputc('\n', stderr);
	va_end(ap);
	exit(2);
}

static inline void *xmalloc(size_t n)
{
	void *p = malloc(n);

	if (!p)
		die("out of memory");
	return p;
}

static inline char *xstrdup(const char *s)
{
	char *p = strdup(s);

	if (!p)
		die("out of memory");
	return p;
}

static inline char *xasprintf(const char *fmt, ...)
{
	va_list ap;
	char *p;

	va_start(ap, fmt);
	if (vasprintf(&p, fmt, ap) < 0)
		die("out of memory");
	va_end(ap);
	return p;
}

static inline double now(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec + ts.tv_nsec / 1e9;
}

/* A line for the log: non-printing bytes as \xNN, long lines cut short. */
static inline void print_escaped(FILE *f, const char *s, size_t max)
{
	size_t len = strlen(s), i;

	for (i = 0; i < len && i < max; i++) {
		unsigned char c = s[i];

		if (c == '\\')
			fputs("\\\\", f);
		else if (isprint(c))
			fputc(c, f);
		else
			fprintf(f, "\\x%02x", c);
	}
	if (len > max)
		fprintf(f, "...(%zu bytes)", len);
}

/* ---- tokens ---- */

struct toks {
	int n;
	char *t[MAX_TOK];
};

static inline void tok_free(struct toks *tk)
{
	int i;

	for (i = 0; i < tk->n; i++)
		free(tk->t[i]);
	tk->n = 0;
}

static inline void tok_add(struct toks *tk, char *s)
{
	if (tk->n >= MAX_TOK) {
		free(s);
		return;
	}
	tk->t[tk->n++] = s;
}

static inline void tok_insert(struct toks *tk, int at, char *s)
{
	if (tk->n >= MAX_TOK) {
		free(s);
		return;
	}
	memmove(&tk->t[at + 1], &tk->t[at], (tk->n - at) * sizeof(char *));
	tk->t[at] = s;
	tk->n++;
}

static inline void tok_del(struct toks *tk, int at)
{
	free(tk->t[at]);
	memmove(&tk->t[at], &tk->t[at + 1], (tk->n - at - 1) * sizeof(char *));
	tk->n--;
}

static inline void tok_set(struct toks *tk, int at, char *s)
{
	free(tk->t[at]);
	tk->t[at] = s;
}

static inline char *tok_join(const struct toks *tk)
{
	size_t len = 1, off = 0;
	char *s;
	int i;

	for (i = 0; i < tk->n; i++)
		len += strlen(tk->t[i]) + 1;
	s = xmalloc(len);
	s[0] = '\0';
	for (i = 0; i < tk->n; i++) {
		size_t l = strlen(tk->t[i]);

		if (i)
			s[off++] = ' ';
		memcpy(s + off, tk->t[i], l);
		off += l;
	}
	s[off] = '\0';
	return s;
}

/* Split at spaces and tabs only, as a checker of our own messages. */
static inline void tok_split(struct toks *tk, const char *s)
{
	const char *p = s, *e;

	tk->n = 0;
	for (;;) {
		while (*p == ' ' || *p == '\t')
			p++;
		if (!*p)
			break;
		e = p;
		while (*e && *e != ' ' && *e != '\t')
			e++;
		tok_add(tk, strndup(p, e - p));
		p = e;
	}
}


/* ---- what lines are made of ---- */

static inline char *hexkey(unsigned int bytes, bool upper)
{
	char *s = xmalloc(2 * bytes + 1);
	unsigned int i;

	for (i = 0; i < bytes; i++)
		sprintf(s + 2 * i, upper ? "%02X" : "%02x", (unsigned int)rnd(256));
	s[2 * bytes] = '\0';
	return s;
}

/* Numbers at the edges of every parser's range. */
static const char * const edge_numbers[] FZ_UNUSED = {
	"0", "1", "7", "8", "511", "512", "513", "1024", "4095", "4096",
	"8192", "65536", "1048576", "2097152",
	"4294967295", "4294967296", "4294967297",
	"9223372036854775807", "9223372036854775808",
	"18446744073709551615", "18446744073709551616",
	"-1", "-0", "+1", "0x10", "010", "1e3", " 1", "1 ", "",
	"000000000000000000000000000000000000000008",
	"99999999999999999999999999999999999999999999999999",
};

#define NEDGE ARRAY_SIZE(edge_numbers)

static inline const char *edge_number(void)
{
	return edge_numbers[rnd(NEDGE)];
}

/* Replace one run of digits in a token: "sector_size:4096", ":32:", "7:0". */
static inline char *mutate_digits(const char *s)
{
	size_t len = strlen(s), i, start, end;
	unsigned int runs = 0, pick;

	for (i = 0; i < len; i++)
		if (isdigit((unsigned char)s[i]) &&
		    (!i || !isdigit((unsigned char)s[i - 1])))
			runs++;
	if (!runs)
		return xasprintf("%s%s", s, edge_number());
	pick = rnd(runs);
	for (i = 0, runs = 0; i < len; i++) {
		if (!isdigit((unsigned char)s[i]) ||
		    (i && isdigit((unsigned char)s[i - 1])))
			continue;
		if (runs++ == pick)
			break;
	}
	start = i;
	for (end = start; end < len && isdigit((unsigned char)s[end]); end++)
		;
	return xasprintf("%.*s%s%s", (int)start, s, edge_number(), s + end);
}

/*
 * Where a line maps on a device of @sectors: the offset on the device
 * *off, the length *len (whole @unit sectors) and the iv_offset *ivoff (a
 * multiple of @unit: zero, small, huge, or wrapping below zero).
 */
static inline void gen_geometry(uint64_t sectors, unsigned int unit,
				uint64_t *off, uint64_t *len, uint64_t *ivoff)
{
	uint64_t avail;

	*off = chance(60) ? 0 : rnd(sectors / 2);
	avail = (sectors - *off) / unit * unit;
	if (avail < unit) {
		*off = 0;
		avail = sectors / unit * unit;
	}
	*len = chance(50) ? avail : (1 + rnd(avail / unit)) * unit;

	switch (rnd(10)) {
	case 0 ... 4:
		*ivoff = 0;
		break;
	case 5 ... 7:
		*ivoff = (uint64_t)rnd(1 << 24) * unit;
		break;
	case 8:
		*ivoff = (rnd64() >> 1) / unit * unit;
		break;
	default:
		*ivoff = -(uint64_t)unit;
		break;
	}
}

/* The mutations every fuzzer makes on a line's tokens. */
enum tok_op { TOK_NONE, TOK_DROP, TOK_DUP, TOK_SWAP, TOK_EDGE, TOK_DIGITS };

/* Apply @op to token @i of @tk (any index when @tk is empty). */
static inline void tok_mutate(struct toks *tk, int i, enum tok_op op)
{
	switch (op) {
	case TOK_DROP:
		if (tk->n)
			tok_del(tk, i);
		break;
	case TOK_DUP:
		if (tk->n)
			tok_insert(tk, i, xstrdup(tk->t[i]));
		break;
	case TOK_SWAP:
		if (tk->n >= 2) {
			int j = rnd(tk->n);
			char *t = tk->t[i];

			tk->t[i] = tk->t[j];
			tk->t[j] = t;
		}
		break;
	case TOK_EDGE:
		if (tk->n)
			tok_set(tk, i, xstrdup(edge_number()));
		break;
	case TOK_DIGITS:
		if (tk->n)
			tok_set(tk, i, mutate_digits(tk->t[i]));
		break;
	default:
		break;
	}
}

/* ---- libdevmapper ---- */

static char lastlog[512] FZ_UNUSED;
static unsigned long remove_retries FZ_UNUSED;

static inline void quiet_log(int level, const char *file, int line,
			     int dm_errno, const char *f, ...)
{
	va_list ap;

	(void)file;
	(void)line;
	(void)dm_errno;
	if ((level & 7) > 4)	/* keep errors and warnings only */
		return;
	va_start(ap, f);
	vsnprintf(lastlog, sizeof(lastlog), f, ap);
	va_end(ap);
	if (verbose)
		fprintf(stderr, "  libdm: %s\n", lastlog);
}

/* A task for the device @name. */
static inline struct dm_task *task_of(const char *name, int type)
{
	struct dm_task *dmt = dm_task_create(type);

	if (!dmt || !dm_task_set_name(dmt, name))
		die("cannot create a device-mapper task");
	return dmt;
}

/* Tasks that make uevents carry the flags that keep udev away. */
static inline void no_udev(struct dm_task *dmt)
{
	uint32_t cookie = 0;

	if (!dm_task_set_cookie(dmt, &cookie, UDEV_FLAGS))
		die("cannot set udev flags");
}

/* Run a task: 0, the ioctl's errno, or -1 if the library gave up first. */
static inline int run(struct dm_task *dmt)
{
	int e;

	lastlog[0] = '\0';
	if (dm_task_run(dmt))
		return 0;
	e = dm_task_get_errno(dmt);
	return e ? e : -1;
}

/* A task with no more than the device's name, run. */
static inline int run_simple_of(const char *name, int type)
{
	struct dm_task *dmt;
	int ret, tries = 0;

	for (;;) {
		dmt = task_of(name, type);
		if (type == DM_DEVICE_CREATE || type == DM_DEVICE_RESUME ||
		    type == DM_DEVICE_REMOVE)
			no_udev(dmt);
		ret = run(dmt);
		dm_task_destroy(dmt);
		dm_task_update_nodes();
		/*
		 * Something (udev, blkid) may hold the device for a moment:
		 * retry as dm_task_retry_remove() would, but more often and
		 * counted.
		 */
		if (type != DM_DEVICE_REMOVE || ret != EBUSY || ++tries > 500)
			return ret;
		remove_retries++;
		usleep(20000);
	}
}

/* The node of device @name in /dev/mapper, made here if nobody made it. */
static inline bool dev_node_of(const char *name, char *path, size_t size)
{
	struct dm_task *dmt = task_of(name, DM_DEVICE_INFO);
	struct dm_info info;
	struct stat sb;
	dev_t dev;

	if (run(dmt) || !dm_task_get_info(dmt, &info) || !info.exists) {
		dm_task_destroy(dmt);
		return false;
	}
	dm_task_destroy(dmt);
	dev = makedev(info.major, info.minor);
	snprintf(path, size, "%s/%s", dm_dir(), name);
	if (!stat(path, &sb) && S_ISBLK(sb.st_mode) && sb.st_rdev == dev)
		return true;
	unlink(path);
	mkdir(dm_dir(), 0755);
	return !mknod(path, S_IFBLK | 0600, dev);
}

static inline const char *errname(int e)
{
	static char buf[32];
	const char *n;

	if (e == -1)
		return "libdevmapper";
	n = strerrorname_np(e);
	if (n)
		return n;
	snprintf(buf, sizeof(buf), "errno %d", e);
	return buf;
}

/* ---- the state of a run: where it is, where the time goes ---- */

static char cur_desc[1024] FZ_UNUSED;
static const char *volatile cur_step FZ_UNUSED = "start";
static volatile unsigned long progress FZ_UNUSED;
static volatile unsigned long cur_case FZ_UNUSED;
static unsigned int watchdog_secs FZ_UNUSED = 180;
static uint64_t g_seed FZ_UNUSED;

/* Where the time goes, by step: printed at the end. */
static struct {
	const char *name;
	double secs, max;
	unsigned long n;
} prof[40] FZ_UNUSED;
static double step_t0 FZ_UNUSED;

static inline void step(const char *s)
{
	double t = now();
	int i;

	for (i = 0; i < 40; i++) {
		if (!prof[i].name)
			prof[i].name = (const char *)cur_step;
		if (prof[i].name == (const char *)cur_step) {
			prof[i].secs += t - step_t0;
			if (t - step_t0 > prof[i].max)
				prof[i].max = t - step_t0;
			prof[i].n++;
			break;
		}
	}
	step_t0 = t;
	cur_step = s;
	progress++;
}

static inline void *watchdog(void *arg)
{
	unsigned long seen = progress, idle = 0;
	int fd;

	(void)arg;
	for (;;) {
		sleep(1);
		if (progress != seen) {
			seen = progress;
			idle = 0;
			continue;
		}
		if (++idle < watchdog_secs)
			continue;
		/* The main thread may be stuck in the kernel: say where. */
		fprintf(stderr, "%s: WATCHDOG: case %lu stuck in %s for %us "
			"(reproduce: --seed %" PRIu64 " --first %lu --count 1)\n  ",
			program_invocation_short_name, cur_case, cur_step,
			watchdog_secs, g_seed, cur_case);
		print_escaped(stderr, cur_desc, sizeof(cur_desc));
		fputc('\n', stderr);
		fd = open("/proc/sysrq-trigger", O_WRONLY);
		if (fd >= 0) {
			ssize_t unused = write(fd, "w", 1);

			(void)unused;
			close(fd);
		}
		_exit(3);
	}
	return NULL;
}

/*
 * The options every fuzzer takes: --verbose, --dry-run, --seed N,
 * --count N, --first K, --watchdog SECS. Returns true if argv[*i] is one
 * of them, *i then at its last word.
 */
static inline bool common_arg(int argc, char **argv, int *i,
			      unsigned long *count, unsigned long *first)
{
	const char *a = argv[*i];

	if (!strcmp(a, "--verbose"))
		verbose = true;
	else if (!strcmp(a, "--dry-run"))
		dry_run = true;
	else if (*i + 1 >= argc)
		return false;
	else if (!strcmp(a, "--seed"))
		g_seed = strtoull(argv[++*i], NULL, 0);
	else if (!strcmp(a, "--count"))
		*count = strtoul(argv[++*i], NULL, 0);
	else if (!strcmp(a, "--first"))
		*first = strtoul(argv[++*i], NULL, 0);
	else if (!strcmp(a, "--watchdog"))
		watchdog_secs = strtoul(argv[++*i], NULL, 0);
	else
		return false;
	return true;
}

#endif /* FUZZ_LIB_H */
