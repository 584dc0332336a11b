// SPDX-License-Identifier: GPL-2.0
/*
 * mspec back end for MIPS (32 and 64-bit, R2 cores such as Malta's).
 *
 * uncached: the user mapping gets pgprot_noncached(), cache coherency
 * attribute 2 (_CACHE_UNCACHED).  The kernel's own alias of the page is
 * KSEG0 (32-bit) or a cached XKPHYS/CKSEG0 address (64-bit): unmapped
 * segments whose cacheability no page table changes.  An uncached access
 * does not look into the caches, so before user space gets the page the
 * lines that zeroing it left in the caches must be written back and
 * invalidated.  A module can do that for the primary data cache
 * (flush_data_cache_page(), hit-writeback-invalidate of the page's kernel
 * address), but not for a secondary or tertiary cache: the routines that
 * cover them (_dma_cache_wback_inv(), bcops) are not exported.  So the
 * back end hands out uncached pages only when the CPU has no secondary
 * and no tertiary cache (cpu_data[0].scache/tcache not present); with one,
 * mspec_uncached refuses mmap() with -ENODEV, as on an architecture
 * without memory types, rather than map a page whose memory may be stale
 * under a dirty L2 line.  The kernel does not read the page through its
 * cached alias while it is mapped, and the free path overwrites the whole
 * page through it before anybody else reads it.
 *
 * cached and fetchop: cacheable (the kernel's default CCA).  LL/SC are
 * only defined on cacheable coherent memory, so the emulated fetchop page
 * stays cacheable.  Where the primary data cache is virtually indexed
 * with aliases (cpu_has_dc_aliases: a cache way larger than a page, e.g.
 * a 32 KiB 4-way 24K), the core's flush_dcache_page() writes back the
 * kernel colour's lines of such a page before it is mapped (on MIPS that
 * is flush_data_cache_page() of the kernel's address); the unmap path
 * flushes the user's colour (flush_cache_range()/flush_cache_mm() on a
 * VMA, with aliases) before the free path writes the page again.
 */

#define pr_fmt(fmt) KBUILD_MODNAME ": " fmt

#include <linux/kernel.h>
#include <linux/mm.h>
#include <linux/printk.h>
#include <asm/cacheflush.h>
#include <asm/cpu-info.h>
#include <asm/pgtable.h>

#include "../mspec_arch.h"

static bool mspec_mips_outer_cache;

static int mspec_mips_init(void)
{
	/*
	 * cpu_probe() marks the secondary cache not present until a probe
	 * finds one; nothing initialises the tertiary cache's flags, whose
	 * probe (sc-rm7k.c) sets its line size when it finds one.
	 */
	mspec_mips_outer_cache =
		!(cpu_data[0].scache.flags & MIPS_CACHE_NOT_PRESENT) ||
		cpu_data[0].tcache.linesz;
	if (mspec_mips_outer_cache)
		pr_info("secondary or tertiary cache present: mspec_uncached refuses mmap() (no exported way to flush it)\n");
	return 0;
}

static bool mspec_mips_uncached_ok(void)
{
	return !mspec_mips_outer_cache;
}

static const char *mspec_mips_describe_uncached(void)
{
	if (mspec_mips_outer_cache)
		return "refused (ENODEV): an L2/L3 cache that a module cannot flush";
	return "uncached (CCA 2) user mapping, cached KSEG0/XKPHYS alias flushed from L1";
}

/* Zeroed through KSEG0/XKPHYS: write back and invalidate it from L1. */
static int mspec_mips_uncached_prepare(unsigned long maddr)
{
	flush_data_cache_page(maddr);
	return 0;
}

/* MIPS32/64 release 2 cache coherency attributes, by value. */
static const char * const mspec_mips_cca_name[8] = {
	[0] = "WT", [1] = "WT-WA", [2] = "UC", [3] = "WB",
	[4] = "CWBE", [5] = "CWB", [6] = "CCA6", [7] = "UCA",
};

static int mspec_mips_pte_memtype(pte_t pte, const char **name)
{
	unsigned int cca = (pte_val(pte) & _CACHE_MASK) >> _CACHE_SHIFT;

	*name = mspec_mips_cca_name[cca & 7];
	switch (cca) {
	case 2:
	case 7:
		return 0;
	case 6:
		return -1;
	default:
		return 1;
	}
}

/* KSEG0/XKPHYS: the cached unmapped segment, never changed here: "WB". */
const struct mspec_arch_ops mspec_arch = {
	.init = mspec_mips_init,
	.uncached_prot = MSPEC_PROT_NONCACHED,
	.uncached_ok = mspec_mips_uncached_ok,
	.describe_uncached = mspec_mips_describe_uncached,
	/* fetchop, cached (uncached: describe_uncached) */
	.describe = {
		"cacheable pages, fetchop emulated with LL/SC",
		"cacheable pages",
	},
	.uncached_prepare = mspec_mips_uncached_prepare,
	.pte_memtype = mspec_mips_pte_memtype,
	.alias_name = "WB",
};
