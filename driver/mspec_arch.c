// SPDX-License-Identifier: GPL-2.0
/*
 * mspec: the back end's operations as the core calls them, with the
 * defaults that a back end's NULL hooks stand for (mspec_arch.h).  They
 * are what most architectures do: pages of the page allocator, mapped
 * through the linear map, cleared and freed when the last mapping goes.
 */

#include <linux/bug.h>
#include <linux/errno.h>
#include <linux/gfp.h>
#include <linux/mm.h>

#include "mspec_arch.h"

/* The back end's file name, from Kbuild: "x86", "arm64", "generic"... */
const char * const mspec_arch_name = MSPEC_ARCH_NAME;

int mspec_arch_init(void)
{
	return mspec_arch.init ? mspec_arch.init() : 0;
}

void mspec_arch_exit(void)
{
	if (mspec_arch.exit)
		mspec_arch.exit();
}

unsigned long mspec_arch_alloc_page(enum mspec_type type, int nid)
{
	bool uncached = type == MSPEC_UNCACHED;
	struct page *page;
	unsigned long maddr;
	int ret;

	if (mspec_arch.alloc)
		return mspec_arch.alloc(type, nid);

	/* mmap() of the uncached device is refused: never reached for it */
	if (WARN_ON_ONCE(uncached &&
			 mspec_arch.uncached_prot == MSPEC_PROT_REFUSED))
		return (unsigned long)-ENODEV;
	page = alloc_pages_node(nid, MSPEC_GFP, 0);
	if (!page)
		return 0;
	maddr = (unsigned long)page_address(page);
	if (uncached && mspec_arch.uncached_prepare) {
		ret = mspec_arch.uncached_prepare(maddr);
		if (ret) {
			__free_page(page);
			return (unsigned long)ret;
		}
	}
	return maddr;
}

bool mspec_arch_free_page(enum mspec_type type, unsigned long maddr)
{
	bool kept = false;

	if (mspec_arch.free)
		return mspec_arch.free(type, maddr);

	/*
	 * A page whose kernel alias cannot be restored must not go back to
	 * the page allocator: it is cleared and kept, the core counts it as
	 * leaked.
	 */
	if (type == MSPEC_UNCACHED && mspec_arch.uncached_release)
		kept = mspec_arch.uncached_release(maddr);
	/*
	 * Every line of the page is written through the kernel's mapping, so
	 * a stale line fetched through a cacheable alias while user space had
	 * the page non-cacheable is overwritten, not read.
	 */
	clear_page((void *)maddr);
	if (kept)
		return false;
	free_page(maddr);
	return true;
}

unsigned long mspec_arch_pfn(enum mspec_type type, unsigned long maddr)
{
	if (mspec_arch.pfn)
		return mspec_arch.pfn(type, maddr);
	return __pa(maddr) >> PAGE_SHIFT;
}

pgprot_t mspec_arch_pgprot(enum mspec_type type, pgprot_t prot)
{
	if (type != MSPEC_UNCACHED)
		return prot;
	switch (mspec_arch.uncached_prot) {
	case MSPEC_PROT_NONCACHED:
		return pgprot_noncached(prot);
	case MSPEC_PROT_WRITECOMBINE:
		return pgprot_writecombine(prot);
	default:
		return prot;
	}
}

bool mspec_arch_noncached(enum mspec_type type)
{
	if (type != MSPEC_UNCACHED ||
	    mspec_arch.uncached_prot == MSPEC_PROT_REFUSED)
		return false;
	return !mspec_arch.uncached_ok || mspec_arch.uncached_ok();
}

const char *mspec_arch_describe(enum mspec_type type)
{
	if (type == MSPEC_UNCACHED && mspec_arch.describe_uncached)
		return mspec_arch.describe_uncached();
	if (type >= MSPEC_NR_TYPES || !mspec_arch.describe[type])
		return "unknown type";
	return mspec_arch.describe[type];
}

int mspec_arch_pte_memtype(pte_t pte, const char **name)
{
	if (mspec_arch.pte_memtype)
		return mspec_arch.pte_memtype(pte, name);
	*name = "unknown";
	return -1;
}

int mspec_arch_alias_memtype(unsigned long pfn, const char **name)
{
	if (mspec_arch.alias_memtype)
		return mspec_arch.alias_memtype(pfn, name);
	if (!mspec_arch.alias_name) {
		*name = "unknown";
		return -1;
	}
	*name = pfn_valid(pfn) ? mspec_arch.alias_name : "none";
	return pfn_valid(pfn) ? 1 : -1;
}
