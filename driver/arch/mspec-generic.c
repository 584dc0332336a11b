// SPDX-License-Identifier: GPL-2.0
/*
 * mspec back end for architectures without their own file in arch/.
 *
 * uncached: refused.  Mapping a page with pgprot_noncached() while the
 * kernel's cacheable alias of it stays as it is, with no cache
 * maintenance, is only safe where mixed aliases are harmless, and nothing
 * here can know that (nor whether pgprot_noncached() means anything on
 * the architecture).  So mspec_arch_noncached() is false and the core
 * fails mmap() of mspec_uncached with -ENODEV.  An architecture gets
 * uncached pages from its own arch/mspec-$(SRCARCH).c implementing
 * mspec_arch.h, with the cache maintenance it needs.
 *
 * cached and fetchop: ordinary pages from the page allocator; fetchop is
 * emulated in user space with the CPU's atomics.  The page is zeroed
 * through the kernel's address; on a CPU whose data cache is virtually
 * indexed with aliases (PA-RISC, SuperH, some SPARC and MIPS) those
 * zeroes sit in lines of the kernel's colour, which a user mapping of
 * another colour does not see, so flush_dcache_page() writes them back
 * before the page is mapped (a no-op where the caches are physically
 * indexed).  The unmap path flushes the user's colour before the free
 * path writes the page again.
 */

#include <linux/gfp.h>
#include <linux/kernel.h>
#include <linux/mm.h>
#include <asm/cacheflush.h>
#include <asm/pgtable.h>

#include "../mspec_arch.h"

const char * const mspec_arch_name = "generic";

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

	/* mmap() of the uncached device is refused: never reached for it */
	if (WARN_ON_ONCE(type == MSPEC_UNCACHED))
		return -ENODEV;
	page = alloc_pages_node(nid, MSPEC_GFP, 0);
	if (!page)
		return 0;
	flush_dcache_page(page);
	return (unsigned long)page_address(page);
}

bool mspec_arch_free_page(enum mspec_type type, unsigned long maddr)
{
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
	return prot;
}

bool mspec_arch_noncached(enum mspec_type type)
{
	return false;
}

const char *mspec_arch_describe(enum mspec_type type)
{
	switch (type) {
	case MSPEC_UNCACHED:
		return "refused (ENODEV): no back end for this architecture";
	case MSPEC_CACHED:
		return "ordinary pages";
	case MSPEC_FETCHOP:
		return "ordinary pages, fetchop emulated with CPU atomics";
	default:
		return "unknown type";
	}
}

int mspec_arch_pte_memtype(pte_t pte, const char **name)
{
	*name = "unknown";
	return -1;
}

int mspec_arch_alias_memtype(unsigned long pfn, const char **name)
{
	*name = "unknown";
	return -1;
}
