// SPDX-License-Identifier: GPL-2.0
/*
 * fault_bench: what a page of a lazily mapped device costs, per path, in
 * the same boot.
 *
 *  nopfn  /dev/nopfn_bench_nopfn: a page allocated on first touch (what
 *         mspec_cached does), its PFN returned from ->nopfn()
 *  vmf    /dev/nopfn_bench_fault: the same handler as ->fault(), mapping
 *         the page itself with vmf_insert_pfn()
 *  eager  /dev/nopfn_bench_eager: every page allocated the same way and
 *         mapped with remap_pfn_range() in mmap()
 *  anon   MAP_PRIVATE | MAP_ANONYMOUS memory
 *
 * The three devices are one driver (driver/nopfn_bench.c): they differ
 * only in how a page gets mapped. (mspec itself was the nopfn path once;
 * on mipsel and armhf its cost per page differed from the benchmark
 * driver's by 0.4 to 1.3 times whatever the dispatch: docs/benchmarks.md,
 * "fault_bench compares one driver".)
 *
 * What is timed is mmap() + touch + munmap() of a range, freeing included
 * (the benchmark devices clear each page before they free it):
 *
 *  dense       one word written to every page of DENSE_PAGES
 *  dense_read  one word read from every page (nopfn and vmf only: both
 *              map the same PTE for a read, while for a write ->nopfn()
 *              gets a dirty PTE at once and vmf_insert_pfn() a clean one,
 *              which costs arm64 without hardware dirty bits a second
 *              fault per page)
 *  sparse      one word written to one page in SPARSE_STEP of the longest
 *              mapping the benchmark devices take (16 MiB)
 *  untouched   that mapping mapped and unmapped, nothing touched (nopfn,
 *              vmf, anon): what a mapping costs whatever is touched
 *
 * A sample is the fastest of a few mappings, the one that the host (QEMU
 * TCG on a machine shared with other guests and builds) disturbed least,
 * in ns per touched page (per mapping for untouched). In a round every
 * pattern is sampled on all of its paths together: the paths take turns
 * mapping by mapping, in a pseudo-random order drawn for each turn, so
 * that the samples of a ratio are close in time and no path always runs
 * after the same other one; the order of the patterns rotates from round
 * to round. Each ratio is taken within a round: its median over the rounds
 * is the figure, min and max the spread.
 *
 * Output: "# METRIC" lines (ns_per_page.PATH.PATTERN,
 * ns_per_mapping.PATH.untouched, ratio.PATH_vs_vmf.PATTERN[.min|.max],
 * ratio.eager_vs_lazy.PATTERN[.min|.max], ratio.fault_vs_eager_page
 * [.min|.max], faults_per_touch.PATH.PATTERN: the page faults the task
 * took per touched page, all mappings of all rounds), the raw samples as diagnostics, and the bars they are
 * held to as test cases. docs/benchmarks.md has the figures and what they mean.
 *
 * matrix-args: {scale}
 */
#include <errno.h>
#include <fcntl.h>
#include <sched.h>
#include <signal.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

/* 6.1's harness has unused parameters of its own. */
#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Wunused-parameter"
#include "kselftest_harness.h"
#pragma GCC diagnostic pop
#include "mspec_test.h"
#include "nopfn_bench.h"
#include "test_nopfn_uapi.h"


#define ROUNDS		24	/* after a warm-up round; 2, 3 and 4 divide it */
#define DENSE_PAGES	64	/* pages of a dense mapping: short, seldom disturbed */
#define SPARSE_STEP	64	/* sparse: one touched page in this many */

/* The bars the ratios are held to (docs/benchmarks.md). */
#define BAR_NOPFN_VS_VMF	1.05	/* at most, median, per fault */
#define BAR_SPARSE_FACTOR	2.0	/* eager/lazy >= mapped/touched / this */

enum path { NOPFN, VMF, EAGER, ANON, NPATHS };
enum pattern { DENSE, DENSE_READ, SPARSE, UNTOUCHED, NPATTERNS };

static const char * const path_name[NPATHS] = {
	"nopfn", "vmf", "eager", "anon",
};

static const char * const pattern_name[NPATTERNS] = {
	"dense", "dense_read", "sparse", "untouched",
};

/*
 * Mappings per sample, of which the fastest counts, per pattern and path
 * (an eager sparse mapping takes as long as some twenty lazy ones).
 */
static const int reps_table[NPATTERNS][NPATHS] = {
	[DENSE]		= { 16, 16, 16, 16 },
	[DENSE_READ]	= { 16, 16, 0, 0 },
	[SPARSE]	= { 6, 6, 3, 6 },
	[UNTOUCHED]	= { 6, 6, 0, 6 },
};

static bool measured(int path, int pattern)
{
	return reps_table[pattern][path] > 0;
}

/*
 * A debug kernel (KASAN, DEBUG_PAGEALLOC, page poisoning, lockdep: what the
 * matrix boots as ARCH-debug, with fault injection in debugfs): the
 * benchmark runs there too, but its costs are the checkers', not the
 * paths', so the bars are not checked.
 */
static bool debug_kernel(void)
{
	return access("/sys/kernel/debug/fail_page_alloc", F_OK) == 0;
}

#define DEBUG_KERNEL	"debug kernel: its checkers' costs, not the paths', are measured"

/* What the measuring test leaves for the tests of the bars. */
struct figures {
	bool done;
	long sparse_pages, sparse_touched;
	double ns[NPATHS][NPATTERNS][ROUNDS];
	long faults[NPATHS][NPATTERNS];		/* the task's, all mappings */
	long touched[NPATHS][NPATTERNS];
};

static struct figures *fig;	/* shared with the tests' child processes */

static void __attribute__((constructor)) fig_init(void)
{
	fig = mmap(NULL, sizeof(*fig), PROT_READ | PROT_WRITE,
		   MAP_SHARED | MAP_ANONYMOUS, -1, 0);
	if (fig == MAP_FAILED)
		fig = NULL;
}

/* The {scale} argument: 1 on a normal kernel, more on a slow one. */
static int scale(void)
{
	char buf[256] = "";
	ssize_t n;
	size_t len;
	int fd, s = 1;

	fd = open("/proc/self/cmdline", O_RDONLY);
	if (fd < 0)
		return 1;
	n = read(fd, buf, sizeof(buf) - 1);
	close(fd);
	if (n <= 0)
		return 1;
	len = strlen(buf) + 1;		/* past argv[0] */
	if ((ssize_t)len < n)
		s = atoi(buf + len);
	return s >= 1 ? s : 1;
}

static double mono_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec * 1e9 + ts.tv_nsec;
}

/*
 * The clock of the samples: CLOCK_MONOTONIC, unless it is coarse. The
 * x86_64 guest runs on refined-jiffies (4 ms): under TCG the kernel finds
 * the TSCs of the two vCPUs unsynchronised and marks the TSC unstable.
 * There the samples read the TSC (the host's, under TCG) on the one vCPU
 * the benchmark is pinned to, and the ticks are converted to ns against
 * CLOCK_MONOTONIC over the whole benchmark, seconds long.
 */
static bool use_tsc;

static double now(void)
{
#if defined(__x86_64__) || defined(__i386__)
	if (use_tsc)
		return __builtin_ia32_rdtsc();
#endif
	return mono_ns();
}

/* CLOCK_MONOTONIC just after it ticked, and the sample clock then. */
static void clock_edge(double *mono, double *clk)
{
	double t = mono_ns(), u;

	while ((u = mono_ns()) == t)
		;
	*mono = u;
	*clk = now();
}

/* Pick the clock; its resolution in ns. */
static long pick_clock(void)
{
	struct timespec res;

	if (clock_getres(CLOCK_MONOTONIC, &res))
		return -1;
#if defined(__x86_64__) || defined(__i386__)
	if (res.tv_sec || res.tv_nsec > 1000) {
		cpu_set_t one;

		use_tsc = true;
		CPU_ZERO(&one);
		CPU_SET(sched_getcpu() < 0 ? 0 : sched_getcpu(), &one);
		if (sched_setaffinity(0, sizeof(one), &one))
			return -1;
	}
#endif
	return res.tv_sec * 1000000000L + res.tv_nsec;
}

static int bench_stats(int fd, struct nopfn_bench_stats *s)
{
	memset(s, 0, sizeof(*s));
	return ioctl(fd, NOPFN_BENCH_IOC_GET_STATS, s) ? -errno : 0;
}

/* -errno from mmap() of @len bytes of @fd, or 0 if it worked (unmapped). */
static int map_err(int fd, size_t len, int prot, int flags, off_t off)
{
	void *p = mmap(NULL, len, prot, flags, fd, off);

	if (p == MAP_FAILED)
		return -errno;
	munmap(p, len);
	return 0;
}

static int cmp_double(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;

	return x < y ? -1 : x > y;
}

static double median(const double *v, int n)
{
	double s[ROUNDS];

	memcpy(s, v, n * sizeof(*v));
	qsort(s, n, sizeof(*s), cmp_double);
	return n % 2 ? s[n / 2] : (s[n / 2 - 1] + s[n / 2]) / 2;
}

static void spread(const double *v, int n, double *lo, double *hi)
{
	int i;

	*lo = *hi = v[0];
	for (i = 1; i < n; i++) {
		if (v[i] < *lo)
			*lo = v[i];
		if (v[i] > *hi)
			*hi = v[i];
	}
}

/* Per round, @a's cost over @b's for @pattern. */
static void ratios(int a, int b, int pattern, double *r)
{
	int i;

	for (i = 0; i < ROUNDS; i++)
		r[i] = fig->ns[a][pattern][i] / fig->ns[b][pattern][i];
}

static void metric(const char *name, double value, const char *unit)
{
	printf("# METRIC %s %.4f%s%s\n", name, value, *unit ? " " : "", unit);
}

static void ratio_metrics(const char *name, const double *r)
{
	char buf[128];
	double lo, hi;

	spread(r, ROUNDS, &lo, &hi);
	metric(name, median(r, ROUNDS), "");
	snprintf(buf, sizeof(buf), "%s.min", name);
	metric(buf, lo, "");
	snprintf(buf, sizeof(buf), "%s.max", name);
	metric(buf, hi, "");
}

FIXTURE(fault_bench) {
	int fd[NPATHS];		/* device of each path, -1 for anon */
	struct nopfn_bench_stats base;
};

FIXTURE_SETUP(fault_bench)
{
	static const char * const dev[NPATHS] = {
		NOPFN_BENCH_NOPFN_DEV, NOPFN_BENCH_FAULT_DEV,
		NOPFN_BENCH_EAGER_DEV, NULL,
	};
	int i;

	for (i = 0; i < NPATHS; i++) {
		self->fd[i] = -1;
		if (!dev[i])
			continue;
		self->fd[i] = open(dev[i], O_RDWR | O_CLOEXEC);
		ASSERT_LE(0, self->fd[i]) TH_LOG("%s: %s (module nopfn_bench loaded?)",
						 dev[i], strerror(errno));
	}
	ASSERT_EQ(0, bench_stats(self->fd[VMF], &self->base));
}

/* Whatever a test did, every page it got is back, on every device. */
FIXTURE_TEARDOWN(fault_bench)
{
	struct nopfn_bench_stats s;
	int i;

	if (self->fd[VMF] >= 0 && bench_stats(self->fd[VMF], &s) == 0) {
		EXPECT_EQ(self->base.pages_in_use, s.pages_in_use);
		EXPECT_EQ(self->base.mappings, s.mappings);
		EXPECT_EQ(0ULL, s.alloc_failures);
	}
	for (i = 0; i < NPATHS; i++)
		if (self->fd[i] >= 0)
			close(self->fd[i]);
}

/* Mappings the benchmark devices refuse, with the errno they document. */
TEST_F(fault_bench, bad_mappings_refused)
{
	const int rw = PROT_READ | PROT_WRITE;
	int d;

	for (d = NOPFN; d <= EAGER; d++) {
		int fd = self->fd[d];

		EXPECT_EQ(-EINVAL, map_err(fd, psz, rw, MAP_PRIVATE, 0))
			TH_LOG("%s: private", path_name[d]);
		EXPECT_EQ(-EINVAL, map_err(fd, psz, rw, MAP_SHARED, psz))
			TH_LOG("%s: offset", path_name[d]);
		EXPECT_EQ(-EPERM, map_err(fd, psz, PROT_READ, MAP_SHARED, 0))
			TH_LOG("%s: read-only", path_name[d]);
		EXPECT_EQ(-EFBIG, map_err(fd, NOPFN_BENCH_MAX_BYTES + psz, rw,
					  MAP_SHARED, 0))
			TH_LOG("%s: too long", path_name[d]);
		EXPECT_EQ(0, map_err(fd, NOPFN_BENCH_MAX_BYTES, rw,
				     MAP_SHARED, 0))
			TH_LOG("%s: longest", path_name[d]);
	}
	EXPECT_EQ(-ENOTTY, ioctl(self->fd[VMF], NOPFN_TEST_IOC_WAKE) ?
		  -errno : 0);
}

/*
 * The lazy devices map a page on its first touch only, one handler call
 * each; the eager one has all pages at mmap() and takes no fault. All
 * share the pages with a child after fork() and keep them until the last
 * VMA is gone.
 */
TEST_F(fault_bench, pages_live_as_long_as_the_mapping)
{
	const unsigned long n = 8;
	struct nopfn_bench_stats s0, s;
	int d;

	for (d = NOPFN; d <= EAGER; d++) {
		int fd = self->fd[d];
		char *p;
		pid_t pid;

		ASSERT_EQ(0, bench_stats(fd, &s0));
		p = mmap(NULL, n * psz, PROT_READ | PROT_WRITE, MAP_SHARED,
			 fd, 0);
		ASSERT_NE(MAP_FAILED, p);
		ASSERT_EQ(0, bench_stats(fd, &s));
		EXPECT_EQ(s0.mappings + 1, s.mappings);
		EXPECT_EQ(s0.pages_in_use + (d == EAGER ? n : 0),
			  s.pages_in_use) TH_LOG("%s", path_name[d]);

		poke64(p, 1);
		poke64(p + 5 * psz, 5);
		poke64(p + 5 * psz + 8, 6);	/* same page: no new fault */
		ASSERT_EQ(0, bench_stats(fd, &s));
		EXPECT_EQ(s0.faults + (d == EAGER ? 0 : 2), s.faults)
			TH_LOG("%s", path_name[d]);
		EXPECT_EQ(s0.pages_in_use + (d == EAGER ? n : 2),
			  s.pages_in_use);

		pid = fork();
		ASSERT_LE(0, pid);
		if (pid == 0) {
			/* The parent's stores, and one page more. */
			if (peek64(p) != 1 || peek64(p + 5 * psz) != 5)
				_exit(1);
			if (peek64(p + 7 * psz))
				_exit(2);
			poke64(p + 7 * psz, 7);
			_exit(0);
		}
		EXPECT_EQ(0, wait_for(pid)) TH_LOG("%s", path_name[d]);
		EXPECT_EQ(7ULL, peek64(p + 7 * psz));

		/* Half unmapped: the pages stay for the other half. */
		ASSERT_EQ(0, munmap(p, n / 2 * psz));
		ASSERT_EQ(0, bench_stats(fd, &s));
		EXPECT_EQ(s0.pages_in_use + (d == EAGER ? n : 3),
			  s.pages_in_use) TH_LOG("%s", path_name[d]);
		EXPECT_EQ(5ULL, peek64(p + 5 * psz));
		ASSERT_EQ(0, munmap(p + n / 2 * psz, n / 2 * psz));
		ASSERT_EQ(0, bench_stats(fd, &s));
		EXPECT_EQ(s0.pages_in_use, s.pages_in_use);
		EXPECT_EQ(s0.mappings, s.mappings);
		EXPECT_EQ(s.pages_allocated - s0.pages_allocated,
			  s.pages_freed - s0.pages_freed);
	}
}

/* The mapping of a sample of @pattern: its pages, and those it touches. */
static long pattern_pages(int pattern)
{
	return pattern == DENSE || pattern == DENSE_READ ? DENSE_PAGES :
	       (long)(NOPFN_BENCH_MAX_BYTES / psz);
}

static long touches(int pattern)
{
	long pages = pattern_pages(pattern);

	switch (pattern) {
	case SPARSE:
		return (pages + SPARSE_STEP - 1) / SPARSE_STEP;
	case UNTOUCHED:
		return 0;
	default:
		return pages;
	}
}

/* Mappings per sample, fewer on a slow kernel (scale @s). */
static int reps_of(int path, int pattern, int s)
{
	int reps = reps_table[pattern][path];

	return reps > s ? reps / s : 1;
}

/*
 * Where the measurement is, for a SIGSEGV or SIGBUS: the measuring child
 * died of SIGSEGV once on riscv64 (the harness's rerun passed), with
 * nothing in the kernel log on the console. Should it happen again, the
 * handler says what was being touched and shows the end of the kernel
 * log, then dies of the same signal.
 */
static volatile int at_path = -1, at_pattern = -1;
static volatile long at_index = -1;
static char *volatile at_map;

static void on_fatal_signal(int sig, siginfo_t *si, void *uc)
{
	char buf[256];
	pid_t pid;
	int n;

	(void)uc;
	n = snprintf(buf, sizeof(buf),
		     "# signal %d code %d at %p: path %d pattern %d page %ld of the mapping at %p\n",
		     sig, si->si_code, si->si_addr, at_path, at_pattern,
		     at_index, at_map);
	if (write(STDOUT_FILENO, buf, n) < 0)
		_exit(128 + sig);
	pid = fork();
	if (pid == 0) {
		execl("/bin/sh", "sh", "-c", "dmesg | tail -n 30 | sed 's/^/# /'",
		      (char *)NULL);
		_exit(127);
	}
	if (pid > 0)
		waitpid(pid, NULL, 0);
	signal(sig, SIG_DFL);
	raise(sig);
}

static void catch_fatal_signals(void)
{
	struct sigaction sa = {
		.sa_sigaction = on_fatal_signal,
		.sa_flags = SA_SIGINFO | SA_RESETHAND,
	};

	sigaction(SIGSEGV, &sa, NULL);
	sigaction(SIGBUS, &sa, NULL);
}

/* The page faults this task has taken (getrusage(): min_flt + maj_flt). */
static long task_faults(void)
{
	struct rusage ru;

	if (getrusage(RUSAGE_SELF, &ru))
		return 0;
	return ru.ru_minflt + ru.ru_majflt;
}

/*
 * One mmap() + touch + munmap() of @pattern on @path, in clock ticks, or a
 * negative errno. The page faults it took are added to fig->faults (read
 * outside the timed part).
 */
static double map_touch_unmap(int path, int pattern, int fd)
{
	const long pages = pattern_pages(pattern);
	const long step = pattern == SPARSE ? SPARSE_STEP : 1;
	const size_t len = pages * psz;
	volatile __u64 sink = 0;
	long f0 = task_faults();
	double t0 = now(), t;
	char *p;
	long i;

	if (path == ANON)
		p = mmap(NULL, len, PROT_READ | PROT_WRITE,
			 MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	else
		p = mmap(NULL, len, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
	if (p == MAP_FAILED)
		return -errno;
	at_path = path;
	at_pattern = pattern;
	at_map = p;
	for (i = 0; pattern != UNTOUCHED && i < pages; i += step) {
		at_index = i;
		if (pattern == DENSE_READ)
			sink += peek64(p + i * psz);
		else
			poke64(p + i * psz, i + 1);
	}
	(void)sink;
	at_index = -1;
	if (munmap(p, len))
		return -errno;
	t = now() - t0;
	at_map = NULL;
	fig->faults[path][pattern] += task_faults() - f0;
	fig->touched[path][pattern] += touches(pattern);
	return t;
}

/* A fixed pseudo-random sequence (xorshift64), for the order of turns. */
static unsigned int next_random(void)
{
	static uint64_t x = 0x9e3779b97f4a7c15ULL;

	x ^= x << 13;
	x ^= x >> 7;
	x ^= x << 17;
	return x >> 32;
}

/* Shuffle @v of @n (Fisher-Yates). */
static void shuffle(int *v, int n)
{
	int i, j, t;

	for (i = n - 1; i > 0; i--) {
		j = next_random() % (i + 1);
		t = v[i];
		v[i] = v[j];
		v[j] = t;
	}
}

/*
 * The samples of @pattern (scale @s): for each path, the fastest of its
 * mappings, in clock ticks per touched page (per mapping if none is
 * touched). The paths take turns mapping by mapping, in an order drawn
 * anew for each turn, so that what the host does meanwhile, and what a
 * path leaves behind for the next one (page allocator lists, page
 * tables), hits them alike; the fastest is the one the host disturbed
 * least (a descheduled vCPU only ever adds time). Returns 0 or a negative
 * errno, and counts the touches of each path in @touched.
 */
static int sample(int pattern, int s, const int *fd, double *best,
		  long *touched)
{
	int paths[NPATHS], reps[NPATHS], order[NPATHS];
	int n = 0, most = 0, r, k;

	for (k = 0; k < NPATHS; k++) {
		if (!measured(k, pattern))
			continue;
		reps[n] = reps_of(k, pattern, s);
		if (reps[n] > most)
			most = reps[n];
		paths[n++] = k;
	}
	for (r = 0; r < most; r++) {
		for (k = 0; k < n; k++)
			order[k] = k;
		shuffle(order, n);
		for (k = 0; k < n; k++) {
			int i = order[k], path = paths[i];
			double t;

			if (r >= reps[i])
				continue;
			t = map_touch_unmap(path, pattern, fd[path]);
			if (t < 0)
				return (int)t;
			if (!r || t < best[path])
				best[path] = t;
			touched[path] += touches(pattern);
		}
	}
	for (k = 0; k < n && touches(pattern); k++)
		best[paths[k]] /= touches(pattern);
	return 0;
}

/*
 * What a fault costs over what eager mapping spends on a page, per round:
 * nopfn dense ns per page over eager sparse ns per mapped page, at least 1.
 */
static void fault_premium(double *prem)
{
	const double mapped_per_touched = (double)fig->sparse_pages /
					  fig->sparse_touched;
	int i;

	for (i = 0; i < ROUNDS; i++) {
		prem[i] = fig->ns[NOPFN][DENSE][i] /
			  (fig->ns[EAGER][SPARSE][i] / mapped_per_touched);
		if (prem[i] < 1)
			prem[i] = 1;
	}
}

static void print_metrics(void)
{
	double prem[ROUNDS];
	char name[128];
	int path, pattern, i;

	for (pattern = 0; pattern < NPATTERNS; pattern++) {
		for (path = 0; path < NPATHS; path++) {
			double r[ROUNDS];

			if (!measured(path, pattern))
				continue;
			printf("# %-5s %-10s ns:", path_name[path],
			       pattern_name[pattern]);
			for (i = 0; i < ROUNDS; i++)
				printf(" %.0f", fig->ns[path][pattern][i]);
			printf("\n");
			snprintf(name, sizeof(name), "%s.%s.%s",
				 pattern == UNTOUCHED ? "ns_per_mapping" :
				 "ns_per_page", path_name[path],
				 pattern_name[pattern]);
			metric(name, median(fig->ns[path][pattern], ROUNDS),
			       "ns");
			if (path == VMF || pattern == UNTOUCHED)
				continue;
			ratios(path, VMF, pattern, r);
			snprintf(name, sizeof(name), "ratio.%s_vs_vmf.%s",
				 path_name[path], pattern_name[pattern]);
			ratio_metrics(name, r);
		}
	}
	for (pattern = DENSE; pattern <= SPARSE; pattern++) {
		double r[ROUNDS];

		if (pattern == DENSE_READ)
			continue;
		ratios(EAGER, NOPFN, pattern, r);
		snprintf(name, sizeof(name), "ratio.eager_vs_lazy.%s",
			 pattern_name[pattern]);
		ratio_metrics(name, r);
	}
	fault_premium(prem);
	ratio_metrics("ratio.fault_vs_eager_page", prem);
	/*
	 * Faults per touched page: 1 where each first touch is one fault;
	 * more where a path takes a second one (a write to a clean PTE
	 * without hardware dirty bits, a spurious fault after the PTE went
	 * in); 0 for eager and for pages a path never faults.
	 */
	for (pattern = 0; pattern < NPATTERNS; pattern++) {
		for (path = 0; path < NPATHS; path++) {
			if (!measured(path, pattern) ||
			    !fig->touched[path][pattern])
				continue;
			snprintf(name, sizeof(name), "faults_per_touch.%s.%s",
				 path_name[path], pattern_name[pattern]);
			metric(name, (double)fig->faults[path][pattern] /
			       fig->touched[path][pattern], "");
		}
	}
}

TEST_F_TIMEOUT(fault_bench, measure, 300)
{
	const int s = scale();
	struct nopfn_bench_stats b0, b1;
	long touched[NPATHS] = { 0 };
	double mono0, mono1, clk0, clk1, ns_per_tick;
	int round, g, i, path, pattern;
	long res;

	ASSERT_NE(NULL, fig);
	memset(fig, 0, sizeof(*fig));
	fig->sparse_pages = pattern_pages(SPARSE);
	fig->sparse_touched = touches(SPARSE);
	ASSERT_EQ(0, bench_stats(self->fd[VMF], &b0));

	catch_fatal_signals();
	res = pick_clock();
	ASSERT_LE(0, res) TH_LOG("clock: %s", strerror(errno));
	clock_edge(&mono0, &clk0);

	/* Round -1 warms up the page allocator, page tables and caches. */
	for (round = -1; round < ROUNDS; round++) {
		for (g = 0; g < NPATTERNS; g++) {
			double best[NPATHS];
			int err;

			pattern = (g + round + 1) % NPATTERNS;
			err = sample(pattern, s, self->fd, best, touched);
			ASSERT_EQ(0, err) TH_LOG("%s: %s",
						 pattern_name[pattern],
						 strerror(-err));
			for (path = 0; round >= 0 && path < NPATHS; path++)
				fig->ns[path][pattern][round] = best[path];
		}
	}

	clock_edge(&mono1, &clk1);
	ns_per_tick = (mono1 - mono0) / (clk1 - clk0);
	for (path = 0; path < NPATHS; path++)
		for (pattern = 0; pattern < NPATTERNS; pattern++)
			for (i = 0; i < ROUNDS; i++)
				fig->ns[path][pattern][i] *= ns_per_tick;

	/* Each touch of a lazy mapping was one call of its handler. */
	ASSERT_EQ(0, bench_stats(self->fd[VMF], &b1));
	EXPECT_EQ(b0.faults + touched[NOPFN] + touched[VMF], b1.faults);
	EXPECT_EQ(b0.pages_in_use, b1.pages_in_use);

	printf("# %d rounds in %.1f s (scale %d): dense %d pages, sparse %ld touching %ld; clock %s, CLOCK_MONOTONIC resolution %ld ns\n",
	       ROUNDS, (mono1 - mono0) / 1e9, s, DENSE_PAGES,
	       fig->sparse_pages, fig->sparse_touched,
	       use_tsc ? "TSC on one CPU" : "CLOCK_MONOTONIC", res);
	print_metrics();
	fflush(stdout);
	fig->done = true;
}

/* Per round, @a's cost over @b's for @pattern: median, min and max. */
static double ratio_of(int a, int b, int pattern, double *lo, double *hi)
{
	double r[ROUNDS];

	ratios(a, b, pattern, r);
	spread(r, ROUNDS, lo, hi);
	return median(r, ROUNDS);
}

/* The bar: ->nopfn() costs at most 1.05 times ->fault() per fault. */
static void check_nopfn_vs_vmf(struct __test_metadata *_metadata,
			       int pattern)
{
	double lo, hi, med;

	ASSERT_TRUE(fig && fig->done) TH_LOG("no figures: measure failed");
	if (debug_kernel())
		SKIP(return, DEBUG_KERNEL);
	med = ratio_of(NOPFN, VMF, pattern, &lo, &hi);
	TH_LOG("nopfn/vmf %s: median %.3f, rounds %.3f .. %.3f",
	       pattern_name[pattern], med, lo, hi);
	EXPECT_TRUE(med <= BAR_NOPFN_VS_VMF)
		TH_LOG("median %.3f over the bar %.2f", med, BAR_NOPFN_VS_VMF);
}

TEST_F(fault_bench, nopfn_vs_vmf_dense)
{
	check_nopfn_vs_vmf(_metadata, DENSE);
}

TEST_F(fault_bench, nopfn_vs_vmf_dense_read)
{
	check_nopfn_vs_vmf(_metadata, DENSE_READ);
}

/*
 * The bar, as it was set: eager over lazy (->nopfn()) for a sparse
 * mapping, one page touched in 64, the median of the rounds at least
 * 64 / 2 = 32, both times from the same round. It assumes a fault that
 * costs no more than what eager mapping spends on a page; under QEMU TCG a
 * fault costs more (the exception is emulated, and on riscv64 the
 * sfence.vma after each new PTE flushes QEMU's whole TLB), so some
 * targets miss it: the fault premium of the same rounds is printed to say
 * by how much, and docs/benchmarks.md has the figures and the profile.
 */
TEST_F(fault_bench, sparse_lazy_beats_eager)
{
	double bar, ratio[ROUNDS], prem[ROUNDS];
	double lo, hi, med;

	ASSERT_TRUE(fig && fig->done) TH_LOG("no figures: measure failed");
	if (debug_kernel())
		SKIP(return, DEBUG_KERNEL);
	bar = (double)fig->sparse_pages / fig->sparse_touched /
	      BAR_SPARSE_FACTOR;
	ratios(EAGER, NOPFN, SPARSE, ratio);
	fault_premium(prem);
	spread(ratio, ROUNDS, &lo, &hi);
	TH_LOG("eager/nopfn sparse: median %.1f, rounds %.1f .. %.1f; issue's bar %.1f",
	       median(ratio, ROUNDS), lo, hi, bar);
	spread(prem, ROUNDS, &lo, &hi);
	TH_LOG("fault premium (a fault / an eager page): median %.2f, rounds %.2f .. %.2f",
	       median(prem, ROUNDS), lo, hi);
	med = median(ratio, ROUNDS);
	EXPECT_TRUE(med >= bar)
		TH_LOG("eager/nopfn sparse median %.1f under the bar %.1f",
		       med, bar);
}

TEST_HARNESS_MAIN
