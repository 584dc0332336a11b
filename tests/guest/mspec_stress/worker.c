// SPDX-License-Identifier: GPL-2.0
/*
 * mspec_stress: a worker process (see main.c): its fault handler, its
 * hammer threads and their loop of operations, its signaller and its end.
 */
#include "stress.h"

void __attribute__((format(printf, 1, 2))) fail(const char *fmt, ...)
{
	char buf[sizeof(sh->first_failure)];
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(buf, sizeof(buf), fmt, ap);
	va_end(ap);
	if (__atomic_fetch_add(&sh->failures, 1, __ATOMIC_SEQ_CST) == 0)
		memcpy(sh->first_failure, buf, sizeof(buf));
}

/* ----------------------------------------------- guarded memory access */

/*
 * Accesses that may fault run in guarded(): fault_handler() jumps back
 * with the signal, its si_code and si_addr (guard_info).
 */
static __thread unsigned int lost_resumes;
unsigned int w_index;

/* The faulting instruction's address, for the report (0 if unknown). */
static unsigned long fault_pc(const void *ucp)
{
	const ucontext_t *uc = ucp;

#if defined(__x86_64__)
	return uc->uc_mcontext.gregs[REG_RIP];
#elif defined(__aarch64__)
	return uc->uc_mcontext.pc;
#elif defined(__riscv)
	return uc->uc_mcontext.__gregs[REG_PC];
#else
	(void)uc;
	return 0;
#endif
}

void crash_note(const char *who, int sig, const siginfo_t *si, void *uc)
{
	unsigned long v[4] = { (unsigned long)sig, (unsigned long)si->si_code,
			       (unsigned long)si->si_addr, fault_pc(uc) };
	static const char * const label[4] = { ": signal ", " code ", " at ",
						" pc " };
	char buf[160];
	size_t n = 0;
	int i, k;

	buf[n++] = '#';
	buf[n++] = ' ';
	while (*who && n < 40)
		buf[n++] = *who++;
	for (i = 0; i < 4; i++) {
		const char *l = label[i];

		while (*l)
			buf[n++] = *l++;
		buf[n++] = '0';
		buf[n++] = 'x';
		for (k = 60; k >= 0; k -= 4)
			if ((v[i] >> k) || !k)
				buf[n++] = "0123456789abcdef"[(v[i] >> k) & 15];
	}
	buf[n++] = '\n';
	if (write(2, buf, n) < 0)
		return;
}

static void fault_handler(int sig, siginfo_t *si, void *uc)
{
	/*
	 * Under the kernel's fault injection, a SIGSEGV with its siginfo
	 * lost: SI_USER, from no process (see info_lost()).
	 */
	bool lost = sig == SIGSEGV && sh->kinject && si->si_code == SI_USER &&
		    !si->si_pid;

	/* Forced, or forced with its siginfo lost in a guarded access. */
	if ((sig == SIGSEGV && sh->kinject && si->si_code == SI_KERNEL) ||
	    (guard_armed() && lost)) {
		atomic_add_ul(&sh->forced_segv, 1);
		if (!guard_armed())
			sh->worker_forced[w_index] = 1;
	}
	if (!guard_armed() && lost && lost_resumes < LOST_RESUME_MAX) {
		lost_resumes++;
		atomic_add_ul(&sh->lost_info_segv, 1);
		return;
	}
	if (!guard_armed()) {
		/* A fault nobody expected: die of it, the controller sees. */
		if (!sh->worker_seen[w_index].sig) {
			sh->worker_seen[w_index].code = si->si_code;
			sh->worker_seen[w_index].addr = si->si_addr;
			sh->worker_seen[w_index].pc = fault_pc(uc);
			__atomic_store_n(&sh->worker_seen[w_index].sig, sig,
					 __ATOMIC_RELEASE);
		}
		crash_note("worker", sig, si, uc);
		signal(sig, SIG_DFL);
		raise(sig);
		return;
	}
	guard_jump(sig, si);
}

static void usr1_handler(int sig)
{
	(void)sig;
	atomic_add_ul(&sh->usr1_got, 1);
}

/* -------------------------------------------------- the worker's state */

unsigned int w_gen;
static pthread_barrier_t w_start;
__thread const char *op_now, *op_before;
struct hammer hammers[MAX_THREADS];
struct pool_slot pool[NPOOL];
static volatile int w_stop;
static uint64_t w_deadline;

bool info_lost(void)
{
	return sh->kinject && guard_info.si_code == SI_USER;
}

/*
 * The signal was the kernel's forced SIGSEGV (see forced_segv), or, under
 * the kernel's fault injection, a SIGSEGV whose siginfo was lost
 * (info_lost(): SI_USER with no address): a forced one whose sigqueue
 * entry failed to allocate too ("/dev/test_nopfn page 1: signal 11 code
 * 0 at (nil)", seen on x86_64-debug). Nothing else
 * sends a worker SIGSEGV. Both are counted in forced_segv and reported.
 */
bool forced(int sig)
{
	return sig == SIGSEGV &&
	       ((sh->kinject && guard_info.si_code == SI_KERNEL) ||
		info_lost());
}

static bool done(void)
{
	return w_stop || sh->stop || now_ns() >= w_deadline;
}

/* An errno that fault injection may cause; anything else is a failure. */
bool tolerated(int err)
{
	if (sh->kinject && (err == ENOMEM || err == EAGAIN)) {
		atomic_add_ul(&sh->tolerated, 1);
		return true;
	}
	return false;
}

uint64_t new_tag(struct hammer *h)
{
	return (uint64_t)(w_index + 1) << 56 | (uint64_t)(w_gen & 0xff) << 48 |
	       (uint64_t)h->idx << 40 | (++h->seq & 0xffffffffffULL);
}

/* PROT_NONE over @len bytes at @addr, taking whatever was there. */
int reserve(char *addr, size_t len)
{
	int i;

	for (i = 0; i < 1000; i++) {
		if (mmap(addr, len, PROT_NONE,
			 MAP_PRIVATE | MAP_ANONYMOUS | MAP_FIXED | MAP_NORESERVE,
			 -1, 0) == addr)
			return 0;
		if (!tolerated(errno))
			break;
		sleep_us(100);
	}
	fail("reserve %p+%#zx: %s", addr, len, strerror(errno));
	return -1;
}

/*
 * A device to map: mspec_uncached only where it maps (nmappable of
 * mspec_test.h; where it refuses, mspec_uncached.c asserts that).
 */
int pick_dev(struct rng *r)
{
	int dev = below(r, NDEV);

	return dev == D_UNCACHED && nmappable < NTYPES ? D_CACHED : dev;
}

/* --------------------------------------------------------- the thread */

/*
 * Injected failures for this thread from now on. Its stack is populated
 * first: a signal frame is written by the kernel, and a kernel-mode fault
 * that fails to allocate there is a forced SIGSEGV, not a retry.
 */
static void __attribute__((noinline)) make_it_fail(void)
{
	volatile char stack[128 << 10];
	size_t i;

	if (!sh->kinject)
		return;
	for (i = 0; i < sizeof(stack); i += 512)
		stack[i] = 0;
	if (write_file("/proc/thread-self/make-it-fail", "1"))
		fail("make-it-fail: %s", strerror(errno));
}

#ifdef MSPEC_STRESS_WILD
/*
 * Built only into tests/red/wild_stress.c: the first worker's first
 * hammer thread writes through a wild pointer at its first operation, as
 * a bug in the code under test would make a worker do. The run must fail
 * worker_exits. In every generation of that worker: with the kernel's
 * fault injection, a forced SIGSEGV (a signal frame that could not be
 * written) may end the first generation before it got there.
 */
static void wild_access(const struct hammer *h)
{
	static volatile uintptr_t wild = 16;	/* opaque to the compiler */

	if (w_index == 0 && h->idx == 0)
		*(volatile int *)wild = 1;
}
#else
static inline void wild_access(const void *h) { (void)h; }
#endif

/*
 * The operations of a hammer thread and their share of its loop: a roll
 * of 100 below @upto and not below the previous kind's. One on a slot
 * (@on_slot) wants a slot with a mapping (op_map() makes one), the others
 * (fork, the pool) do not.
 */
static const struct {
	unsigned int upto;
	void (*on_slot)(struct hammer *h, struct slot *s);
	void (*op)(struct hammer *h);
} hammer_ops[OP_SIGNAL] = {
	[OP_MAP] = { 8, op_map },
	[OP_TOUCH] = { 40, op_touch },
	[OP_FORK] = { 44, NULL, op_fork },
	[OP_MPROTECT] = { 50, op_mprotect },
	[OP_MADVISE] = { 54, op_madvise },
	[OP_MREMAP] = { 60, op_mremap },
	[OP_MUNMAP] = { 65, op_munmap },
	[OP_RACE_TOUCH] = { 97, NULL, op_race_touch },
	[OP_RACE_REPLACE] = { 100, NULL, op_race_replace },
};

static void *hammer_main(void *arg)
{
	struct hammer *h = arg;
	char *res = h->res;
	unsigned int i, first_kind;

	for (i = 0; i < NSLOTS; i++) {
		h->slot[i].addr = res + i * SLOT_PAGES * psz;
		h->slot[i].fd = -1;
		slot_clear(&h->slot[i]);
	}
	h->spare = res + NSLOTS * SLOT_PAGES * psz;
	memset(h->pool_epoch, 0xff, sizeof(h->pool_epoch));
	pthread_barrier_wait(&w_start);
	make_it_fail();

	first_kind = OP_MAP;
	while (!done()) {
		struct slot *s = &h->slot[below(&h->rng, NSLOTS)];
		unsigned int r = below(&h->rng, 100);
		enum op_kind op;

		if (first_kind <= OP_RACE_REPLACE) {
			/*
			 * Each kind once first, in turn: a slow (debug, loaded)
			 * guest may not reach the rare ones by chance in the
			 * time. The slot ones take slot 0, mapped first.
			 */
			op = (enum op_kind)first_kind;
			s = &h->slot[0];
			if (hammer_ops[op].on_slot && s->dev < 0)
				op = OP_MAP;
			if (op == (enum op_kind)first_kind)
				first_kind++;
		} else if (s->dev < 0) {
			op = OP_MAP;
		} else {
			for (op = OP_MAP; r >= hammer_ops[op].upto; op++)
				;
		}

		if (first_kind > OP_RACE_REPLACE)
			wild_access(h);
		op_before = op_now;
		op_now = op_name[op];
		if (hammer_ops[op].on_slot)
			hammer_ops[op].on_slot(h, s);
		else
			hammer_ops[op].op(h);
		atomic_add_ul(&sh->ops[op], 1);
	}
	for (i = 0; i < NSLOTS; i++)
		collect_nopfn(h->slot[i].fd);
	return NULL;
}

/* @x rounded up to the colour span. */
static unsigned long col_up(unsigned long x)
{
	return (x + sh->colour_span - 1) & ~(sh->colour_span - 1);
}

void worker(unsigned int w, unsigned int gen, uint64_t seed,
	    uint64_t deadline)
{
	struct sigaction sa = { 0 };
	struct rng r;
	unsigned int i, n = opt_threads;
	uint64_t end;
	unsigned long hstride, pstride;
	char *pres;

	w_index = w;
	w_gen = gen;
	rng_seed(&r, seed);
	prctl(PR_SET_PDEATHSIG, SIGKILL);

	guard_install(fault_handler);
	sa.sa_handler = usr1_handler;
	sa.sa_flags = below(&r, 2) ? SA_RESTART : 0;
	sigaction(SIGUSR1, &sa, NULL);

	/*
	 * All address space the threads work in, reserved at once: each
	 * thread's slots, then the pool, with a guard page between any two
	 * and at both ends, never unmapped. A hole that munmap() leaves in a
	 * slot is then always enclosed by our own mappings: it cannot merge
	 * with free space below, where an mmap(NULL) (a thread's stack) would
	 * be placed over it and clobbered by the slot's next MAP_FIXED.
	 * Threads are created, and their stacks mapped, before any of them
	 * runs (w_start).
	 */
	/*
	 * Where the data cache has aliases, each slot, spare and pool range
	 * starts at colour 0 (sh->colour_span), as the mappings there, of
	 * offset 0, must (MAP_FIXED elsewhere is EINVAL: mips64el's 8 KiB).
	 */
	hstride = col_up(((NSLOTS + 1) * SLOT_PAGES + 1) * psz);
	pstride = col_up(POOL_PAGES * psz);
	pres = mmap(NULL, 2 * psz + sh->colour_span + n * hstride +
		    NPOOL * pstride, PROT_NONE,
		    MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
	if (pres == MAP_FAILED) {
		fail("reserve: %s", strerror(errno));
		_exit(1);
	}
	pres = (char *)col_up((unsigned long)pres + psz);
	for (i = 0; i < n; i++) {
		hammers[i].res = pres;
		pres += hstride;
	}
	for (i = 0; i < NPOOL; i++) {
		pool[i].addr = pres + i * pstride;
		pool[i].dev = -1;
		if (pool_map(&r, &pool[i]))
			fail("pool mmap: %s", strerror(errno));
	}

	/* Lifetime: 0.5 to 3 s, or up to the deadline. */
	end = now_ns() + (500 + below(&r, 2500)) * 1000000ULL;
	if (end > deadline)
		end = deadline;
	w_deadline = deadline;
	pthread_barrier_init(&w_start, NULL, n + 1);
	for (i = 0; i < n; i++) {
		hammers[i].idx = i;
		hammers[i].carve_first = (w * opt_threads + i) *
					 sh->carve_window;
		rng_seed(&hammers[i].rng, rnd(&r));
		if (pthread_create(&hammers[i].th, NULL, hammer_main,
				   &hammers[i])) {
			fail("pthread_create: %s", strerror(errno));
			_exit(1);
		}
	}
	pthread_barrier_wait(&w_start);

	/* The signaller: SIGUSR1 at the hammer threads all the time. */
	while (now_ns() < end && !sh->stop) {
		if (n)
			pthread_kill(hammers[below(&r, n)].th, SIGUSR1);
		atomic_add_ul(&sh->ops[OP_SIGNAL], 1);
		sleep_us(200 + below(&r, 1800));
	}
	if (!sh->stop && below(&r, 3) == 0) {
		/* exit_group() while the threads are in their faults. */
		atomic_add_ul(&sh->worker_end[END_EXIT_GROUP], 1);
		_exit(0);
	}
	w_stop = 1;
	for (i = 0; i < n; i++)
		pthread_join(hammers[i].th, NULL);
	atomic_add_ul(&sh->worker_end[END_CLEAN], 1);
	_exit(0);
}
