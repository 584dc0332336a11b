// SPDX-License-Identifier: GPL-2.0
/*
 * mspec back end for arm64.
 *
 * uncached: the user mapping is Normal Non-cacheable (MAIR index
 * MT_NORMAL_NC, pgprot_writecombine()), not Device-nGnRnE
 * (pgprot_noncached()).  mspec hands out memory, not device registers:
 * Normal-NC is idempotent, allows unaligned accesses and DC ZVA (which the
 * C library's memset() uses and which fault on Device memory), and is the
 * closest match to the ia64 UC memory the driver was written for.
 *
 * The kernel's linear alias of the page stays Normal write-back.  A module
 * cannot change it: set_direct_map_*() and set_memory_valid() are not
 * exported, and the linear map is only page-granular when rodata=full (or
 * DEBUG_PAGEALLOC/KFENCE) makes can_set_direct_map() true.  The Arm ARM
 * (B2.8, mismatched memory attributes) allows a Normal-WB and a Normal-NC
 * alias of the same memory as long as software keeps the caches coherent
 * with what the non-cacheable side sees.  So the page is zeroed through
 * the linear map and then cleaned and invalidated to the Point of Coherency
 * before user space gets it: no dirty line can later be written back over
 * what user space stores, and the kernel does not read the page through
 * the alias while it is mapped.  Lines that the CPU speculatively fetches
 * through the alias meanwhile are clean and never consumed: the free path
 * overwrites the whole page through the alias before anybody reads it.
 *
 * cached and fetchop: Normal write-back.  Exclusives (LDXR/STXR) and LSE
 * atomics are only architecturally guaranteed on Normal cacheable memory
 * (inner and outer write-back shareable); on Normal-NC they depend on a
 * global monitor or far atomics, and on Device memory they may fault.
 */

#include <linux/bitfield.h>
#include <linux/bits.h>
#include <linux/gfp.h>
#include <linux/kernel.h>
#include <linux/mm.h>
#include <asm/barrier.h>
#include <asm/cpufeature.h>
#include <asm/memory.h>
#include <asm/pgtable.h>
#include <asm/sysreg.h>

#include "../mspec_arch.h"

const char * const mspec_arch_name = "arm64";

/* CTR_EL0 bits 19:16: log2 of the smallest data cache line, in words. */
#define MSPEC_CTR_DMINLINE	GENMASK_ULL(19, 16)

int mspec_arch_init(void)
{
	return 0;
}

void mspec_arch_exit(void)
{
}

/* DC CIVAC over [addr, addr + size): clean and invalidate to the PoC. */
static void mspec_arm64_clean_inval_poc(void *addr, size_t size)
{
	u64 ctr = read_sanitised_ftr_reg(SYS_CTR_EL0);
	unsigned long line = 4UL << FIELD_GET(MSPEC_CTR_DMINLINE, ctr);
	unsigned long p = (unsigned long)addr & ~(line - 1);
	unsigned long end = (unsigned long)addr + size;

	for (; p < end; p += line)
		asm volatile("dc civac, %0" : : "r" (p) : "memory");
	dsb(sy);
}

unsigned long mspec_arch_alloc_page(enum mspec_type type, int nid)
{
	struct page *page;
	void *addr;

	page = alloc_pages_node(nid, MSPEC_GFP, 0);
	if (!page)
		return 0;
	addr = page_address(page);
	if (type == MSPEC_UNCACHED)
		mspec_arm64_clean_inval_poc(addr, PAGE_SIZE);
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
		return "Normal-NC user mapping, Normal-WB linear alias cleaned to PoC";
	case MSPEC_CACHED:
		return "Normal write-back pages";
	case MSPEC_FETCHOP:
		return "Normal write-back pages, fetchop emulated with exclusives/LSE atomics";
	default:
		return "unknown type";
	}
}

int mspec_arch_pte_memtype(pte_t pte, const char **name)
{
	switch ((pte_val(pte) & PTE_ATTRINDX_MASK) >> 2) {
	case MT_NORMAL:
		*name = "Normal";
		return 1;
	case MT_NORMAL_TAGGED:
		*name = "Normal-Tagged";
		return 1;
	case MT_NORMAL_NC:
		*name = "Normal-NC";
		return 0;
	case MT_DEVICE_nGnRnE:
		*name = "Device-nGnRnE";
		return 0;
	case MT_DEVICE_nGnRE:
		*name = "Device-nGnRE";
		return 0;
	default:
		*name = "unknown";
		return -1;
	}
}

int mspec_arch_alias_memtype(unsigned long pfn, const char **name)
{
	/* The linear map is never changed by this back end. */
	*name = pfn_valid(pfn) ? "Normal" : "none";
	return pfn_valid(pfn) ? 1 : -1;
}
