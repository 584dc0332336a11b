// SPDX-License-Identifier: GPL-2.0
/*
 * mspec back end for s390.
 *
 * uncached: refused.  z/Architecture has no memory types in its DAT
 * tables: every access to main storage goes through the caches, which
 * the hardware keeps coherent, and device memory is reached only through
 * I/O instructions (PCI load/store), never through a page table entry.
 * pgprot_noncached() and pgprot_writecombine() change nothing there, so
 * an "uncached" mapping cannot be made: mspec_uncached's mmap() fails
 * with -ENODEV (mspec_arch_noncached() is false) instead of handing out a
 * cacheable page under that name.
 *
 * cached and fetchop: ordinary pages (mspec_arch.c's defaults); the
 * emulated fetchop operations are COMPARE AND SWAP and the z196
 * interlocked-access instructions.  What differs from the generic back
 * end is only what the tests read: every PTE and the kernel's own
 * mapping are "cacheable".
 */

#include "../mspec_arch.h"

/* Main storage is always accessed through the caches. */
static int mspec_s390_pte_memtype(pte_t pte, const char **name)
{
	*name = "cacheable";
	return 1;
}

const struct mspec_arch_ops mspec_arch = {
	/* fetchop, cached, uncached */
	.describe = {
		"ordinary pages, fetchop emulated with compare-and-swap",
		"ordinary pages",
		"refused (ENODEV): s390 page tables have no memory types",
	},
	.pte_memtype = mspec_s390_pte_memtype,
	.alias_name = "cacheable",
};
