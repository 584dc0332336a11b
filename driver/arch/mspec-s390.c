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
 * cached and fetchop: ordinary pages; the emulated fetchop operations are
 * COMPARE AND SWAP and the z196 interlocked-access instructions.
 */

#include <linux/gfp.h>
#include <linux/kernel.h>
#include <linux/mm.h>
#include <asm/pgtable.h>

#include "../mspec_arch.h"

const char * const mspec_arch_name = "s390";

int mspec_arch_init(void)
{
	return 0;
}

void mspec_arch_exit(void)
{
}

unsigned long mspec_arch_alloc_page(enum mspec_type type, int nid)
{
	struct page *page;

	/* mmap() of the uncached device is refused: never reached for it */
	if (WARN_ON_ONCE(type == MSPEC_UNCACHED))
		return -ENODEV;
	page = alloc_pages_node(nid, MSPEC_GFP, 0);
	return page ? (unsigned long)page_address(page) : 0;
}

bool mspec_arch_free_page(enum mspec_type type, unsigned long maddr)
{
	clear_page((void *)maddr);
	free_page(maddr);
	return true;
}

unsigned long mspec_arch_pfn(enum mspec_type type, unsigned long maddr)
{
	return __pa(maddr) >> PAGE_SHIFT;
}

pgprot_t mspec_arch_pgprot(enum mspec_type type, pgprot_t prot)
{
	return prot;
}

bool mspec_arch_noncached(enum mspec_type type)
{
	return false;
}

const char *mspec_arch_describe(enum mspec_type type)
{
	switch (type) {
	case MSPEC_UNCACHED:
		return "refused (ENODEV): s390 page tables have no memory types";
	case MSPEC_CACHED:
		return "ordinary pages";
	case MSPEC_FETCHOP:
		return "ordinary pages, fetchop emulated with compare-and-swap";
	default:
		return "unknown type";
	}
}

int mspec_arch_pte_memtype(pte_t pte, const char **name)
{
	/* Main storage is always accessed through the caches. */
	*name = "cacheable";
	return 1;
}

int mspec_arch_alias_memtype(unsigned long pfn, const char **name)
{
	*name = pfn_valid(pfn) ? "cacheable" : "none";
	return pfn_valid(pfn) ? 1 : -1;
}
