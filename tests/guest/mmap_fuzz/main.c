// SPDX-License-Identifier: GPL-2.0
/*
 * mmap_fuzz: seeded random sequences of mmap-family calls on the three
 * mspec devices and /dev/nopfn_test, each checked against a model of what
 * the kernel and the drivers must do.
 *
 *   mmap_fuzz [--seconds N] [--seed S] [--sequence I [--ops LIST]]
 *
 * matrix-args: --seconds 10 --seed {seed}
 * matrix-cases: sequences_match_model counters_back kernel_log_clean
 *   exec_mappings_without_struct_page
 *
 * Sequence I of seed S is generated from splitmix64(S + I): up to 48
 * operations among open/close of a device, mmap() (lengths 0, unaligned,
 * huge; offsets 0, non-zero, unaligned, overflowing; MAP_SHARED, _PRIVATE,
 * _SHARED_VALIDATE, a bad type; MAP_FIXED, _FIXED_NOREPLACE, a hint, none;
 * MAP_POPULATE, _NORESERVE, _LOCKED; every useful protection), munmap(),
 * mprotect(), madvise() (every advice), mremap() (shrink, grow, move,
 * MREMAP_DONTUNMAP, bad flags), reads and writes of user space and of the
 * kernel (a pipe copies from or to the page), /proc/self/mem, the PTE
 * read back through /sys/kernel/debug/mspec/pte, nopfn_test page
 * behaviours, injected mspec allocation failures, and a helper process
 * fork()ed from the current state that touches pages too and exits.
 *
 * All of it happens in a fixed arena of address space (guarded on both
 * sides), so that the model knows every VMA in it. Each sequence runs in
 * a fresh process: after every operation the result (return value and
 * errno, signal with si_code and si_addr, value read) must be the model's,
 * and so must the mspec counters (mappings, pages in use, allocation
 * failures per type), nopfn_test's module-wide counters (states, RAM
 * pages) and the injection knob. After the process exited every counter
 * must be back and the kernel log must have no new report.
 *
 * On a difference, a crash, a hang, a leak or a kernel report the program
 * minimizes the sequence (delta debugging: subsequences re-run in fresh
 * processes, keeping the shortest that still fails), prints the seed, the
 * sequence number, the kept operation numbers (--sequence I --ops LIST
 * replays exactly that) and the trace of the minimal run, and fails.
 *
 * The model is written from the sources; the comments at each rule say
 * where it comes from: mm/mmap.c, mm/mremap.c, mm/mprotect.c, mm/madvise.c
 * of linux-source-6.1, the ->nopfn() series (kernel/patches/, described in
 * docs/nopfn-api.md), driver/mspec_core.c and driver/nopfn_test.c
 * (driver/include/uapi/nopfn_test.h).
 */
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

#include "kselftest.h"
#include "clock.h"
#include "guard.h"
#include "kmsg_check.h"
#include "mspec_test.h"
#include "rand.h"
#include <nopfn_test.h>

#define ARENA		48	/* pages the sequences play in */
#define GUARD		16	/* PROT_NONE pages on either side */
#define NFD		4	/* file slots */
#define MAXOPS		48	/* operations per sequence */
#define MAXV		64	/* VMAs in the arena */
#define MAXOBJ		160	/* mspec mappings and nopfn_test states */
#define MAXPG		64	/* pages of an object the model tracks */
#define MAXR		64	/* nopfn_test behaviour ranges per state */
#define NW		4	/* words of a page the model tracks */
#define TRACE		240	/* bytes of trace per operation */
#define MSG		400

/* The "device" line of the pte file: mspec_type_name[], or "none". */
static const char * const pte_dev[NDEV] = {
	"fetchop", "cached", "uncached", "none",
};

/* ------------------------------------------------------- operations */

enum op_kind {
	K_OPEN, K_CLOSE, K_MMAP, K_MUNMAP, K_MPROTECT, K_MADVISE, K_MREMAP,
	K_TOUCH, K_UACCESS, K_PROCMEM, K_QUERY, K_SETPAGES, K_INJECT,
	K_HFORK, K_HTOUCH, K_HEXIT, K_REMAP, NKINDS
};
static const char * const kind_name[NKINDS] = {
	"open", "close", "mmap", "munmap", "mprotect", "madvise", "mremap",
	"touch", "uaccess", "procmem", "query", "setpages", "inject",
	"hfork", "htouch", "hexit", "remap",
};
static const unsigned int kind_weight[NKINDS] = {
	8, 3, 16, 6, 6, 5, 7, 20, 6, 2, 5, 5, 3, 3, 6, 1, 4,
};

struct op {
	unsigned int kind;
	uint64_t r[4];		/* raw random parameters */
};

static void gen_sequence(uint64_t seed, unsigned long seq, struct op *ops,
			 unsigned int *n)
{
	uint64_t x = seed + seq, total = 0;
	unsigned int i, k;

	for (k = 0; k < NKINDS; k++)
		total += kind_weight[k];
	splitmix64(&x);
	*n = 4 + splitmix64(&x) % (MAXOPS - 3);
	for (i = 0; i < *n; i++) {
		uint64_t w = splitmix64(&x) % total;

		for (k = 0; w >= kind_weight[k]; k++)
			w -= kind_weight[k];
		ops[i].kind = k;
		for (k = 0; k < 4; k++)
			ops[i].r[k] = splitmix64(&x);
	}
	/*
	 * Most sequences start with files open and mapped, well-formed
	 * (see sane()), so that the rest has something to work on.
	 */
	if (splitmix64(&x) % 4) {
		unsigned int pro = 2 + splitmix64(&x) % 5;

		for (i = 0; i < pro && i < *n; i++) {
			ops[i].kind = i % 2 ? K_MMAP : K_OPEN;
			ops[i].r[3] &= ~(7ULL << 61);
		}
	}
}

/* -------------------------------------------------------------- model */

enum beh { B_RAM, B_CARVE, B_SIGBUS, B_OOM_ONCE, B_SLEEP_LOCKED,
	   B_SLEEP_UNLOCKED };

struct mpage {
	unsigned long idx;
	bool alloc;		/* mspec page / nopfn_test RAM page held */
	bool oom_done;		/* nopfn_test NOPFN_TEST_OOM_ONCE failed */
	bool armed;		/* nopfn_test NOPFN_TEST_SLEEP_* wait started */
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
	struct mrange r[MAXR];	/* nopfn_test: SET_PAGES, oldest first */
	/* nopfn_test: the state's counters (struct nopfn_test_stats) */
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
	int obj;			/* nopfn_test: its state, else -1 */
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
static struct {
	char *arena;			/* ARENA pages, holes at the start */
	bool fits[3];			/* 1 GiB, 1 TiB, 2^46: address space */
	unsigned long carve_pfn, carve_pages;
	int carve_err;			/* SET_PAGES CARVE: 0 or an errno */
	unsigned long ram_pages;	/* totalram_pages() (MemTotal) */
	bool signed_off;		/* sys_mmap's off_t is signed */
	unsigned long colour;		/* shared mappings' colour mask, or 0 */
	int overcommit;			/* vm.overcommit_memory */
	unsigned long word_off[NW];
} env;

#if ULONG_MAX > 0xffffffffUL
static const unsigned long huge_len[3] = { 1UL << 30, 1UL << 40, 1UL << 46 };
#else
/* 32-bit: 1 GiB, 3 GiB, and the largest page-aligned length */
static const unsigned long huge_len[3] = { 1UL << 30, 3UL << 30, ~0xfffUL };
#endif

/*
 * mmap(2) without the C library's checks.  The 32-bit ABIs (arm, i386,
 * mips o32) have mmap2, whose offset counts 4096-byte units (arm has no
 * mmap at all, and i386's is old_mmap, which takes a pointer to its
 * arguments): an offset it cannot express, not a multiple of 4096, is
 * EINVAL there as the kernel's mmap says for it (their pages are 4 KiB).
 */
static long raw_mmap(unsigned long addr, unsigned long len, int prot,
		     int flags, int fd, unsigned long off)
{
#ifdef SYS_mmap2
	if (off % 4096) {
		errno = EINVAL;
		return -1;
	}
	return syscall(SYS_mmap2, addr, len, prot, flags, fd, off / 4096);
#elif defined(__s390x__)
	/* s390x's mmap is old_mmap: its six arguments in a block in memory */
	unsigned long args[6] = { addr, len, (unsigned long)prot,
				  (unsigned long)flags, (unsigned long)fd, off };

	return syscall(SYS_mmap, args);
#else
	return syscall(SYS_mmap, addr, len, prot, flags, fd, off);
#endif
}

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

static struct shared *sh;
static struct model *M;
static int probe_fd;			/* nopfn_test, for module counters */
static int kpipe[2];			/* for kernel-mode accesses */
static int h_cmd = -1, h_rep = -1;	/* helper pipes */
static pid_t h_pid;
static unsigned int cur_kind;		/* kind of the current operation */
static char *tr;			/* trace of the current operation */
static size_t trlen;

static void __attribute__((format(printf, 1, 2))) T(const char *fmt, ...)
{
	va_list ap;

	if (trlen >= TRACE - 1)
		return;
	va_start(ap, fmt);
	trlen += vsnprintf(tr + trlen, TRACE - trlen, fmt, ap);
	va_end(ap);
	if (trlen >= TRACE)
		trlen = TRACE - 1;
}

/* A difference: say what, end the sequence's process. */
static void __attribute__((format(printf, 1, 2), noreturn))
mismatch(const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(sh->msg, sizeof(sh->msg), fmt, ap);
	va_end(ap);
	if (h_pid > 0)
		kill(h_pid, SIGKILL);
	_exit(3);
}

static char *A(unsigned long page)
{
	return env.arena + page * psz;
}

/* An address as the trace shows it: relative to the arena if inside. */
static const char *addr_str(unsigned long a, char *buf)
{
	unsigned long base = (unsigned long)env.arena;

	if (a >= base - GUARD * psz && a < base + (ARENA + GUARD) * psz) {
		long off = (long)(a - base);

		if (off % psz)
			sprintf(buf, "A%+ldp%+ld", off / (long)psz,
				off % (long)psz);
		else
			sprintf(buf, "A%+ldp", off / (long)psz);
	} else {
		sprintf(buf, "%#lx", a);
	}
	return buf;
}

static const char *err_str(long ret, int err, char *buf)
{
	if (ret == -1)
		sprintf(buf, "-1 %s", strerrorname_np(err) ?
			strerrorname_np(err) : "?");
	else
		sprintf(buf, "%ld", ret);
	return buf;
}

/* --------------------------------------------------------- model: VMAs */

static struct mvma *find_vma_at(struct mproc *p, unsigned long pg)
{
	int i;

	for (i = 0; i < p->nv; i++)
		if (p->v[i].start <= pg && pg < p->v[i].end)
			return &p->v[i];
	return NULL;
}

/* First VMA ending after @pg (the kernel's find_vma()), or NULL. */
static struct mvma *find_vma_after(struct mproc *p, unsigned long pg)
{
	int i;

	for (i = 0; i < p->nv; i++)
		if (p->v[i].end > pg)
			return &p->v[i];
	return NULL;
}

static void vma_insert(struct mproc *p, struct mvma v)
{
	int i = 0;

	if (p->nv >= MAXV)
		mismatch("model: too many VMAs");
	while (i < p->nv && p->v[i].start < v.start)
		i++;
	memmove(&p->v[i + 1], &p->v[i], (p->nv - i) * sizeof(v));
	p->v[i] = v;
	p->nv++;
}

/* Split so that a VMA boundary lies at @pg (split_vma()). */
static void vma_split_at(struct mproc *p, unsigned long pg)
{
	struct mvma *v = find_vma_at(p, pg), n;

	if (!v || v->start == pg)
		return;
	n = *v;
	n.start = pg;
	n.pgoff = v->pgoff + (pg - v->start);
	v->end = pg;
	vma_insert(p, n);
}

/* Remove [s, e) from @p: munmap(), MAP_FIXED, the mremap() source. */
static void vma_remove(struct mproc *p, unsigned long s, unsigned long e)
{
	int i;

	if (s >= e)
		return;
	vma_split_at(p, s);
	vma_split_at(p, e);
	for (i = 0; i < p->nv;) {
		if (p->v[i].start >= s && p->v[i].end <= e) {
			memmove(&p->v[i], &p->v[i + 1],
				(p->nv - i - 1) * sizeof(p->v[0]));
			p->nv--;
		} else {
			i++;
		}
	}
	for (i = s; i < (int)e && i < ARENA; i++)
		p->pte[i] = PTE_NONE;
}

static bool range_free(struct mproc *p, unsigned long s, unsigned long e)
{
	int i;

	for (i = 0; i < p->nv; i++)
		if (p->v[i].start < e && s < p->v[i].end)
			return false;
	return true;
}

/* Does a shared mapping of @pgoff at @addr miss its colour? */
static bool colour_misfit(unsigned long addr, unsigned long pgoff)
{
	return env.colour && ((addr - pgoff * psz) & env.colour);
}

/* A hint as the kernel takes it: moved up to @pgoff's colour. */
static unsigned long colour_align(unsigned long addr, unsigned long pgoff)
{
	return ((addr + env.colour) & ~env.colour) +
		((pgoff * psz) & env.colour);
}

/* The hint @addr moved to @pgoff's colour, free for @pages in the arena. */
static bool hint_free(unsigned long addr, unsigned long pgoff,
		      unsigned long pages)
{
	unsigned long ca = colour_align(addr, pgoff);
	unsigned long base = (unsigned long)env.arena, pg;

	if (ca < base)
		return false;
	pg = (ca - base) / psz;
	return pg + pages <= ARENA && range_free(&M->par, pg, pg + pages);
}

/* -------------------------------------------------------- model: objects */

static int obj_new(int dev, unsigned long npages)
{
	struct mobj *o;

	if (M->nobj >= MAXOBJ)
		mismatch("model: too many objects");
	o = &M->obj[M->nobj];
	memset(o, 0, sizeof(*o));
	o->live = true;
	o->dev = dev;
	o->npages = npages;
	return M->nobj++;
}

static struct mpage *obj_page(struct mobj *o, unsigned long idx, bool add)
{
	int i;

	for (i = 0; i < o->npg; i++)
		if (o->pg[i].idx == idx)
			return &o->pg[i];
	if (!add)
		return NULL;
	if (o->npg >= MAXPG)
		mismatch("model: too many pages in an object");
	memset(&o->pg[o->npg], 0, sizeof(o->pg[0]));
	o->pg[o->npg].idx = idx;
	return &o->pg[o->npg++];
}

/* nopfn_test: the behaviour of page @idx, the last SET_PAGES wins. */
static unsigned int obj_beh(struct mobj *o, unsigned long idx)
{
	int i;

	for (i = o->nr - 1; i >= 0; i--)
		if (o->r[i].first <= idx && idx < o->r[i].first + o->r[i].count)
			return o->r[i].beh;
	return B_RAM;
}

/* Objects with no VMA and no file left go (the last ->close()/release). */
static void objects_gc(void)
{
	static int refs[MAXOBJ];
	int i, f;

	memset(refs, 0, sizeof(refs));
	for (i = 0; i < M->par.nv; i++)
		refs[M->par.v[i].obj]++;
	for (f = 0; f < NFD; f++)
		if (M->fds[f].fd >= 0 && M->fds[f].obj >= 0)
			refs[M->fds[f].obj]++;
	if (M->helper) {
		for (i = 0; i < M->hel.nv; i++)
			refs[M->hel.v[i].obj]++;
		for (f = 0; f < NFD; f++)
			if (M->hel.fdobj[f] >= 0)
				refs[M->hel.fdobj[f]]++;
	}
	for (i = 0; i < M->nobj; i++)
		if (M->obj[i].live && !refs[i])
			M->obj[i].live = false;
}

/* ------------------------------------------------------ real counters */

struct counts {
	long mappings[NTYPES], in_use[NTYPES], failures[NTYPES], faults[NTYPES];
	long states, ram, leaked;
};

static void read_counts(struct counts *c)
{
	struct nopfn_test_stats s;
	struct counters k;
	int t;

	memset(c, 0, sizeof(*c));
	for (t = 0; t < NTYPES; t++) {
		if (read_counters(type_name[t], &k))
			mismatch("cannot read %s stats", type_name[t]);
		c->mappings[t] = k.mappings;
		c->in_use[t] = k.in_use;
		c->failures[t] = k.failures;
		c->faults[t] = k.faults;
		c->leaked += k.leaked;
	}
	if (ioctl(probe_fd, NOPFN_TEST_IOC_GET_STATS, &s))
		mismatch("NOPFN_TEST_IOC_GET_STATS: %s", strerror(errno));
	c->states = s.all_states;
	c->ram = s.all_ram_pages;
}

static struct counts base;

/*
 * Each open nopfn_test file: its state's counters, as nopfn_test_nopfn()
 * and nopfn_test_ret() count them (no NOPFN_REFAULT without a signal, no
 * refused lock release on a first fault).
 */
static void check_nopfn_files(void)
{
	struct nopfn_test_stats s;
	int f, k;

	for (f = 0; f < NFD; f++) {
		struct mfd *fd = &M->fds[f];
		struct mobj *o;
		long ram = 0;

		if (fd->fd < 0 || fd->dev != D_NOPFN)
			continue;
		o = &M->obj[fd->obj];
		if (ioctl(fd->fd, NOPFN_TEST_IOC_GET_STATS, &s))
			mismatch("GET_STATS slot %d: %s", f, strerror(errno));
		for (k = 0; k < o->npg; k++)
			ram += o->pg[k].alloc;
		/* The first calls that may have waited: as many as did. */
		if ((long)s.ret_retry >= o->ret_retry &&
		    (long)s.ret_retry <= o->ret_retry + o->maybe_retry &&
		    (long)s.calls == o->calls + (long)s.ret_retry - o->ret_retry) {
			o->calls = s.calls;
			o->ret_retry = s.ret_retry;
			o->maybe_retry = 0;
		}
		if ((long)s.calls != o->calls || (long)s.ret_pfn != o->ret_pfn ||
		    (long)s.ret_sigbus != o->ret_sigbus ||
		    (long)s.ret_oom != o->ret_oom ||
		    (long)s.ret_retry != o->ret_retry || s.ret_refault ||
		    s.lock_kept || (long)s.ram_pages != ram)
			mismatch("nopfn_test slot %d: calls %llu pfn %llu sigbus %llu oom %llu retry %llu refault %llu lock_kept %llu ram %llu, model calls %ld pfn %ld sigbus %ld oom %ld retry %ld ram %ld",
				 f, (unsigned long long)s.calls,
				 (unsigned long long)s.ret_pfn,
				 (unsigned long long)s.ret_sigbus,
				 (unsigned long long)s.ret_oom,
				 (unsigned long long)s.ret_retry,
				 (unsigned long long)s.ret_refault,
				 (unsigned long long)s.lock_kept,
				 (unsigned long long)s.ram_pages, o->calls,
				 o->ret_pfn, o->ret_sigbus, o->ret_oom,
				 o->ret_retry + o->maybe_retry, ram);
	}
}

/*
 * The counters the model predicts: mspec mappings (one per live mmap()),
 * pages in use (each page index allocated once, freed with the last VMA:
 * mspec_close()), allocation failures (injected ones used), pages leaked
 * (none); nopfn_test states (file and VMAs hold them) and RAM pages (one
 * per page index first touched as RAM, freed with the state); the
 * fail_next_alloc knob.
 */
static void check_counts(void)
{
	struct counts c, want = base;
	long left;
	int i, t;

	objects_gc();
	for (i = 0; i < M->nobj; i++) {
		struct mobj *o = &M->obj[i];
		int k;

		if (!o->live)
			continue;
		if (o->dev == D_NOPFN)
			want.states++;
		else
			want.mappings[o->dev]++;
		for (k = 0; k < o->npg; k++) {
			if (!o->pg[k].alloc)
				continue;
			if (o->dev == D_NOPFN)
				want.ram++;
			else
				want.in_use[o->dev]++;
		}
	}
	for (t = 0; t < NTYPES; t++) {
		want.failures[t] += M->failures[t];
		want.faults[t] += M->faults[t];
	}
	read_counts(&c);
	for (t = 0; t < NTYPES; t++) {
		if (c.mappings[t] != want.mappings[t])
			mismatch("%s mappings %ld, model %ld", type_name[t],
				 c.mappings[t] - base.mappings[t],
				 want.mappings[t] - base.mappings[t]);
		if (c.in_use[t] != want.in_use[t])
			mismatch("%s pages_in_use %ld, model %ld", type_name[t],
				 c.in_use[t] - base.in_use[t],
				 want.in_use[t] - base.in_use[t]);
		if (c.failures[t] != want.failures[t])
			mismatch("%s alloc_failures %ld, model %ld",
				 type_name[t], c.failures[t] - base.failures[t],
				 want.failures[t] - base.failures[t]);
		if (c.faults[t] != want.faults[t])
			mismatch("%s faults (->nopfn() calls) %ld, model %ld",
				 type_name[t], c.faults[t] - base.faults[t],
				 want.faults[t] - base.faults[t]);
	}
	check_nopfn_files();
	if (c.leaked != base.leaked)
		mismatch("mspec pages_leaked %ld", c.leaked - base.leaked);
	if (c.states != want.states)
		mismatch("nopfn_test states %ld, model %ld",
			 c.states - base.states, want.states - base.states);
	if (c.ram != want.ram)
		mismatch("nopfn_test RAM pages %ld, model %ld",
			 c.ram - base.ram, want.ram - base.ram);
	left = mspec_knob("fail_next_alloc");
	if (left != M->inj_left)
		mismatch("fail_next_alloc %ld, model %d", left, M->inj_left);
}

/* ----------------------------------------------------- guarded access */

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

/* A touch and its result, for guarded(). */
struct touch {
	const struct tcmd *c;
	struct tres *r;
};

static void touch_word(void *arg)
{
	const struct touch *t = arg;

	if (t->c->write)
		poke64((void *)t->c->addr, t->c->val);
	else
		t->r->val = peek64((void *)t->c->addr);
}

/* The access @c, faults caught (guard_handler(), installed by main()). */
static void do_touch(const struct tcmd *c, struct tres *r)
{
	struct touch t = { c, r };

	memset(r, 0, sizeof(*r));
	r->sig = guarded(touch_word, &t);
	if (r->sig) {
		r->code = guard_info.si_code;
		r->addr = (unsigned long)guard_info.si_addr;
	}
}

/* ----------------------------------------------------- model: accesses */

enum { FR_OK, FR_SIGBUS, FR_OOM };

/*
 * One ->nopfn() call for page @mp (behaviour @b) of @o on an empty PTE:
 *
 *  mspec_nopfn(): a page index allocated before is mapped again; else an
 *  injected failure (fail_next_alloc > 0) is counted and returns
 *  NOPFN_SIGBUS (fail_sigbus) or NOPFN_OOM; else a zeroed page is
 *  allocated.
 *
 *  nopfn_test_nopfn(): NOPFN_TEST_RAM: a zeroed RAM page per index, held
 *  by the state; CARVE: carve_pfn + index (no struct page, contents stay);
 *  SIGBUS; OOM_ONCE: NOPFN_OOM the first time, then RAM; SLEEP_*: a wait,
 *  then RAM (NOPFN_RETRY in between when it waits without mmap_lock).
 *
 * do_nopfn() turns NOPFN_SIGBUS into VM_FAULT_SIGBUS, and NOPFN_OOM too
 * for a task that is not dying and has no memcg OOM to run (the guests
 * have no memory cgroups): kernel/patches, "mm: add ->nopfn()".
 */
static int nopfn_call(struct mobj *o, struct mpage *mp, unsigned int b)
{
	if (o->dev != D_NOPFN) {
		M->faults[o->dev]++;
		if (!mp->alloc && M->inj_left > 0) {
			M->inj_left--;
			M->failures[o->dev]++;
			return M->inj_sigbus ? FR_SIGBUS : FR_OOM;
		}
	} else {
		o->calls++;
		if (b == B_SIGBUS) {
			o->ret_sigbus++;
			return FR_SIGBUS;
		}
		if (b == B_OOM_ONCE && !mp->oom_done) {
			mp->oom_done = true;
			o->ret_oom++;
			return FR_OOM;
		}
		/*
		 * The first call arms the wait: the locked kind waits holding
		 * mmap_lock and maps the page; the unlocked kind releases it
		 * (every fault here may: user and kernel-mode faults alike
		 * carry FAULT_FLAG_DEFAULT), waits, returns NOPFN_RETRY, and
		 * the retried fault's call finds the wait over. But the wait
		 * ends at jiffies + msecs_to_jiffies(1-4 ms), one jiffy or two
		 * here: a tick between arming and checking ends it at once,
		 * and the page is mapped without NOPFN_RETRY. Either may
		 * happen (check_nopfn_files()). A later call on an armed page
		 * maps at once.
		 */
		if ((b == B_SLEEP_LOCKED || b == B_SLEEP_UNLOCKED) &&
		    !mp->armed) {
			mp->armed = true;
			if (b == B_SLEEP_UNLOCKED)
				o->maybe_retry++;
		}
		o->ret_pfn++;
	}
	if (!(o->dev == D_NOPFN && b == B_CARVE) && !mp->alloc) {
		int w;

		sh->acc_fresh++;
		mp->alloc = true;
		/* zero; on fetchop FETCHOP_NO_AMO off a variable's value */
		for (w = 0; w < NW; w++)
			mp->w[w] = fresh_word(o->dev, env.word_off[w]);
	}
	return FR_OK;
}

/*
 * How often a uaccess tries a user address whose fault fails before it
 * gives up, for a copy to user space and from it: each retry is another
 * ->nopfn() call. Measured at the start (probe_uaccess()), because the
 * copy routines differ: x86-64 retries from the faulting byte with rep
 * movsb (.Lcopy_user_handle_tail in arch/x86/lib/copy_user_64.S), arm64
 * retries one byte when nothing was copied ("try harder", arch/arm64/lib/
 * copy_{from,to}_user.S) and copy_page_{from,to}_iter() then go on with
 * the rest: two tries; riscv's fixup returns at once (arch/riscv/lib/
 * uaccess.S), so do 32-bit arm's (the abort path of arch/arm/lib/
 * copy_{from,to}_user.S), i386's __copy_user() (arch/x86/lib/
 * usercopy_32.c) and s390's mvcos loop for an access that does not cross
 * a page (arch/s390/lib/uaccess.c): one.
 */
static int uaccess_tries[NW][2];	/* per word; [1]: copy to user space */

/*
 * Executable PTEs of PFNs without struct page: riscv64's __set_pte_at()
 * called flush_icache_pte() for every present executable PTE, which read
 * pte_page(pte)->flags, and oopsed on the nopfn_test carve-out (found by
 * this fuzzer; fixed by the series' first patch). The sequences map
 * nopfn_test executable everywhere; exec_carve_check() walks each path
 * that installs such a PTE (fault, mprotect(), fork(), mremap()) once.
 */

/*
 * An access of 8 bytes at @addr (arena page @pg, tracked word @w) by the
 * parent or the helper (@p), from user space or, @kernel, by a uaccess of
 * a system call. Returns what must happen and applies it to the model.
 *
 * Arch fault handlers (x86 do_user_addr_fault(), arm64 do_page_fault(),
 * riscv do_page_fault()): no VMA: SIGSEGV/SEGV_MAPERR; access_error(): a
 * write needs VM_WRITE, a read any of VM_READ/VM_WRITE (write implies read
 * on all three; no exec-only mappings here): SIGSEGV/SEGV_ACCERR. A
 * present PTE is used without a fault (change_protection() kept it
 * through mprotect(); VM_PFNMAP PTEs are copied at fork(), vma_needs_copy()).
 * Otherwise do_fault() -> do_nopfn() calls ->nopfn() (nopfn_call()).
 * VM_FAULT_SIGBUS (NOPFN_SIGBUS or NOPFN_OOM) is SIGBUS/BUS_ADRERR at the
 * address. A kernel-mode fault that fails is an EFAULT of the uaccess
 * (kernelmode_fixup_or_oops(), arm64 and riscv no_context) after
 * uaccess_tries attempts.
 */
static struct tres model_access(struct mproc *p, unsigned long pg, int w,
				bool write, uint64_t val, bool kernel)
{
	unsigned long addr = (unsigned long)A(pg) + env.word_off[w];
	struct tres r = { 0 };
	struct mvma *v = pg < ARENA ? find_vma_at(p, pg) : NULL;
	struct mobj *o;
	struct mpage *mp;
	unsigned long idx;
	unsigned int b = B_RAM;
	uint64_t *word;
	bool *known = NULL;
	int fr, tries;

	if (!v) {
		r.sig = SIGSEGV;
		r.code = SEGV_MAPERR;
		goto fault;
	}
	if (write ? !(v->prot & PROT_WRITE) : v->prot == PROT_NONE) {
		r.sig = SIGSEGV;
		r.code = SEGV_ACCERR;
		goto fault;
	}
	o = &M->obj[v->obj];
	idx = v->pgoff + (pg - v->start);
	if (o->dev == D_NOPFN)
		b = obj_beh(o, idx);
	mp = obj_page(o, idx, true);
	if (!p->pte[pg]) {
		tries = kernel ? uaccess_tries[w][write] : -1;
		do {
			fr = nopfn_call(o, mp, b);
		} while (fr != FR_OK && kernel && --tries > 0);
		if (fr != FR_OK) {
			r.sig = SIGBUS;
			r.code = BUS_ADRERR;
			goto fault;
		}
		p->pte[pg] = o->dev == D_NOPFN && b == B_CARVE ? PTE_CARVE :
			     PTE_PAGE;
	}
	if (p->pte[pg] == PTE_CARVE) {
		/*
		 * A present PTE keeps mapping what the fault mapped, whatever
		 * the page's behaviour became since (SET_PAGES leaves PTEs
		 * alone): the carve-out page, or the RAM page.
		 */
		word = &M->carve_w[idx][w];
		known = &M->carve_known[idx][w];
	} else {
		word = &mp->w[w];
	}
	if (write) {
		*word = val;
		if (known)
			*known = true;
	} else {
		r.val = *word;
		if (known && !*known)
			r.code = -1;	/* contents unknown: not checked */
	}
	return r;
fault:
	r.addr = (unsigned long)fault_addr((void *)addr);
	if (kernel) {
		r.sig = 0;
		r.code = -EFAULT;
	}
	return r;
}

/* ------------------------------------------------------------ helper */

static void helper_main(void)
{
	struct tcmd c;
	struct tres r;

	prctl(PR_SET_PDEATHSIG, SIGKILL);
	for (;;) {
		if (read(h_cmd, &c, sizeof(c)) != sizeof(c))
			_exit(0);
		if (c.write < 0)
			_exit(0);
		do_touch(&c, &r);
		if (write(h_rep, &r, sizeof(r)) != sizeof(r))
			_exit(1);
	}
}

static void helper_stop(void)
{
	int status;

	if (h_pid <= 0)
		return;
	kill(h_pid, SIGKILL);
	while (waitpid(h_pid, &status, 0) < 0 && errno == EINTR)
		;
	close(h_cmd);
	close(h_rep);
	h_pid = 0;
	M->helper = false;
}

/* ------------------------------------------------ executing an operation */

static int fd_of(int slot)
{
	return M->fds[slot].fd >= 0 ? M->fds[slot].fd : 900 + slot;
}

/*
 * About 5/8 of the operations are well-formed for the state they find
 * (an open file, a valid offset and protection for its device, a range
 * around a VMA, a free destination), so that sequences get far; the rest
 * take their parameters at random and mostly test the refusals.
 */
static bool sane(const struct op *op)
{
	return (op->r[3] >> 61) < 5;
}

/* The k-th open slot (k taken modulo their number), or -1. */
static int open_slot(uint64_t k, int dev)
{
	int f, n = 0;

	for (f = 0; f < NFD; f++)
		if (M->fds[f].fd >= 0 && (dev < 0 || M->fds[f].dev == dev))
			n++;
	if (!n)
		return -1;
	k %= n;
	for (f = 0; f < NFD; f++)
		if (M->fds[f].fd >= 0 && (dev < 0 || M->fds[f].dev == dev) &&
		    !k--)
			return f;
	return -1;
}

/* A free range of @n pages in the arena, searched from @from, or -1. */
static long free_range(unsigned long from, unsigned long n)
{
	unsigned long i, pg;

	for (i = 0; i < ARENA; i++) {
		pg = (from + i) % ARENA;
		if (pg + n <= ARENA && range_free(&M->par, pg, pg + n))
			return pg;
	}
	return -1;
}

/* A range around a VMA of the parent: in it, over it, past its end. */
static bool vma_range(const struct op *op, unsigned long *page,
		      unsigned long *n)
{
	struct mvma *v;

	if (!sane(op) || !M->par.nv)
		return false;
	v = &M->par.v[op->r[0] % M->par.nv];
	*page = v->start;
	if (op->r[1] % 3 == 0)
		*page += (op->r[1] >> 8) % (v->end - v->start);
	if (op->r[1] % 3 == 1)
		*n = v->end - *page;
	else
		*n = 1 + (op->r[1] >> 16) % 12;
	if (*page + *n > ARENA)
		*n = ARENA - *page;
	return true;
}

static const int prot_table[8] = {
	PROT_READ | PROT_WRITE, PROT_READ | PROT_WRITE, PROT_READ | PROT_WRITE,
	PROT_READ, PROT_WRITE, PROT_NONE, PROT_READ | PROT_EXEC,
	PROT_READ | PROT_WRITE | PROT_EXEC,
};

static const char *prot_str(int prot, char *buf)
{
	if (prot & ~7) {
		sprintf(buf, "%#x", prot);
		return buf;
	}
	sprintf(buf, "%s%s%s%s", prot & PROT_READ ? "R" : "",
		prot & PROT_WRITE ? "W" : "", prot & PROT_EXEC ? "X" : "",
		prot ? "" : "NONE");
	return buf;
}

static void expect_ret(const char *what, long got, int err, long want,
		       int want_err)
{
	char g[48], w[48];

	T(" = %s", err_str(got, err, g));
	if (got != want || (want == -1 && err != want_err))
		mismatch("%s: got %s, model %s", what, g,
			 err_str(want, want_err, w));
	if (want != -1)
		sh->ok[cur_kind]++;
}

static void op_open(const struct op *op)
{
	int slot = op->r[0] % NFD, dev = op->r[1] % NDEV;
	bool rw = op->r[2] % 8 != 0;
	struct mfd *f = &M->fds[slot];
	int fd;

	if (f->fd >= 0)
		close(f->fd);
	f->fd = -1;
	T("open(%s, %s) -> slot %d", dev_file[dev], rw ? "O_RDWR" : "O_RDONLY",
	  slot);
	fd = open(dev_file[dev], rw ? O_RDWR : O_RDONLY);
	if (fd < 0)
		mismatch("open %s: %s", dev_file[dev], strerror(errno));
	/* nopfn_test_open(): a new state for every open file. */
	*f = (struct mfd){ .fd = fd, .dev = dev, .rw = rw, .obj = -1 };
	sh->ok[K_OPEN]++;
	if (dev == D_NOPFN)
		f->obj = obj_new(D_NOPFN, NOPFN_TEST_MAX_PAGES);
}

static void op_close(const struct op *op)
{
	int slot = op->r[0] % NFD;
	struct mfd *f = &M->fds[slot];

	T("close(slot %d)", slot);
	if (f->fd < 0) {
		long ret = close(fd_of(slot));

		expect_ret("close", ret, errno, -1, EBADF);
		return;
	}
	expect_ret("close", close(f->fd), errno, 0, 0);
	f->fd = -1;
}

/* Length choices of mmap(): 0, unaligned, pages, huge. */
static unsigned long pick_len(uint64_t r, int *huge)
{
	*huge = -1;
	switch (r % 16) {
	case 0:
		return 0;
	case 1:
	case 2:
	case 3:
		*huge = r % 16 - 1;
		return huge_len[*huge];
	case 4:
		return -(unsigned long)(psz / 2);	/* PAGE_ALIGN overflows */
	case 5:
		return (1 + (r >> 8) % 8) * psz - 1 - (r >> 16) % (psz - 1);
	default:
		return (1 + (r >> 8) % 12) * psz;
	}
}

static unsigned long pick_off(uint64_t r)
{
	switch (r % 16) {
	case 12:
		return (1 + (r >> 8) % 8) * psz;
	case 13:
		return 1 + (r >> 8) % (psz - 1);
	case 14:
		return -(unsigned long)psz;
	case 15:
		return (NOPFN_TEST_MAX_PAGES - 1 - (r >> 8) % 8) * psz;
	default:
		return 0;
	}
}

/* LEGACY_MAP_MASK of include/linux/mman.h, less the bits we never use. */
#define LEGACY_MASK	(MAP_SHARED | MAP_PRIVATE | MAP_FIXED | MAP_LOCKED | \
			 MAP_NORESERVE | MAP_POPULATE | MAP_ANONYMOUS)

static void op_mmap(const struct op *op)
{
	int slot = op->r[0] % NFD, prot = prot_table[(op->r[0] >> 8) % 8];
	unsigned int place = (op->r[1] >> 4) % 8, type = op->r[1] % 16;
	unsigned long page = (op->r[1] >> 8) % ARENA, len, alen, off, pages;
	unsigned long addr = 0, ret, err_place = 0, pgoff;
	struct mfd *f = &M->fds[slot];
	int flags, huge, want_err = 0, dev = f->fd >= 0 ? f->dev : -1;
	bool fixed, noreplace, any_addr = false;
	char b1[32], b2[32], b3[48];
	struct mvma nv;
	int err;

	len = pick_len(op->r[2], &huge);
	off = pick_off(op->r[3]);
	flags = type < 11 ? MAP_SHARED : type < 13 ? MAP_SHARED_VALIDATE :
		type < 15 ? MAP_PRIVATE : 0;
	if (sane(op)) {
		static const int mspec_prot[4] = {
			PROT_READ | PROT_WRITE, PROT_READ | PROT_WRITE,
			PROT_WRITE, PROT_READ | PROT_WRITE | PROT_EXEC,
		};
		static const unsigned int places[8] = { 0, 0, 0, 0, 5, 5, 4,
							7 };
		int k = open_slot(op->r[0], -1);

		if (k >= 0) {
			slot = k;
			f = &M->fds[slot];
			dev = f->dev;
		}
		if (dev >= 0 && dev != D_NOPFN)
			prot = mspec_prot[(op->r[0] >> 8) % 4];
		flags = type < 14 ? MAP_SHARED : MAP_SHARED_VALIDATE;
		place = places[(op->r[1] >> 4) % 8];
		huge = -1;
		len = (1 + (op->r[2] >> 8) % 12) * psz;
		if (op->r[2] % 8 == 0)
			len -= 1 + (op->r[2] >> 20) % (psz - 1);
		off = 0;
		if (dev == D_NOPFN && op->r[3] % 4 == 0)
			off = (op->r[3] >> 8) % (NOPFN_TEST_MAX_PAGES - 12) * psz;
	}
	if ((op->r[1] >> 12) % 8 == 0)
		flags |= MAP_POPULATE;
	if ((op->r[1] >> 15) % 8 == 0)
		flags |= MAP_NORESERVE;
	if ((op->r[1] >> 18) % 16 == 0)
		flags |= MAP_LOCKED;
	alen = (len + psz - 1) & ~(psz - 1);
	/* MAP_FIXED only inside the arena: elsewhere it would clobber us. */
	if (place < 5 && (alen == 0 || alen > (ARENA - page) * psz))
		place = 7;
	fixed = place < 4;
	noreplace = place == 4;
	if (fixed)
		flags |= MAP_FIXED;
	if (noreplace)
		flags |= MAP_FIXED_NOREPLACE;
	if (place < 7)
		addr = (unsigned long)A(page);

	T("mmap(%s, %#lx, %s, %#x, slot %d %s, %#lx)",
	  addr ? addr_str(addr, b1) : "NULL", len, prot_str(prot, b2), flags,
	  slot, dev >= 0 ? dev_file[dev] : "closed", off);
	errno = 0;
	ret = raw_mmap(addr, len, prot, flags, fd_of(slot), off);
	err = errno;

	/*
	 * The model, in the order of the kernel's checks. pgoff: x86-64 and
	 * arm64 take the offset as unsigned long and shift it, riscv64 takes
	 * an off_t and shifts it arithmetically (arch/riscv/kernel/
	 * sys_riscv.c), so there a "negative" offset is pgoff ~0 and fails
	 * do_mmap()'s early overflow check.
	 */
	pages = alen / psz;
	pgoff = env.signed_off ? (unsigned long)((long)off >> __builtin_ctzl(psz)) :
		off / psz;
	if (off % psz) {
		want_err = EINVAL;		/* sys_mmap(): offset_in_page */
	} else if (dev < 0) {
		want_err = EBADF;		/* ksys_mmap_pgoff(): fget() */
	} else if (!len) {
		want_err = EINVAL;		/* do_mmap() */
	} else if (!alen) {
		want_err = ENOMEM;		/* PAGE_ALIGN() overflowed */
	} else if (pgoff + pages < pgoff) {
		want_err = EOVERFLOW;		/* do_mmap(): offset overflow */
	} else if (huge >= 0 && !env.fits[huge]) {
		want_err = ENOMEM;		/* get_unmapped_area(): TASK_SIZE */
	} else if ((fixed || noreplace) && (flags & MAP_SHARED) &&
		   colour_misfit((unsigned long)A(page), pgoff)) {
		want_err = EINVAL;		/* ... and the colour */
	} else if (noreplace && !range_free(&M->par, page, page + pages)) {
		want_err = EEXIST;
	} else if (pgoff > (~0UL - alen) / psz) {
		want_err = EOVERFLOW;		/* file_mmap_ok() */
	} else if ((flags & MAP_TYPE) == MAP_SHARED_VALIDATE &&
		   (flags & ~LEGACY_MASK & ~MAP_TYPE)) {
		want_err = EOPNOTSUPP;		/* MAP_FIXED_NOREPLACE here */
	} else if ((flags & MAP_TYPE) == 0) {
		want_err = EINVAL;		/* not a known type */
	} else if ((flags & MAP_TYPE) != MAP_PRIVATE &&
		   (prot & PROT_WRITE) && !f->rw) {
		want_err = EACCES;		/* shared writable, O_RDONLY */
	} else {
		/*
		 * mmap_region(): MAP_FIXED unmaps the range first, even if
		 * the driver then refuses the mapping.
		 */
		bool shared = (flags & MAP_TYPE) != MAP_PRIVATE && f->rw;

		if (fixed || noreplace)
			vma_remove(&M->par, page, page + pages);
		if (!shared && (prot & PROT_WRITE) &&
		    !((flags & MAP_NORESERVE) && env.overcommit != 2) &&
		    env.overcommit != 1 && pages > env.ram_pages) {
			/*
			 * accountable_mapping(): a private writable mapping
			 * is charged before ->mmap(); __vm_enough_memory()
			 * with OVERCOMMIT_GUESS refuses more than all RAM.
			 */
			want_err = ENOMEM;
		} else if (dev != D_NOPFN) {
			/* mspec_mmap(); uncached may be refused first */
			if (dev == D_UNCACHED && nmappable < NTYPES)
				want_err = ENODEV;
			else if (pgoff)
				want_err = EINVAL;
			else if (!shared)
				want_err = EINVAL;	/* VM_SHARED */
			else if (!(prot & PROT_WRITE))
				want_err = EPERM;
			else if (16 + 8 * pages > 0x7fffffffUL - 256)
				want_err = ENOMEM;	/* > INT_MAX */
		} else {
			/*
			 * nopfn_test_mmap(), NOPFN_TEST_MAP_PFNMAP; then
			 * vma_nopfn_check(): copy-on-write is refused, i.e.
			 * MAP_PRIVATE (always VM_MAYWRITE). MAP_SHARED of a
			 * file opened O_RDONLY has neither VM_SHARED nor
			 * VM_MAYWRITE: not copy-on-write, mapped.
			 */
			if (pgoff >= NOPFN_TEST_MAX_PAGES ||
			    pages > NOPFN_TEST_MAX_PAGES - pgoff)
				want_err = EINVAL;
			else if ((flags & MAP_TYPE) == MAP_PRIVATE)
				want_err = EINVAL;
		}
		if (!want_err) {
			if (fixed || noreplace)
				err_place = (unsigned long)A(page);
			else if (addr && hint_free(addr, pgoff, pages))
				err_place = colour_align(addr, pgoff);
			else
				any_addr = true;
		}
	}

	if (want_err) {
		T(" = %s", err_str(ret == (unsigned long)MAP_FAILED ? -1 :
				   (long)ret, err, b3));
		if (ret != (unsigned long)MAP_FAILED || err != want_err) {
			if (ret != (unsigned long)MAP_FAILED)
				munmap((void *)ret, alen);
			mismatch("mmap: got %s, model -1 %s",
				 ret == (unsigned long)MAP_FAILED ?
				 strerrorname_np(err) : addr_str(ret, b1),
				 strerrorname_np(want_err));
		}
		return;
	}
	if (ret == (unsigned long)MAP_FAILED)
		mismatch("mmap: got -1 %s, model success",
			 strerrorname_np(err));
	T(" = %s", addr_str(ret, b1));
	if (ret % psz || (err_place && ret != err_place))
		mismatch("mmap at %s, model %s", addr_str(ret, b1),
			 err_place ? addr_str(err_place, b2) : "anywhere");

	sh->ok[K_MMAP]++;
	nv = (struct mvma){ .pgoff = pgoff, .prot = prot };
	if ((flags & MAP_TYPE) != MAP_PRIVATE && !f->rw)
		nv.fl = F_NOWRITE;
	nv.obj = dev == D_NOPFN ? f->obj : obj_new(dev, pages);
	if (any_addr) {
		unsigned long base = (unsigned long)env.arena;
		unsigned long end = base + ARENA * psz;

		if (ret >= base && ret + alen <= end) {
			page = (ret - base) / psz;
			if (!range_free(&M->par, page, page + pages))
				mismatch("mmap over a live VMA at %s",
					 addr_str(ret, b1));
		} else if (ret < end && ret + alen > base) {
			mismatch("mmap across the arena's edge at %s",
				 addr_str(ret, b1));
		} else {
			/* Elsewhere: the model does not follow it there. */
			T(", unmapped at once");
			if (munmap((void *)ret, alen))
				mismatch("munmap of it: %s", strerror(errno));
			if (!M->obj[nv.obj].live)
				mismatch("model: dead object");
			return;
		}
	} else {
		page = (ret - (unsigned long)env.arena) / psz;
	}
	/*
	 * MAP_POPULATE and MAP_LOCKED populate nothing: __mm_populate()
	 * skips VM_IO | VM_PFNMAP VMAs; VM_LOCKED is cleared for VM_SPECIAL.
	 */
	nv.start = page;
	nv.end = page + pages;
	vma_insert(&M->par, nv);
}

/* munmap(): __do_munmap()/do_mas_munmap() checks, then the range goes. */
static void op_munmap(const struct op *op)
{
	unsigned long page = op->r[0] % ARENA, n = 1 + op->r[1] % 16;
	unsigned long addr = (unsigned long)A(page), len;
	char b1[32];
	long ret;

	vma_range(op, &page, &n);
	addr = (unsigned long)A(page);
	if (page + n > ARENA)
		n = ARENA - page;
	len = n * psz;
	if (op->r[2] % 16 == 0)
		len = 0;
	else if (op->r[2] % 16 == 1)
		len -= 1 + (op->r[2] >> 8) % (psz - 1);	/* rounded up */
	if (op->r[3] % 32 == 0)
		addr += 1 + (op->r[3] >> 8) % (psz - 1);
	T("munmap(%s, %#lx)", addr_str(addr, b1), len);
	ret = syscall(SYS_munmap, addr, len);
	if (addr % psz || !len) {
		expect_ret("munmap", ret, errno, -1, EINVAL);
		return;
	}
	expect_ret("munmap", ret, errno, 0, 0);
	vma_remove(&M->par, page, page + n);
}

/*
 * mprotect(): do_mprotect_pkey(): EINVAL for an unaligned start or an
 * unknown bit (arch_validate_prot()), 0 for len 0, ENOMEM if start is in
 * no VMA; then VMA by VMA (splitting where the flags change) until a hole,
 * which is ENOMEM with the VMAs before it changed. PROT_WRITE on a VMA
 * without VM_MAYWRITE (F_NOWRITE) is EACCES there, again with the VMAs
 * before it changed.
 */
static void op_mprotect(const struct op *op)
{
	unsigned long page = op->r[0] % ARENA, n = 1 + op->r[1] % 16, pg;
	unsigned long addr = (unsigned long)A(page), len;
	int prot = prot_table[(op->r[2] >> 8) % 8];
	char b1[32], b2[32];
	struct mvma *v;
	long ret;

	vma_range(op, &page, &n);
	addr = (unsigned long)A(page);
	if (page + n > ARENA)
		n = ARENA - page;
	len = n * psz;
	if (op->r[2] % 16 == 0)
		len = 0;
	if (op->r[3] % 32 == 0)
		addr += 8;
	if (op->r[3] % 32 == 1)
		prot |= 0x40;
	T("mprotect(%s, %#lx, %s)", addr_str(addr, b1), len,
	  prot_str(prot, b2));
	ret = syscall(SYS_mprotect, addr, len, prot);
	if (addr % psz) {
		expect_ret("mprotect", ret, errno, -1, EINVAL);
		return;
	}
	if (!len) {
		expect_ret("mprotect", ret, errno, 0, 0);
		return;
	}
	if (prot & 0x40) {
		expect_ret("mprotect", ret, errno, -1, EINVAL);
		return;
	}
	v = find_vma_after(&M->par, page);
	if (!v || v->start > page) {
		expect_ret("mprotect", ret, errno, -1, ENOMEM);
		return;
	}
	for (pg = page; pg < page + n;) {
		v = find_vma_at(&M->par, pg);
		if (!v) {
			expect_ret("mprotect", ret, errno, -1, ENOMEM);
			return;
		}
		if ((prot & PROT_WRITE) && (v->fl & F_NOWRITE)) {
			expect_ret("mprotect", ret, errno, -1, EACCES);
			return;
		}
		if (v->prot != prot) {
			unsigned long e = v->end < page + n ? v->end :
					  page + n;

			vma_split_at(&M->par, pg);
			vma_split_at(&M->par, e);
			find_vma_at(&M->par, pg)->prot = prot;
		}
		pg = find_vma_at(&M->par, pg)->end;
	}
	expect_ret("mprotect", ret, errno, 0, 0);
}

static const int advice_table[] = {
	MADV_NORMAL, MADV_RANDOM, MADV_SEQUENTIAL, MADV_WILLNEED,
	MADV_DONTNEED, MADV_FREE, MADV_REMOVE, MADV_DONTFORK, MADV_DOFORK,
	MADV_DONTDUMP, MADV_DODUMP, MADV_COLD, MADV_PAGEOUT,
	MADV_POPULATE_READ, MADV_POPULATE_WRITE, MADV_WIPEONFORK,
	MADV_KEEPONFORK, 999,
};

/*
 * madvise() on a device VMA (VM_IO | VM_PFNMAP | VM_DONTEXPAND |
 * VM_DONTDUMP, shared, with a file), madvise_vma_behavior() of 6.1:
 * the flag advices change flags (a split where they change), DONTNEED,
 * FREE, COLD, PAGEOUT: EINVAL (can_madv_lru_vma()); REMOVE: EACCES
 * without VM_MAYWRITE (F_NOWRITE), else ENODEV (vfs_fallocate() of a
 * character device); DOFORK: EINVAL (VM_IO); DODUMP:
 * EINVAL (VM_SPECIAL); POPULATE_*: EINVAL (faultin_vma_page_range():
 * check_vma_flags() refuses VM_PFNMAP); WIPEONFORK: EINVAL (a file);
 * WILLNEED: 0 (vfs_fadvise(), result ignored).
 */
static int advise_one(struct mvma *v, int adv, unsigned int *set,
		      unsigned int *clear)
{
	*set = *clear = 0;
	switch (adv) {
	case MADV_NORMAL:
		*clear = F_RAND | F_SEQ;
		return 0;
	case MADV_RANDOM:
		*set = F_RAND;
		*clear = F_SEQ;
		return 0;
	case MADV_SEQUENTIAL:
		*set = F_SEQ;
		*clear = F_RAND;
		return 0;
	case MADV_DONTFORK:
		*set = F_DONTCOPY;
		return 0;
	case MADV_WILLNEED:
	case MADV_DONTDUMP:
	case MADV_KEEPONFORK:
		return 0;
	case MADV_REMOVE:
		/* madvise_remove(): vma_is_shared_maywrite() first */
		return v->fl & F_NOWRITE ? EACCES : ENODEV;
	default:
		(void)v;
		return EINVAL;
	}
}

/* madvise(): do_madvise() checks, then madvise_walk_vmas(). */
static void op_madvise(const struct op *op)
{
	unsigned long page = op->r[0] % ARENA, n = 1 + op->r[1] % 16;
	unsigned long addr = (unsigned long)A(page), len, start, end;
	int adv = advice_table[op->r[2] % ARRAY_SIZE(advice_table)];
	int hole = 0, err = 0;
	char b1[32];
	long ret;

	vma_range(op, &page, &n);
	addr = (unsigned long)A(page);
	if (page + n > ARENA)
		n = ARENA - page;
	len = n * psz;
	if (op->r[3] % 16 == 0)
		len = 0;
	if (op->r[3] % 32 == 1)
		addr += 16;
	T("madvise(%s, %#lx, %d)", addr_str(addr, b1), len, adv);
	ret = syscall(SYS_madvise, addr, len, adv);
	if (adv == 999 || addr % psz) {
		expect_ret("madvise", ret, errno, -1, EINVAL);
		return;
	}
	if (!len) {
		expect_ret("madvise", ret, errno, 0, 0);
		return;
	}
	start = page;
	end = page + n;
	while (start < end) {
		struct mvma *v = find_vma_after(&M->par, start);
		unsigned int set, clear;
		unsigned long e;

		if (!v || v->start >= end) {
			hole = ENOMEM;	/* a VMA beyond: the guard at least */
			break;
		}
		if (start < v->start) {
			hole = ENOMEM;
			start = v->start;
		}
		e = v->end < end ? v->end : end;
		err = advise_one(v, adv, &set, &clear);
		if (err)
			break;
		if (((v->fl | set) & ~clear) != v->fl) {
			vma_split_at(&M->par, start);
			vma_split_at(&M->par, e);
			v = find_vma_at(&M->par, start);
			v->fl = (v->fl | set) & ~clear;
		}
		start = e;
	}
	if (err || hole)
		expect_ret("madvise", ret, errno, -1, err ? err : hole);
	else
		expect_ret("madvise", ret, errno, 0, 0);
}

/* Move the model's VMAs of [s, s+n) to [d, d+n), PTEs along. */
static void move_range(unsigned long s, unsigned long n, unsigned long d)
{
	struct mvma *v = find_vma_at(&M->par, s), nv = *v;
	unsigned char pte[ARENA];
	unsigned long i;

	for (i = 0; i < n; i++)
		pte[i] = M->par.pte[s + i];
	nv.pgoff = v->pgoff + (s - v->start);
	vma_remove(&M->par, s, s + n);
	nv.start = d;
	nv.end = d + n;
	vma_insert(&M->par, nv);
	for (i = 0; i < n; i++)
		M->par.pte[d + i] = pte[i];
}

static const unsigned int mremap_flags[8] = {
	0, MREMAP_MAYMOVE, MREMAP_MAYMOVE | MREMAP_FIXED,
	MREMAP_MAYMOVE | MREMAP_FIXED, MREMAP_MAYMOVE | MREMAP_DONTUNMAP,
	MREMAP_MAYMOVE | MREMAP_FIXED | MREMAP_DONTUNMAP, MREMAP_FIXED, 8,
};

/* mremap(): the syscall, mremap_to() and vma_to_resize() of mm/mremap.c. */
static void op_mremap(const struct op *op)
{
	unsigned long page = op->r[0] % ARENA, old_n, new_n, dst;
	unsigned long addr, old_len, new_len, new_addr, aold, anew;
	unsigned int flags = mremap_flags[op->r[2] % 8];
	struct mvma *v;
	char b1[32], b2[32], b3[48];
	long ret;
	int err;

	/* Mostly the start of a VMA and its length or less. */
	v = M->par.nv ? &M->par.v[op->r[0] % M->par.nv] : NULL;
	if (v && op->r[1] % 4) {
		page = v->start;
		old_n = v->end - v->start;
		if (op->r[1] % 4 == 1 && old_n > 1)
			old_n = 1 + (op->r[1] >> 8) % old_n;
	} else {
		old_n = (op->r[1] >> 8) % 8;
		if (page + old_n > ARENA)
			old_n = ARENA - page;
	}
	switch ((op->r[1] >> 16) % 6) {
	case 0:
		new_n = old_n + 1 + (op->r[1] >> 24) % 4;
		break;
	case 1:
		new_n = old_n > 1 ? old_n - 1 : 1;
		break;
	case 2:
		new_n = 0;
		break;
	default:
		new_n = old_n ? old_n : 1;
		break;
	}
	dst = op->r[3] % ARENA;
	if (sane(op) && v && op->r[2] % 2) {
		/* A move to a free place, the whole VMA or a part. */
		long d = free_range(op->r[3], old_n ? old_n : 1);

		flags = MREMAP_MAYMOVE | MREMAP_FIXED;
		new_n = old_n ? old_n : 1;
		if (d >= 0)
			dst = d;
	}
	if (dst + new_n > ARENA)
		dst = ARENA > new_n ? ARENA - new_n : 0;
	addr = (unsigned long)A(page);
	old_len = old_n * psz;
	new_len = new_n * psz;
	new_addr = (unsigned long)A(dst);
	if (op->r[3] % 32 == 1)
		new_addr += 8;
	if (op->r[3] % 32 == 2)
		old_len -= old_len ? 1 : 0;
	T("mremap(%s, %#lx, %#lx, %#x, %s)", addr_str(addr, b1), old_len,
	  new_len, flags, addr_str(new_addr, b2));
	errno = 0;
	ret = syscall(SYS_mremap, addr, old_len, new_len, flags, new_addr);
	err = errno;
	T(" = %s", ret == -1 ? err_str(-1, err, b3) : addr_str(ret, b3));

#define EXPECT_ERR(e) do {						\
		if (ret != -1 || err != (e))				\
			mismatch("mremap: got %s, model -1 %s",		\
				 ret == -1 ? strerrorname_np(err) :	\
				 addr_str(ret, b1), strerrorname_np(e));\
		return;							\
	} while (0)
#define EXPECT_OK(a) do {						\
		if (ret != (long)(a))					\
			mismatch("mremap: got %s, model %s",		\
				 ret == -1 ? strerrorname_np(err) :	\
				 addr_str(ret, b1), addr_str(a, b2));	\
	} while (0)

	if (flags & ~(MREMAP_FIXED | MREMAP_MAYMOVE | MREMAP_DONTUNMAP))
		EXPECT_ERR(EINVAL);
	if ((flags & MREMAP_FIXED) && !(flags & MREMAP_MAYMOVE))
		EXPECT_ERR(EINVAL);
	if ((flags & MREMAP_DONTUNMAP) &&
	    (!(flags & MREMAP_MAYMOVE) || old_len != new_len))
		EXPECT_ERR(EINVAL);
	if (addr % psz)
		EXPECT_ERR(EINVAL);
	aold = (old_len + psz - 1) / psz;
	anew = (new_len + psz - 1) / psz;
	if (!anew)
		EXPECT_ERR(EINVAL);
	v = find_vma_at(&M->par, page);
	if (!v)
		EXPECT_ERR(EFAULT);
	if (flags & (MREMAP_FIXED | MREMAP_DONTUNMAP)) {
		/* mremap_to() */
		if (new_addr % psz)
			EXPECT_ERR(EINVAL);
		if (page + aold > dst && dst + anew > page)
			EXPECT_ERR(EINVAL);		/* overlap */
		if (flags & MREMAP_FIXED)
			vma_remove(&M->par, dst, dst + anew);
		if (aold > anew) {
			vma_remove(&M->par, page + anew, page + aold);
			aold = anew;
		}
		/*
		 * vma_to_resize(): with old_len 0 the destination may have
		 * been the source itself, unmapped just now (no overlap is
		 * seen for an empty old range).
		 */
		v = find_vma_at(&M->par, page);
		if (!v)
			EXPECT_ERR(EFAULT);
		if (flags & MREMAP_DONTUNMAP)
			EXPECT_ERR(EINVAL);		/* VM_PFNMAP */
		if (page + aold > v->end)
			EXPECT_ERR(EFAULT);		/* across VMAs */
		if (aold != anew)
			EXPECT_ERR(EFAULT);		/* VM_DONTEXPAND */
		if (!(flags & MREMAP_FIXED))
			mismatch("model: a move without MREMAP_FIXED");
		/* get_unmapped_area(MAP_FIXED | MAP_SHARED): VM_MAYSHARE */
		if (colour_misfit(new_addr, v->pgoff + (page - v->start)))
			EXPECT_ERR(EINVAL);
		EXPECT_OK(new_addr);
		sh->ok[K_MREMAP]++;
		move_range(page, aold, dst);
		return;
	}
	if (aold >= anew) {
		/* Shrinking (or the same size) always works. */
		EXPECT_OK(addr);
		sh->ok[K_MREMAP]++;
		vma_remove(&M->par, page + anew, page + aold);
		return;
	}
	/* Growing: vma_to_resize() */
	EXPECT_ERR(EFAULT);
#undef EXPECT_ERR
#undef EXPECT_OK
}

/* A page to touch: mostly one that some VMA maps. */
static unsigned long pick_page(struct mproc *p, uint64_t r)
{
	if (p->nv && r % 8) {
		struct mvma *v = &p->v[(r >> 3) % p->nv];

		return v->start + (r >> 16) % (v->end - v->start);
	}
	return (r >> 3) % ARENA;
}

static void count_access(struct tres *want)
{
	if (want->code == -EFAULT)
		sh->acc_efault++;
	else if (want->sig == SIGSEGV)
		sh->acc_segv++;
	else if (want->sig == SIGBUS)
		sh->acc_bus++;
	else
		sh->acc_data++;
}

static void compare_access(const char *who, struct tres *got,
			   struct tres *want, bool write)
{
	count_access(want);
	if (got->sig != want->sig ||
	    (want->sig && (got->code != want->code ||
			   got->addr != want->addr)))
		mismatch("%s: signal %d code %d at %#lx, model signal %d code %d at %#lx",
			 who, got->sig, got->code, got->addr, want->sig,
			 want->code, want->addr);
	if (!want->sig && !write && want->code != -1 &&
	    got->val != want->val)
		mismatch("%s read %#llx, model %#llx", who,
			 (unsigned long long)got->val,
			 (unsigned long long)want->val);
}

static void op_touch(const struct op *op, bool helper)
{
	struct mproc *p = helper ? &M->hel : &M->par;
	unsigned long pg = pick_page(p, op->r[0]);
	int w = op->r[1] % NW;
	bool wr = op->r[1] & 4;
	struct mvma *v = find_vma_at(p, pg);
	struct tres got, want;
	struct tcmd c;
	char b1[32];

	/* Well-formed: a write only where the VMA allows it. */
	if (sane(op) && v && !(v->prot & PROT_WRITE))
		wr = false;
	c = (struct tcmd){ .addr = (unsigned long)A(pg) + env.word_off[w],
			   .write = wr, .val = op->r[2] | 1 };

	if (helper && !M->helper) {
		T("htouch: no helper");
		return;
	}
	T("%s%s %s", helper ? "helper " : "", wr ? "write" : "read",
	  addr_str(c.addr, b1));
	if (wr)
		T(" %#llx", (unsigned long long)c.val);
	if (helper) {
		if (write(h_cmd, &c, sizeof(c)) != sizeof(c) ||
		    read(h_rep, &got, sizeof(got)) != sizeof(got))
			mismatch("helper died");
	} else {
		do_touch(&c, &got);
	}
	want = model_access(p, pg, w, wr, c.val, false);
	if (got.sig)
		T(" -> signal %d code %d", got.sig, got.code);
	else if (!wr)
		T(" -> %#llx", (unsigned long long)got.val);
	compare_access(helper ? "helper touch" : "touch", &got, &want, wr);
	if (!want.sig)
		sh->ok[cur_kind]++;
}

/*
 * A uaccess: write(pipe, addr, 8) copies from the page (copy_from_user),
 * read(pipe, addr, 8) copies to it (copy_to_user); a fault the kernel
 * cannot resolve is EFAULT, never a signal.
 */
static void op_uaccess(const struct op *op)
{
	unsigned long pg = pick_page(&M->par, op->r[0]);
	int w = op->r[1] % NW;
	bool to_user = op->r[1] & 4;
	uint64_t val = op->r[2] | 1, back = 0;
	char *a = A(pg) + env.word_off[w], b1[32], b2[48];
	struct tres want;
	long ret;
	int err;

	if (to_user) {
		if (write(kpipe[1], &val, 8) != 8)
			mismatch("pipe write: %s", strerror(errno));
		T("read(pipe, %s, 8)", addr_str((unsigned long)a, b1));
		ret = read(kpipe[0], a, 8);
	} else {
		T("write(pipe, %s, 8)", addr_str((unsigned long)a, b1));
		ret = write(kpipe[1], a, 8);
	}
	err = errno;
	T(" = %s", err_str(ret, err, b2));
	if (ret == 8 && !to_user && read(kpipe[0], &back, 8) != 8)
		mismatch("pipe read back: %s", strerror(errno));
	/* Whatever a failed copy left in the pipe. */
	while (read(kpipe[0], b2, sizeof(b2)) > 0)
		;
	want = model_access(&M->par, pg, w, to_user, val, true);
	count_access(&want);
	if (want.code == -EFAULT) {
		if (ret != -1 || err != EFAULT)
			mismatch("uaccess: got %s, model -1 EFAULT",
				 err_str(ret, err, b2));
		return;
	}
	if (ret != 8)
		mismatch("uaccess: got %s, model 8", err_str(ret, err, b2));
	sh->ok[K_UACCESS]++;
	if (!to_user) {
		T(" -> %#llx", (unsigned long long)back);
		if (want.code != -1 && back != want.val)
			mismatch("uaccess read %#llx, model %#llx",
				 (unsigned long long)back,
				 (unsigned long long)want.val);
	}
}

/*
 * /proc/self/mem: access_remote_vm() -> get_user_pages_remote() refuses
 * VM_IO | VM_PFNMAP (check_vma_flags()) and these VMAs have no ->access:
 * nothing is copied, EIO. A hole is EIO as well.
 */
static void op_procmem(const struct op *op)
{
	unsigned long pg = pick_page(&M->par, op->r[0]);
	char buf[8], b1[32], b2[48];
	long ret;
	int fd, err;

	fd = open("/proc/self/mem", (op->r[1] & 1) ? O_RDWR : O_RDONLY);
	if (fd < 0)
		mismatch("/proc/self/mem: %s", strerror(errno));
	memset(buf, 0x5a, sizeof(buf));
	T("%s(/proc/self/mem, %s)", (op->r[1] & 1) ? "pwrite" : "pread",
	  addr_str((unsigned long)A(pg), b1));
	if (op->r[1] & 1)
		ret = pwrite(fd, buf, 8, (off_t)(unsigned long)A(pg));
	else
		ret = pread(fd, buf, 8, (off_t)(unsigned long)A(pg));
	err = errno;
	close(fd);
	T(" = %s", err_str(ret, err, b2));
	if (ret != -1 || err != EIO)
		mismatch("/proc/self/mem: got %s, model -1 EIO",
			 err_str(ret, err, b2));
}

/* The pte file of mspec's debugfs: ENOENT, ENXIO or the PTE. */
static void op_query(const struct op *op)
{
	unsigned long pg = pick_page(&M->par, op->r[0]);
	char buf[512], b1[32], *s, dev[32] = "";
	unsigned long pfn = 0;
	struct mvma *v = find_vma_at(&M->par, pg);
	ssize_t n;
	int fd, err;

	fd = pte_open();
	if (fd < 0)
		mismatch("pte file: %s", strerror(errno));
	if (pte_write(fd, A(pg)))
		mismatch("pte write: %s", strerror(errno));
	n = pte_read(fd, buf, sizeof(buf));
	err = errno;
	close(fd);
	T("pte(%s)", addr_str((unsigned long)A(pg), b1));
	if (n > 0) {
		s = strstr(buf, "\npfn ");
		if (s)
			pfn = strtoul(s + 5, NULL, 16);
		s = strstr(buf, "\ndevice ");
		if (s)
			sscanf(s + 8, "%31s", dev);
		T(" = pfn %#lx %s", pfn, dev);
	} else {
		T(" = -1 %s", strerrorname_np(err));
	}
	if (!v) {
		if (n >= 0 || err != ENOENT)
			mismatch("pte of a hole: %zd %s", n,
				 strerrorname_np(err));
		return;
	}
	if (!M->par.pte[pg]) {
		if (n >= 0 || err != ENXIO)
			mismatch("pte of an untouched page: %zd %s", n,
				 strerrorname_np(err));
		return;
	}
	if (n <= 0)
		mismatch("pte of a mapped page: %s", strerrorname_np(err));
	sh->ok[K_QUERY]++;
	{
		struct mobj *o = &M->obj[v->obj];
		unsigned long idx = v->pgoff + (pg - v->start);
		struct mpage *mp = obj_page(o, idx, true);
		int i, k;

		if (strcmp(dev, pte_dev[o->dev]))
			mismatch("pte device %s, model %s", dev,
				 pte_dev[o->dev]);
		if (M->par.pte[pg] == PTE_CARVE) {
			if (pfn != env.carve_pfn + idx)
				mismatch("carve-out page %lu at PFN %#lx, model %#lx",
					 idx, pfn, env.carve_pfn + idx);
			return;
		}
		if (mp->pfn && mp->pfn != pfn)
			mismatch("page %lu moved from PFN %#llx to %#lx", idx,
				 (unsigned long long)mp->pfn, pfn);
		mp->pfn = pfn;
		/* No other live page has it. */
		for (i = 0; i < M->nobj; i++)
			for (k = 0; M->obj[i].live && k < M->obj[i].npg; k++)
				if (&M->obj[i].pg[k] != mp &&
				    M->obj[i].pg[k].pfn == pfn &&
				    M->obj[i].pg[k].alloc)
					mismatch("PFN %#lx also maps object %d page %lu",
						 pfn, i, M->obj[i].pg[k].idx);
	}
}

static const unsigned int beh_code[] = {
	[B_RAM] = NOPFN_TEST_RAM, [B_CARVE] = NOPFN_TEST_CARVE,
	[B_SIGBUS] = NOPFN_TEST_SIGBUS, [B_OOM_ONCE] = NOPFN_TEST_OOM_ONCE,
	[B_SLEEP_LOCKED] = NOPFN_TEST_SLEEP_LOCKED,
	[B_SLEEP_UNLOCKED] = NOPFN_TEST_SLEEP_UNLOCKED,
};

/*
 * NOPFN_TEST_IOC_SET_PAGES, nopfn_test_set_pages(): EINVAL for a bad
 * range, behaviour or sleep, ENODEV/ERANGE/EBUSY for the carve-out; it
 * resets OOM_ONCE and waits, and leaves PTEs and RAM pages alone. On
 * another device ENOTTY (no ->unlocked_ioctl), on a closed slot EBADF.
 */
static void op_setpages(const struct op *op)
{
	int slot = op->r[0] % NFD;
	struct mfd *f = &M->fds[slot];
	struct nopfn_test_pages req = { 0 };
	unsigned int b = (op->r[1] >> 8) % 7, want_err = 0;
	unsigned long first;
	uint64_t count;			/* as the ioctl's __u64 */
	long ret;
	int i;

	switch (op->r[2] % 8) {
	case 0:
		first = NOPFN_TEST_MAX_PAGES - (op->r[2] >> 8) % 4;
		break;
	case 1:
		first = (op->r[2] >> 8) % 16 + NOPFN_TEST_MAX_PAGES - 8;
		break;
	default:
		first = (op->r[2] >> 8) % 24;
		break;
	}
	count = op->r[3] % 16 == 0 ? 0 : 1 + (op->r[3] >> 8) % 8;
	if (op->r[3] % 16 == 1)
		count = ~0ULL;
	if (sane(op)) {
		int k = open_slot(op->r[0], D_NOPFN), i2;

		if (k >= 0) {
			slot = k;
			f = &M->fds[slot];
			/* A page index that a VMA of this state maps. */
			for (i2 = 0; i2 < M->par.nv; i2++) {
				struct mvma *v = &M->par.v[(i2 + op->r[2]) %
							   M->par.nv];

				if (v->obj == f->obj) {
					first = v->pgoff + (op->r[2] >> 16) %
						(v->end - v->start);
					break;
				}
			}
		}
		count = 1 + (op->r[3] >> 8) % 4;
		if (b == 6)
			b = B_RAM;
	}
	req.first = first;
	req.count = count;
	req.behaviour = b < 6 ? beh_code[b] : NOPFN_TEST_NR_BEHAVIOURS;
	if (b == B_SLEEP_LOCKED || b == B_SLEEP_UNLOCKED)
		req.sleep_ms = 1 + (op->r[1] >> 16) % 4;
	if (op->r[1] % 16 == 0 && !sane(op))
		req.sleep_ms = (op->r[1] % 32) ? NOPFN_TEST_MAX_SLEEP_MS + 1 :
			       5;
	T("SET_PAGES(slot %d, %lu+%" PRIu64 ", %u, %u ms)", slot, first, count,
	  req.behaviour, req.sleep_ms);
	ret = ioctl(fd_of(slot), NOPFN_TEST_IOC_SET_PAGES, &req);
	if (f->fd < 0) {
		expect_ret("SET_PAGES", ret, errno, -1, EBADF);
		return;
	}
	if (f->dev != D_NOPFN) {
		expect_ret("SET_PAGES", ret, errno, -1, ENOTTY);
		return;
	}
	if (!count || first >= NOPFN_TEST_MAX_PAGES ||
	    count > NOPFN_TEST_MAX_PAGES - first || b >= 6)
		want_err = EINVAL;
	else if ((b == B_SLEEP_LOCKED || b == B_SLEEP_UNLOCKED) ?
		 req.sleep_ms > NOPFN_TEST_MAX_SLEEP_MS : req.sleep_ms != 0)
		want_err = EINVAL;
	else if (b == B_CARVE && !env.carve_pages)
		want_err = ENODEV;
	else if (b == B_CARVE && first + count > env.carve_pages)
		want_err = ERANGE;
	else if (b == B_CARVE && env.carve_err)
		want_err = env.carve_err;
	if (want_err) {
		expect_ret("SET_PAGES", ret, errno, -1, want_err);
		return;
	}
	expect_ret("SET_PAGES", ret, errno, 0, 0);
	{
		struct mobj *o = &M->obj[f->obj];

		if (o->nr >= MAXR)
			mismatch("model: too many ranges");
		o->r[o->nr++] = (struct mrange){ first, count, b };
		for (i = 0; i < o->npg; i++)
			if (o->pg[i].idx >= first &&
			    o->pg[i].idx < first + count) {
				o->pg[i].oom_done = false;
				o->pg[i].armed = false;
			}
	}
}

static void op_inject(const struct op *op)
{
	int n = op->r[0] % 4;
	bool sigbus = op->r[1] & 1;

	T("inject %d failures, %s", n, sigbus ? "SIGBUS" : "OOM");
	if (mspec_set_knob("fail_sigbus", sigbus) ||
	    mspec_set_knob("fail_next_alloc", n))
		mismatch("cannot set the injection knobs");
	M->inj_left = n;
	M->inj_sigbus = sigbus;
}

/* fork(): the helper gets the VMAs but VM_DONTCOPY ones, their PTEs. */
static void op_hfork(void)
{
	int cmd[2], rep[2], i, f;

	T("helper fork");
	helper_stop();
	if (pipe(cmd) || pipe(rep))
		mismatch("pipe: %s", strerror(errno));
	h_pid = fork();
	if (h_pid < 0)
		mismatch("fork: %s", strerror(errno));
	if (h_pid == 0) {
		close(cmd[1]);
		close(rep[0]);
		h_cmd = cmd[0];
		h_rep = rep[1];
		helper_main();
	}
	close(cmd[0]);
	close(rep[1]);
	h_cmd = cmd[1];
	h_rep = rep[0];
	M->helper = true;
	M->hel.nv = 0;
	memset(M->hel.pte, 0, sizeof(M->hel.pte));
	for (i = 0; i < M->par.nv; i++) {
		struct mvma *v = &M->par.v[i];
		unsigned long pg;

		if (v->fl & F_DONTCOPY)
			continue;
		M->hel.v[M->hel.nv++] = *v;
		for (pg = v->start; pg < v->end; pg++)
			M->hel.pte[pg] = M->par.pte[pg];
	}
	for (f = 0; f < NFD; f++)
		M->hel.fdobj[f] = M->fds[f].fd >= 0 ? M->fds[f].obj : -1;
}

static void op_hexit(void)
{
	struct tcmd c = { .write = -1 };
	int status;

	T("helper exit");
	if (!M->helper)
		return;
	if (write(h_cmd, &c, sizeof(c)) != sizeof(c))
		mismatch("helper died");
	while (waitpid(h_pid, &status, 0) < 0 && errno == EINTR)
		;
	if (!WIFEXITED(status) || WEXITSTATUS(status))
		mismatch("helper ended with %#x", status);
	close(h_cmd);
	close(h_rep);
	h_pid = 0;
	M->helper = false;
}

/*
 * A nopfn_test state outlives its mappings: unmap a VMA of it and map the
 * same file and offset again at the same place, then touch all its
 * pages. The state's pages and behaviours are still there; the new VMA
 * has no PTE, so each touch faults again (for a page whose behaviour was
 * set anew since, the behaviour starts over: OOM_ONCE fails once more).
 */
static void op_remap(const struct op *op)
{
	struct mvma old, *v = NULL;
	struct tres got, want;
	struct tcmd c;
	char b1[32], b2[32];
	int i, f, slot = -1;
	unsigned long len, pg;
	long ret;

	for (i = 0; i < M->par.nv && slot < 0; i++) {
		v = &M->par.v[(i + op->r[0]) % M->par.nv];
		for (f = 0; f < NFD; f++)
			if (M->fds[f].fd >= 0 && M->fds[f].obj == v->obj &&
			    M->fds[f].rw) {
				slot = f;
				break;
			}
	}
	if (slot < 0) {
		T("remap: no nopfn_test VMA with its file open");
		return;
	}
	old = *v;
	len = (old.end - old.start) * psz;
	T("remap(%s, %#lx, %s, slot %d, %#lx)",
	  addr_str((unsigned long)A(old.start), b1), len,
	  prot_str(old.prot, b2), slot, old.pgoff * psz);
	ret = syscall(SYS_munmap, A(old.start), len);
	expect_ret("munmap", ret, errno, 0, 0);
	vma_remove(&M->par, old.start, old.end);
	ret = raw_mmap((unsigned long)A(old.start), len, old.prot,
		       MAP_SHARED | MAP_FIXED, M->fds[slot].fd,
		       old.pgoff * psz);
	if (ret != (long)A(old.start))
		mismatch("remap: mmap gave %s", ret == -1 ?
			 strerrorname_np(errno) : addr_str(ret, b1));
	old.fl = 0;
	vma_insert(&M->par, old);
	T(", read");
	for (pg = old.start; pg < old.end; pg++) {
		c = (struct tcmd){ .addr = (unsigned long)A(pg), .write = 0 };
		do_touch(&c, &got);
		want = model_access(&M->par, pg, 0, false, 0, false);
		if (got.sig)
			T(" sig%d", got.sig);
		else
			T(" %#llx", (unsigned long long)got.val);
		compare_access("remap touch", &got, &want, false);
	}
	sh->ok[K_REMAP]++;
}

static void run_op(const struct op *op)
{
	switch (op->kind) {
	case K_OPEN:
		op_open(op);
		break;
	case K_CLOSE:
		op_close(op);
		break;
	case K_MMAP:
		op_mmap(op);
		break;
	case K_MUNMAP:
		op_munmap(op);
		break;
	case K_MPROTECT:
		op_mprotect(op);
		break;
	case K_MADVISE:
		op_madvise(op);
		break;
	case K_MREMAP:
		op_mremap(op);
		break;
	case K_TOUCH:
		op_touch(op, false);
		break;
	case K_UACCESS:
		op_uaccess(op);
		break;
	case K_PROCMEM:
		op_procmem(op);
		break;
	case K_QUERY:
		op_query(op);
		break;
	case K_SETPAGES:
		op_setpages(op);
		break;
	case K_INJECT:
		op_inject(op);
		break;
	case K_HFORK:
		op_hfork();
		break;
	case K_HTOUCH:
		op_touch(op, true);
		break;
	case K_REMAP:
		op_remap(op);
		break;
	default:
		op_hexit();
		break;
	}
}

/* The process of one sequence: ops[idx[0..n)]. */
static void __attribute__((noreturn))
sequence_main(const struct op *ops, const unsigned char *idx, unsigned int n)
{
	static struct model model;
	unsigned int i;
	int f;

	setpgid(0, 0);
	alarm(20);
	M = &model;
	memset(M, 0, sizeof(*M));
	for (f = 0; f < NFD; f++) {
		M->fds[f].fd = -1;
		M->fds[f].obj = -1;
	}
	if (pipe2(kpipe, O_NONBLOCK))
		mismatch("pipe: %s", strerror(errno));
	read_counts(&base);
	for (i = 0; i < n; i++) {
		tr = sh->trace[i];
		trlen = 0;
		tr[0] = 0;
		sh->failed_op = idx[i];
		T("#%u ", idx[i]);
		cur_kind = ops[idx[i]].kind;
		run_op(&ops[idx[i]]);
		check_counts();
		sh->kinds[ops[idx[i]].kind]++;
		sh->ops_done++;
	}
	sh->failed_op = -1;
	helper_stop();
	_exit(0);
}

/* ------------------------------------------------------- coordinator */

enum outcome { PASS, MISMATCH, CRASH, HANG, LEAK, KREPORT };
static const char * const outcome_name[] = {
	"pass", "model difference", "crash", "hang", "leak after exit",
	"kernel report",
};

struct run {
	enum outcome what;
	int op;			/* failing operation number, -1 */
	char msg[MSG];
};

static struct counts cbase;	/* the coordinator's baseline */
static struct kmsg_check km;

static void counts_now(struct counts *c)
{
	struct nopfn_test_stats s;
	struct counters k;
	int t;

	memset(c, 0, sizeof(*c));
	for (t = 0; t < NTYPES; t++) {
		read_counters(type_name[t], &k);
		c->mappings[t] = k.mappings;
		c->in_use[t] = k.in_use;
		c->leaked += k.leaked;
	}
	if (!ioctl(probe_fd, NOPFN_TEST_IOC_GET_STATS, &s)) {
		c->states = s.all_states;
		c->ram = s.all_ram_pages;
	}
}

static bool counts_back(char *msg, size_t size)
{
	struct counts c;
	int t, tries;

	for (tries = 0; tries < 50; tries++) {
		bool ok = true;

		counts_now(&c);
		for (t = 0; t < NTYPES; t++)
			if (c.mappings[t] != cbase.mappings[t] ||
			    c.in_use[t] != cbase.in_use[t])
				ok = false;
		if (c.leaked != cbase.leaked || c.states != cbase.states ||
		    c.ram != cbase.ram)
			ok = false;
		if (ok)
			return true;
		usleep(10000);
	}
	snprintf(msg, size,
		 "after exit: mappings %+ld/%+ld/%+ld, pages in use %+ld/%+ld/%+ld, leaked %+ld, nopfn_test states %+ld, RAM pages %+ld",
		 c.mappings[0] - cbase.mappings[0],
		 c.mappings[1] - cbase.mappings[1],
		 c.mappings[2] - cbase.mappings[2],
		 c.in_use[0] - cbase.in_use[0], c.in_use[1] - cbase.in_use[1],
		 c.in_use[2] - cbase.in_use[2], c.leaked - cbase.leaked,
		 c.states - cbase.states, c.ram - cbase.ram);
	return false;
}

static const char * const allowed_reports[] = { NULL };

static struct run run_sequence(const struct op *ops, const unsigned char *idx,
			       unsigned int n)
{
	struct run r = { PASS, -1, "" };
	int status;
	pid_t pid;

	mspec_set_knob("fail_next_alloc", 0);
	mspec_set_knob("fail_sigbus", 0);
	memset(sh->trace, 0, sizeof(sh->trace));
	sh->msg[0] = 0;
	sh->failed_op = -1;
	fflush(stdout);
	pid = fork();
	if (pid < 0)
		ksft_exit_fail_msg("fork: %s\n", strerror(errno));
	if (pid == 0)
		sequence_main(ops, idx, n);
	while (waitpid(pid, &status, 0) < 0 && errno == EINTR)
		;
	/* The helper, if the sequence died without stopping it. */
	kill(-pid, SIGKILL);
	while (waitpid(-1, NULL, 0) > 0 || errno == EINTR)
		;
	mspec_set_knob("fail_next_alloc", 0);
	mspec_set_knob("fail_sigbus", 0);
	if (WIFEXITED(status) && WEXITSTATUS(status) == 3) {
		r.what = MISMATCH;
		r.op = sh->failed_op;
		snprintf(r.msg, sizeof(r.msg), "%s", sh->msg);
	} else if (WIFSIGNALED(status) && WTERMSIG(status) == SIGALRM) {
		r.what = HANG;
		r.op = sh->failed_op;
		snprintf(r.msg, sizeof(r.msg), "no progress for 20 s");
	} else if (!WIFEXITED(status) || WEXITSTATUS(status)) {
		r.what = CRASH;
		r.op = sh->failed_op;
		snprintf(r.msg, sizeof(r.msg), "%s %d",
			 WIFEXITED(status) ? "exit" : "signal",
			 WIFEXITED(status) ? WEXITSTATUS(status) :
			 WTERMSIG(status));
	}
	if (r.what == PASS && !counts_back(r.msg, sizeof(r.msg)))
		r.what = LEAK;
	if (kmsg_scan(&km, allowed_reports) > 0) {
		if (r.what == PASS) {
			r.what = KREPORT;
			snprintf(r.msg, sizeof(r.msg), "%s", km.first);
		}
		km.reports = 0;
	}
	return r;
}

/* ------------------------------------------------------- minimization */

static uint64_t min_deadline;
static unsigned int min_runs;

static bool still_fails(const struct op *ops, const unsigned char *idx,
			unsigned int n)
{
	struct run r;

	if (now_ns() > min_deadline)
		return false;
	min_runs++;
	r = run_sequence(ops, idx, n);
	return r.what != PASS;
}

/*
 * ddmin: remove chunks of the failing list (halves, quarters, ...) while
 * it still fails, then single operations; keeps the shortest it found
 * within the time allowed.
 */
static unsigned int minimize(const struct op *ops, unsigned char *idx,
			     unsigned int n)
{
	unsigned char trial[MAXOPS];
	unsigned int chunk = n / 2, start, i, m;

	min_deadline = now_ns() + 30000000000ULL;
	while (chunk >= 1 && n > 1 && now_ns() < min_deadline) {
		bool removed = false;

		start = 0;
		while (start < n && now_ns() < min_deadline) {
			m = 0;
			for (i = 0; i < n; i++)
				if (i < start || i >= start + chunk)
					trial[m++] = idx[i];
			if (m && still_fails(ops, trial, m)) {
				memcpy(idx, trial, m);
				n = m;
				removed = true;
			} else {
				start += chunk;
			}
		}
		if (!removed)
			chunk /= 2;
		else if (chunk > n / 2)
			chunk = n / 2;
	}
	return n;
}

/* ---------------------------------------------------------------- main */

static uint64_t opt_seed;
static unsigned int opt_seconds = 10;
static long opt_sequence = -1;
static char *opt_ops;

static void usage(const char *me)
{
	fprintf(stderr, "usage: %s [--seconds N] [--seed S] [--sequence I [--ops LIST]]\n",
		me);
	exit(KSFT_FAIL);
}

/*
 * How many times a uaccess that faults tries before it gives up with
 * EFAULT, at offset @off of a fresh mspec_cached page: each try is a
 * ->nopfn() call, and k injected allocation failures (NOPFN_OOM) make the
 * first k fail. The copy gives up after T failed tries: with k < T
 * injected it gets the page, with k >= T it is EFAULT; T is the smallest
 * k that fails it (x86-64 and arm64: 2; riscv64, arm, i386, s390x, mips:
 * 1; ppc64 at offset 4088: 3, where a copy with two injected failures got
 * its page and one with three was EFAULT after three ->nopfn() calls,
 * which a probe with one failure, telling 1 from more, modelled as 2).
 */
static int probe_uaccess_k(bool to_user, unsigned long off, int k)
{
	int fd = open(dev_file[D_CACHED], O_RDWR), pfd[2];
	uint64_t v = 1;
	char *m;
	long ret;

	if (fd < 0 || pipe2(pfd, O_NONBLOCK))
		ksft_exit_fail_msg("uaccess probe: %s\n", strerror(errno));
	m = mmap(NULL, psz, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
	if (m == MAP_FAILED || mspec_set_knob("fail_sigbus", 0) ||
	    mspec_set_knob("fail_next_alloc", k))
		ksft_exit_fail_msg("uaccess probe: %s\n", strerror(errno));
	if (to_user) {
		if (write(pfd[1], &v, 8) != 8)
			ksft_exit_fail_msg("uaccess probe: pipe\n");
		ret = read(pfd[0], m + off, 8);
	} else {
		ret = write(pfd[1], m + off, 8);
	}
	if (ret != 8 && !(ret == -1 && errno == EFAULT))
		ksft_exit_fail_msg("uaccess probe: %ld, %s\n", ret,
				   strerror(errno));
	mspec_set_knob("fail_next_alloc", 0);
	munmap(m, psz);
	close(fd);
	close(pfd[0]);
	close(pfd[1]);
	return ret == 8;
}

#define UACCESS_TRIES_MAX	8

static int probe_uaccess(bool to_user, unsigned long off)
{
	int k;

	for (k = 1; k <= UACCESS_TRIES_MAX; k++)
		if (!probe_uaccess_k(to_user, off, k))
			return k;
	ksft_exit_fail_msg("uaccess probe: a copy at offset %lu got its page after %d failed tries\n",
			   off, UACCESS_TRIES_MAX);
	return 0;
}

static void setup_env(void)
{
	struct utsname u;
	FILE *f;
	struct nopfn_test_stats s;
	struct nopfn_test_pages req = {
		.first = 0, .count = 1, .behaviour = NOPFN_TEST_CARVE,
	};
	unsigned long span;
	char *r;
	int i;

	/*
	 * riscv64's sys_mmap and 64-bit mips's mips_mmap take a signed off_t
	 * and shift it arithmetically (arch/riscv/kernel/sys_riscv.c,
	 * arch/mips/kernel/syscall.c): an offset with the top bit set is a
	 * negative pgoff there (EOVERFLOW), a large one elsewhere.
	 */
	env.signed_off = !uname(&u) && (!strcmp(u.machine, "riscv64") ||
					!strcmp(u.machine, "mips64"));
	env.overcommit = 0;
	f = fopen("/proc/sys/vm/overcommit_memory", "r");
	if (f) {
		if (fscanf(f, "%d", &env.overcommit) != 1)
			env.overcommit = 0;
		fclose(f);
	}
	f = fopen("/proc/meminfo", "r");
	if (!f || fscanf(f, "MemTotal: %lu kB", &env.ram_pages) != 1)
		ksft_exit_fail_msg("/proc/meminfo: no MemTotal\n");
	fclose(f);
	env.ram_pages = env.ram_pages * 1024 / psz;
	if (env.overcommit == 2)
		ksft_exit_skip("vm.overcommit_memory=2: private mappings not modelled\n");
	env.word_off[0] = 0;
	env.word_off[1] = 8;
	env.word_off[2] = psz / 2;
	env.word_off[3] = psz - 8;
	r = mmap(NULL, (ARENA + 2 * GUARD) * psz, PROT_NONE,
		 MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
	if (r == MAP_FAILED)
		ksft_exit_fail_msg("arena: %s\n", strerror(errno));
	env.arena = r + GUARD * psz;
	munmap(env.arena, ARENA * psz);
	for (i = 0; i < 3; i++) {
		void *p = mmap(NULL, huge_len[i], PROT_NONE,
			       MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE,
			       -1, 0);

		env.fits[i] = p != MAP_FAILED;
		if (p != MAP_FAILED)
			munmap(p, huge_len[i]);
	}
	probe_fd = open(dev_file[D_NOPFN], O_RDWR);
	if (probe_fd < 0 || ioctl(probe_fd, NOPFN_TEST_IOC_GET_STATS, &s))
		ksft_exit_fail_msg("nopfn_test: %s\n", strerror(errno));
	env.carve_pfn = s.carve_pfn;
	env.carve_pages = s.carve_pages;
	env.carve_err = 0;
	if (env.carve_pages &&
	    ioctl(probe_fd, NOPFN_TEST_IOC_SET_PAGES, &req))
		env.carve_err = errno;
	req.behaviour = NOPFN_TEST_RAM;
	ioctl(probe_fd, NOPFN_TEST_IOC_SET_PAGES, &req);
	for (i = 0; i < NW; i++) {
		uaccess_tries[i][0] = probe_uaccess(false, env.word_off[i]);
		uaccess_tries[i][1] = probe_uaccess(true, env.word_off[i]);
	}
	span = colour_span(probe_fd);
	if (!span)
		ksft_exit_fail_msg("colour probe: %s\n", strerror(errno));
	env.colour = span == (unsigned long)psz ? 0 : span - 1;
}

/*
 * Map carve-out page 0 of a fresh nopfn_test file PROT_READ | PROT_EXEC
 * and install its PTE by each path that sets an executable PTE: the
 * fault, mprotect() back to executable, fork() (copy_page_range()) and
 * mremap() (move_ptes()), reading it after each. In a child, so that an
 * oops, which kills the task, is seen as its death. NULL when it went
 * through; else what went wrong, in @msg.
 */
static const char *exec_carve_check(char *msg, size_t size)
{
	struct nopfn_test_pages req = {
		.first = 0, .count = 1, .behaviour = NOPFN_TEST_CARVE,
	};
	int status;
	pid_t pid;

	if (!env.carve_pages || env.carve_err)
		return NULL;
	pid = fork();
	if (pid < 0) {
		snprintf(msg, size, "fork: %s", strerror(errno));
		return msg;
	}
	if (pid == 0) {
		volatile uint64_t *p, *q;
		uint64_t v;
		void *to;
		pid_t c;
		int fd;

		alarm(20);
		fd = open(dev_file[D_NOPFN], O_RDWR);
		if (fd < 0 || ioctl(fd, NOPFN_TEST_IOC_SET_PAGES, &req))
			_exit(10);
		p = mmap(NULL, psz, PROT_READ | PROT_EXEC, MAP_SHARED, fd, 0);
		if (p == MAP_FAILED)
			_exit(11);
		v = p[0];				/* the fault */
		if (mprotect((void *)p, psz, PROT_READ) ||
		    mprotect((void *)p, psz, PROT_READ | PROT_EXEC))
			_exit(12);
		if (p[0] != v)
			_exit(13);
		c = fork();				/* copy_page_range() */
		if (c == 0)
			_exit(p[0] == v ? 0 : 1);
		if (c < 0 || waitpid(c, &status, 0) != c ||
		    !WIFEXITED(status) || WEXITSTATUS(status))
			_exit(14);
		to = mmap(NULL, 2 * psz, PROT_NONE,
			  MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
		if (to == MAP_FAILED)
			_exit(15);
		q = mremap((void *)p, psz, psz, MREMAP_MAYMOVE | MREMAP_FIXED,
			   (char *)to + psz);		/* move_ptes() */
		if (q == MAP_FAILED || q[0] != v)
			_exit(16);
		_exit(0);
	}
	if (waitpid(pid, &status, 0) != pid) {
		snprintf(msg, size, "waitpid: %s", strerror(errno));
		return msg;
	}
	if (WIFEXITED(status) && !WEXITSTATUS(status))
		return NULL;
	if (WIFSIGNALED(status))
		snprintf(msg, size, "the task died of signal %d (an oops?)",
			 WTERMSIG(status));
	else
		snprintf(msg, size, "step %d failed (see exec_carve_check())",
			 WEXITSTATUS(status));
	return msg;
}

static void print_failure(uint64_t seed, unsigned long seq,
			  const struct op *ops, unsigned int n0,
			  struct run *first)
{
	unsigned char idx[MAXOPS];
	char list[MAXOPS * 4] = "";
	unsigned int i, n;
	struct run r;
	size_t len = 0;

	ksft_print_msg("FAILED: seed %llu sequence %lu: %s at operation #%d: %s\n",
		       (unsigned long long)seed, seq,
		       outcome_name[first->what], first->op, first->msg);
	for (i = 0; i < n0; i++)
		idx[i] = i;
	r = run_sequence(ops, idx, n0);
	if (r.what == PASS) {
		ksft_print_msg("the sequence passes when run again: not reproducible; its %u operations were:\n",
			       n0);
		for (i = 0; i < n0; i++)
			ksft_print_msg("  #%u %s\n", i, kind_name[ops[i].kind]);
		return;
	}
	ksft_print_msg("minimizing %u operations (at most 30 s)...\n", n0);
	n = minimize(ops, idx, n0);
	r = run_sequence(ops, idx, n);
	for (i = 0; i < n; i++)
		len += snprintf(list + len, sizeof(list) - len, "%s%u",
				i ? "," : "", idx[i]);
	ksft_print_msg("shortest: %u of %u operations (%u runs): %s at #%d: %s\n",
		       n, n0, min_runs, outcome_name[r.what], r.op, r.msg);
	ksft_print_msg("replay: mmap_fuzz --seed %llu --sequence %lu --ops %s\n",
		       (unsigned long long)seed, seq, list);
	for (i = 0; i < n; i++)
		if (sh->trace[i][0])
			ksft_print_msg("  %s\n", sh->trace[i]);
}

int main(int argc, char **argv)
{
	struct op ops[MAXOPS];
	unsigned char idx[MAXOPS];
	unsigned long seq, sequences = 0, ops_total = 0;
	uint64_t t0, deadline;
	unsigned int n, i;
	struct run r = { PASS, -1, "" };
	const char *exec_msg;
	char msg[MSG];
	bool failed = false;

	opt_seed = now_ns() ^ ((uint64_t)getpid() << 40);
	for (i = 1; i < (unsigned int)argc; i++) {
		if (i + 1 >= (unsigned int)argc)
			usage(argv[0]);
		if (!strcmp(argv[i], "--seconds"))
			opt_seconds = strtoul(argv[++i], NULL, 0);
		else if (!strcmp(argv[i], "--seed"))
			opt_seed = strtoull(argv[++i], NULL, 0);
		else if (!strcmp(argv[i], "--sequence"))
			opt_sequence = strtol(argv[++i], NULL, 0);
		else if (!strcmp(argv[i], "--ops"))
			opt_ops = argv[++i];
		else
			usage(argv[0]);
	}

	ksft_print_header();
	if (!have_mspec() || access(dev_file[D_NOPFN], R_OK | W_OK))
		ksft_exit_skip("mspec or nopfn_test module, or debugfs, not available\n");
	ksft_set_plan(4);
	ksft_print_msg("seed %llu, %u s\n", (unsigned long long)opt_seed,
		       opt_seconds);
	printf("# METRIC fuzz.seed %llu\n", (unsigned long long)opt_seed);

	sh = mmap(NULL, sizeof(*sh), PROT_READ | PROT_WRITE,
		  MAP_SHARED | MAP_ANONYMOUS, -1, 0);
	if (sh == MAP_FAILED)
		ksft_exit_fail_msg("shared memory: %s\n", strerror(errno));
	prctl(PR_SET_CHILD_SUBREAPER, 1);
	guard_install(guard_handler);
	setup_env();
	mspec_set_knob("fail_next_alloc", 0);
	mspec_set_knob("fail_sigbus", 0);
	counts_now(&cbase);
	kmsg_open(&km);
	ksft_print_msg("arena %p, %u pages; carve-out PFN %#lx, %lu pages%s; address space fits 1 GiB %d, 1 TiB %d, 64 TiB %d\n",
		       env.arena, ARENA, env.carve_pfn, env.carve_pages,
		       env.carve_err ? " (not usable)" : "", env.fits[0],
		       env.fits[1], env.fits[2]);
	ksft_print_msg("a failing uaccess tries, at offsets %lu %lu %lu %lu of a page: from user space %d %d %d %d times, to it %d %d %d %d; shared mappings' colour mask %#lx\n",
		       env.word_off[0], env.word_off[1], env.word_off[2],
		       env.word_off[3], uaccess_tries[0][0],
		       uaccess_tries[1][0], uaccess_tries[2][0],
		       uaccess_tries[3][0], uaccess_tries[0][1],
		       uaccess_tries[1][1], uaccess_tries[2][1],
		       uaccess_tries[3][1], env.colour);

	t0 = now_ns();
	deadline = t0 + opt_seconds * 1000000000ULL;
	for (seq = opt_sequence >= 0 ? (unsigned long)opt_sequence : 0;;
	     seq++) {
		gen_sequence(opt_seed, seq, ops, &n);
		if (opt_ops) {
			char *s = opt_ops, *e;
			unsigned int m = 0;

			while (*s && m < MAXOPS) {
				unsigned long v = strtoul(s, &e, 10);

				if (e == s || v >= n)
					usage(argv[0]);
				idx[m++] = v;
				s = *e ? e + 1 : e;
			}
			r = run_sequence(ops, idx, m);
			sequences++;
			ops_total += m;
			if (r.what != PASS) {
				failed = true;
				ksft_print_msg("%s at #%d: %s\n",
					       outcome_name[r.what], r.op,
					       r.msg);
			}
			for (i = 0; i < m; i++)
				ksft_print_msg("  %s\n", sh->trace[i]);
			break;
		}
		for (i = 0; i < n; i++)
			idx[i] = i;
		sh->ops_done = 0;
		r = run_sequence(ops, idx, n);
		sequences++;
		ops_total += sh->ops_done;
		if (r.what != PASS) {
			failed = true;
			print_failure(opt_seed, seq, ops, n, &r);
			break;
		}
		if (opt_sequence >= 0 || now_ns() >= deadline)
			break;
	}

	/* 1: every sequence matched the model. */
	if (failed)
		ksft_test_result_fail("sequences_match_model\n");
	else
		ksft_test_result_pass("sequences_match_model\n");

	/* 2: all counters back after the last process went. */
	if (counts_back(msg, sizeof(msg))) {
		ksft_test_result_pass("counters_back\n");
	} else {
		ksft_print_msg("%s\n", msg);
		ksft_test_result_fail("counters_back\n");
	}

	/* 4 first, so that an oops it provokes is in the log of 3. */
	exec_msg = exec_carve_check(msg, sizeof(msg));

	/* 3: nothing in the kernel log (the sequences report their own). */
	kmsg_scan(&km, allowed_reports);
	ksft_print_msg("kernel log: %lu new records\n", km.lines);
	if (km.fd < 0)
		ksft_test_result_skip("kernel_log_clean: no /dev/kmsg\n");
	else if (km.reports || r.what == KREPORT)
		ksft_test_result_fail("kernel_log_clean\n");
	else
		ksft_test_result_pass("kernel_log_clean\n");
	kmsg_close(&km);

	/* 4: executable PTEs of a PFN without struct page. */
	if (!env.carve_pages || env.carve_err) {
		ksft_test_result_skip("exec_mappings_without_struct_page: nopfn_test has no usable carve-out (carve_phys/carve_size not given, or %s)\n",
				      strerror(env.carve_err));
	} else if (exec_msg) {
		ksft_print_msg("exec_mappings_without_struct_page: %s\n",
			       exec_msg);
		ksft_test_result_fail("exec_mappings_without_struct_page\n");
	} else {
		ksft_test_result_pass("exec_mappings_without_struct_page\n");
	}

	for (i = 0; i < NKINDS; i++)
		ksft_print_msg("%-9s %6lu done, %6lu succeeded\n", kind_name[i],
			       sh->kinds[i], sh->ok[i]);
	ksft_print_msg("accesses: %lu reached memory (%lu pages allocated by them), %lu SIGSEGV, %lu SIGBUS, %lu EFAULT\n",
		       sh->acc_data, sh->acc_fresh, sh->acc_segv, sh->acc_bus,
		       sh->acc_efault);
	printf("# METRIC fuzz.ops %lu ops\n", ops_total);
	printf("# METRIC fuzz.sequences %lu\n", sequences);
	printf("# METRIC fuzz.seconds %.3f s\n", (now_ns() - t0) / 1e9);
	printf("# METRIC fuzz.ops_per_s %.1f ops/s\n",
	       ops_total / ((now_ns() - t0) / 1e9));
	ksft_finished();
	return 0;
}
