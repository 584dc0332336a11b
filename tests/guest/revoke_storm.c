// SPDX-License-Identifier: GPL-2.0
/*
 * revoke_storm: NOPFN_TEST_IOC_REVOKE against a thread that faults on the
 * page, round after round, for a bounded time: once both are done, no PTE
 * may map the revoked page.
 *
 * A ->nopfn() handler that calls nopfn_read_begin() before it looks up the
 * PFN gets its PTE installed only if the driver's sequence count did not
 * move meanwhile, checked under the PTE lock; a revoke writes the count and
 * then zaps with nopfn_revoke_range(). When the zap finds the page table,
 * the PTE lock orders the two. When it finds none, because the fault is
 * only now making it, 6.1's zap_pmd_range() skips the pmd_none() range
 * without taking any lock: then only the smp_mb() in insert_pfn(), between
 * the fault's store of the new table and its load of the count, paired
 * with the one in nopfn_revoke_range(), between the revoke's store of the
 * count and the zap's load of the table, keeps the two from both reading
 * the old value (a store-buffering pattern): the fault would install its
 * PTE after a zap that saw no table, a PTE of a page the driver took back.
 * The deterministic cases (a fault parked at a gate while the revoke runs)
 * are the series' nopfn-tests.c; this is the storm.
 *
 * So each round starts without a page table for the page: the page is
 * mapped alone in a span free of any other mapping (aligned to the span of
 * a page table of the larger page sizes too), and munmap() at the end of
 * the round frees the table again (a diagnostic says whether VmPTE shows
 * it). A round: page 0 back to NOPFN_TEST_RAM, mmap() of it there; the
 * worker thread, which polls for the round without a system call, reads
 * the page once; the main thread revokes it after a random spin of 0..D
 * (or, when the read wins even without, the read waits 0..D instead); once
 * both are done, NOPFN_TEST_IOC_QUERY must find no PTE. The read must
 * either return the page's zero or get SIGBUS at its address: anything
 * else, an ioctl error or a PTE left fails at once. D adapts every WINDOW
 * rounds so that both outcomes keep happening, the race being closest
 * where each wins about as often. At the end the handler's counters must
 * add up: a SIGBUS per round the revoke won, a PFN per round the fault
 * won, at most one more PFN (not kept) per round the revoke won.
 *
 * The limit: under QEMU TCG on an x86 host, every atomic read-modify-write
 * of the guest (spin_lock(), mutex_unlock(), i_mmap_lock_read()) becomes a
 * locked instruction of the host, a full barrier on x86, and both sides
 * take such locks between their store and their load; a missing smp_mb()
 * is therefore unlikely to show there, whatever the guest architecture.
 * The storm still checks the invariant that holds on any host: no PTE
 * survives a completed revoke, which fails if the core installs a PTE
 * without the count check, or after a count that moved.
 *
 * Thresholds: the storm needs MIN_ROUNDS (200) rounds and, with two CPUs
 * or more online, at least MIN_SHARE_PCT (5 %) of them won by each side.
 * A round (five system calls and a fault that makes a page table) costs
 * some 100-500 us under TCG, a few ms on a debug kernel, whose --scale 4
 * stretches the 5 s to 20: thousands of rounds either way, so 200 leaves a
 * margin of ten or more for a host starved by other work. D starts at
 * 20 us of spinning and moves by 4x after a window of 16 rounds won all
 * by one side, 2x when the other won 2 or fewer, 1.25x when 4 or fewer:
 * it reaches a balance point anywhere below its bound of 2 ms within a few
 * windows (a hundred rounds or so) and then keeps each window between
 * about 1/4 and 3/4, so over thousands of rounds each side wins some
 * 20-50 %. 5 % then fails only a storm in which one side wins
 * whatever the delay: one that does not interleave the two, which would
 * pass vacuously. With one CPU the fault and the revoke can interleave
 * only when one of them is preempted: only the round count is required.
 *
 *   revoke_storm [--seconds N] [--scale K]
 *
 * --scale multiplies the time (a slow, debug kernel); the run is capped at
 * MAX_RUN_SECONDS, below the harness's timeout.
 *
 * matrix-args: --seconds 5 --scale {scale}
 */
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <pthread.h>
#include <sched.h>
#include <setjmp.h>
#include <signal.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

/* 6.1's harness has an unused parameter of its own. */
#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Wunused-parameter"
#include "kselftest_harness.h"
#pragma GCC diagnostic pop
#include "nopfn_fixture.h"
#include "rand.h"

#define MIN_ROUNDS	200	/* rounds the verdict needs */
#define MIN_SHARE_PCT	5	/* each side's least share, two CPUs or more */
#define WINDOW		16	/* rounds between adjustments of the delays */
#define DELAY_FLOOR	16	/* spins: below this a delay is none */
#define START_US	20	/* the revoke's first delay bound */
#define MAX_DELAY_US	2000	/* the bound of either delay */
#define MIN_SPAN	(32UL << 20)	/* the free span around the page */
#define HARNESS_TIMEOUT	300	/* s, the harness's limit for the test */
#define MAX_RUN_SECONDS	240	/* --seconds * --scale, below that */
#define WAIT_SECONDS	30	/* for the worker to end a round */
#define NOTE_SECONDS	10	/* between progress lines */
#define NS_PER_S	1000000000ULL

#define LOAD_ACQ(p)	__atomic_load_n(p, __ATOMIC_ACQUIRE)
#define STORE_REL(p, v)	__atomic_store_n(p, v, __ATOMIC_RELEASE)

static unsigned int opt_seconds = 5, opt_scale = 1;

/* What the main thread and the worker share. */
struct storm {
	volatile char *addr;		/* the page, when a round runs */
	unsigned int spin_limit;	/* polls before each sched_yield() */
	/* written by the main thread */
	unsigned int round;		/* the round started last */
	unsigned int read_spins;	/* this round's delay of the read */
	bool stop;
	/* written by the worker */
	unsigned int seen;		/* the round it waited for last */
	unsigned int done;		/* the round it ended last */
	int sig;			/* 0: the read returned val */
	char val;
	siginfo_t si;
};

static void spin(unsigned long n)
{
	while (n--)
		__asm__ __volatile__("" ::: "memory");
}

/*
 * Wait until *@p is @want: poll @spin_limit times without a system call,
 * then sched_yield() between polls, so that on one CPU the other thread
 * gets to run. With @timeout_ns, give up (false) after about that long.
 */
static bool wait_for_value(unsigned int *p, unsigned int want,
			   unsigned int spin_limit, uint64_t timeout_ns)
{
	uint64_t end = 0;
	unsigned long i;

	for (i = 0; LOAD_ACQ(p) != want; i++) {
		if (i < spin_limit) {
			spin(1);
			continue;
		}
		sched_yield();
		if (!timeout_ns || (i & 63))
			continue;
		if (!end)
			end = now_ns() + timeout_ns;
		else if (now_ns() > end)
			return false;
	}
	return true;
}

/* The worker's round, in guarded(): SIGBUS and SIGSEGV jump out of it. */
static void worker_round(void *arg)
{
	struct storm *s = arg;
	unsigned int r = s->seen + 1;

	wait_for_value(&s->round, r, s->spin_limit, 0);
	s->seen = r;
	/* stored before the access, which may not return */
	__asm__ __volatile__("" ::: "memory");
	if (__atomic_load_n(&s->stop, __ATOMIC_RELAXED))
		return;
	spin(s->read_spins);
	s->val = *s->addr;
}

static void *worker(void *arg)
{
	struct storm *s = arg;
	int sig;

	for (;;) {
		sig = guarded(worker_round, s);
		if (__atomic_load_n(&s->stop, __ATOMIC_RELAXED))
			return NULL;
		s->sig = sig;
		if (sig)
			s->si = guard_info;
		STORE_REL(&s->done, s->seen);
	}
}

/* The outcome of the worker's read, for a message. */
static const char *outcome(const struct storm *s, const void *addr,
			   char *buf, size_t len)
{
	if (!s->sig)
		snprintf(buf, len, "the read returned %#x (the fault won)",
			 (unsigned char)s->val);
	else if (s->sig == SIGBUS && s->si.si_addr == fault_addr(addr))
		snprintf(buf, len, "the read got SIGBUS (the revoke won)");
	else
		snprintf(buf, len, "the read got %s at %p, si_code %d",
			 s->sig == SIGBUS ? "SIGBUS" :
			 s->sig == SIGSEGV ? "SIGSEGV" : "a signal",
			 s->si.si_addr, s->si.si_code);
	return buf;
}

/* The delays of a round: each side spins 0..its bound before it acts. */
struct delays {
	unsigned int revoke;	/* the main thread's, before the revoke */
	unsigned int read;	/* the worker's, before the read */
	unsigned int max;	/* the bound of either */
};

/*
 * Move the balance by the factor @num / @den (> 1): @later gives the read
 * more time before the revoke (more rounds won by the fault), @later false
 * less. The delay on the side that should act sooner shrinks while there
 * is one, else the other side's grows.
 */
static void shift(struct delays *d, bool later, unsigned int num,
		  unsigned int den)
{
	unsigned int *grow = later ? &d->revoke : &d->read;
	unsigned int *shrink = later ? &d->read : &d->revoke;
	uint64_t v;

	if (*shrink) {
		*shrink = (uint64_t)*shrink * den / num;
		if (*shrink < DELAY_FLOOR) {
			*shrink = 0;
			*grow = DELAY_FLOOR;
		}
		return;
	}
	v = (uint64_t)(*grow > DELAY_FLOOR ? *grow : DELAY_FLOOR) * num / den;
	*grow = v < d->max ? v : d->max;
}

/* After a window of WINDOW rounds of which the fault won @won. */
static void adapt(struct delays *d, unsigned int won)
{
	if (won == 0)
		shift(d, true, 4, 1);
	else if (won <= WINDOW / 8)
		shift(d, true, 2, 1);
	else if (won <= WINDOW / 4)
		shift(d, true, 5, 4);
	else if (won == WINDOW)
		shift(d, false, 4, 1);
	else if (won >= WINDOW - WINDOW / 8)
		shift(d, false, 2, 1);
	else if (won >= WINDOW - WINDOW / 4)
		shift(d, false, 5, 4);
}

/* Spins of spin() per microsecond: the best of three timings of >= 5 ms. */
static double spins_per_us(void)
{
	unsigned long n = 1UL << 16;
	uint64_t t, best;
	int i;

	for (;;) {	/* long enough for a coarse clock */
		t = now_ns();
		spin(n);
		t = now_ns() - t;
		if (t >= 5000000 || n >= 1UL << 28)
			break;
		n *= 2;
	}
	best = t;
	for (i = 0; i < 2; i++) {
		t = now_ns();
		spin(n);
		t = now_ns() - t;
		if (t < best)
			best = t;
	}
	return best ? (double)n * 1000.0 / best : 1000.0;
}

static unsigned int us_to_spins(double rate, double us)
{
	double v = rate * us;

	if (v > UINT_MAX / 4)
		v = UINT_MAX / 4;
	return v < DELAY_FLOOR ? DELAY_FLOOR : (unsigned int)v;
}

/* CPUs this thread may run on. */
static int cpus_online(void)
{
	long n = sysconf(_SC_NPROCESSORS_ONLN);
	cpu_set_t set;

	if (n < 1)
		n = 1;
	if (!sched_getaffinity(0, sizeof(set), &set) && CPU_COUNT(&set) < n)
		n = CPU_COUNT(&set);
	return n;
}

/*
 * An address aligned to *@spanp around which nothing is mapped for that
 * many bytes: reserve twice as much, note the aligned address inside and
 * unmap it all. The span is at least MIN_SPAN and what a page of 8-byte
 * PTEs maps (2 MiB with 4K pages, 32 MiB with 16K, 512 MiB with 64K), so
 * that the page is alone in its page table and munmap() frees the table;
 * halved down to MIN_SPAN if the address space has no room. NULL if not
 * even that fits.
 */
static char *free_span(unsigned long *spanp)
{
	unsigned long span = (unsigned long)psz * (psz / 8);

	if (span < MIN_SPAN)
		span = MIN_SPAN;
	for (; span >= MIN_SPAN; span /= 2) {
		void *res = mmap(NULL, 2 * span, PROT_NONE, MAP_PRIVATE |
				 MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
		uintptr_t a;

		if (res == MAP_FAILED)
			continue;
		a = ((uintptr_t)res + span - 1) & ~(uintptr_t)(span - 1);
		munmap(res, 2 * span);
		*spanp = span;
		return (char *)a;
	}
	return NULL;
}

/* Page 0 of @fd at @at, which must be free: else NULL, errno set. */
static char *map_at(int fd, char *at)
{
	void *m = mmap(at, psz, PROT_READ | PROT_WRITE,
		       MAP_SHARED | MAP_FIXED_NOREPLACE, fd, 0);

	if (m == MAP_FAILED)
		return NULL;
	if (m != at) {		/* a kernel that takes the flag for a hint */
		munmap(m, psz);
		errno = EEXIST;
		return NULL;
	}
	return m;
}

#define MAP_AT_FAILED "mmap(MAP_FIXED_NOREPLACE) of page 0 at %p: %s%s"
#define MAP_AT_WHY(e) ((e) == EEXIST ?					\
	" (something is mapped in the span kept free for the storm)" : "")

/* VmPTE of /proc/self/status in kB (page tables), -1 if not found. */
static long vm_pte_kb(void)
{
	char buf[4096], *p;
	ssize_t n;
	int fd;

	fd = open("/proc/self/status", O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return -1;
	n = read(fd, buf, sizeof(buf) - 1);
	close(fd);
	if (n <= 0)
		return -1;
	buf[n] = '\0';
	p = strstr(buf, "\nVmPTE:");
	return p ? strtol(p + 7, NULL, 10) : -1;
}

/* ----------------------------------------------------------- fixture */

FIXTURE(revoke_storm) {
	int fd;		/* the file under test */
	int watch;	/* a second file, to read module-wide counters */
	struct counts base;	/* module-wide counters at setup */
};

NOPFN_FIXTURE_SETUP(revoke_storm)

/* ------------------------------------------------------------- tests */

TEST_F_TIMEOUT(revoke_storm, no_stale_pte, HARNESS_TIMEOUT)
{
	unsigned int r, rounds = 0, reads = 0, sigbus = 0, won = 0;
	unsigned long span = 0;
	long pte_none, pte_mapped, pte_unmapped;
	uint64_t start, deadline, next_note, elapsed;
	struct nopfn_test_query q;
	struct counts base, c;
	struct delays d;
	struct storm s;
	struct rng rng;
	pthread_t th;
	char *target, *m, what[128];
	double rate;
	int ncpu, ret;
	bool ok;

	ncpu = cpus_online();
	rate = spins_per_us();
	rng_seed(&rng, now_ns() ^ ((uint64_t)getpid() << 32));
	memset(&s, 0, sizeof(s));
	/* one CPU: yield at once, the other thread needs this one */
	s.spin_limit = ncpu > 1 ? us_to_spins(rate, 1000) : DELAY_FLOOR;
	d.revoke = us_to_spins(rate, START_US);
	d.read = 0;
	d.max = us_to_spins(rate, MAX_DELAY_US);
	if (d.max < d.revoke)
		d.max = d.revoke;

	/* The worker first: its stack is then mapped before the span is. */
	guard_install(guard_handler);
	ASSERT_EQ(0, pthread_create(&th, NULL, worker, &s));

	target = free_span(&span);
	ASSERT_NE(NULL, target) TH_LOG("no %lu MiB of address space free",
				       2 * MIN_SPAN >> 20);
	s.addr = target;	/* published by the first round's store */

	/* Does munmap() free the page table here? VmPTE tells. */
	ASSERT_EQ(0, set_pages(self->fd, 0, 1, NOPFN_TEST_RAM, 0));
	pte_none = vm_pte_kb();
	m = map_at(self->fd, target);
	ASSERT_EQ(target, m) TH_LOG(MAP_AT_FAILED, target, strerror(errno),
				    MAP_AT_WHY(errno));
	ASSERT_EQ(0, *(volatile char *)m);
	pte_mapped = vm_pte_kb();
	ASSERT_EQ(0, munmap(m, psz));
	pte_unmapped = vm_pte_kb();

	base = stats(self->fd);
	ASSERT_LE(0, base.calls);
	start = now_ns();
	deadline = start + (uint64_t)opt_seconds * opt_scale * NS_PER_S;
	next_note = start + NOTE_SECONDS * NS_PER_S;
	for (r = 1; ; r++) {
		uint64_t t = now_ns();

		if (t >= deadline)
			break;
		if (t >= next_note) {
			diag("revoke_storm: %u rounds in %llu s", rounds,
			     (unsigned long long)((t - start) / NS_PER_S));
			next_note += NOTE_SECONDS * NS_PER_S;
		}
		ASSERT_EQ(0, set_pages(self->fd, 0, 1, NOPFN_TEST_RAM, 0));
		m = map_at(self->fd, target);
		ASSERT_EQ(target, m) TH_LOG("round %u: " MAP_AT_FAILED, r,
					    target, strerror(errno),
					    MAP_AT_WHY(errno));

		s.read_spins = below(&rng, d.read + 1);
		STORE_REL(&s.round, r);
		spin(below(&rng, d.revoke + 1));
		ret = revoke_pages(self->fd, 0, 1);
		ok = wait_for_value(&s.done, r, s.spin_limit,
				    WAIT_SECONDS * NS_PER_S);
		ASSERT_TRUE(ok) TH_LOG("round %u: the worker's read did not end in %d s",
				       r, WAIT_SECONDS);
		ASSERT_EQ(0, ret) TH_LOG("round %u: NOPFN_TEST_IOC_REVOKE: %s",
					 r, strerror(-ret));
		ret = query(self->fd, target, &q);
		ASSERT_EQ(0, ret) TH_LOG("round %u: NOPFN_TEST_IOC_QUERY: %s",
					 r, strerror(-ret));
		outcome(&s, target, what, sizeof(what));
		ASSERT_EQ(0, q.flags & NOPFN_TEST_Q_PRESENT) {
			TH_LOG("round %u: a PTE maps the page after its revoke ended: pfn %#llx (the page's RAM pfn %#llx), flags %#x; %s",
			       r, (unsigned long long)q.pfn,
			       (unsigned long long)q.ram_pfn, q.flags, what);
		}
		if (!s.sig) {
			ASSERT_EQ(0, s.val) TH_LOG("round %u: %s, not 0",
						   r, what);
			reads++;
			won++;
		} else {
			ASSERT_EQ(SIGBUS, s.sig) TH_LOG("round %u: %s", r, what);
			ASSERT_EQ(fault_addr(target), s.si.si_addr)
				TH_LOG("round %u: %s", r, what);
			sigbus++;
		}
		ASSERT_EQ(0, munmap(target, psz));
		rounds = r;
		if (r % WINDOW == 0) {
			adapt(&d, won);
			won = 0;
		}
	}
	elapsed = now_ns() - start;

	__atomic_store_n(&s.stop, true, __ATOMIC_RELAXED);
	STORE_REL(&s.round, r);
	ASSERT_EQ(0, pthread_join(th, NULL));

	/*
	 * The handler's count: one SIGBUS per round the revoke won, one PFN
	 * per round the fault won, and at most one more PFN in a round the
	 * revoke won: one the count check refused, or that the zap took
	 * before the access was repeated.
	 */
	c = stats(self->fd);
	EXPECT_EQ(sigbus, c.ret_sigbus - base.ret_sigbus);
	EXPECT_LE(reads, c.ret_pfn - base.ret_pfn);
	EXPECT_LE(c.ret_pfn - base.ret_pfn, reads + sigbus);
	EXPECT_EQ(c.calls - base.calls, (c.ret_pfn - base.ret_pfn) +
					(c.ret_sigbus - base.ret_sigbus));
	EXPECT_EQ(0, (c.ret_oom - base.ret_oom) +
		     (c.ret_refault - base.ret_refault) +
		     (c.ret_retry - base.ret_retry));
	close(self->fd);
	self->fd = -1;
	ASSERT_NO_LEAK();

	diag("revoke_storm: %u rounds in %.1f s on %d CPU%s: the fault won %u (%u%%), the revoke won %u (%u%%)",
	     rounds, elapsed / 1e9, ncpu, ncpu > 1 ? "s" : "", reads,
	     rounds ? reads * 100 / rounds : 0, sigbus,
	     rounds ? sigbus * 100 / rounds : 0);
	diag("revoke_storm: %lld PFNs of the handler not kept (the count moved before the PTE, or the zap took it before the access)",
	     (c.ret_pfn - base.ret_pfn) - reads);
	diag("revoke_storm: final delay bound: the revoke after 0..%u spins (%.1f us), the read after 0..%u (%.1f us); %.1f spins/us",
	     d.revoke, d.revoke / rate, d.read, d.read / rate, rate);
	if (pte_none >= 0 && pte_mapped > pte_none &&
	    pte_unmapped < pte_mapped)
		diag("revoke_storm: each round's fault makes the page table (VmPTE %ld kB before, %ld kB mapped, %ld kB unmapped; span %lu MiB)",
		     pte_none, pte_mapped, pte_unmapped, span >> 20);
	else
		diag("revoke_storm: VmPTE does not show the page table made and freed (%ld, %ld, %ld kB; span %lu MiB): rounds may start with one",
		     pte_none, pte_mapped, pte_unmapped, span >> 20);

	ASSERT_LE(MIN_ROUNDS, rounds)
		TH_LOG("only %u rounds in %.1f s", rounds, elapsed / 1e9);
	if (ncpu < 2) {
		diag("revoke_storm: one CPU: the fault and the revoke interleave only by preemption; only the round count is required");
		return;
	}
	EXPECT_LE((uint64_t)MIN_SHARE_PCT * rounds, (uint64_t)reads * 100)
		TH_LOG("the fault won %u of %u rounds, under %d%%: the storm did not interleave",
		       reads, rounds, MIN_SHARE_PCT);
	EXPECT_LE((uint64_t)MIN_SHARE_PCT * rounds, (uint64_t)sigbus * 100)
		TH_LOG("the revoke won %u of %u rounds, under %d%%: the storm did not interleave",
		       sigbus, rounds, MIN_SHARE_PCT);
}

/* ------------------------------------------------------------- main */

static void usage(const char *me)
{
	fprintf(stderr, "usage: %s [--seconds N] [--scale K] (N * K <= %d)\n",
		me, MAX_RUN_SECONDS);
	exit(KSFT_FAIL);
}

static void parse_args(int argc, char **argv)
{
	const char *me = argc > 0 ? argv[0] : "revoke_storm";
	int i;

	for (i = 1; i < argc; i++) {
		const char *v = i + 1 < argc ? argv[i + 1] : NULL;

		if (!v)
			usage(me);
		if (!strcmp(argv[i], "--seconds"))
			opt_seconds = strtoul(v, NULL, 0);
		else if (!strcmp(argv[i], "--scale"))
			opt_scale = strtoul(v, NULL, 0);
		else
			usage(me);
		i++;
	}
	if (!opt_seconds || !opt_scale || opt_seconds > MAX_RUN_SECONDS ||
	    opt_scale > MAX_RUN_SECONDS ||
	    opt_seconds * opt_scale > MAX_RUN_SECONDS)
		usage(me);
}

/*
 * TEST_HARNESS_MAIN with our options: the harness gets none of them (a
 * later harness parses its own with getopt()). With a single test, the
 * order in which the constructors register tests does not matter.
 */
int main(int argc, char **argv)
{
	char *harness_argv[] = { argc > 0 ? argv[0] : NULL, NULL };

	parse_args(argc, argv);
	return test_harness_run(1, harness_argv);
}
