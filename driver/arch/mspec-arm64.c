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
#include <linux/kernel.h>
#include <linux/mm.h>
#include <asm/barrier.h>
#include <asm/cpufeature.h>
#include <asm/memory.h>
#include <asm/pgtable.h>
#include <asm/sysreg.h>

#include "../mspec_arch.h"

/* CTR_EL0 bits 19:16: log2 of the smallest data cache line, in words. */
#define MSPEC_CTR_DMINLINE	GENMASK_ULL(19, 16)

/*
 * Zeroed through the linear map: DC CIVAC over the page, clean and
 * invalidate to the PoC.
 */
static int mspec_arm64_uncached_prepare(unsigned long maddr)
{
	u64 ctr = read_sanitised_ftr_reg(SYS_CTR_EL0);
	unsigned long line = 4UL << FIELD_GET(MSPEC_CTR_DMINLINE, ctr);
	unsigned long p = maddr & ~(line - 1);

	for (; p < maddr + PAGE_SIZE; p += line)
		asm volatile("dc civac, %0" : : "r" (p) : "memory");
	dsb(sy);
	return 0;
}

static int mspec_arm64_pte_memtype(pte_t pte, const char **name)
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

/* The linear map is never changed by this back end: "Normal". */
const struct mspec_arch_ops mspec_arch = {
	.uncached_prot = MSPEC_PROT_WRITECOMBINE,
	/* fetchop, cached, uncached */
	.describe = {
		"Normal write-back pages, fetchop emulated with exclusives/LSE atomics",
		"Normal write-back pages",
		"Normal-NC user mapping, Normal-WB linear alias cleaned to PoC",
	},
	.uncached_prepare = mspec_arm64_uncached_prepare,
	.pte_memtype = mspec_arm64_pte_memtype,
	.alias_name = "Normal",
};
