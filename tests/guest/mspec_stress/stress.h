/* SPDX-License-Identifier: GPL-2.0 */
/*
 * mspec_stress (main.c says what it does and how): what its files share.
 *
 * main.c is the controller: it forks the workers, injects mspec failures,
 * reaps, checks and reports; kfi.c turns the kernel's fault injection on
 * and off. worker.c is a worker process and its hammer threads, which do
 * the operations on their own slots (slots.c) and on the pool of mappings
 * they share (pool.c).
 *
 * tests/red/wild_stress.c builds all these files as one: names of file
 * scope must differ from file to file, static ones too.
 */
#ifndef MSPEC_STRESS_H
#define MSPEC_STRESS_H

#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <sched.h>
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

#include "clock.h"
#include "files.h"
#include "guard.h"
#include "mspec_test.h"
#include "nopfn_util.h"
#include "rand.h"

#ifndef ARRAY_SIZE
#define ARRAY_SIZE(arr) (sizeof(arr) / sizeof((arr)[0]))
#endif

#define MAX_PROCS	16
/* Bounds of the worker deaths no handler saw (see reaped()). */
#define UNSEEN_MAX	8
#define LOST_RESUME_MAX	16
#define UNSEEN_SHARE	10
#define OPS_KIND_MIN	10	/* all_operations_ran: each kind at least */
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
	 * Under kernel fault injection, test_nopfn's own RAM page allocation
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
	unsigned long refault, retry, oom, sigbus_ret;	/* test_nopfn files */
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

extern struct shared *sh;

static inline void atomic_add_ul(unsigned long *p, unsigned long v)
{
	__atomic_fetch_add(p, v, __ATOMIC_RELAXED);
}

/* Record a failed check (any process, any thread; not in a handler). */
void __attribute__((format(printf, 1, 2))) fail(const char *fmt, ...);

extern unsigned int opt_threads;

/* --------------------------------------------------------- worker.c */

enum slot_beh { B_RAM, B_SIGBUS, B_OOM, B_SLEEP_LOCKED, B_SLEEP_UNLOCKED,
		B_CARVE };

struct slot {
	char *addr;			/* SLOT_PAGES pages reserved there */
	int dev;			/* -1: nothing mapped (PROT_NONE) */
	int fd;				/* test_nopfn: the state's file */
	unsigned int npages;		/* pages mapped from addr on */
	unsigned int ro;		/* pages [0, ro) are PROT_READ */
	unsigned int bounds;		/* bit i: a VMA starts at page i */
	uint8_t beh[SLOT_PAGES];	/* test_nopfn: behaviour of each page */
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

/* How a worker ends: on its own, with exit_group() mid-fault, or killed. */
enum { END_CLEAN, END_EXIT_GROUP, END_KILLED, END_OTHER, END_FORCED };

extern unsigned int w_index, w_gen;	/* the worker and its generation */
extern __thread const char *op_now, *op_before;	/* for the messages */
extern struct hammer hammers[MAX_THREADS];
extern struct pool_slot pool[NPOOL];

/* "# <who>: signal S code C at ADDR pc PC", async-signal-safe. */
void crash_note(const char *who, int sig, const siginfo_t *si, void *uc);

/*
 * Under the kernel's fault injection the sigqueue entry of a fault signal
 * may fail to allocate: the signal still comes, but as SI_USER without an
 * address (__send_signal_locked() "loses the info").
 */
bool info_lost(void);
/* A SIGSEGV of the kernel's, not of the access (see forced_segv). */
bool forced(int sig);
/* An errno that fault injection may cause (counted). */
bool tolerated(int err);
/* A pattern of this thread that no other thread writes. */
uint64_t new_tag(struct hammer *h);
/* PROT_NONE over @len bytes at @addr: 0, or -1 (a failure reported). */
int reserve(char *addr, size_t len);
/* A device to map. */
int pick_dev(struct rng *r);
/* The worker process @w of generation @gen: never returns. */
void worker(unsigned int w, unsigned int gen, uint64_t seed,
	    uint64_t deadline);

/* -------------------------------------------------- slots.c, pool.c */

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

/* A slot with nothing mapped, its test_nopfn file closed. */
void slot_clear(struct slot *s);
/* Counters of a test_nopfn file that is about to go. */
void collect_nopfn(int fd);

/* The operations of a hammer thread. */

void op_map(struct hammer *h, struct slot *s);
void op_touch(struct hammer *h, struct slot *s);
void op_fork(struct hammer *h);
void op_mprotect(struct hammer *h, struct slot *s);
void op_madvise(struct hammer *h, struct slot *s);
void op_mremap(struct hammer *h, struct slot *s);
void op_munmap(struct hammer *h, struct slot *s);

/* Map a device at pool slot @ps: 0, or -1. */
int pool_map(struct rng *r, struct pool_slot *ps);
void op_race_touch(struct hammer *h);
void op_race_replace(struct hammer *h);

/* ----------------------------------------------------------- kfi.c */

/* On, at @percent: false if the kernel has none. */
bool kfi_start(unsigned int percent);
/* Off; the failures injected, per kind (-1: none there). */
void kfi_stop(long used[2]);

#endif /* MSPEC_STRESS_H */
