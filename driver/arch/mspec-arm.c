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

#include <linux/kernel.h>
#include <linux/mm.h>
#include <asm/cacheflush.h>
#include <asm/memory.h>
#include <asm/outercache.h>
#include <asm/pgtable.h>

#include "../mspec_arch.h"

/* Zeroed through the lowmem alias: clean and invalidate it, inner and outer. */
static int mspec_arm_uncached_prepare(unsigned long maddr)
{
	phys_addr_t pa = virt_to_phys((void *)maddr);

	__cpuc_flush_dcache_area((void *)maddr, PAGE_SIZE);
	outer_flush_range(pa, pa + PAGE_SIZE);
	return 0;
}

/*
 * The Linux memory types of a PTE (L_PTE_MT_*), tried in this order: a
 * table rather than a switch because with LPAE some of the names share a
 * value.
 */
static const struct {
	pteval_t mt;
	const char *name;
	int cacheable;
} mspec_arm_memtypes[] = {
	{ L_PTE_MT_WRITEBACK, "WB", 1 },
	{ L_PTE_MT_WRITEALLOC, "WBWA", 1 },
	{ L_PTE_MT_WRITETHROUGH, "WT", 1 },
	{ L_PTE_MT_BUFFERABLE, "Normal-NC", 0 },
	{ L_PTE_MT_UNCACHED, "SO", 0 },
	{ L_PTE_MT_DEV_SHARED, "Device", 0 },
};

static int mspec_arm_pte_memtype(pte_t pte, const char **name)
{
	pteval_t mt = pte_val(pte) & L_PTE_MT_MASK;
	unsigned int i;

	for (i = 0; i < ARRAY_SIZE(mspec_arm_memtypes); i++) {
		if (mt == mspec_arm_memtypes[i].mt) {
			*name = mspec_arm_memtypes[i].name;
			return mspec_arm_memtypes[i].cacheable;
		}
	}
	*name = "unknown";
	return -1;
}

/* The lowmem map is never changed by this back end: "WB". */
const struct mspec_arch_ops mspec_arch = {
	.uncached_prot = MSPEC_PROT_WRITECOMBINE,
	/* fetchop, cached, uncached */
	.describe = {
		"write-back pages, fetchop emulated with exclusives or cmpxchg helpers",
		"write-back pages",
		"Normal-NC user mapping, cacheable lowmem alias flushed from the caches",
	},
	.uncached_prepare = mspec_arm_uncached_prepare,
	.pte_memtype = mspec_arm_pte_memtype,
	.alias_name = "WB",
};
