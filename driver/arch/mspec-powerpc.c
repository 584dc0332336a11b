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

#include <linux/kernel.h>
#include <linux/mm.h>
#include <asm/cacheflush.h>
#include <asm/pgtable.h>

#include "../mspec_arch.h"

/* Zeroed through the linear map: dcbf over the page. */
static int mspec_powerpc_uncached_prepare(unsigned long maddr)
{
	flush_dcache_range(maddr, maddr + PAGE_SIZE);
	return 0;
}

static int mspec_powerpc_pte_memtype(pte_t pte, const char **name)
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

/* The linear map is never changed by this back end: "cacheable". */
const struct mspec_arch_ops mspec_arch = {
	.uncached_prot = MSPEC_PROT_NONCACHED,
	/* fetchop, cached, uncached */
	.describe = {
		"cacheable pages, fetchop emulated with larx/stcx.",
		"cacheable pages",
		"I=1 G=1 user mapping, cacheable linear alias flushed with dcbf",
	},
	.uncached_prepare = mspec_powerpc_uncached_prepare,
	.pte_memtype = mspec_powerpc_pte_memtype,
	.alias_name = "cacheable",
};
