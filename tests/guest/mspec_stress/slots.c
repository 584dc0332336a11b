// SPDX-License-Identifier: GPL-2.0
/*
 * mspec_stress: the operations of a hammer thread on its own slots (see
 * main.c): map a device there, touch, fork(), mprotect(), madvise(),
 * mremap() and munmap(), each with its checks.
 */
#include "stress.h"

static uint64_t pat(uint64_t tag, unsigned long i)
{
	return tag ^ (i * 0x9e3779b97f4a7c15ULL);
}

static unsigned long words(void)
{
	return psz / sizeof(uint64_t);
}

/*
 * Read the page: count the words that are not what they must be, as
 * fresh (@fresh: zero, see fresh_word()) or the pattern.
 */
static inline void acc_check(struct access *a, bool fresh)
{
	uint64_t *w = (uint64_t *)a->page;
	unsigned long i, n = words();

	for (i = 0; i < n; i++) {
		uint64_t v = peek64(&w[i]);
		uint64_t want = fresh ? fresh_word(a->dev, i * sizeof(*w)) :
				(i == 1 && a->child) ? a->child :
				pat(a->tag, i);

		if (v != want && !a->nonzero++) {
			a->first_bad = i;
			a->bad_val = v;
		}
	}
}

/* Read the page: count the words that are not as fresh (zero). */
static void acc_zero(void *arg)
{
	acc_check(arg, true);
}

/* Read the page: count the words that differ from the pattern. */
static void acc_verify(void *arg)
{
	acc_check(arg, false);
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

/* Counters of a test_nopfn file that is about to go. */
void collect_nopfn(int fd)
{
	struct nopfn_test_stats s;

	if (fd < 0 || ioctl(fd, NOPFN_TEST_IOC_GET_STATS, &s))
		return;
	atomic_add_ul(&sh->refault, s.ret_refault);
	atomic_add_ul(&sh->retry, s.ret_retry);
	atomic_add_ul(&sh->oom, s.ret_oom);
	atomic_add_ul(&sh->sigbus_ret, s.ret_sigbus);
}

void slot_clear(struct slot *s)
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

/* Map a new device mapping in slot @s, over what is there. */
void op_map(struct hammer *h, struct slot *s)
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
		if (p != MAP_FAILED || !tolerated(err))
			fail("mmap %s %u pages at %p: %p %s", dev_file[dev], n,
			     s->addr, p, strerror(err));
		slot_retire(s);	/* the range may be a hole now */
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

void op_touch(struct hammer *h, struct slot *s)
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

void op_fork(struct hammer *h)
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

void op_mprotect(struct hammer *h, struct slot *s)
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

void op_madvise(struct hammer *h, struct slot *s)
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

void op_mremap(struct hammer *h, struct slot *s)
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
			if (q != MAP_FAILED || !tolerated(err))
				fail("mremap move of %s: %p %s",
				     dev_file[s->dev], q, strerror(err));
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
			if (q != MAP_FAILED || !tolerated(errno))
				fail("mremap shrink of %s: %p %s",
				     dev_file[s->dev], q, strerror(errno));
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

void op_munmap(struct hammer *h, struct slot *s)
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
