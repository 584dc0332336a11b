// SPDX-License-Identifier: GPL-2.0
/*
 * mspec back end for architectures without their own file in arch/.
 *
 * uncached: pgprot_noncached() on the user mapping, whatever that means
 * on the architecture (on some, nothing), and the kernel's linear alias
 * left as it is.  That is only safe where mixing a cacheable and a
 * non-cacheable mapping of a page is harmless.  An architecture where it
 * is not, or that can tell what its PTE bits mean, gets its own
 * arch/mspec-$(SRCARCH).c implementing mspec_arch.h.
 *
 * cached and fetchop: ordinary pages from the page allocator; fetchop is
 * emulated in user space with the CPU's atomics.
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
	if (type == MSPEC_UNCACHED)
		return pgprot_noncached(prot);
	return prot;
}

bool mspec_arch_noncached(enum mspec_type type)
{
	return type == MSPEC_UNCACHED &&
	       pgprot_val(pgprot_noncached(PAGE_SHARED)) !=
	       pgprot_val(PAGE_SHARED);
}

const char *mspec_arch_describe(enum mspec_type type)
{
	switch (type) {
	case MSPEC_UNCACHED:
		return "pgprot_noncached() user mapping, kernel alias unchanged (generic back end)";
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
