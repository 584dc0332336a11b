// SPDX-License-Identifier: GPL-2.0
/*
 * mspec back end for powerpc: 64-bit Book3S (pseries, powernv; hash or
 * radix MMU) and the 32-bit MMUs (Book E such as e500, and Book3S-32).
 *
 * uncached: the user mapping gets pgprot_noncached(): caching-inhibited
 * and guarded (I=1 G=1: Linux's _PAGE_NON_IDEMPOTENT on 64-bit Book3S,
 * _PAGE_NO_CACHE | _PAGE_GUARDED on the 32-bit MMUs), the powerpc
 * counterpart of ia64 UC.  The kernel's linear alias of the page stays
 * cacheable: it is mapped with large pages (bolted HPTEs or radix
 * PMD/PUD entries; TLB1 CAM entries on e500, BATs on Book3S-32), and no
 * interface available to a module changes part of it.  Power ISA (Book
 * II, "Storage Control Attributes") leaves accesses with mismatched I
 * bits to software: before a location is accessed caching-inhibited it
 * must not be in any cache.  So the page is
 * zeroed through the alias and then written back and invalidated from the
 * data caches with dcbf over the whole page (flush_dcache_range()) before
 * user space gets it, as the kernel's own DMA code does for the
 * cacheable alias of a coherent buffer on non-coherent powerpc
 * (arch_dma_prep_coherent()).  The kernel does not read the page through
 * the alias while it is mapped, and the free path overwrites the whole
 * page through it before anybody else reads it, so lines that the CPU
 * fetches through the alias meanwhile are never consumed.
 *
 * cached and fetchop: the normal cacheable user mapping.  lwarx/stwcx.
 * (and ldarx/stdcx.) are only defined on cacheable, non-write-through
 * storage, so the emulated fetchop page must stay cacheable.
 */

#include <linux/gfp.h>
#include <linux/kernel.h>
#include <linux/mm.h>
#include <asm/cacheflush.h>
#include <asm/pgtable.h>

#include "../mspec_arch.h"

const char * const mspec_arch_name = "powerpc";

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
	unsigned long addr;

	page = alloc_pages_node(nid, MSPEC_GFP, 0);
	if (!page)
		return 0;
	addr = (unsigned long)page_address(page);
	if (type == MSPEC_UNCACHED)
		flush_dcache_range(addr, addr + PAGE_SIZE);
	return addr;
}

bool mspec_arch_free_page(enum mspec_type type, unsigned long maddr)
{
	/*
	 * Every line of the page is written through the cacheable alias, so
	 * a stale line fetched while user space had the page
	 * caching-inhibited is overwritten, not read.
	 */
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
	if (type == MSPEC_UNCACHED)
		return pgprot_noncached(prot);
	return prot;
}

bool mspec_arch_noncached(enum mspec_type type)
{
	return type == MSPEC_UNCACHED;
}

const char *mspec_arch_describe(enum mspec_type type)
{
	switch (type) {
	case MSPEC_UNCACHED:
		return "I=1 G=1 user mapping, cacheable linear alias flushed with dcbf";
	case MSPEC_CACHED:
		return "cacheable pages";
	case MSPEC_FETCHOP:
		return "cacheable pages, fetchop emulated with larx/stcx.";
	default:
		return "unknown type";
	}
}

int mspec_arch_pte_memtype(pte_t pte, const char **name)
{
#ifdef CONFIG_PPC_BOOK3S_64
	switch (pte_val(pte) & _PAGE_CACHE_CTL) {
	case 0:
		*name = "cacheable";
		return 1;
	case _PAGE_SAO:
		*name = "SAO";
		return 1;
	case _PAGE_NON_IDEMPOTENT:
		*name = "CI-guarded";
		return 0;
	case _PAGE_TOLERANT:
		*name = "CI";
		return 0;
	default:
		*name = "unknown";
		return -1;
	}
#else
	/* The WIMG bits of the 32-bit MMUs, as Linux names them. */
	if (pte_val(pte) & _PAGE_NO_CACHE) {
		*name = pte_val(pte) & _PAGE_GUARDED ? "CI-guarded" : "CI";
		return 0;
	}
	*name = pte_val(pte) & _PAGE_WRITETHRU ? "write-through" : "cacheable";
	return 1;
#endif
}

int mspec_arch_alias_memtype(unsigned long pfn, const char **name)
{
	/* The linear map is never changed by this back end. */
	*name = pfn_valid(pfn) ? "cacheable" : "none";
	return pfn_valid(pfn) ? 1 : -1;
}
