// SPDX-License-Identifier: GPL-2.0
/*
 * mmap_fuzz: accesses and the drivers' interfaces (see main.c): reads and
 * writes from user space and by the kernel, /proc/self/mem, the PTE read
 * back from mspec's debugfs, test_nopfn page behaviours, injected mspec
 * failures, the helper process and a test_nopfn VMA mapped again.
 */
#include "fuzz.h"
#include "guard.h"

int h_cmd = -1, h_rep = -1;		/* helper pipes */
pid_t h_pid;

/* The "device" line of the pte file: mspec_type_name[], or "none". */
static const char * const pte_dev[NDEV] = {
	"fetchop", "cached", "uncached", "none",
};

/* ----------------------------------------------------- guarded access */

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

void helper_stop(void)
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

/* ------------------------------------------------------------ accesses */

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

void op_touch(const struct op *op, bool helper)
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
void op_uaccess(const struct op *op)
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
void op_procmem(const struct op *op)
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
void op_query(const struct op *op)
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
void op_setpages(const struct op *op)
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

void op_inject(const struct op *op)
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
void op_hfork(void)
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

void op_hexit(void)
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
 * A test_nopfn state outlives its mappings: unmap a VMA of it and map the
 * same file and offset again at the same place, then touch all its
 * pages. The state's pages and behaviours are still there; the new VMA
 * has no PTE, so each touch faults again (for a page whose behaviour was
 * set anew since, the behaviour starts over: OOM_ONCE fails once more).
 */
void op_remap(const struct op *op)
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
		T("remap: no test_nopfn VMA with its file open");
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
