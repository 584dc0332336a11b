/* SPDX-License-Identifier: GPL-2.0 */
/*
 * mspec: the per-architecture back end.
 *
 * The core (mspec_core.c) keeps the bookkeeping of a mapping: one "maddr"
 * per page index, 0 while the page has not been touched.  A maddr is the
 * kernel virtual address through which the back end zeroes the page (the
 * linear map almost everywhere, the uncached region 6 on ia64).  Everything
 * that depends on how an architecture maps "uncached" memory is here, one
 * file per architecture in arch/, selected in Kbuild by $(SRCARCH), with
 * arch/mspec-generic.c for the others.
 *
 * Contract:
 *  - mspec_arch_alloc_page() returns a zeroed page ready to be mapped into
 *    user space with mspec_arch_pgprot() (the kernel alias, if any, already
 *    in a state that does not conflict with that mapping; for the cached
 *    types the core then calls flush_dcache_page(), after its own fetchop
 *    fill, for caches with aliases); 0 when there is
 *    no memory now (the fault is NOPFN_OOM); or a negative errno
 *    (IS_ERR_VALUE()) when the page cannot be had or made fit to map in a
 *    way that retrying would not change (set_memory_uc() failed, the ia64
 *    uncached pool is exhausted): the fault is NOPFN_SIGBUS.  It may
 *    sleep and is never called with a spinlock held.
 *  - mspec_arch_free_page() gets a page that no PTE maps any more (the core
 *    calls it from ->close() of the last VMA, after the PTEs were zapped and
 *    the TLB flushed, or for a page that lost an allocation race and was
 *    never mapped).  It zeroes the page, restores the kernel alias and gives
 *    the page back.  It returns false if the page could not be given back
 *    safely and was deliberately leaked.
 *  - mspec_arch_pfn() is the PFN that ->nopfn() returns for a page.  A
 *    back end with memory-side atomics (SGI SN2's SHub AMOs) would return
 *    the PFN of the AMO alias of the page for MSPEC_FETCHOP here (TO_AMO()
 *    in the old ia64 sn2 code), with mspec_arch_pgprot() making that mapping
 *    uncached; the rest of the driver would not change.
 *  - mspec_arch_pte_memtype() decodes the memory type of a user PTE;
 *    mspec_arch_alias_memtype() the one of the kernel's own mapping of a
 *    PFN, where the back end can tell.  Both return 1 for a cacheable type,
 *    0 for a non-cacheable one, -1 when they cannot tell.
 */
#ifndef _MSPEC_ARCH_H
#define _MSPEC_ARCH_H

#include <linux/gfp.h>
#include <linux/mm_types.h>
#include <linux/pgtable.h>
#include <linux/types.h>

enum mspec_type {
	MSPEC_FETCHOP,
	MSPEC_CACHED,
	MSPEC_UNCACHED,
	MSPEC_NR_TYPES
};

/*
 * Pages are allocated on behalf of the faulting task: honour its cpuset
 * (GFP_USER) and charge its memory cgroup (__GFP_ACCOUNT).  They are
 * pinned for the life of the mapping, so they are not movable.
 */
#define MSPEC_GFP	(GFP_USER | __GFP_ZERO | __GFP_ACCOUNT)

int mspec_arch_init(void);
void mspec_arch_exit(void);

unsigned long mspec_arch_alloc_page(enum mspec_type type, int nid);
bool mspec_arch_free_page(enum mspec_type type, unsigned long maddr);
unsigned long mspec_arch_pfn(enum mspec_type type, unsigned long maddr);
pgprot_t mspec_arch_pgprot(enum mspec_type type, pgprot_t prot);

/* Whether user mappings of @type really are non-cacheable here. */
bool mspec_arch_noncached(enum mspec_type type);
/* One line of text: what @type means on this architecture. */
const char *mspec_arch_describe(enum mspec_type type);
extern const char * const mspec_arch_name;

int mspec_arch_pte_memtype(pte_t pte, const char **name);
int mspec_arch_alias_memtype(unsigned long pfn, const char **name);

#endif /* _MSPEC_ARCH_H */
