// SPDX-License-Identifier: GPL-2.0
/*
 * mmap_fuzz: the model of what the kernel and the drivers must do (see
 * main.c): the VMAs of the arena, the objects behind them (mspec mappings
 * and test_nopfn states) with their pages, the counters they imply, and
 * what an access must give.
 */
#include "fuzz.h"

struct model *M;

/* --------------------------------------------------------- model: VMAs */

struct mvma *find_vma_at(struct mproc *p, unsigned long pg)
{
	int i;

	for (i = 0; i < p->nv; i++)
		if (p->v[i].start <= pg && pg < p->v[i].end)
			return &p->v[i];
	return NULL;
}

/* First VMA ending after @pg (the kernel's find_vma()), or NULL. */
struct mvma *find_vma_after(struct mproc *p, unsigned long pg)
{
	int i;

	for (i = 0; i < p->nv; i++)
		if (p->v[i].end > pg)
			return &p->v[i];
	return NULL;
}

void vma_insert(struct mproc *p, struct mvma v)
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
void vma_split_at(struct mproc *p, unsigned long pg)
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
void vma_remove(struct mproc *p, unsigned long s, unsigned long e)
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

bool range_free(struct mproc *p, unsigned long s, unsigned long e)
{
	int i;

	for (i = 0; i < p->nv; i++)
		if (p->v[i].start < e && s < p->v[i].end)
			return false;
	return true;
}

/* Does a shared mapping of @pgoff at @addr miss its colour? */
bool colour_misfit(unsigned long addr, unsigned long pgoff)
{
	return env.colour && ((addr - pgoff * psz) & env.colour);
}

/* A hint as the kernel takes it: moved up to @pgoff's colour. */
unsigned long colour_align(unsigned long addr, unsigned long pgoff)
{
	return ((addr + env.colour) & ~env.colour) +
		((pgoff * psz) & env.colour);
}

/* The hint @addr moved to @pgoff's colour, free for @pages in the arena. */
bool hint_free(unsigned long addr, unsigned long pgoff,
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

int obj_new(int dev, unsigned long npages)
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

struct mpage *obj_page(struct mobj *o, unsigned long idx, bool add)
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

/* test_nopfn: the behaviour of page @idx, the last SET_PAGES wins. */
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

void read_counts(struct counts *c, bool strict)
{
	struct nopfn_test_stats s;
	struct counters k;
	int t;

	memset(c, 0, sizeof(*c));
	for (t = 0; t < NTYPES; t++) {
		if (read_counters(type_name[t], &k) && strict)
			mismatch("cannot read %s stats", type_name[t]);
		c->mappings[t] = k.mappings;
		c->in_use[t] = k.in_use;
		c->failures[t] = k.failures;
		c->faults[t] = k.faults;
		c->leaked += k.leaked;
	}
	if (!ioctl(probe_fd, NOPFN_TEST_IOC_GET_STATS, &s)) {
		c->states = s.all_states;
		c->ram = s.all_ram_pages;
	} else if (strict) {
		mismatch("NOPFN_TEST_IOC_GET_STATS: %s", strerror(errno));
	}
}

static struct counts base;

void model_base(void)
{
	read_counts(&base, true);
}

/*
 * Each open test_nopfn file: its state's counters, as nopfn_test_nopfn()
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
			mismatch("test_nopfn slot %d: calls %llu pfn %llu sigbus %llu oom %llu retry %llu refault %llu lock_kept %llu ram %llu, model calls %ld pfn %ld sigbus %ld oom %ld retry %ld ram %ld",
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
 * (none); test_nopfn states (file and VMAs hold them) and RAM pages (one
 * per page index first touched as RAM, freed with the state); the
 * fail_next_alloc knob.
 */
void check_counts(void)
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
	read_counts(&c, true);
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
		mismatch("test_nopfn states %ld, model %ld",
			 c.states - base.states, want.states - base.states);
	if (c.ram != want.ram)
		mismatch("test_nopfn RAM pages %ld, model %ld",
			 c.ram - base.ram, want.ram - base.ram);
	left = mspec_knob("fail_next_alloc");
	if (left != M->inj_left)
		mismatch("fail_next_alloc %ld, model %d", left, M->inj_left);
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
 * have no memory cgroups): kernel/patches/6.1, "mm: add ->nopfn()".
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
int uaccess_tries[NW][2];	/* per word; [1]: copy to user space */

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
struct tres model_access(struct mproc *p, unsigned long pg, int w,
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
