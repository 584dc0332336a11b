/* SPDX-License-Identifier: GPL-2.0 */
/*
 * mmap_fuzz (main.c says what it does and how): what its files share.
 *
 * main.c generates the sequences, runs each in a process of its own,
 * minimizes a failing one and reports; sequence.c is that process, which
 * runs the operations: the calls of the mmap family in ops.c, the
 * accesses and the drivers' interfaces in access.c. Each is checked
 * against the model of model.c.
 */
#ifndef MMAP_FUZZ_H
#define MMAP_FUZZ_H

#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <limits.h>
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
#include <sys/utsname.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>
#include <linux/types.h>

#include "mspec_test.h"
#include "test_nopfn_uapi.h"

#ifndef ARRAY_SIZE
#define ARRAY_SIZE(arr) (sizeof(arr) / sizeof((arr)[0]))
#endif

#define ARENA		48	/* pages the sequences play in */
#define GUARD		16	/* PROT_NONE pages on either side */
#define NFD		4	/* file slots */
#define MAXOPS		48	/* operations per sequence */
#define MAXV		64	/* VMAs in the arena */
#define MAXOBJ		160	/* mspec mappings and test_nopfn states */
#define MAXPG		64	/* pages of an object the model tracks */
#define MAXR		64	/* test_nopfn behaviour ranges per state */
#define NW		4	/* words of a page the model tracks */
#define TRACE		240	/* bytes of trace per operation */
#define MSG		400

/* ------------------------------------------------------- operations */

enum op_kind {
	K_OPEN, K_CLOSE, K_MMAP, K_MUNMAP, K_MPROTECT, K_MADVISE, K_MREMAP,
	K_TOUCH, K_UACCESS, K_PROCMEM, K_QUERY, K_SETPAGES, K_INJECT,
	K_HFORK, K_HTOUCH, K_HEXIT, K_REMAP, NKINDS
};

struct op {
	unsigned int kind;
	uint64_t r[4];		/* raw random parameters */
};

/* -------------------------------------------------------------- model */

enum beh { B_RAM, B_CARVE, B_SIGBUS, B_OOM_ONCE, B_SLEEP_LOCKED,
	   B_SLEEP_UNLOCKED };

struct mpage {
	unsigned long idx;
	bool alloc;		/* mspec page / test_nopfn RAM page held */
	bool oom_done;		/* test_nopfn NOPFN_TEST_OOM_ONCE failed */
	bool armed;		/* test_nopfn NOPFN_TEST_SLEEP_* wait started */
	uint64_t w[NW];
	uint64_t pfn;		/* 0 until read back from the PTE */
};

struct mrange {
	unsigned long first, count;
	unsigned int beh;
};

struct mobj {
	bool live;
	int dev;
	unsigned long npages;	/* mspec: pages of the original mmap() */
	int npg;
	struct mpage pg[MAXPG];
	int nr;
	struct mrange r[MAXR];	/* test_nopfn: SET_PAGES, oldest first */
	/* test_nopfn: the state's counters (struct nopfn_test_stats) */
	long calls, ret_pfn, ret_sigbus, ret_oom, ret_retry;
	long maybe_retry;	/* first calls that may or may not wait */
};

/* F_NOWRITE: no VM_MAYWRITE (MAP_SHARED of a file opened O_RDONLY). */
enum { F_DONTCOPY = 1, F_RAND = 2, F_SEQ = 4, F_NOWRITE = 8 };

struct mvma {
	unsigned long start, end;	/* arena page numbers */
	unsigned long pgoff;
	int obj;
	int prot;
	unsigned int fl;
};

/* What a present PTE maps: the object's page, or the carve-out's. */
enum { PTE_NONE, PTE_PAGE, PTE_CARVE };

struct mproc {
	int nv;
	struct mvma v[MAXV];		/* sorted by start */
	unsigned char pte[ARENA];
	int fdobj[NFD];			/* helper: nopfn state of inherited fds */
};

struct mfd {
	int fd;				/* -1: closed */
	int dev;
	bool rw;
	int obj;			/* test_nopfn: its state, else -1 */
};

struct model {
	struct mproc par, hel;
	bool helper;
	struct mfd fds[NFD];
	int nobj;
	struct mobj obj[MAXOBJ];
	int inj_left;
	bool inj_sigbus;
	long failures[NTYPES];		/* injected failures used, per type */
	long faults[NTYPES];		/* mspec ->nopfn() calls, per type */
	bool carve_known[NOPFN_TEST_MAX_PAGES][NW];
	uint64_t carve_w[NOPFN_TEST_MAX_PAGES][NW];
};

/* What the machine offers, found once at the start. */
struct env {
	char *arena;			/* ARENA pages, holes at the start */
	bool fits[3];			/* 1 GiB, 1 TiB, 2^46: address space */
	unsigned long carve_pfn, carve_pages;
	int carve_err;			/* SET_PAGES CARVE: 0 or an errno */
	unsigned long ram_pages;	/* totalram_pages() (MemTotal) */
	bool signed_off;		/* sys_mmap's off_t is signed */
	bool populate_walk;		/* MADV_POPULATE_* stops at the first
					 * hole or refused VMA (Linux 6.9 on) */
	unsigned long colour;		/* shared mappings' colour mask, or 0 */
	int overcommit;			/* vm.overcommit_memory */
	unsigned long word_off[NW];
};

extern struct env env;

#if ULONG_MAX > 0xffffffffUL
static const unsigned long huge_len[3] = { 1UL << 30, 1UL << 40, 1UL << 46 };
#else
/* 32-bit: 1 GiB, 3 GiB, and the largest page-aligned length */
static const unsigned long huge_len[3] = { 1UL << 30, 3UL << 30, ~0xfffUL };
#endif

/* ---------------------------------------------------- the run's state */

struct shared {
	int failed_op;			/* -1: none */
	char msg[MSG];
	char trace[MAXOPS][TRACE];
	unsigned long ops_done;
	unsigned long kinds[NKINDS];
	/* outcomes: calls that worked, and accesses by result */
	unsigned long ok[NKINDS];
	unsigned long acc_data, acc_segv, acc_bus, acc_efault, acc_fresh;
};

extern struct shared *sh;		/* shared with the coordinator */
extern struct model *M;			/* the model of the sequence */
extern int probe_fd;			/* test_nopfn: module counters */
extern int kpipe[2];			/* for kernel-mode accesses */
extern int h_cmd, h_rep;		/* helper pipes */
extern pid_t h_pid;
extern unsigned int cur_kind;		/* kind of the current operation */

/* The trace of the current operation, and a difference (sequence.c). */
void __attribute__((format(printf, 1, 2))) T(const char *fmt, ...);
void __attribute__((format(printf, 1, 2), noreturn))
mismatch(const char *fmt, ...);

static inline char *A(unsigned long page)
{
	return env.arena + page * psz;
}

/* An address and a result as the trace shows them. */
const char *addr_str(unsigned long a, char *buf);
const char *err_str(long ret, int err, char *buf);
/* The descriptor of a file slot: a closed one's is not open either. */
int fd_of(int slot);
bool sane(const struct op *op);
int open_slot(uint64_t k, int dev);
/* A call's result, traced, must be the model's. */
void expect_ret(const char *what, long got, int err, long want,
		int want_err);

/* The process of one sequence: ops[idx[0..n)]. */
void __attribute__((noreturn))
sequence_main(const struct op *ops, const unsigned char *idx, unsigned int n);

/* ------------------------------------------------------------ model.c */

struct counts {
	long mappings[NTYPES], in_use[NTYPES], failures[NTYPES], faults[NTYPES];
	long states, ram, leaked;
};

/*
 * The real counters. In a sequence (@strict) one that cannot be read is a
 * difference; the coordinator takes what it can (the rest stays 0).
 */
void read_counts(struct counts *c, bool strict);
/* The counters the model starts from, read at the start of a sequence. */
void model_base(void);
/* The real counters must be the model's, after each operation. */
void check_counts(void);

struct mvma *find_vma_at(struct mproc *p, unsigned long pg);
struct mvma *find_vma_after(struct mproc *p, unsigned long pg);
void vma_insert(struct mproc *p, struct mvma v);
void vma_split_at(struct mproc *p, unsigned long pg);
void vma_remove(struct mproc *p, unsigned long s, unsigned long e);
bool range_free(struct mproc *p, unsigned long s, unsigned long e);
bool colour_misfit(unsigned long addr, unsigned long pgoff);
unsigned long colour_align(unsigned long addr, unsigned long pgoff);
bool hint_free(unsigned long addr, unsigned long pgoff, unsigned long pages);
int obj_new(int dev, unsigned long npages);
struct mpage *obj_page(struct mobj *o, unsigned long idx, bool add);

struct tres {
	int sig, code;		/* user: signal and si_code; kernel: -errno */
	unsigned long addr;	/* si_addr */
	uint64_t val;		/* value read */
};

struct tcmd {
	unsigned long addr;
	int write;		/* 1 write, 0 read, -1 exit */
	uint64_t val;
};

extern int uaccess_tries[NW][2];
/* What an access must give, applied to the model. */
struct tres model_access(struct mproc *p, unsigned long pg, int w,
			 bool write, uint64_t val, bool kernel);

/* -------------------------------------------------- ops.c, access.c */

/* mmap(2) without the C library's checks */
long raw_mmap(unsigned long addr, unsigned long len, int prot, int flags,
	      int fd, unsigned long off);
/* A protection as the trace shows it. */
const char *prot_str(int prot, char *buf);

/* The operations, by kind (sequence.c's run_op()). */

void op_open(const struct op *op);
void op_close(const struct op *op);
void op_mmap(const struct op *op);
void op_munmap(const struct op *op);
void op_mprotect(const struct op *op);
void op_madvise(const struct op *op);
void op_mremap(const struct op *op);

void op_touch(const struct op *op, bool helper);
void op_uaccess(const struct op *op);
void op_procmem(const struct op *op);
void op_query(const struct op *op);
void op_setpages(const struct op *op);
void op_inject(const struct op *op);
void op_hfork(void);
void op_hexit(void);
void op_remap(const struct op *op);
/* The helper process goes, if there is one. */
void helper_stop(void);

#endif /* MMAP_FUZZ_H */
