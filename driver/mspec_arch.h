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
 * A back end defines one const struct mspec_arch_ops, named mspec_arch,
 * with only what its architecture does differently: every hook left NULL
 * takes the default of mspec_arch.c.  The core calls the mspec_arch_*()
 * functions below, which apply the back end's hook or the default.
 *
 * Contract of those functions (and of the hooks that replace them):
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
 *    Default: a page of the page allocator (MSPEC_GFP) on @nid, its linear
 *    address the maddr; for MSPEC_UNCACHED ->uncached_prepare() then makes
 *    it fit (an errno frees the page and fails the fault), and where the
 *    back end has no uncached mapping at all (MSPEC_PROT_REFUSED) it is
 *    -ENODEV, with a warning: mmap() refuses that device first.
 *  - mspec_arch_free_page() gets a page that no PTE maps any more (the core
 *    calls it from ->close() of the last VMA, after the PTEs were zapped and
 *    the TLB flushed, or for a page that lost an allocation race and was
 *    never mapped).  It zeroes the page, restores the kernel alias and gives
 *    the page back.  It returns false if the page could not be given back
 *    safely and was deliberately leaked.
 *    Default: for MSPEC_UNCACHED ->uncached_release() first, then
 *    clear_page() through the linear map (so that every line of the page
 *    is written there: a stale line fetched through a cacheable alias
 *    while user space had the page non-cacheable is overwritten, not read)
 *    and free_page(); a page whose ->uncached_release() failed is cleared
 *    but kept back.
 *  - mspec_arch_pfn() is the PFN that ->nopfn() returns for a page.  A
 *    back end with memory-side atomics (SGI SN2's SHub AMOs) would return
 *    the PFN of the AMO alias of the page for MSPEC_FETCHOP here (TO_AMO()
 *    in the old ia64 sn2 code), with an uncached pgprot for that type
 *    (a hook to add); the rest of the driver would not change.
 *    Default: __pa(maddr) >> PAGE_SHIFT.
 *  - mspec_arch_pgprot() is the vm_page_prot of a user mapping: the one
 *    ->uncached_prot names for MSPEC_UNCACHED, @prot unchanged otherwise.
 *  - mspec_arch_noncached() says whether user mappings of @type really are
 *    non-cacheable here: for MSPEC_UNCACHED, unless ->uncached_prot is
 *    MSPEC_PROT_REFUSED or ->uncached_ok() says no.  Where it is false
 *    the core refuses mmap() of mspec_uncached with -ENODEV.
 *  - mspec_arch_describe() is one line of text: what @type means here
 *    (->describe[], or ->describe_uncached() for MSPEC_UNCACHED).
 *  - mspec_arch_pte_memtype() decodes the memory type of a user PTE;
 *    mspec_arch_alias_memtype() the one of the kernel's own mapping of a
 *    PFN, where the back end can tell.  Both return 1 for a cacheable type,
 *    0 for a non-cacheable one, -1 when they cannot tell.
 *    Default: "unknown", -1; for the alias, where ->alias_name is set (a
 *    linear map that the back end never changes), that name and 1 for a
 *    valid PFN, "none" and -1 for another.
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

/* How a back end makes the user mapping of MSPEC_UNCACHED non-cacheable. */
enum mspec_prot {
	MSPEC_PROT_REFUSED,	/* it cannot: mmap() fails with -ENODEV */
	MSPEC_PROT_NONCACHED,	/* pgprot_noncached() */
	MSPEC_PROT_WRITECOMBINE,	/* pgprot_writecombine() */
};

/**
 * struct mspec_arch_ops - what a back end does differently
 * @init: at module load, before any device exists; an errno fails the
 *	load.  NULL: nothing to do.
 * @exit: at unload, after every device and page is gone.  NULL: nothing.
 * @uncached_prot: the user mapping of MSPEC_UNCACHED.  Left out, it is
 *	MSPEC_PROT_REFUSED: the device refuses mmap().
 * @uncached_ok: whether MSPEC_UNCACHED can be mapped non-cacheable on
 *	this machine (what @init found).  NULL: yes, unless @uncached_prot
 *	is MSPEC_PROT_REFUSED.
 * @describe_uncached: the line for MSPEC_UNCACHED where it depends on
 *	what @init found.  NULL: @describe's.
 * @describe: per type, in the order of enum mspec_type (fetchop, cached,
 *	uncached): what it means on this architecture.
 * @uncached_prepare: the default allocator's last step for a zeroed page
 *	of MSPEC_UNCACHED at linear address @maddr (cache maintenance, or
 *	the linear map's memory type); 0, or the errno of a failure that a
 *	retry would not fix.  NULL: nothing to do.
 * @uncached_release: the default free's first step for such a page: undo
 *	@uncached_prepare; nonzero if that failed and the page must be kept.
 *	NULL: nothing to undo.
 * @alloc: replaces the default mspec_arch_alloc_page().
 * @free: replaces the default mspec_arch_free_page().
 * @pfn: replaces the default mspec_arch_pfn().
 * @pte_memtype: replaces the default mspec_arch_pte_memtype().
 * @alias_memtype: replaces the default mspec_arch_alias_memtype().
 * @alias_name: for the default mspec_arch_alias_memtype(): the memory
 *	type of a linear map that this back end never changes.
 *
 * The back end's name, in debugfs and the load message, is the name of
 * its file: Kbuild defines it (mspec_arch_name).
 */
struct mspec_arch_ops {
	int (*init)(void);
	void (*exit)(void);
	enum mspec_prot uncached_prot;
	bool (*uncached_ok)(void);
	const char *(*describe_uncached)(void);
	const char *describe[MSPEC_NR_TYPES];
	int (*uncached_prepare)(unsigned long maddr);
	int (*uncached_release)(unsigned long maddr);
	unsigned long (*alloc)(enum mspec_type type, int nid);
	bool (*free)(enum mspec_type type, unsigned long maddr);
	unsigned long (*pfn)(enum mspec_type type, unsigned long maddr);
	int (*pte_memtype)(pte_t pte, const char **name);
	int (*alias_memtype)(unsigned long pfn, const char **name);
	const char *alias_name;
};

/* The back end: arch/mspec-$(SRCARCH).c or arch/mspec-generic.c. */
extern const struct mspec_arch_ops mspec_arch;
extern const char * const mspec_arch_name;

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

int mspec_arch_pte_memtype(pte_t pte, const char **name);
int mspec_arch_alias_memtype(unsigned long pfn, const char **name);

#endif /* _MSPEC_ARCH_H */
