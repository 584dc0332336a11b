// SPDX-License-Identifier: GPL-2.0
/*
 * mspec back end for ia64, as the driver did it until 6.1.
 *
 * uncached and cached: pages from the ia64 uncached allocator
 * (uncached_alloc_page(), arch/ia64/kernel/uncached.c).  It converts whole
 * granules of memory to uncached with PAL/SAL calls and hands them out
 * through the uncached region 6 identity mapping, so the kernel never has
 * a cacheable (region 7) TLB entry for them: on ia64, and on SN2 in
 * particular, a cached and an uncached reference to the same line from
 * the same front-side bus corrupt memory.  The address the allocator
 * returns is region 6; the PFN is that address without
 * __IA64_UNCACHED_OFFSET.  mspec_uncached maps it UC (pgprot_noncached()),
 * mspec_cached maps it WB: on SN2 that was memory used uncached by other
 * partitions, which this partition must never speculate into through a
 * kernel mapping.
 *
 * fetchop: there is no SN2 in 6.1 (its platform code went in 5.5), so no
 * memory-side AMOs.  The fetchop page is an ordinary WB page (region 7
 * alias, __pa()) and the operations are CPU atomics (fetchadd/cmpxchg):
 * Itanium semaphore instructions on UC memory raise an Unsupported Data
 * Reference fault unless the platform supports uncacheable semaphores.
 * An SN2 back end returned the AMO alias instead: TO_AMO(maddr) as PFN,
 * pgprot_noncached(), and the operation selected by the offset in the
 * 64-byte variable.
 */

#include <linux/errno.h>
#include <linux/gfp.h>
#include <linux/kernel.h>
#include <linux/mm.h>
#include <linux/string.h>
#include <asm/page.h>
#include <asm/pgtable.h>
#include <asm/uncached.h>

#include "../mspec_arch.h"

static unsigned long mspec_ia64_alloc_page(enum mspec_type type, int nid)
{
	struct page *page;
	unsigned long maddr;

	if (type == MSPEC_FETCHOP) {
		page = alloc_pages_node(nid, MSPEC_GFP, 0);
		return page ? (unsigned long)page_address(page) : 0;
	}

	/*
	 * 0 here is the uncached pool exhausted: it grows only by whole
	 * granules that firmware converts, and a retry of the fault would
	 * find it the same.
	 */
	maddr = uncached_alloc_page(nid, 1);
	if (!maddr)
		return (unsigned long)-ENOSPC;
	memset((void *)maddr, 0, PAGE_SIZE);
	return maddr;
}

static bool mspec_ia64_free_page(enum mspec_type type, unsigned long maddr)
{
	/* Clear the page before sticking it back into the pool. */
	memset((void *)maddr, 0, PAGE_SIZE);
	if (type == MSPEC_FETCHOP)
		free_page(maddr);
	else
		uncached_free_page(maddr, 1);
	return true;
}

static unsigned long mspec_ia64_pfn(enum mspec_type type, unsigned long maddr)
{
	if (type == MSPEC_FETCHOP)
		return __pa(maddr) >> PAGE_SHIFT;
	return (maddr & ~__IA64_UNCACHED_OFFSET) >> PAGE_SHIFT;
}

static int mspec_ia64_pte_memtype(pte_t pte, const char **name)
{
	switch (pte_val(pte) & _PAGE_MA_MASK) {
	case _PAGE_MA_WB:
		*name = "WB";
		return 1;
	case _PAGE_MA_UC:
		*name = "UC";
		return 0;
	case _PAGE_MA_UCE:
		*name = "UCE";
		return 0;
	case _PAGE_MA_WC:
		*name = "WC";
		return 0;
	case _PAGE_MA_NAT:
		*name = "NaTPage";
		return -1;
	default:
		*name = "unknown";
		return -1;
	}
}

/* The kernel's own mapping of a page is not decoded: "unknown". */
const struct mspec_arch_ops mspec_arch = {
	.uncached_prot = MSPEC_PROT_NONCACHED,
	/* fetchop, cached, uncached */
	.describe = {
		"WB pages, fetchop emulated with fetchadd/cmpxchg (no SN2 AMOs in 6.1)",
		"WB user mapping of uncached-allocator pages (no cacheable kernel alias)",
		"UC user mapping of uncached-allocator pages (no cacheable kernel alias)",
	},
	.alloc = mspec_ia64_alloc_page,
	.free = mspec_ia64_free_page,
	.pfn = mspec_ia64_pfn,
	.pte_memtype = mspec_ia64_pte_memtype,
};
