// SPDX-License-Identifier: GPL-2.0
/*
 * mspec back end for RISC-V.
 *
 * uncached: the base ISA has no page-table memory types: the physical
 * memory attributes (PMAs) of RAM make it cacheable.  The Svpbmt extension
 * adds a PBMT field to the PTE (bits 62:61): PMA (0), NC (1: non-cacheable,
 * idempotent, weakly ordered main memory) and IO (2: non-cacheable,
 * non-idempotent, strongly ordered I/O).  In 6.1 pgprot_noncached() picks
 * IO and pgprot_writecombine() NC; mspec hands out memory, so the user
 * mapping is NC, the RISC-V counterpart of ia64 UC memory and of arm64
 * Normal-NC.  (IO is for device registers: no speculation, and misaligned
 * accesses and AMOs follow the PMAs of I/O regions.)  The kernel picks the
 * PBMT bits at run time through alternatives: with CONFIG_RISCV_ISA_SVPBMT=y
 * on a hart that has Svpbmt (QEMU: -cpu rv64,svpbmt=on).  Without Svpbmt
 * (or with a kernel built without it) pgprot_writecombine() changes
 * nothing: a mapping would then be silently cacheable, so the core refuses
 * mmap() of mspec_uncached with -ENODEV (mspec_arch_noncached() is
 * false), which the driver reports at load time and in debugfs (info:
 * "noncached 0").
 *
 * The linear alias stays PMA (cacheable): set_direct_map_*() are not
 * exported.  Svpbmt, like Arm, leaves mismatched attributes to software:
 * the page is zeroed through the alias and, where the kernel does cache
 * block management (Zicbom, CONFIG_RISCV_ISA_ZICBOM), flushed with
 * cbo.flush before user space gets it.  QEMU does not model caches, so
 * there only the PTE bits show the difference.
 *
 * cached and fetchop: PMA (cacheable).  LR/SC need memory with the
 * reservability PMA and AMOs the atomicity PMAs; non-cacheable PBMT types
 * are not guaranteed to keep them, so the emulated fetchop page is
 * cacheable.
 */

#define pr_fmt(fmt) KBUILD_MODNAME ": " fmt

#include <linux/kernel.h>
#include <linux/mm.h>
#include <linux/printk.h>
#include <asm/barrier.h>
#include <asm/cacheflush.h>
#include <asm/hwcap.h>
#include <asm/pgtable.h>

#include "../kcompat.h"
#include "../mspec_arch.h"

static bool mspec_riscv_nc;	/* pgprot_writecombine() gives PBMT NC */
static unsigned int mspec_riscv_cbom;	/* cache block size, 0: no CMO */

static int mspec_riscv_init(void)
{
	mspec_riscv_nc = pgprot_val(pgprot_writecombine(PAGE_SHARED)) !=
			 pgprot_val(PAGE_SHARED);
	if (!mspec_riscv_nc)
		pr_info("no Svpbmt: mspec_uncached refuses mmap() (its mappings would be cacheable)\n");

	if (IS_ENABLED(CONFIG_RISCV_ISA_ZICBOM) &&
	    riscv_isa_extension_available(NULL, ZICBOM))
		mspec_riscv_cbom = riscv_cbom_block_size;
	return 0;
}

/*
 * Zeroed through the linear map: cbo.flush (clean and invalidate) over
 * the page, where the kernel does cache block management.
 */
static int mspec_riscv_uncached_prepare(unsigned long maddr)
{
	unsigned long line = mspec_riscv_cbom;
	unsigned long p;

	if (!mspec_riscv_nc || !line)
		return 0;
	/* The zeroing stores are done before the blocks are flushed... */
	mb();
	for (p = maddr & ~(line - 1); p < maddr + PAGE_SIZE; p += line)
		asm volatile(".insn i 0x0f, 2, x0, %0, 2" : : "r" (p) : "memory");
	/* ...and the flushes before the page is published to user space. */
	mb();
	return 0;
}

static bool mspec_riscv_uncached_ok(void)
{
	return mspec_riscv_nc;
}

static const char *mspec_riscv_describe_uncached(void)
{
	if (!mspec_riscv_nc)
		return "refused (ENODEV): no Svpbmt, a mapping would be PMA (cacheable)";
	if (mspec_riscv_cbom)
		return "Svpbmt NC user mapping, PMA linear alias flushed with cbo.flush";
	return "Svpbmt NC user mapping, PMA linear alias (no Zicbom CMO here)";
}

static int mspec_riscv_pte_memtype(pte_t pte, const char **name)
{
	unsigned long mask = _PAGE_MTMASK;
	unsigned long mt = pte_val(pte) & mask;

	if (!mask) {
		*name = "PMA(no-Svpbmt)";
		return 1;
	}
	if (mt == _PAGE_IO) {
		*name = "IO";
		return 0;
	}
	if (mt == _PAGE_NOCACHE) {
		*name = "NC";
		return 0;
	}
	*name = "PMA";
	return 1;
}

/* The linear map is never changed by this back end: "PMA". */
const struct mspec_arch_ops mspec_arch = {
	.init = mspec_riscv_init,
	.uncached_prot = MSPEC_PROT_WRITECOMBINE,
	.uncached_ok = mspec_riscv_uncached_ok,
	.describe_uncached = mspec_riscv_describe_uncached,
	/* fetchop, cached (uncached: describe_uncached) */
	.describe = {
		"PMA (cacheable) pages, fetchop emulated with AMOs/LR-SC",
		"PMA (cacheable) pages",
	},
	.uncached_prepare = mspec_riscv_uncached_prepare,
	.pte_memtype = mspec_riscv_pte_memtype,
	.alias_name = "PMA",
};
