// SPDX-License-Identifier: GPL-2.0
/*
 * mspec back end for 32-bit ARM (ARMv5 to ARMv7, classic 2-level page
 * tables or LPAE).
 *
 * uncached: the user mapping gets pgprot_writecombine(), Linux's
 * L_PTE_MT_BUFFERABLE: on ARMv6/v7 (TEX remap) Normal memory,
 * Non-cacheable; on ARMv5 C=0 B=1, non-cacheable and bufferable.  It is
 * not pgprot_noncached() (L_PTE_MT_UNCACHED, Strongly-ordered on ARMv6+)
 * because mspec hands out memory, not device registers: Strongly-ordered
 * and Device memory fault on unaligned accesses, which the C library's
 * memcpy() makes, and Normal Non-cacheable is the counterpart of ia64 UC
 * memory and of the arm64 back end's Normal-NC.
 *
 * The kernel's linear (lowmem) alias of the page stays cacheable: it is
 * mapped with sections, and no interface available to a module changes
 * the attributes of part of it.  The ARM ARM (ARMv7: A3.5.7, "Mismatched
 * memory attributes") allows a cacheable and a non-cacheable alias of the
 * same memory when software keeps the caches coherent with what the
 * non-cacheable side sees.  So the page is zeroed through the alias and
 * then cleaned and invalidated from the data cache (__cpuc_flush_dcache_area
 * on the kernel address, which also covers the VIVT caches of ARMv5) and
 * from an outer cache, before user space gets it: no dirty line can later
 * be written back over what user space stores.  The kernel does not read
 * the page through the alias while it is mapped, and the free path
 * overwrites the whole page through it before anybody else reads it, so
 * lines speculatively fetched meanwhile are never consumed.  Pages come
 * from lowmem (MSPEC_GFP has no __GFP_HIGHMEM), so the alias always exists.
 *
 * cached and fetchop: the normal write-back user mapping.  Exclusives
 * (LDREX/STREX) need a cacheable mapping to be reliable across CPUs; on
 * ARMv5 the fetchop emulation relies on the kernel's cmpxchg helpers.
 */

#include <linux/gfp.h>
#include <linux/kernel.h>
#include <linux/mm.h>
#include <asm/cacheflush.h>
#include <asm/memory.h>
#include <asm/outercache.h>
#include <asm/pgtable.h>

#include "../mspec_arch.h"

const char * const mspec_arch_name = "arm";

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
	void *addr;

	page = alloc_pages_node(nid, MSPEC_GFP, 0);
	if (!page)
		return 0;
	addr = page_address(page);
	if (type == MSPEC_UNCACHED) {
		phys_addr_t pa = page_to_phys(page);

		__cpuc_flush_dcache_area(addr, PAGE_SIZE);
		outer_flush_range(pa, pa + PAGE_SIZE);
	}
	return (unsigned long)addr;
}

bool mspec_arch_free_page(enum mspec_type type, unsigned long maddr)
{
	/*
	 * Every line of the page is written through the cacheable alias, so
	 * a stale line fetched while user space had the page non-cacheable
	 * is overwritten, not read.
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
		return pgprot_writecombine(prot);
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
		return "Normal-NC user mapping, cacheable lowmem alias flushed from the caches";
	case MSPEC_CACHED:
		return "write-back pages";
	case MSPEC_FETCHOP:
		return "write-back pages, fetchop emulated with exclusives or cmpxchg helpers";
	default:
		return "unknown type";
	}
}

/*
 * The Linux memory type of a PTE (L_PTE_MT_*).  An if chain, not a
 * switch: with LPAE some of the names share a value.
 */
int mspec_arch_pte_memtype(pte_t pte, const char **name)
{
	pteval_t mt = pte_val(pte) & L_PTE_MT_MASK;

	if (mt == L_PTE_MT_WRITEBACK) {
		*name = "WB";
		return 1;
	}
	if (mt == L_PTE_MT_WRITEALLOC) {
		*name = "WBWA";
		return 1;
	}
	if (mt == L_PTE_MT_WRITETHROUGH) {
		*name = "WT";
		return 1;
	}
	if (mt == L_PTE_MT_BUFFERABLE) {
		*name = "Normal-NC";
		return 0;
	}
	if (mt == L_PTE_MT_UNCACHED) {
		*name = "SO";
		return 0;
	}
	if (mt == L_PTE_MT_DEV_SHARED) {
		*name = "Device";
		return 0;
	}
	*name = "unknown";
	return -1;
}

int mspec_arch_alias_memtype(unsigned long pfn, const char **name)
{
	/* The lowmem map is never changed by this back end. */
	*name = pfn_valid(pfn) ? "WB" : "none";
	return pfn_valid(pfn) ? 1 : -1;
}
