// SPDX-License-Identifier: GPL-2.0
/*
 * mmap_fuzz: the calls of the mmap family (see main.c): open() and
 * close() of a device, mmap(), munmap(), mprotect(), madvise() and
 * mremap(), each with what the model says it must do.
 */
#include "fuzz.h"

/*
 * mmap(2) without the C library's checks.  The 32-bit ABIs (arm, i386,
 * mips o32) have mmap2, whose offset counts 4096-byte units (arm has no
 * mmap at all, and i386's is old_mmap, which takes a pointer to its
 * arguments): an offset it cannot express, not a multiple of 4096, is
 * EINVAL there as the kernel's mmap says for it (their pages are 4 KiB).
 */
long raw_mmap(unsigned long addr, unsigned long len, int prot,
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

/*
 * The pages of a munmap(), mprotect() or madvise(): at random, or, when
 * sane(), a range around a VMA of the parent (in it, over it, past its
 * end); in the arena. Returns how many, the first in *@page.
 */
static unsigned long op_range(const struct op *op, unsigned long *page)
{
	unsigned long n = 1 + op->r[1] % 16;
	struct mvma *v;

	*page = op->r[0] % ARENA;
	if (sane(op) && M->par.nv) {
		v = &M->par.v[op->r[0] % M->par.nv];
		*page = v->start;
		if (op->r[1] % 3 == 0)
			*page += (op->r[1] >> 8) % (v->end - v->start);
		if (op->r[1] % 3 == 1)
			n = v->end - *page;
		else
			n = 1 + (op->r[1] >> 16) % 12;
	}
	if (*page + n > ARENA)
		n = ARENA - *page;
	return n;
}

static const int prot_table[8] = {
	PROT_READ | PROT_WRITE, PROT_READ | PROT_WRITE, PROT_READ | PROT_WRITE,
	PROT_READ, PROT_WRITE, PROT_NONE, PROT_READ | PROT_EXEC,
	PROT_READ | PROT_WRITE | PROT_EXEC,
};

const char *prot_str(int prot, char *buf)
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

void op_open(const struct op *op)
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

void op_close(const struct op *op)
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

void op_mmap(const struct op *op)
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
void op_munmap(const struct op *op)
{
	unsigned long page, n = op_range(op, &page);
	unsigned long addr = (unsigned long)A(page), len = n * psz;
	char b1[32];
	long ret;

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
void op_mprotect(const struct op *op)
{
	unsigned long page, n = op_range(op, &page), pg;
	unsigned long addr = (unsigned long)A(page), len = n * psz;
	int prot = prot_table[(op->r[2] >> 8) % 8];
	char b1[32], b2[32];
	struct mvma *v;
	long ret;

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
void op_madvise(const struct op *op)
{
	unsigned long page, n = op_range(op, &page);
	unsigned long addr = (unsigned long)A(page), len = n * psz, start, end;
	int adv = advice_table[op->r[2] % ARRAY_SIZE(advice_table)];
	int hole = 0, err = 0;
	char b1[32];
	long ret;

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
	if (env.populate_walk && (adv == MADV_POPULATE_READ ||
				  adv == MADV_POPULATE_WRITE)) {
		/* madvise_populate(): every VMA here is refused (EINVAL) */
		struct mvma *v = find_vma_after(&M->par, start);

		err = v && v->start <= start ? EINVAL : ENOMEM;
		expect_ret("madvise", ret, errno, -1, err);
		return;
	}
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
void op_mremap(const struct op *op)
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
