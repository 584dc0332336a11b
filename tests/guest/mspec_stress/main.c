// SPDX-License-Identifier: GPL-2.0
/*
 * mspec_stress: many threads in several processes hammer the three mspec
 * devices and /dev/nopfn_test at once, for a bounded time, while their
 * mappings are unmapped, mprotect()ed, remapped, forked, signalled and
 * killed under them and page allocations fail on purpose.
 *
 *   mspec_stress [--seconds N] [--threads N] [--procs N] [--seed S]
 *                [--inject-percent P] [--scale K]
 *
 * matrix-args: --seconds 10 --seed {seed} --scale {scale}
 * matrix-cases: all_operations_ran data_and_errno_checks worker_exits
 *   stopped_in_time mspec_counters_back nopfn_counters_back
 *   injected_failures_accounted kernel_fault_injection
 *   fresh_pages_zero_after kernel_log_clean
 *
 * --scale multiplies the time: a debug kernel (KASAN, lockdep, fault
 * injection) under TCG does some 40 times fewer operations a second.
 *
 * The controller (this process) forks --procs workers and replaces each one
 * that ends, until the time is up. A worker has --threads hammer threads and
 * its main thread, which sends them SIGUSR1 all the time and ends the worker
 * after a random lifetime: cleanly, or with exit_group() while its threads
 * are in the middle of faults; the controller also SIGKILLs workers and
 * SIGSTOPs/SIGCONTs them at random.
 *
 * Each hammer thread owns a few slots (address ranges the worker reserved
 * for it, between guard pages, so that no other mapping ever lands there)
 * and does, at random: map a device there (MAP_FIXED over what was there,
 * or after munmap()), touch pages (a fresh page must read all zero, then it
 * is filled with a pattern of the thread that is checked on every later
 * touch, and its PFN, read back from debugfs, must not change while it is
 * mapped), fork() a child that checks the pages, writes to them and
 * touches fresh ones (the parent must see the child's writes),
 * mprotect(PROT_READ) (a write must get SIGSEGV/ACCERR, the
 * data stays), madvise(MADV_DONTNEED) and friends (EINVAL on VM_PFNMAP,
 * data stays), mremap() (growing is refused with EFAULT, MREMAP_DONTUNMAP
 * with EINVAL, a move keeps the data), partial munmap() (the unmapped part
 * gets SIGSEGV/MAPERR). nopfn_test slots have pages that give SIGBUS
 * (SIGBUS with si_addr, every time), that fail once with NOPFN_OOM (SIGBUS
 * too, once: no memcg OOM here), that
 * wait 2-20 ms with or without mmap_lock (SIGUSR1 interrupts them:
 * NOPFN_REFAULT/NOPFN_RETRY), and pages of the carve-out (memory without
 * struct page; each thread has its own window of it).
 *
 * Each worker also has a pool of mappings that all its threads touch at
 * once, each thread its own word of each page, under a seqlock: one thread
 * replaces a pool mapping (mmap(MAP_FIXED) over it, or munmap() and a new
 * mmap(), or mprotect(PROT_READ) and back) while the others fault on it.
 * A touch that no replacement overlapped must find its own last write (or
 * zero in a new mapping) and must not get a signal.
 *
 * Allocation failures: the controller keeps injecting mspec failures
 * (/sys/kernel/debug/mspec/fail_next_alloc, fail_sigbus alternating): an
 * mspec touch may then get SIGBUS, never more often than failures were
 * used. On a kernel with fault injection (the debug variant), the hammer
 * threads also get fail_page_alloc and failslab failures (task-filter, so
 * only they are hit): syscalls may then fail with ENOMEM/EAGAIN, which is
 * tolerated (and the slot is thrown away), but nothing may crash or leak.
 *
 * At the end: every mspec counter (pages_in_use, mappings, pages_leaked)
 * and nopfn_test's module-wide counters (states, RAM pages) are back to
 * their start, the mspec failures counted match the ones injected, freshly
 * mapped pages of every device read zero, and the kernel log has no new
 * report. Each check is a KTAP result; "# METRIC" lines give the figures.
 *
 * The run is bounded: workers stop at the deadline, the controller kills
 * what is left after a grace period, and an alarm ends the controller
 * itself if it ever got stuck.
 */
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <sched.h>
#include <setjmp.h>
#include <signal.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <sys/prctl.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <time.h>
#include <ucontext.h>
#include <unistd.h>
#include <linux/types.h>

#include "kselftest.h"
#include "clock.h"
#include "files.h"
#include "guard.h"
#include "kmsg_check.h"
#include "mspec_test.h"
#include "nopfn_util.h"
#include "rand.h"

#define MAX_PROCS	16
/* Bounds of the worker deaths no handler saw (see reaped()). */
#define UNSEEN_MAX	8
#define LOST_RESUME_MAX	16
#define UNSEEN_SHARE	10
#define MAX_THREADS	16
#define NSLOTS		6	/* private slots per hammer thread */
#define SLOT_PAGES	8	/* pages reserved per slot */
#define NPOOL		6	/* shared pool mappings per worker */
#define POOL_PAGES	4
#define PLAN		10

enum op_kind {
	OP_MAP, OP_TOUCH, OP_FORK, OP_MPROTECT, OP_MADVISE, OP_MREMAP,
	OP_MUNMAP, OP_RACE_TOUCH, OP_RACE_REPLACE, OP_SIGNAL, NOPS
};
static const char * const op_name[NOPS] = {
	"mmap", "touch", "fork", "mprotect", "madvise", "mremap", "munmap",
	"race_touch", "race_replace", "signal",
};

/* Everything the processes share: figures and the first failure. */
struct shared {
	volatile int stop;		/* the deadline passed */
	int kinject;			/* kernel fault injection is on */
	int carve_ok;			/* NOPFN_TEST_CARVE can be used */
	unsigned int carve_window;	/* carve-out pages per hammer thread */
	unsigned long colour_span;	/* alignment of shared mappings */
	unsigned long ops[NOPS];
	unsigned long failures;
	char first_failure[400];
	unsigned long mspec_sigbus;	/* SIGBUS of mspec touches (injected) */
	unsigned long nopfn_sigbus;	/* SIGBUS of NOPFN_TEST_SIGBUS pages */
	/*
	 * Under kernel fault injection, nopfn_test's own RAM page allocation
	 * fails too: NOPFN_OOM, which is SIGBUS outside a memcg OOM.
	 */
	unsigned long nopfn_kinject_sigbus;
	unsigned long segv_expected;	/* SIGSEGV where one had to come */
	unsigned long tolerated;	/* ENOMEM/EAGAIN under fault injection */
	unsigned long fresh_pages;	/* first touches found all zero */
	unsigned long carve_pages;	/* touches of carve-out pages */
	unsigned long usr1_got;
	unsigned long race_windows;	/* race touches a replacement overlapped */
	unsigned long children;		/* fork() children that ran */
	unsigned long refault, retry, oom, sigbus_ret;	/* nopfn_test files */
	unsigned long worker_end[5];	/* see END_* */
	/*
	 * Under the kernel's fault injection, a signal frame that cannot be
	 * written (a kernel-mode fault on the user stack that fails to
	 * allocate) makes the kernel force SIGSEGV with SI_KERNEL
	 * (force_sigsegv()): counted, and the access it hit is not checked.
	 */
	unsigned long forced_segv;
	unsigned long unseen_segv;	/* worker deaths no handler saw */
	/*
	 * When failslab fails the sigqueue allocation of a signal the kernel
	 * sends, the signal still comes, but as SI_USER from pid 0 with no
	 * address (collect_signal()). Outside a guarded access the handler
	 * resumes such a SIGSEGV, at most LOST_RESUME_MAX times per thread:
	 * a real fault at that pc faults again and comes with its siginfo
	 * the next time; a forced one (see forced_segv) does not recur.
	 */
	unsigned long lost_info_segv;
	unsigned char worker_forced[MAX_PROCS];	/* died of one */
	/*
	 * Where a hammer thread's waitpid() writes its fork child's status:
	 * shared (and populated at the start), so that the kernel's store
	 * needs no page. The thread's own stack is copy on write after the
	 * fork, and under fail_page_alloc that store fails with EFAULT after
	 * the child was reaped, its status lost (seen as "signal 72").
	 */
	int wait_status[MAX_PROCS][MAX_THREADS];
	/*
	 * What the handler saw of a fault nobody expected, before it let the
	 * worker die of it: the signal, si_code and si_addr. A worker that
	 * died of SIGSEGV with nothing here never ran its handler.
	 */
	struct { int sig, code; void *addr; unsigned long pc; }
		worker_seen[MAX_PROCS];
	unsigned long worker_ends;	/* reaped workers, all kinds */
	unsigned long mspec_sigbus_left;
};

static struct shared *sh;

static void atomic_add_ul(unsigned long *p, unsigned long v)
{
	__atomic_fetch_add(p, v, __ATOMIC_RELAXED);
}

/* Record a failed check (any process, any thread; not in a handler). */
static void __attribute__((format(printf, 1, 2))) fail(const char *fmt, ...)
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
static unsigned int w_index;

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

/* "# <who>: signal S code C at ADDR pc PC", async-signal-safe. */
static void crash_note(const char *who, int sig, const siginfo_t *si,
		       void *uc)
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

/* The controller: report a crash of its own before dying of it. */
static void controller_crash(int sig, siginfo_t *si, void *uc)
{
	crash_note("controller", sig, si, uc);
	signal(sig, SIG_DFL);
	raise(sig);
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

struct access {
	char *page;		/* page to work on */
	uint64_t tag;		/* pattern to write / expect */
	uint64_t child;		/* expected word 1 (0: the pattern's) */
	unsigned long nonzero;	/* out: words not as expected */
	unsigned long first_bad;	/* out: index of the first */
	uint64_t bad_val;	/* out: its value */
	bool write;
	int dev;		/* acc_zero(): the device (see fresh_word()) */
};

static uint64_t pat(uint64_t tag, unsigned long i)
{
	return tag ^ (i * 0x9e3779b97f4a7c15ULL);
}

static unsigned long words(void)
{
	return psz / sizeof(uint64_t);
}

/* Read the page: count the words that are not as fresh (zero). */
static void acc_zero(void *arg)
{
	struct access *a = arg;

	uint64_t *w = (uint64_t *)a->page;
	unsigned long i, n = words();

	for (i = 0; i < n; i++) {
		uint64_t v = peek64(&w[i]);

		if (v != fresh_word(a->dev, i * sizeof(*w)) &&
		    !a->nonzero++) {
			a->first_bad = i;
			a->bad_val = v;
		}
	}
}

/* Read the page: count the words that differ from the pattern. */
static void acc_verify(void *arg)
{
	struct access *a = arg;

	uint64_t *w = (uint64_t *)a->page;
	unsigned long i, n = words();

	for (i = 0; i < n; i++) {
		uint64_t v = peek64(&w[i]);
		uint64_t want = (i == 1 && a->child) ? a->child : pat(a->tag, i);

		if (v != want && !a->nonzero++) {
			a->first_bad = i;
			a->bad_val = v;
		}
	}
}

static void acc_fill(void *arg)
{
	struct access *a = arg;

	uint64_t *w = (uint64_t *)a->page;
	unsigned long i, n = words();

	for (i = 0; i < n; i++)
		poke64(&w[i], pat(a->tag, i));
}

static void acc_write1(void *arg)
{
	struct access *a = arg;

	poke64((uint64_t *)a->page + 1, a->child);
}

static void acc_read0(void *arg)
{
	struct access *a = arg;

	a->bad_val = peek64(a->page);
}

/* A pool word: what it held (bad_val), write the tag, read it (child). */
static void acc_race(void *arg)
{
	struct access *a = arg;

	a->bad_val = peek64(a->page);
	poke64(a->page, a->tag);
	a->child = peek64(a->page);
}

/*
 * Under the kernel's fault injection the sigqueue entry of a fault signal
 * may fail to allocate: the signal still comes, but as SI_USER without an
 * address (__send_signal_locked() "loses the info").
 */
static bool info_lost(void);

/* ------------------------------------------------------------ knobs */

/* The kernel's own fault injection (CONFIG_FAULT_INJECTION_DEBUG_FS). */
static const char * const kfi_dir[] = {
	"/sys/kernel/debug/fail_page_alloc", "/sys/kernel/debug/failslab",
};
static const char * const kfi_attr[] = {
	"probability", "interval", "times", "space", "verbose", "task-filter",
	"ignore-gfp-wait", "ignore-gfp-highmem", "min-order",
};
#define KFI_TIMES	1000000
static char kfi_saved[2][9][32];
static bool kfi_have[2];

static bool kfi_start(unsigned int percent)
{
	char path[160], val[32];
	unsigned int d, i;

	for (d = 0; d < 2; d++) {
		snprintf(path, sizeof(path), "%s/probability", kfi_dir[d]);
		if (access(path, W_OK))
			continue;
		kfi_have[d] = true;
		for (i = 0; i < ARRAY_SIZE(kfi_attr); i++) {
			snprintf(path, sizeof(path), "%s/%s", kfi_dir[d],
				 kfi_attr[i]);
			if (read_file(path, kfi_saved[d][i], 32))
				kfi_saved[d][i][0] = 0;
		}
	}
	if (!kfi_have[0] && !kfi_have[1])
		return false;
	for (d = 0; d < 2; d++) {
		static const char * const set[][2] = {
			{ "task-filter", "Y" }, { "interval", "1" },
			{ "space", "0" }, { "verbose", "0" },
			{ "ignore-gfp-wait", "N" }, { "ignore-gfp-highmem", "N" },
			{ "min-order", "0" },
		};

		if (!kfi_have[d])
			continue;
		for (i = 0; i < ARRAY_SIZE(set); i++) {
			snprintf(path, sizeof(path), "%s/%s", kfi_dir[d],
				 set[i][0]);
			write_file(path, set[i][1]);	/* min-order: page only */
		}
		snprintf(path, sizeof(path), "%s/times", kfi_dir[d]);
		snprintf(val, sizeof(val), "%d", KFI_TIMES);
		write_file(path, val);
		/* failslab hits every syscall that allocates: fewer there */
		snprintf(path, sizeof(path), "%s/probability", kfi_dir[d]);
		snprintf(val, sizeof(val), "%u", d ? (percent + 1) / 2 : percent);
		write_file(path, val);
	}
	return true;
}

/* Stop injecting, put the attributes back; failures injected, per dir. */
static void kfi_stop(long used[2])
{
	char path[160];
	unsigned int d, i;

	for (d = 0; d < 2; d++) {
		used[d] = -1;
		if (!kfi_have[d])
			continue;
		snprintf(path, sizeof(path), "%s/probability", kfi_dir[d]);
		write_file(path, "0");
		snprintf(path, sizeof(path), "%s/times", kfi_dir[d]);
		used[d] = KFI_TIMES - read_number(path);
		for (i = 0; i < ARRAY_SIZE(kfi_attr); i++) {
			if (!kfi_saved[d][i][0] || !strcmp(kfi_attr[i],
							   "probability"))
				continue;
			snprintf(path, sizeof(path), "%s/%s", kfi_dir[d],
				 kfi_attr[i]);
			write_file(path, kfi_saved[d][i]);
		}
		snprintf(path, sizeof(path), "%s/probability", kfi_dir[d]);
		write_file(path, kfi_saved[d][0][0] ? kfi_saved[d][0] : "0");
	}
}

/* ------------------------------------------------------------ options */

static unsigned int opt_seconds = 10, opt_threads = 4, opt_procs = 3;
static unsigned int opt_inject = 5, opt_scale = 1;
static uint64_t opt_seed;

static void usage(const char *me)
{
	fprintf(stderr, "usage: %s [--seconds N] [--threads N] [--procs N] [--seed S] [--inject-percent P] [--scale K]\n",
		me);
	exit(KSFT_FAIL);
}

static void parse_args(int argc, char **argv)
{
	int i;

	opt_seed = now_ns() ^ ((uint64_t)getpid() << 32);
	for (i = 1; i < argc; i++) {
		const char *v = i + 1 < argc ? argv[i + 1] : NULL;

		if (!v)
			usage(argv[0]);
		if (!strcmp(argv[i], "--seconds"))
			opt_seconds = strtoul(v, NULL, 0);
		else if (!strcmp(argv[i], "--threads"))
			opt_threads = strtoul(v, NULL, 0);
		else if (!strcmp(argv[i], "--procs"))
			opt_procs = strtoul(v, NULL, 0);
		else if (!strcmp(argv[i], "--seed"))
			opt_seed = strtoull(v, NULL, 0);
		else if (!strcmp(argv[i], "--inject-percent"))
			opt_inject = strtoul(v, NULL, 0);
		else if (!strcmp(argv[i], "--scale"))
			opt_scale = strtoul(v, NULL, 0);
		else
			usage(argv[0]);
		i++;
	}
	if (!opt_seconds || !opt_threads || opt_threads > MAX_THREADS ||
	    !opt_procs || opt_procs > MAX_PROCS || opt_inject > 100 ||
	    !opt_scale || opt_scale > 16)
		usage(argv[0]);
	opt_seconds *= opt_scale;
}

/* ====================================================== worker process */

enum slot_beh { B_RAM, B_SIGBUS, B_OOM, B_SLEEP_LOCKED, B_SLEEP_UNLOCKED,
		B_CARVE };

struct slot {
	char *addr;			/* SLOT_PAGES pages reserved there */
	int dev;			/* -1: nothing mapped (PROT_NONE) */
	int fd;				/* nopfn_test: the state's file */
	unsigned int npages;		/* pages mapped from addr on */
	unsigned int ro;		/* pages [0, ro) are PROT_READ */
	unsigned int bounds;		/* bit i: a VMA starts at page i */
	uint8_t beh[SLOT_PAGES];	/* nopfn_test: behaviour of each page */
	uint64_t tag[SLOT_PAGES];	/* pattern written, 0: all zero */
	uint64_t child[SLOT_PAGES];	/* word 1 written by a child, or 0 */
	long pfn[SLOT_PAGES];		/* PFN when the pattern was written */
	char hist[4][40];		/* the slot's last operations */
	unsigned int nhist;
};

struct pool_slot {
	char *addr;
	int dev;			/* -1: nothing mapped */
	unsigned long gen;		/* seqlock: odd while being replaced */
	unsigned long epoch;		/* bumped when the contents go */
};

struct hammer {
	pthread_t th;
	unsigned int idx;		/* thread index in the worker */
	char *res;			/* (NSLOTS + 1) * SLOT_PAGES pages */
	struct rng rng;
	char *spare;			/* SLOT_PAGES reserved pages */
	struct slot slot[NSLOTS];
	uint64_t seq;
	unsigned int carve_first;	/* first carve-out page of the window */
	uint64_t carve_tag[SLOT_PAGES];	/* pattern left there, 0: unknown */
	uint64_t pool_tag[NPOOL][POOL_PAGES];
	unsigned long pool_epoch[NPOOL][POOL_PAGES];	/* ~0UL: unknown */
};

static unsigned int w_gen;
static pthread_barrier_t w_start;
static __thread const char *op_now, *op_before;	/* for the messages */
static struct hammer hammers[MAX_THREADS];
static struct pool_slot pool[NPOOL];
static volatile int w_stop;
static uint64_t w_deadline;

static bool info_lost(void)
{
	return sh->kinject && guard_info.si_code == SI_USER;
}

/*
 * The signal was the kernel's forced SIGSEGV (see forced_segv), or, under
 * the kernel's fault injection, a SIGSEGV whose siginfo was lost
 * (info_lost(): SI_USER with no address): a forced one whose sigqueue
 * entry failed to allocate too ("/dev/nopfn_test page 1: signal 11 code
 * 0 at (nil)", x86_64-debug, warm .ci/run of 2026-12-06). Nothing else
 * sends a worker SIGSEGV. Both are counted in forced_segv and reported.
 */
static bool forced(int sig)
{
	return sig == SIGSEGV &&
	       ((sh->kinject && guard_info.si_code == SI_KERNEL) ||
		info_lost());
}

/* Pages [0, n) of @s stay, the rest of its VMA boundaries go. */
static void slot_cut(struct slot *s, unsigned int n)
{
	s->npages = n;
	if (s->ro > n)
		s->ro = n;
	s->bounds &= (1u << n) - 1;
}

/* More than one VMA over the mapped pages (splits never merge back). */
static bool slot_split(struct slot *s)
{
	return (s->bounds & ~1u) != 0;
}

static void __attribute__((format(printf, 2, 3)))
hist(struct slot *s, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(s->hist[s->nhist++ % 4], sizeof(s->hist[0]), fmt, ap);
	va_end(ap);
}

static const char *hist_str(struct slot *s, char *buf, size_t size)
{
	unsigned int i, n = s->nhist < 4 ? s->nhist : 4;
	size_t len = 0;

	buf[0] = 0;
	for (i = 0; i < n; i++)
		len += snprintf(buf + len, size - len, "%s%s", i ? "; " : "",
				s->hist[(s->nhist - n + i) % 4]);
	return buf;
}

/*
 * The first lost page: print where every thread's slots are and the
 * process's VMAs around it, to tell a mapping in the wrong place from a
 * PTE the kernel changed.
 */
static void dump_lost(const void *addr)
{
	static int dumped;
	unsigned long a = (unsigned long)addr;
	char line[256];
	unsigned int i, k;
	FILE *f;

	if (__atomic_exchange_n(&dumped, 1, __ATOMIC_SEQ_CST))
		return;
	fprintf(stderr, "# lost page %#lx in worker %u gen %u\n", a, w_index,
		w_gen);
	for (i = 0; i < opt_threads; i++) {
		fprintf(stderr, "# thread %u spare %p slots", i,
			hammers[i].spare);
		for (k = 0; k < NSLOTS; k++)
			fprintf(stderr, " %p/%d/%u", hammers[i].slot[k].addr,
				hammers[i].slot[k].dev,
				hammers[i].slot[k].npages);
		fprintf(stderr, "\n");
	}
	f = fopen("/proc/self/maps", "r");
	while (f && fgets(line, sizeof(line), f)) {
		unsigned long s, e;

		if (sscanf(line, "%lx-%lx", &s, &e) == 2 &&
		    e + 0x40000 > a && s < a + 0x40000)
			fprintf(stderr, "# %s", line);
	}
	if (f)
		fclose(f);
}

static bool done(void)
{
	return w_stop || sh->stop || now_ns() >= w_deadline;
}

/* An errno that fault injection may cause; anything else is a failure. */
static bool tolerated(int err)
{
	if (sh->kinject && (err == ENOMEM || err == EAGAIN)) {
		atomic_add_ul(&sh->tolerated, 1);
		return true;
	}
	return false;
}

static uint64_t new_tag(struct hammer *h)
{
	return (uint64_t)(w_index + 1) << 56 | (uint64_t)(w_gen & 0xff) << 48 |
	       (uint64_t)h->idx << 40 | (++h->seq & 0xffffffffffULL);
}

/* PROT_NONE over @len bytes at @addr, taking whatever was there. */
static int reserve(char *addr, size_t len)
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

/* Counters of a nopfn_test file that is about to go. */
static void collect_nopfn(int fd)
{
	struct nopfn_test_stats s;

	if (fd < 0 || ioctl(fd, NOPFN_TEST_IOC_GET_STATS, &s))
		return;
	atomic_add_ul(&sh->refault, s.ret_refault);
	atomic_add_ul(&sh->retry, s.ret_retry);
	atomic_add_ul(&sh->oom, s.ret_oom);
	atomic_add_ul(&sh->sigbus_ret, s.ret_sigbus);
}

static void slot_clear(struct slot *s)
{
	collect_nopfn(s->fd);
	if (s->fd >= 0)
		close(s->fd);
	s->fd = -1;
	s->dev = -1;
	s->npages = s->ro = 0;
	s->bounds = 1;
	memset(s->tag, 0, sizeof(s->tag));
	memset(s->child, 0, sizeof(s->child));
	memset(s->pfn, 0, sizeof(s->pfn));
}

/* Throw the slot's mapping away (an unknown state after a failure too). */
static void slot_retire(struct slot *s)
{
	reserve(s->addr, SLOT_PAGES * psz);
	slot_clear(s);
}

static const unsigned int beh_code[] = {
	[B_RAM] = NOPFN_TEST_RAM, [B_SIGBUS] = NOPFN_TEST_SIGBUS,
	[B_OOM] = NOPFN_TEST_OOM_ONCE,
	[B_SLEEP_LOCKED] = NOPFN_TEST_SLEEP_LOCKED,
	[B_SLEEP_UNLOCKED] = NOPFN_TEST_SLEEP_UNLOCKED,
	[B_CARVE] = NOPFN_TEST_CARVE,
};

/*
 * A device to map: mspec_uncached only where it maps (nmappable of
 * mspec_test.h; where it refuses, mspec_uncached.c asserts that).
 */
static int pick_dev(struct rng *r)
{
	int dev = below(r, NDEV);

	return dev == D_UNCACHED && nmappable < NTYPES ? D_CACHED : dev;
}

/* Map a new device mapping in slot @s, over what is there. */
static void op_map(struct hammer *h, struct slot *s)
{
	unsigned int n = 1 + below(&h->rng, SLOT_PAGES), i;
	int dev = pick_dev(&h->rng), fd;
	off_t off = 0;
	void *p;

	/* A longer old mapping would stay behind the new one: unmap it. */
	if (s->dev >= 0 && (s->npages > n || below(&h->rng, 2))) {
		if (munmap(s->addr, s->npages * psz) && !tolerated(errno))
			fail("munmap whole slot: %s", strerror(errno));
		slot_retire(s);
	}
	fd = open(dev_file[dev], O_RDWR | O_CLOEXEC);
	if (fd < 0) {
		if (!tolerated(errno))
			fail("open %s: %s", dev_file[dev], strerror(errno));
		return;
	}
	if (dev == D_NOPFN) {
		off = (off_t)h->carve_first * psz;
		for (i = 0; i < n; i++) {
			unsigned int r = below(&h->rng, 100), b = B_RAM, ms = 0;

			if (r < 8)
				b = B_SIGBUS;
			else if (r < 16)
				b = B_OOM;
			else if (r < 26)
				b = B_SLEEP_LOCKED;
			else if (r < 36)
				b = B_SLEEP_UNLOCKED;
			else if (r < 46 && sh->carve_ok)
				b = B_CARVE;
			if (b == B_SLEEP_LOCKED || b == B_SLEEP_UNLOCKED)
				ms = 2 + below(&h->rng, 19);
			if (set_pages(fd, h->carve_first + i, 1, beh_code[b],
				      ms)) {
				if (!tolerated(errno))
					fail("SET_PAGES %u: %s", b,
					     strerror(errno));
				close(fd);
				return;
			}
			s->beh[i] = b;
		}
	}
	p = mmap(s->addr, n * psz, PROT_READ | PROT_WRITE,
		 MAP_SHARED | MAP_FIXED, fd, off);
	if (p != s->addr) {
		int err = errno;

		close(fd);
		if (p == MAP_FAILED && tolerated(err)) {
			slot_retire(s);	/* the range may be a hole now */
			return;
		}
		fail("mmap %s %u pages at %p: %p %s", dev_file[dev], n,
		     s->addr, p, strerror(err));
		slot_retire(s);
		return;
	}
	if (dev != D_NOPFN) {
		close(fd);
		fd = -1;
	}
	/* The old file (if the new mapping replaced one) goes now. */
	slot_clear(s);
	s->dev = dev;
	s->fd = fd;
	s->npages = n;
	hist(s, "map %s %u at %p", dev_file[dev] + 5, n, s->addr);
}

/* What the first word of a page must look like after a signal. */
static bool sig_ok(struct slot *s, unsigned int pg, int sig, char *page)
{
	if (sig == SIGBUS && guard_info.si_addr != page && !info_lost()) {
		fail("SIGBUS at %p, touched %p", guard_info.si_addr, page);
		return false;
	}
	if (s->dev == D_NOPFN && s->beh[pg] == B_SIGBUS) {
		if (sig != SIGBUS) {
			fail("NOPFN_TEST_SIGBUS page gave signal %d", sig);
			return false;
		}
		atomic_add_ul(&sh->nopfn_sigbus, 1);
		return true;
	}
	if (s->dev == D_NOPFN && s->beh[pg] == B_OOM && sig == SIGBUS) {
		/*
		 * NOPFN_OOM without a memcg OOM is SIGBUS, once: the page's
		 * next call maps RAM.
		 */
		s->beh[pg] = B_RAM;
		atomic_add_ul(&sh->nopfn_sigbus, 1);
		return true;
	}
	if (s->dev == D_NOPFN && sig == SIGBUS && sh->kinject &&
	    s->beh[pg] != B_CARVE) {
		atomic_add_ul(&sh->nopfn_kinject_sigbus, 1);
		return true;
	}
	if (s->dev != D_NOPFN && sig == SIGBUS) {
		atomic_add_ul(&sh->mspec_sigbus, 1);	/* injected */
		return true;
	}
	fail("%s page %u: signal %d code %d at %p", dev_file[s->dev], pg, sig,
	     guard_info.si_code, guard_info.si_addr);
	return false;
}

static bool carve_page(struct slot *s, unsigned int pg)
{
	return s->dev == D_NOPFN && s->beh[pg] == B_CARVE;
}

/* Touch page @pg of slot @s: check what it holds, write a new pattern. */
static void touch(struct hammer *h, struct slot *s, unsigned int pg)
{
	struct access a = { .page = s->addr + pg * psz, .dev = s->dev };
	bool ro = pg < s->ro;
	int sig;

	if (s->dev < 0 || pg >= s->npages)
		return;		/* retired by an earlier touch */
	if (carve_page(s, pg)) {
		/* Every slot of the thread maps the same carve-out page. */
		atomic_add_ul(&sh->carve_pages, 1);
		if (s->tag[pg])
			s->tag[pg] = h->carve_tag[pg];
	}
	if (!s->tag[pg]) {
		/* First touch in this mapping. */
		bool carve = carve_page(s, pg);

		if (carve && h->carve_tag[pg]) {
			a.tag = h->carve_tag[pg];
			sig = guarded(acc_verify, &a);
		} else {
			sig = guarded(acc_zero, &a);
		}
		if (forced(sig)) {
			slot_retire(s);		/* what happened is unknown */
			return;
		}
		if (sig) {
			sig_ok(s, pg, sig, a.page);
			return;
		}
		if (s->dev == D_NOPFN && s->beh[pg] == B_SIGBUS) {
			fail("NOPFN_TEST_SIGBUS page %u could be read", pg);
			return;
		}
		if (carve && !h->carve_tag[pg]) {
			a.nonzero = 0;	/* unknown contents: left by others */
		} else if (!carve) {
			atomic_add_ul(&sh->fresh_pages, 1);
		}
		if (a.nonzero) {
			fail("%s %s page %u: %lu words differ, word %lu = %#llx",
			     dev_file[s->dev], carve ? "carve-out" : "fresh",
			     pg, a.nonzero, a.first_bad,
			     (unsigned long long)a.bad_val);
			return;
		}
	} else {
		/* The same page for as long as it is mapped (docs/nopfn-api.md). */
		if (s->pfn[pg] > 0 && !below(&h->rng, 4)) {
			long pfn = pte_pfn(a.page);

			/* The pte file allocates: injection may fail it. */
			if (pfn < 0 && pfn != -ENXIO && sh->kinject)
				pfn = s->pfn[pg];
			if (pfn != s->pfn[pg]) {
				char hb[200];

				dump_lost(a.page);
				fail("%s page %u at %p: PFN %ld, was %ld; slot: %s",
				     dev_file[s->dev], pg, a.page, pfn,
				     s->pfn[pg], hist_str(s, hb, sizeof(hb)));
				return;
			}
		}
		a.tag = s->tag[pg];
		a.child = s->child[pg];
		sig = guarded(acc_verify, &a);
		if (forced(sig)) {
			slot_retire(s);
			return;
		}
		if (sig) {
			fail("%s page %u of %u (read-only %u, VMAs at %#x) at %p touched before: signal %d code %d at %p, in %s after %s",
			     dev_file[s->dev], pg, s->npages, s->ro, s->bounds,
			     a.page, sig, guard_info.si_code,
			     guard_info.si_addr, op_now, op_before);
			return;
		}
		if (a.nonzero) {
			char hb[200];

			dump_lost(a.page);
			fail("%s page %u: %lu words lost, word %lu = %#llx want %#llx; PFN %ld, was %ld; in %s after %s; slot: %s",
			     dev_file[s->dev], pg, a.nonzero, a.first_bad,
			     (unsigned long long)a.bad_val,
			     (unsigned long long)pat(a.tag, a.first_bad),
			     pte_pfn(a.page), s->pfn[pg], op_now, op_before,
			     hist_str(s, hb, sizeof(hb)));
			return;
		}
	}
	if (ro)
		return;
	a.tag = new_tag(h);
	sig = guarded(acc_fill, &a);
	if (forced(sig)) {
		slot_retire(s);
		return;
	}
	if (sig) {
		fail("%s page %u: filling it gave signal %d", dev_file[s->dev],
		     pg, sig);
		return;
	}
	s->tag[pg] = a.tag;
	s->child[pg] = 0;
	s->pfn[pg] = pte_pfn(a.page);
	if (carve_page(s, pg))
		h->carve_tag[pg] = a.tag;
}

static void op_touch(struct hammer *h, struct slot *s)
{
	unsigned int k = 1 + below(&h->rng, s->npages);

	while (k--)
		touch(h, s, below(&h->rng, s->npages));
}

/*
 * fork(): the child checks every touched page of every slot, writes its
 * word 1 on the writable ones and first-touches one fresh page, the
 * parent then sees all of it. In the "kill" variant the child only reads
 * and is SIGKILLed by the parent at once (an exit in the middle of its
 * faults).
 */
enum { CHILD_OK, CHILD_BUS, CHILD_FORCED, CHILD_BAD_VERIFY = 10,
       CHILD_BAD_ZERO, CHILD_BAD_SIG, CHILD_BAD_FILL };

static void op_fork(struct hammer *h)
{
	bool kill_it = below(&h->rng, 4) == 0;
	struct slot *fs = NULL;
	unsigned int fpg = 0, i, p;
	uint64_t ftag = 0, cval = new_tag(h) | 0x8000000000ULL;
	int *wstatus = &sh->wait_status[w_index][h->idx], status, r;
	pid_t pid;

	for (i = 0; i < NSLOTS; i++)
		for (p = 0; p < SLOT_PAGES; p++)
			if (h->slot[i].dev >= 0 && carve_page(&h->slot[i], p) &&
			    h->slot[i].tag[p])
				h->slot[i].tag[p] = h->carve_tag[p];
	/* The fresh page the child touches first. */
	for (i = 0; i < NSLOTS && !kill_it; i++) {
		struct slot *s = &h->slot[i];

		if (s->dev < 0)
			continue;
		for (p = s->ro; p < s->npages; p++)
			if (!s->tag[p] && !carve_page(s, p)) {
				fs = s;
				fpg = p;
				ftag = new_tag(h);
				break;
			}
		if (fs)
			break;
	}

	pid = fork();
	if (pid < 0) {
		if (!tolerated(errno))
			fail("fork: %s", strerror(errno));
		return;
	}
	if (pid == 0) {
		alarm(10);
		/*
		 * No injected failures in the child: its stack is copy on
		 * write, and a signal frame that cannot be written there
		 * (a kernel-mode fault that fails) is a forced SIGSEGV.
		 */
		if (sh->kinject)
			write_file("/proc/thread-self/make-it-fail", "0");
		for (i = 0; i < NSLOTS; i++) {
			struct slot *s = &h->slot[i];

			for (p = 0; s->dev >= 0 && p < s->npages; p++) {
				struct access a = { .page = s->addr + p * psz,
						    .tag = s->tag[p],
						    .child = s->child[p] };

				if (!s->tag[p])
					continue;
				if (guarded(acc_verify, &a))
					_exit(forced(guard_info.si_signo) ?
					      CHILD_FORCED : CHILD_BAD_SIG);
				if (a.nonzero)
					_exit(CHILD_BAD_VERIFY);
				if (kill_it || p < s->ro || carve_page(s, p))
					continue;
				a.child = cval;
				if (guarded(acc_write1, &a))
					_exit(CHILD_BAD_SIG);
			}
		}
		if (fs) {
			struct access a = { .page = fs->addr + fpg * psz,
					    .tag = ftag, .dev = fs->dev };
			int sig = guarded(acc_zero, &a);

			if (sig == SIGBUS &&
			    (guard_info.si_addr == a.page || info_lost()) &&
			    (fs->dev != D_NOPFN || fs->beh[fpg] == B_SIGBUS ||
			     fs->beh[fpg] == B_OOM ||
			     (sh->kinject && fs->beh[fpg] != B_CARVE)))
				_exit(CHILD_BUS);
			if (sig)
				_exit(CHILD_BAD_SIG);
			if (fs->dev == D_NOPFN && fs->beh[fpg] == B_SIGBUS)
				_exit(CHILD_BAD_SIG);
			if (a.nonzero)
				_exit(CHILD_BAD_ZERO);
			if (guarded(acc_fill, &a))
				_exit(CHILD_BAD_FILL);
		}
		_exit(CHILD_OK);
	}
	atomic_add_ul(&sh->children, 1);
	for (i = 0; i < NSLOTS; i++)
		if (h->slot[i].dev >= 0)
			hist(&h->slot[i], "fork%s", kill_it ? "+kill" : "");
	if (kill_it)
		kill(pid, SIGKILL);
	while ((r = waitpid(pid, wstatus, 0)) < 0 && errno == EINTR)
		;
	if (r < 0) {
		fail("fork child: waitpid: %s", strerror(errno));
		return;
	}
	status = *wstatus;
	if (kill_it && WIFSIGNALED(status) && WTERMSIG(status) == SIGKILL)
		return;
	if (WIFEXITED(status) && WEXITSTATUS(status) == CHILD_FORCED)
		return;		/* counted by the child's handler */
	if (!WIFEXITED(status) || WEXITSTATUS(status) > CHILD_FORCED) {
		fail("fork child: %s %d (slot page %u)",
		     WIFEXITED(status) ? "exit" : "signal",
		     WIFEXITED(status) ? WEXITSTATUS(status) :
		     WTERMSIG(status), fpg);
		return;
	}
	if (kill_it)
		return;
	/* The child's writes are the parent's. */
	for (i = 0; i < NSLOTS; i++) {
		struct slot *s = &h->slot[i];

		for (p = s->ro; s->dev >= 0 && p < s->npages; p++)
			if (s->tag[p] && !carve_page(s, p))
				s->child[p] = cval;
	}
	if (fs && WEXITSTATUS(status) == CHILD_OK) {
		fs->tag[fpg] = ftag;
		fs->child[fpg] = 0;
		fs->pfn[fpg] = 0;	/* the child's PTE: not known here */
		atomic_add_ul(&sh->fresh_pages, 1);
	} else if (fs && fs->dev == D_NOPFN && fs->beh[fpg] == B_SIGBUS) {
		atomic_add_ul(&sh->nopfn_sigbus, 1);
	} else if (fs && fs->dev == D_NOPFN && fs->beh[fpg] == B_OOM) {
		fs->beh[fpg] = B_RAM;	/* NOPFN_OOM was SIGBUS, once */
		atomic_add_ul(&sh->nopfn_sigbus, 1);
	} else if (fs && fs->dev == D_NOPFN) {
		atomic_add_ul(&sh->nopfn_kinject_sigbus, 1);
	} else if (fs) {
		atomic_add_ul(&sh->mspec_sigbus, 1);
	}
	for (i = 0; i < NSLOTS; i++) {
		struct slot *s = &h->slot[i];

		for (p = 0; s->dev >= 0 && p < s->npages; p++)
			if (s->tag[p])
				touch(h, s, p);
	}
}

/* Check that the first touched page of @s still holds its pattern. */
static void recheck(struct hammer *h, struct slot *s)
{
	unsigned int p;

	for (p = 0; p < s->npages; p++)
		if (s->tag[p]) {
			touch(h, s, p);
			return;
		}
}

static void op_mprotect(struct hammer *h, struct slot *s)
{
	struct access a;
	unsigned int n;
	int sig;

	if (s->ro) {
		if (mprotect(s->addr, s->npages * psz,
			     PROT_READ | PROT_WRITE)) {
			if (!tolerated(errno))
				fail("mprotect RW: %s", strerror(errno));
			slot_retire(s);
			return;
		}
		s->ro = 0;
		hist(s, "mprotect RW");
		recheck(h, s);
		return;
	}
	n = 1 + below(&h->rng, s->npages);	/* a split if n < npages */
	if (mprotect(s->addr, n * psz, PROT_READ)) {
		if (!tolerated(errno))
			fail("mprotect RO: %s", strerror(errno));
		slot_retire(s);
		return;
	}
	s->ro = n;
	hist(s, "mprotect RO %u", n);
	if (n < s->npages)
		s->bounds |= 1u << n;
	/* A write now faults with SEGV_ACCERR, whether touched or not. */
	a = (struct access){ .page = s->addr + below(&h->rng, n) * psz };
	a.child = 0xbad;
	sig = guarded(acc_write1, &a);
	if (forced(sig))
		;	/* a SIGSEGV all the same, but the kernel's */
	else if (sig != SIGSEGV || ((guard_info.si_code != SEGV_ACCERR ||
	    guard_info.si_addr != fault_addr(a.page + sizeof(uint64_t))) &&
	    !info_lost()))
		fail("write to PROT_READ %s page: signal %d code %d at %p",
		     dev_file[s->dev], sig, guard_info.si_code,
		     guard_info.si_addr);
	else
		atomic_add_ul(&sh->segv_expected, 1);
	recheck(h, s);
}

static void op_madvise(struct hammer *h, struct slot *s)
{
	/* All refused on a VM_PFNMAP VMA: can_madv_lru_vma() in 6.1. */
	static const int advice[] = { MADV_DONTNEED, MADV_FREE, MADV_COLD,
				      MADV_PAGEOUT };
	int adv = advice[below(&h->rng, ARRAY_SIZE(advice))];

	if (madvise(s->addr, s->npages * psz, adv) != -1 || errno != EINVAL)
		fail("madvise(%d) on %s: %s", adv, dev_file[s->dev],
		     strerror(errno));
	recheck(h, s);
}

static void op_mremap(struct hammer *h, struct slot *s)
{
	size_t len = s->npages * psz;
	bool split = slot_split(s);
	unsigned int m;
	void *q;

	switch (below(&h->rng, 4)) {
	case 0:	/* grow: VM_DONTEXPAND (or a split VMA): EFAULT */
		q = mremap(s->addr, len, len + psz,
			   below(&h->rng, 2) ? MREMAP_MAYMOVE : 0);
		if (q != MAP_FAILED || errno != EFAULT)
			fail("mremap grow of %s: %p %s", dev_file[s->dev], q,
			     strerror(errno));
		break;
	case 1:	/* MREMAP_DONTUNMAP: EINVAL on VM_PFNMAP/VM_DONTEXPAND */
		q = mremap(s->addr, len, len, MREMAP_MAYMOVE |
			   MREMAP_DONTUNMAP);
		if (q != MAP_FAILED || errno != EINVAL)
			fail("mremap DONTUNMAP of %s: %p %s",
			     dev_file[s->dev], q, strerror(errno));
		break;
	case 2:	/* move to the spare range, data and pgoff go along */
		q = mremap(s->addr, len, len, MREMAP_MAYMOVE | MREMAP_FIXED,
			   h->spare);
		if (split) {
			/* The destination was unmapped before EFAULT. */
			if (q != MAP_FAILED || (errno != EFAULT &&
						!tolerated(errno)))
				fail("mremap move of a split %s: %p %s",
				     dev_file[s->dev], q, strerror(errno));
			reserve(h->spare, SLOT_PAGES * psz);
			break;
		}
		if (q != h->spare) {
			int err = errno;

			reserve(h->spare, SLOT_PAGES * psz);
			if (q == MAP_FAILED && tolerated(err)) {
				slot_retire(s);
				return;
			}
			fail("mremap move of %s: %p %s", dev_file[s->dev], q,
			     strerror(err));
			slot_retire(s);
			return;
		}
		h->spare = s->addr;
		s->addr = q;
		reserve(h->spare, SLOT_PAGES * psz);
		hist(s, "moved to %p", q);
		break;
	default: /* shrink: the tail is unmapped */
		if (s->npages < 2)
			break;
		m = 1 + below(&h->rng, s->npages - 1);
		q = mremap(s->addr, len, m * psz, 0);
		if (q != s->addr) {
			if (q == MAP_FAILED && tolerated(errno)) {
				slot_retire(s);
				return;
			}
			fail("mremap shrink of %s: %p %s", dev_file[s->dev], q,
			     strerror(errno));
			slot_retire(s);
			return;
		}
		reserve(s->addr + m * psz, (SLOT_PAGES - m) * psz);
		slot_cut(s, m);
		hist(s, "mremap shrink %u", m);
		break;
	}
	if (s->dev >= 0)
		recheck(h, s);
}

static void op_munmap(struct hammer *h, struct slot *s)
{
	unsigned int m = below(&h->rng, s->npages);
	struct access a = { .page = s->addr + m * psz };
	int sig;

	if (munmap(a.page, (s->npages - m) * psz)) {
		if (!tolerated(errno))
			fail("munmap: %s", strerror(errno));
		slot_retire(s);
		return;
	}
	/* Nothing there now: SEGV_MAPERR. */
	sig = guarded(acc_read0, &a);
	if (forced(sig))
		;
	else if (sig != SIGSEGV || ((guard_info.si_code != SEGV_MAPERR ||
	    guard_info.si_addr != a.page) && !info_lost()))
		fail("touch after munmap: signal %d code %d at %p", sig,
		     guard_info.si_code, guard_info.si_addr);
	else
		atomic_add_ul(&sh->segv_expected, 1);
	reserve(a.page, (SLOT_PAGES - m) * psz);
	if (!m) {
		slot_clear(s);
		return;
	}
	slot_cut(s, m);
	hist(s, "munmap from %u", m);
	recheck(h, s);
}

/* ------------------------------------------------------------- pool */

static int pool_map(struct rng *r, struct pool_slot *ps)
{
	int dev = pick_dev(r);
	int fd = open(dev_file[dev], O_RDWR | O_CLOEXEC);
	void *p;

	if (fd < 0)
		return -1;
	p = mmap(ps->addr, POOL_PAGES * psz, PROT_READ | PROT_WRITE,
		 MAP_SHARED | MAP_FIXED, fd, 0);
	close(fd);
	if (p != ps->addr)
		return -1;
	__atomic_store_n(&ps->dev, dev, __ATOMIC_RELAXED);
	return 0;
}

#define ANY_OURS	(~1UL)	/* pool_epoch: the word holds 0 or any tag of ours */

static void op_race_touch(struct hammer *h)
{
	unsigned int k = below(&h->rng, NPOOL), p = below(&h->rng, POOL_PAGES);
	struct pool_slot *ps = &pool[k];
	unsigned long g1, g2, epoch;
	uint64_t *w, v0, v1, fresh, tag = new_tag(h);
	struct access a = { .tag = tag };
	int sig, dev;

	g1 = __atomic_load_n(&ps->gen, __ATOMIC_ACQUIRE);
	if (g1 & 1)
		return;
	dev = __atomic_load_n(&ps->dev, __ATOMIC_RELAXED);
	epoch = __atomic_load_n(&ps->epoch, __ATOMIC_RELAXED);
	if (dev < 0)
		return;
	w = (uint64_t *)(ps->addr + p * psz) + h->idx;
	fresh = fresh_word(dev, h->idx * sizeof(*w));
	a.page = (char *)w;
	sig = guarded(acc_race, &a);
	v0 = a.bad_val;
	v1 = a.child;
	if (forced(sig)) {
		/* Whether the write happened is unknown: any tag of ours. */
		h->pool_epoch[k][p] = ANY_OURS;
		return;
	}
	__atomic_thread_fence(__ATOMIC_SEQ_CST);
	g2 = __atomic_load_n(&ps->gen, __ATOMIC_ACQUIRE);
	if (g1 != g2) {
		/* A replacement overlapped: anything may have happened. */
		atomic_add_ul(&sh->race_windows, 1);
		h->pool_epoch[k][p] = ~0UL;
		h->pool_tag[k][p] = sig ? h->pool_tag[k][p] : tag;
		return;
	}
	if (sig == SIGBUS && dev != D_NOPFN &&
	    (guard_info.si_addr == fault_addr(w) || info_lost())) {
		atomic_add_ul(&sh->mspec_sigbus, 1);
		return;
	}
	if (sig == SIGBUS && dev == D_NOPFN && sh->kinject &&
	    (guard_info.si_addr == fault_addr(w) || info_lost())) {
		atomic_add_ul(&sh->nopfn_kinject_sigbus, 1);
		return;
	}
	if (sig) {
		fail("pool %s page %u: signal %d code %d with no replacement",
		     dev_file[dev], p, sig, guard_info.si_code);
		return;
	}
	if (h->pool_epoch[k][p] == ANY_OURS) {
		if (v0 != fresh && (v0 >> 56 != w_index + 1 ||
				    ((v0 >> 40) & 0xff) != h->idx))
			fail("pool %s page %u: word %#llx is neither fresh nor one of ours",
			     dev_file[dev], p, (unsigned long long)v0);
	} else if (h->pool_epoch[k][p] == ~0UL) {
		if (v0 != fresh && v0 != h->pool_tag[k][p])
			fail("pool %s page %u: word %#llx is neither fresh nor ours",
			     dev_file[dev], p, (unsigned long long)v0);
	} else if (v0 != (h->pool_epoch[k][p] == epoch ?
			  h->pool_tag[k][p] : fresh)) {
		fail("pool %s page %u: lost write: %#llx, want %#llx",
		     dev_file[dev], p, (unsigned long long)v0,
		     (unsigned long long)(h->pool_epoch[k][p] == epoch ?
					  h->pool_tag[k][p] : fresh));
	}
	if (v1 != tag)
		fail("pool %s page %u: wrote %#llx, read %#llx", dev_file[dev],
		     p, (unsigned long long)tag, (unsigned long long)v1);
	h->pool_tag[k][p] = tag;
	h->pool_epoch[k][p] = epoch;
}

static void op_race_replace(struct hammer *h)
{
	struct pool_slot *ps = &pool[below(&h->rng, NPOOL)];
	unsigned long g = __atomic_load_n(&ps->gen, __ATOMIC_ACQUIRE);
	int how = below(&h->rng, 3);

	if ((g & 1) || !__atomic_compare_exchange_n(&ps->gen, &g, g + 1, false,
						    __ATOMIC_SEQ_CST,
						    __ATOMIC_RELAXED))
		return;
	if (how == 2 && ps->dev >= 0) {
		/* mprotect() away and back: the contents stay. */
		if (mprotect(ps->addr, POOL_PAGES * psz, PROT_READ) ||
		    (sleep_us(below(&h->rng, 300)),
		     mprotect(ps->addr, POOL_PAGES * psz,
			      PROT_READ | PROT_WRITE))) {
			if (!tolerated(errno))
				fail("pool mprotect: %s", strerror(errno));
			how = 1;	/* start again from a clean slate */
		}
	}
	if (how < 2 || ps->dev < 0) {
		__atomic_store_n(&ps->epoch, ps->epoch + 1, __ATOMIC_RELAXED);
		if (how == 1) {
			if (munmap(ps->addr, POOL_PAGES * psz) &&
			    !tolerated(errno))
				fail("pool munmap: %s", strerror(errno));
			sleep_us(below(&h->rng, 300));
		}
		if (pool_map(&h->rng, ps)) {
			if (errno && !tolerated(errno))
				fail("pool mmap: %s", strerror(errno));
			__atomic_store_n(&ps->dev, -1, __ATOMIC_RELAXED);
			reserve(ps->addr, POOL_PAGES * psz);
		}
	}
	__atomic_store_n(&ps->gen, g + 2, __ATOMIC_SEQ_CST);
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
			if (op != OP_FORK && op != OP_RACE_TOUCH &&
			    op != OP_RACE_REPLACE && s->dev < 0)
				op = OP_MAP;
			if (op == (enum op_kind)first_kind)
				first_kind++;
		} else if (s->dev < 0 || r < 8)
			op = OP_MAP;
		else if (r < 40)
			op = OP_TOUCH;
		else if (r < 44)
			op = OP_FORK;
		else if (r < 50)
			op = OP_MPROTECT;
		else if (r < 54)
			op = OP_MADVISE;
		else if (r < 60)
			op = OP_MREMAP;
		else if (r < 65)
			op = OP_MUNMAP;
		else if (r < 97)
			op = OP_RACE_TOUCH;
		else
			op = OP_RACE_REPLACE;

		if (first_kind > OP_RACE_REPLACE)
			wild_access(h);
		op_before = op_now;
		op_now = op_name[op];
		switch (op) {
		case OP_MAP:
			op_map(h, s);
			break;
		case OP_TOUCH:
			op_touch(h, s);
			break;
		case OP_FORK:
			op_fork(h);
			break;
		case OP_MPROTECT:
			op_mprotect(h, s);
			break;
		case OP_MADVISE:
			op_madvise(h, s);
			break;
		case OP_MREMAP:
			op_mremap(h, s);
			break;
		case OP_MUNMAP:
			op_munmap(h, s);
			break;
		case OP_RACE_TOUCH:
			op_race_touch(h);
			break;
		default:
			op_race_replace(h);
			break;
		}
		atomic_add_ul(&sh->ops[op], 1);
	}
	for (i = 0; i < NSLOTS; i++)
		collect_nopfn(h->slot[i].fd);
	return NULL;
}

/* How a worker ends: on its own, with exit_group() mid-fault, or killed. */
enum { END_CLEAN, END_EXIT_GROUP, END_KILLED, END_OTHER, END_FORCED };

/* @x rounded up to the colour span. */
static unsigned long col_up(unsigned long x)
{
	return (x + sh->colour_span - 1) & ~(sh->colour_span - 1);
}

static void worker(unsigned int w, unsigned int gen, uint64_t seed,
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

/* ============================================================ controller */

struct wslot {
	pid_t pid;
	unsigned int gen;
	bool killed;		/* by us, with SIGKILL */
};

static struct wslot workers[MAX_PROCS];
static volatile sig_atomic_t alarmed;

static void alarm_handler(int sig)
{
	unsigned int i;

	(void)sig;
	if (alarmed++) {
		static const char msg[] = "Bail out! mspec_stress: controller stuck\n";

		if (write(1, msg, sizeof(msg) - 1) < 0)
			_exit(KSFT_FAIL);
		_exit(KSFT_FAIL);
	}
	for (i = 0; i < MAX_PROCS; i++)
		if (workers[i].pid > 0)
			kill(workers[i].pid, SIGKILL);
	alarm(10);
}

static unsigned long unexpected_ends;
static char unexpected_first[240];

static void reaped(struct wslot *ws, int status)
{
	unsigned int w = ws - workers;
	int seen = sh->worker_seen[w].sig;

	sh->worker_seen[w].sig = 0;
	sh->worker_ends++;
	if (WIFEXITED(status) && WEXITSTATUS(status) == 0)
		goto out;
	if (WIFSIGNALED(status) && WTERMSIG(status) == SIGKILL &&
	    (ws->killed || sh->stop)) {
		atomic_add_ul(&sh->worker_end[END_KILLED], 1);
		goto out;
	}
	if (WIFSIGNALED(status) && WTERMSIG(status) == SIGSEGV &&
	    sh->worker_forced[w]) {
		sh->worker_forced[w] = 0;
		atomic_add_ul(&sh->worker_end[END_FORCED], 1);
		goto out;
	}
	if (seen) {
		/*
		 * The handler saw a fault that no guard expected and that the
		 * kernel did not force: a wild access, whatever the injection.
		 */
		atomic_add_ul(&sh->worker_end[END_OTHER], 1);
		if (!unexpected_ends++)
			snprintf(unexpected_first, sizeof(unexpected_first),
				 "worker %d: signal %d code %d at %p (pc %#lx) outside any guarded access (a wild access)",
				 ws->pid, seen, sh->worker_seen[w].code,
				 sh->worker_seen[w].addr, sh->worker_seen[w].pc);
		goto out;
	}
	/*
	 * With the kernel's fault injection on, a worker also dies of a
	 * SIGSEGV that its handler never saw: the kernel could not set up
	 * the frame of the SIGSEGV it forced either, so force_sigsegv()
	 * reset the handler. Tolerated, counted and bounded (see
	 * UNSEEN_MAX); a wild access runs the handler and is caught above;
	 * without kernel fault injection any such death is a failure.
	 */
	if (WIFSIGNALED(status) && WTERMSIG(status) == SIGSEGV &&
	    sh->kinject) {
		atomic_add_ul(&sh->unseen_segv, 1);
		atomic_add_ul(&sh->worker_end[END_FORCED], 1);
		goto out;
	}
	atomic_add_ul(&sh->worker_end[END_OTHER], 1);
	if (!unexpected_ends++)
		snprintf(unexpected_first, sizeof(unexpected_first),
			 "worker %d: %s %d", ws->pid,
			 WIFEXITED(status) ? "exit" : "signal",
			 WIFEXITED(status) ? WEXITSTATUS(status) :
			 WTERMSIG(status));
out:
	ws->pid = 0;
}

/* Every worker pid ever started: the leader of its process group. */
static pid_t groups[4096];
static unsigned int ngroups;

static pid_t spawn(unsigned int w, uint64_t seed, uint64_t deadline)
{
	uint64_t s = seed ^ ((uint64_t)w << 32 | workers[w].gen);
	pid_t pid;

	pid = fork();
	if (pid == 0) {
		setpgid(0, 0);	/* with its fork() children, to kill at once */
		splitmix64(&s);
		worker(w, workers[w].gen, s, deadline);
	}
	if (pid > 0) {
		setpgid(pid, pid);
		if (ngroups < ARRAY_SIZE(groups))
			groups[ngroups++] = pid;
		workers[w].pid = pid;
		workers[w].killed = false;
		workers[w].gen++;
	}
	return pid;
}

/*
 * Reap whatever ended: workers, and the fork() children of workers that
 * died before them (we are their subreaper). With @block, wait until no
 * worker is left or @until.
 */
static unsigned int reap(bool block, uint64_t until)
{
	unsigned int i, alive;
	int status;
	pid_t pid;

	for (;;) {
		while ((pid = waitpid(-1, &status, WNOHANG)) > 0)
			for (i = 0; i < opt_procs; i++)
				if (workers[i].pid == pid)
					reaped(&workers[i], status);
		alive = 0;
		for (i = 0; i < opt_procs; i++)
			if (workers[i].pid > 0)
				alive++;
		if (!block || !alive || now_ns() >= until)
			return alive;
		sleep_us(5000);
	}
}

/* Kill what is left of every worker's process group, reap it all. */
static bool reap_all(uint64_t until)
{
	unsigned int i;
	int status;
	pid_t pid;

	for (i = 0; i < ngroups; i++)
		kill(-groups[i], SIGKILL);
	for (;;) {
		pid = waitpid(-1, &status, WNOHANG);
		if (pid < 0 && errno == ECHILD)
			return true;
		if (pid > 0) {
			for (i = 0; i < opt_procs; i++)
				if (workers[i].pid == pid)
					reaped(&workers[i], status);
			continue;
		}
		if (now_ns() >= until)
			return false;
		sleep_us(5000);
	}
}

/* mspec failure injection: counts what was asked for. */
static unsigned long injected;

static void inject_tick(struct rng *r)
{
	unsigned int n;

	if (mspec_knob("fail_next_alloc") != 0)
		return;
	mspec_set_knob("fail_sigbus", below(r, 2));
	n = 1 + below(r, 3);
	if (!mspec_set_knob("fail_next_alloc", n))
		injected += n;
}

struct nopfn_counts {
	long states, ram;
};

static int nopfn_counts(int fd, struct nopfn_counts *c)
{
	struct nopfn_test_stats s;

	if (ioctl(fd, NOPFN_TEST_IOC_GET_STATS, &s))
		return -1;
	c->states = s.all_states;
	c->ram = s.all_ram_pages;
	return 0;
}

static void result(bool ok, const char *name, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));

static void result(bool ok, const char *name, const char *fmt, ...)
{
	va_list ap;

	if (!ok && fmt) {
		va_start(ap, fmt);
		printf("# %s: ", name);
		vprintf(fmt, ap);
		printf("\n");
		va_end(ap);
	}
	if (ok)
		ksft_test_result_pass("%s\n", name);
	else
		ksft_test_result_fail("%s\n", name);
}

static void result_skip(const char *name, const char *why)
{
	ksft_inc_xskip_cnt();
	printf("ok %u %s # SKIP %s\n", ksft_test_num(), name, why);
}

/* Every page of a fresh mapping of each device reads zero (fresh_word()). */
static bool sweep_zero(char *msg, size_t size)
{
	const unsigned long npages = 32;
	unsigned int d;

	for (d = 0; d < NDEV; d++) {
		uint64_t *p = map_dev(dev_file[d], npages * psz,
				      PROT_READ | PROT_WRITE, MAP_SHARED, 0);
		unsigned long i, n = npages * psz / 8;

		/* refused where it cannot be mapped: mspec_uncached.c */
		if (p == MAP_FAILED && d == D_UNCACHED && nmappable < NTYPES)
			continue;
		if (p == MAP_FAILED) {
			snprintf(msg, size, "mmap %s: %s", dev_file[d],
				 strerror(errno));
			return false;
		}
		for (i = 0; i < n; i++)
			if (peek64(&p[i]) != fresh_word(d, i * 8))
				break;
		if (i < n) {
			snprintf(msg, size, "%s word %lu = %#llx", dev_file[d],
				 i, (unsigned long long)peek64(&p[i]));
			munmap(p, npages * psz);
			return false;
		}
		munmap(p, npages * psz);
	}
	return true;
}

int main(int argc, char **argv)
{
	struct counters base[NTYPES], c[NTYPES];
	struct nopfn_counts nbase, nnow = { -1, -1 };
	struct kmsg_check km;
	struct sigaction sa = { 0 };
	struct nopfn_test_stats st;
	struct rng r;
	uint64_t t0, deadline, tend, total = 0;
	unsigned long remaining, failures_seen = 0;
	long kfi_used[2] = { -1, -1 };
	unsigned int i, t, alive;
	char msg[256];
	bool ok, orphans_gone;
	int nfd, fd;

	parse_args(argc, argv);
	ksft_print_header();
	ksft_print_msg("seed %llu, %u s, %u processes x %u threads\n",
		       (unsigned long long)opt_seed, opt_seconds, opt_procs,
		       opt_threads);
	if (!have_mspec() || access(dev_file[D_NOPFN], R_OK | W_OK))
		ksft_exit_skip("mspec or nopfn_test module, or debugfs, not available\n");
	ksft_set_plan(PLAN);
	rng_seed(&r, opt_seed);

	sh = mmap(NULL, sizeof(*sh), PROT_READ | PROT_WRITE,
		  MAP_SHARED | MAP_ANONYMOUS | MAP_POPULATE, -1, 0);
	if (sh == MAP_FAILED)
		ksft_exit_fail_msg("shared memory: %s\n", strerror(errno));
	prctl(PR_SET_CHILD_SUBREAPER, 1);
	fd = open(dev_file[D_CACHED], O_RDWR | O_CLOEXEC);
	sh->colour_span = fd < 0 ? 0 : colour_span(fd);
	if (!sh->colour_span)
		ksft_exit_fail_msg("colour probe of %s: %s\n",
				   dev_file[D_CACHED], strerror(errno));
	close(fd);
	if (sh->colour_span > (unsigned long)psz)
		ksft_print_msg("shared mappings start at a multiple of %#lx (data cache aliases)\n",
			       sh->colour_span);

	nfd = open(dev_file[D_NOPFN], O_RDWR | O_CLOEXEC);
	if (nfd < 0 || ioctl(nfd, NOPFN_TEST_IOC_GET_STATS, &st))
		ksft_exit_fail_msg("nopfn_test: %s\n", strerror(errno));
	/* Each hammer thread maps its own window of page indexes. */
	sh->carve_window = NOPFN_TEST_MAX_PAGES / (opt_procs * opt_threads);
	if (st.carve_pages && !set_pages(nfd, 0, 1, NOPFN_TEST_CARVE, 0)) {
		if (sh->carve_window > st.carve_pages /
		    (opt_procs * opt_threads))
			sh->carve_window = st.carve_pages /
					   (opt_procs * opt_threads);
		sh->carve_ok = 1;
		set_pages(nfd, 0, 1, NOPFN_TEST_RAM, 0);
	}
	/* Each window starts at a colour's first page (mips64el: 2 pages). */
	sh->carve_window -= sh->carve_window % (sh->colour_span / psz);
	if (sh->carve_window < SLOT_PAGES)
		ksft_exit_fail_msg("%u x %u threads: fewer than %u nopfn_test pages each\n",
				   opt_procs, opt_threads, SLOT_PAGES);
	if (!sh->carve_ok)
		ksft_print_msg("carve-out not usable: no NOPFN_TEST_CARVE pages\n");

	mspec_set_knob("fail_next_alloc", 0);
	mspec_set_knob("fail_sigbus", 0);
	for (t = 0; t < NTYPES; t++)
		if (read_counters(type_name[t], &base[t]))
			ksft_exit_fail_msg("read %s stats\n", type_name[t]);
	if (nopfn_counts(nfd, &nbase))
		ksft_exit_fail_msg("nopfn_test stats: %s\n", strerror(errno));
	kmsg_open(&km);

	sh->kinject = opt_inject && kfi_start(opt_inject);
	ksft_print_msg("kernel fault injection: %s\n", sh->kinject ?
		       "fail_page_alloc/failslab on the hammer threads" :
		       "not available (no /sys/kernel/debug/fail_page_alloc)");

	sa.sa_handler = alarm_handler;
	sigaction(SIGALRM, &sa, NULL);
	{
		struct sigaction crash = { .sa_sigaction = controller_crash,
					   .sa_flags = SA_SIGINFO };

		sigaction(SIGSEGV, &crash, NULL);
		sigaction(SIGBUS, &crash, NULL);
	}
	alarm(opt_seconds + 30);

	t0 = now_ns();
	deadline = t0 + opt_seconds * 1000000000ULL;
	for (i = 0; i < opt_procs; i++)
		if (spawn(i, opt_seed, deadline) < 0)
			ksft_exit_fail_msg("fork: %s\n", strerror(errno));
	while (now_ns() < deadline && !alarmed) {
		unsigned int k = below(&r, opt_procs);

		inject_tick(&r);
		reap(false, 0);
		for (i = 0; i < opt_procs; i++)
			if (workers[i].pid <= 0 &&
			    now_ns() + 300000000ULL < deadline)
				spawn(i, opt_seed, deadline);
		if (workers[k].pid > 0) {
			unsigned int what = below(&r, 200);

			if (what == 0) {
				workers[k].killed = true;
				kill(workers[k].pid, SIGKILL);
			} else if (what < 4) {
				kill(workers[k].pid, SIGSTOP);
				sleep_us(2000 + below(&r, 10000));
				kill(workers[k].pid, SIGCONT);
			}
		}
		sleep_us(10000);
	}
	sh->stop = 1;
	/* Grace: a fault waits at most 20 ms; TCG and the debug kernel. */
	alive = reap(true, now_ns() + 10000000000ULL);
	for (i = 0; i < opt_procs; i++)
		if (workers[i].pid > 0) {
			workers[i].killed = true;
			kill(workers[i].pid, SIGKILL);
		}
	if (alive)
		reap(true, now_ns() + 10000000000ULL);
	/* Orphaned fork() children of killed workers: alarm(10) at most. */
	orphans_gone = reap_all(now_ns() + 15000000000ULL);
	tend = now_ns();
	alarm(0);

	kfi_stop(kfi_used);
	remaining = mspec_knob("fail_next_alloc");
	mspec_set_knob("fail_next_alloc", 0);
	mspec_set_knob("fail_sigbus", 0);

	for (i = 0; i < NOPS; i++)
		total += sh->ops[i];

	/* 1: it did what it says, every kind of operation. */
	ok = total > 0;
	for (i = 0; i < NOPS; i++)
		if (!sh->ops[i]) {
			ok = false;
			ksft_print_msg("no %s operation ran\n", op_name[i]);
		}
	result(ok, "all_operations_ran", "%llu operations",
	       (unsigned long long)total);

	/* 2: every data and errno check of every thread and child. */
	failures_seen = sh->failures;
	result(!failures_seen, "data_and_errno_checks", "%lu failed, first: %s",
	       failures_seen, sh->first_failure);

	/*
	 * 3: workers ended as they were told to; deaths of a SIGSEGV no
	 * handler saw (kernel fault injection only) stay rare: at most
	 * UNSEEN_MAX, and at most one reaped worker in UNSEEN_SHARE.
	 */
	if (sh->unseen_segv > UNSEEN_MAX ||
	    sh->unseen_segv * UNSEEN_SHARE > sh->worker_ends) {
		if (!unexpected_ends++)
			snprintf(unexpected_first, sizeof(unexpected_first),
				 "%lu of %lu workers died of a SIGSEGV no handler saw (bound: %d, and 1 in %d)",
				 sh->unseen_segv, sh->worker_ends, UNSEEN_MAX,
				 UNSEEN_SHARE);
	}
	result(!unexpected_ends, "worker_exits", "%lu unexpected, first: %s",
	       unexpected_ends, unexpected_first);

	/* 4: bounded. */
	ok = true;
	for (i = 0; i < opt_procs; i++)
		if (workers[i].pid > 0)
			ok = false;
	result(ok && !alarmed && orphans_gone, "stopped_in_time",
	       "workers or their children left, or the alarm fired");

	/*
	 * 5, 6: counters back where they started. Exit and fput() of the
	 * workers' files are over once they are reaped, but give deferred
	 * work a moment.
	 */
	for (i = 0; i < 100; i++) {
		ok = true;
		for (t = 0; t < NTYPES; t++) {
			read_counters(type_name[t], &c[t]);
			if (c[t].in_use != base[t].in_use ||
			    c[t].mappings != base[t].mappings)
				ok = false;
		}
		if (ok)
			break;
		sleep_us(20000);
	}
	msg[0] = 0;
	for (t = 0; t < NTYPES; t++) {
		if (c[t].in_use != base[t].in_use ||
		    c[t].mappings != base[t].mappings ||
		    c[t].leaked != base[t].leaked ||
		    c[t].allocated - base[t].allocated !=
		    c[t].freed - base[t].freed) {
			snprintf(msg, sizeof(msg),
				 "%s: in_use %ld->%ld mappings %ld->%ld leaked %ld->%ld allocated +%ld freed +%ld",
				 type_name[t], base[t].in_use, c[t].in_use,
				 base[t].mappings, c[t].mappings,
				 base[t].leaked, c[t].leaked,
				 c[t].allocated - base[t].allocated,
				 c[t].freed - base[t].freed);
		}
		ksft_print_msg("%s: %ld faults, %ld pages allocated, %ld races, %ld allocation failures\n",
			       type_name[t], c[t].faults - base[t].faults,
			       c[t].allocated - base[t].allocated,
			       c[t].races - base[t].races,
			       c[t].failures - base[t].failures);
	}
	result(!msg[0], "mspec_counters_back", "%s", msg);

	for (i = 0; i < 100; i++) {
		if (!nopfn_counts(nfd, &nnow) && nnow.states == nbase.states &&
		    nnow.ram == nbase.ram)
			break;
		sleep_us(20000);
	}
	result(nnow.states == nbase.states && nnow.ram == nbase.ram,
	       "nopfn_counters_back", "states %ld->%ld, RAM pages %ld->%ld",
	       nbase.states, nnow.states, nbase.ram, nnow.ram);

	/*
	 * 7: each mspec failure counted was injected, SIGBUS only for them.
	 * Under kernel fault injection the driver's own page allocations
	 * fail too: they are counted as well, and NOPFN_OOM outside a memcg
	 * OOM is SIGBUS, so there each SIGBUS must be one counted failure.
	 */
	{
		unsigned long used = injected - (remaining > 0 ? remaining : 0);
		long counted = 0;

		for (t = 0; t < NTYPES; t++)
			counted += c[t].failures - base[t].failures;
		if (sh->kinject)
			ok = counted >= (long)used &&
			     sh->mspec_sigbus <= (unsigned long)counted;
		else
			ok = counted == (long)used && sh->mspec_sigbus <= used;
		ok = ok && used > 0;
		result(ok, "injected_failures_accounted",
		       "%lu injected, %lu used, %ld counted, %lu SIGBUS",
		       injected, used, counted, sh->mspec_sigbus);
		ksft_print_msg("mspec failures: %lu injected, %lu used, %ld counted, %lu gave SIGBUS\n",
			       injected, used, counted, sh->mspec_sigbus);
	}

	/* 8: the kernel's fault injection hit the threads. */
	if (!sh->kinject) {
		result_skip("kernel_fault_injection",
			    "no fail_page_alloc/failslab in debugfs");
	} else {
		ksft_print_msg("kernel fault injection: %ld page allocations and %ld slab allocations failed, %lu ENOMEM/EAGAIN tolerated, %lu forced SIGSEGV (%lu killed a worker, %lu unseen by a handler), %lu SIGSEGV without siginfo resumed\n",
			       kfi_used[0], kfi_used[1], sh->tolerated,
			       sh->forced_segv, sh->worker_end[END_FORCED],
			       sh->unseen_segv, sh->lost_info_segv);
		ksft_print_msg("kernel fault injection: %lu touches of nopfn_test RAM pages got SIGBUS (its page allocation failed: NOPFN_OOM)\n",
			       sh->nopfn_kinject_sigbus);
		result(kfi_used[0] > 0 || kfi_used[1] > 0,
		       "kernel_fault_injection", "no failure was injected");
	}

	/* 9: pages that came back are handed out zeroed again. */
	result(sweep_zero(msg, sizeof(msg)), "fresh_pages_zero_after", "%s",
	       msg);

	/* 10: nothing in the kernel log. */
	{
		long reports = kmsg_scan(&km, NULL);

		if (reports < 0) {
			result_skip("kernel_log_clean", "no /dev/kmsg");
		} else {
			ksft_print_msg("kernel log: %lu new records, %ld reports\n",
				       km.lines, reports);
			result(reports == 0, "kernel_log_clean",
			       "%ld reports, first: %s", reports, km.first);
		}
	}
	kmsg_close(&km);

	/* Counters back also after the sweep. */
	for (t = 0; t < NTYPES; t++) {
		read_counters(type_name[t], &c[t]);
		if (c[t].in_use != base[t].in_use)
			ksft_print_msg("%s: pages_in_use %ld after the sweep, %ld at the start\n",
				       type_name[t], c[t].in_use,
				       base[t].in_use);
	}
	close(nfd);

	ksft_print_msg("ops: %llu in %.2f s; worker ends: %lu clean, %lu exit_group, %lu killed, %lu other\n",
		       (unsigned long long)total, (tend - t0) / 1e9,
		       sh->worker_end[END_CLEAN], sh->worker_end[END_EXIT_GROUP],
		       sh->worker_end[END_KILLED], sh->worker_end[END_OTHER]);
	ksft_print_msg("nopfn_test: %lu NOPFN_REFAULT, %lu NOPFN_RETRY, %lu NOPFN_OOM, %lu NOPFN_SIGBUS; %lu SIGUSR1 handled; %lu race windows\n",
		       sh->refault, sh->retry, sh->oom, sh->sigbus_ret,
		       sh->usr1_got, sh->race_windows);
	printf("# METRIC stress.seed %llu\n", (unsigned long long)opt_seed);
	printf("# METRIC stress.ops %llu ops\n", (unsigned long long)total);
	printf("# METRIC stress.seconds %.3f s\n", (tend - t0) / 1e9);
	printf("# METRIC stress.ops_per_s %.1f ops/s\n",
	       total / ((tend - t0) / 1e9));
	for (i = 0; i < NOPS; i++)
		printf("# METRIC stress.op.%s %lu ops\n", op_name[i],
		       sh->ops[i]);
	printf("# METRIC stress.fresh_pages %lu pages\n", sh->fresh_pages);
	printf("# METRIC stress.children %lu\n", sh->children);
	printf("# METRIC stress.mspec_sigbus %lu\n", sh->mspec_sigbus);
	printf("# METRIC stress.nopfn_refault %lu\n", sh->refault);
	printf("# METRIC stress.nopfn_retry %lu\n", sh->retry);
	printf("# METRIC stress.tolerated %lu\n", sh->tolerated);
	if (sh->kinject)
		printf("# METRIC stress.kernel_injected %ld\n",
		       (kfi_used[0] > 0 ? kfi_used[0] : 0) +
		       (kfi_used[1] > 0 ? kfi_used[1] : 0));
	ksft_finished();
	return 0;
}
