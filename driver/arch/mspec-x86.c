// SPDX-License-Identifier: GPL-2.0
/*
 * mspec back end for x86.
 *
 * uncached: x86 forbids mapping a page with conflicting PAT memory types
 * (a cacheable alias lets the CPU speculate lines of a page that is also
 * accessed uncached: machine checks or silent corruption).  So while an
 * mspec_uncached page is in use its linear-map alias is made UC- with
 * set_memory_uc(), which also records UC- as the memtype of the RAM page
 * and flushes its lines from the caches; it goes back to WB with
 * set_memory_wb() before the page is freed.  The user PTE then is UC- too:
 * vm_page_prot asks for pgprot_noncached() (UC-), and the core inserts the
 * PFN like vmf_insert_pfn_prot() does, whose track_pfn_insert() takes the
 * cache mode from the memtype of the page, UC-.
 *
 * cached and fetchop: ordinary write-back pages.  The emulated fetchop
 * operations are LOCK-prefixed instructions, which need write-back memory
 * to be atomic across CPUs without bus locks.
 */

#include <linux/errno.h>
#include <linux/kernel.h>
#include <linux/mm.h>
#include <asm/msr.h>
#include <asm/pgtable.h>
#include <asm/set_memory.h>

#include "../mspec_arch.h"

/*
 * Zeroed through WB by the allocator: set_memory_uc() flushes those lines.
 * Its failure (a memory type conflict, or no memory for a page table
 * split) is not one that a retry of the fault would fix.
 */
static int mspec_x86_uncached_prepare(unsigned long maddr)
{
	if (set_memory_uc(maddr, 1))
		return -EIO;
	return 0;
}

/*
 * A page whose linear map is not WB again must not go back to the page
 * allocator: nonzero keeps it, the core counts it as leaked.
 */
static int mspec_x86_uncached_release(unsigned long maddr)
{
	return set_memory_wb(maddr, 1);
}

/* PAT MSR entry encodings (SDM vol. 3, "PAT"). */
static const char * const mspec_x86_pat_name[8] = {
	[0] = "UC", [1] = "WC", [2] = "reserved2", [3] = "reserved3",
	[4] = "WT", [5] = "WP", [6] = "WB", [7] = "UC-",
};

/*
 * Decode the memory type that the PWT, PCD and PAT bits of an entry select,
 * through the PAT MSR as this CPU has it programmed (its power-on value,
 * which gives the legacy PCD/PWT meaning, if it cannot be read).
 */
static int mspec_x86_memtype(pteval_t val, pteval_t pat_bit,
			     const char **name)
{
	unsigned int idx;
	u64 pat;
	u8 mt;

	idx = (val & _PAGE_PWT ? 1 : 0) | (val & _PAGE_PCD ? 2 : 0) |
	      (val & pat_bit ? 4 : 0);
	if (rdmsrl_safe(MSR_IA32_CR_PAT, &pat))
		pat = 0x0007040600070406ULL;
	mt = (pat >> (idx * 8)) & 7;
	*name = mspec_x86_pat_name[mt];
	switch (mt) {
	case 6:	/* WB */
	case 4:	/* WT */
	case 5:	/* WP */
		return 1;
	case 0:	/* UC */
	case 1:	/* WC */
	case 7:	/* UC- */
		return 0;
	default:
		return -1;
	}
}

static int mspec_x86_pte_memtype(pte_t pte, const char **name)
{
	return mspec_x86_memtype(pte_val(pte), _PAGE_PAT, name);
}

static int mspec_x86_alias_memtype(unsigned long pfn, const char **name)
{
	unsigned int level;
	pte_t *kpte;

	*name = "none";
	if (!pfn_valid(pfn) || PageHighMem(pfn_to_page(pfn)))
		return -1;
	kpte = lookup_address((unsigned long)pfn_to_kaddr(pfn), &level);
	if (!kpte || !pte_present(*kpte))
		return -1;
	return mspec_x86_memtype(pte_val(*kpte), level == PG_LEVEL_4K ?
				 _PAGE_PAT : _PAGE_PAT_LARGE, name);
}

const struct mspec_arch_ops mspec_arch = {
	.uncached_prot = MSPEC_PROT_NONCACHED,
	/* fetchop, cached, uncached */
	.describe = {
		"write-back pages, fetchop emulated with LOCK-prefixed atomics",
		"write-back pages",
		"PAT UC- user mapping, linear map set_memory_uc() while in use",
	},
	.uncached_prepare = mspec_x86_uncached_prepare,
	.uncached_release = mspec_x86_uncached_release,
	.pte_memtype = mspec_x86_pte_memtype,
	.alias_memtype = mspec_x86_alias_memtype,
};
