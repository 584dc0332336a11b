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
 * emulated in user space with the CPU's atomics (the core flushes the
 * kernel's colour of such pages before they are mapped: mspec_arch.h).
 */

#include <linux/gfp.h>
#include <linux/kernel.h>
#include <linux/mm.h>
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
	return page ? (unsigned long)page_address(page) : 0;
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
