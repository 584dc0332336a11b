// SPDX-License-Identifier: GPL-2.0
/*
 * mspec back end for architectures without their own file in arch/.
 *
 * uncached: refused.  Mapping a page with pgprot_noncached() while the
 * kernel's cacheable alias of it stays as it is, with no cache
 * maintenance, is only safe where mixed aliases are harmless, and nothing
 * here can know that (nor whether pgprot_noncached() means anything on
 * the architecture).  So uncached_prot stays MSPEC_PROT_REFUSED,
 * mspec_arch_noncached() is false and the core fails mmap() of
 * mspec_uncached with -ENODEV.  An architecture gets uncached pages from
 * its own arch/mspec-$(SRCARCH).c, with the cache maintenance it needs.
 *
 * cached and fetchop: ordinary pages from the page allocator; fetchop is
 * emulated in user space with the CPU's atomics (the core flushes the
 * kernel's colour of such pages before they are mapped: mspec_arch.h).
 * All of it is mspec_arch.c's defaults; the PTE memory types are not
 * decoded.
 */

#include "../mspec_arch.h"

const struct mspec_arch_ops mspec_arch = {
	/* fetchop, cached, uncached */
	.describe = {
		"ordinary pages, fetchop emulated with CPU atomics",
		"ordinary pages",
		"refused (ENODEV): no back end for this architecture",
	},
};
