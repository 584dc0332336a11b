/* SPDX-License-Identifier: GPL-2.0 WITH Linux-syscall-note */
/*
 * nopfn_test: ioctl interface of /dev/nopfn_test, a test device whose
 * mmap() is served by the ->nopfn() fault operation.
 *
 * Every open file has its own state: the behaviour of each page of the
 * mappings made through it, the RAM pages the module allocated for it and
 * a set of counters. Page i of a mapping is page index (vm_pgoff + i) of
 * that state. The state lives until the file and the last mapping of it
 * are gone.
 *
 * The module also offers two benchmark devices, /dev/nopfn_bench_fault and
 * /dev/nopfn_bench_eager, described at the end of this file.
 */
#ifndef _UAPI_NOPFN_TEST_H
#define _UAPI_NOPFN_TEST_H

#include <linux/ioctl.h>
#include <linux/types.h>

/* Page indexes a file offers: mappings must lie below this many pages. */
#define NOPFN_TEST_MAX_PAGES		1024
/* Longest wait that NOPFN_TEST_SLEEP_* accept, in milliseconds. */
#define NOPFN_TEST_MAX_SLEEP_MS		2000

/**
 * enum nopfn_test_behaviour - what ->nopfn() does for a page
 * @NOPFN_TEST_RAM: return the PFN of a zeroed page of RAM that the module
 *	allocates for the page index on first use and frees with the state
 *	(the default for every page).
 * @NOPFN_TEST_CARVE: return carve_phys / PAGE_SIZE + page index: memory with
 *	no struct page (the module parameters carve_phys and carve_size).
 * @NOPFN_TEST_SIGBUS: return NOPFN_SIGBUS.
 * @NOPFN_TEST_OOM_ONCE: return NOPFN_OOM on the first call, then behave as
 *	@NOPFN_TEST_RAM.
 * @NOPFN_TEST_SLEEP_LOCKED: the first call starts a wait of sleep_ms; each
 *	call waits, interruptibly and holding mmap_lock, until it ends and
 *	then behaves as @NOPFN_TEST_RAM; a signal makes the call return
 *	NOPFN_REFAULT.
 * @NOPFN_TEST_SLEEP_UNLOCKED: as @NOPFN_TEST_SLEEP_LOCKED, but the call
 *	releases mmap_lock with nopfn_release_mmap_lock(), waits and returns
 *	NOPFN_RETRY; when the lock may not be released it waits holding it.
 * @NOPFN_TEST_NR_BEHAVIOURS: number of behaviours.
 */
enum nopfn_test_behaviour {
	NOPFN_TEST_RAM,
	NOPFN_TEST_CARVE,
	NOPFN_TEST_SIGBUS,
	NOPFN_TEST_OOM_ONCE,
	NOPFN_TEST_SLEEP_LOCKED,
	NOPFN_TEST_SLEEP_UNLOCKED,
	NOPFN_TEST_NR_BEHAVIOURS,
};

/**
 * enum nopfn_test_map_mode - what the next mmap() of the file creates
 * @NOPFN_TEST_MAP_PFNMAP: a shared VM_PFNMAP mapping, the correct use of
 *	->nopfn() (the default). Private mappings are refused with EINVAL.
 * @NOPFN_TEST_MAP_NO_PFNMAP: misuse: a shared mapping with ->nopfn() whose
 *	VMA lacks VM_PFNMAP. Faults must be refused by the core.
 * @NOPFN_TEST_MAP_COW: misuse: a private (copy-on-write) VM_PFNMAP mapping
 *	with ->nopfn(). Requires MAP_PRIVATE. Faults must be refused by the
 *	core.
 * @NOPFN_TEST_NR_MAP_MODES: number of modes.
 */
enum nopfn_test_map_mode {
	NOPFN_TEST_MAP_PFNMAP,
	NOPFN_TEST_MAP_NO_PFNMAP,
	NOPFN_TEST_MAP_COW,
	NOPFN_TEST_NR_MAP_MODES,
};

/**
 * struct nopfn_test_pages - behaviour of a range of page indexes
 * @first: first page index.
 * @count: number of pages, at least one; @first + @count must not exceed
 *	%NOPFN_TEST_MAX_PAGES.
 * @behaviour: an &enum nopfn_test_behaviour.
 * @sleep_ms: length of the wait of the NOPFN_TEST_SLEEP_* behaviours, at most
 *	%NOPFN_TEST_MAX_SLEEP_MS; must be zero for the others.
 *
 * Setting a behaviour also forgets the page's past: a NOPFN_TEST_OOM_ONCE
 * page fails once more, a NOPFN_TEST_SLEEP_* wait starts again at the next
 * fault, and waits in progress on these pages end. It neither zaps PTEs
 * already present nor frees RAM pages.
 */
struct nopfn_test_pages {
	__u64 first;
	__u64 count;
	__u32 behaviour;
	__u32 sleep_ms;
};

/**
 * struct nopfn_test_stats - counters of a file's state, and of the module
 * @calls: ->nopfn() calls.
 * @ret_pfn: calls that returned a PFN.
 * @ret_sigbus: calls that returned NOPFN_SIGBUS.
 * @ret_oom: calls that returned NOPFN_OOM.
 * @ret_refault: calls that returned NOPFN_REFAULT.
 * @ret_retry: calls that returned NOPFN_RETRY.
 * @lock_kept: calls in which nopfn_release_mmap_lock() refused to release.
 * @ram_pages: RAM pages the state holds.
 * @all_ram_pages: RAM pages held by all states of the module.
 * @all_states: states alive in the module (open files or their mappings).
 * @carve_pfn: first PFN of the carve-out, 0 if none was configured.
 * @carve_pages: size of the carve-out in pages.
 *
 * The counters from @calls to @lock_kept are those that
 * %NOPFN_TEST_IOC_RESET_STATS sets to zero.
 */
struct nopfn_test_stats {
	__u64 calls;
	__u64 ret_pfn;
	__u64 ret_sigbus;
	__u64 ret_oom;
	__u64 ret_refault;
	__u64 ret_retry;
	__u64 lock_kept;
	__u64 ram_pages;
	__u64 all_ram_pages;
	__u64 all_states;
	__u64 carve_pfn;
	__u64 carve_pages;
};

/* Flags of struct nopfn_test_query. */
#define NOPFN_TEST_Q_PRESENT	0x1U		/* a PTE maps @addr */
#define NOPFN_TEST_Q_WRITE	0x2U		/* that PTE is writable */
#define NOPFN_TEST_Q_PFN_VALID	0x4U		/* pfn_valid(@pfn) */

/**
 * struct nopfn_test_query - the PTE that maps an address of the caller
 * @addr: in: a user address in a mapping of this file.
 * @pfn: out: the PFN of the PTE mapping @addr, if NOPFN_TEST_Q_PRESENT.
 * @pgoff: out: the page index @addr lies in.
 * @ram_pfn: out: the PFN of the RAM page held for @pgoff, 0 if none.
 * @flags: out: NOPFN_TEST_Q_* flags.
 * @pad: zero.
 */
struct nopfn_test_query {
	__u64 addr;
	__u64 pfn;
	__u64 pgoff;
	__u64 ram_pfn;
	__u32 flags;
	__u32 pad;
};

#define NOPFN_TEST_IOC_MAGIC	0xB2

/*
 * NOPFN_TEST_IOC_SET_PAGES: set the behaviour of a range of pages.
 * Errors: EINVAL (bad range, behaviour or sleep), ENODEV (NOPFN_TEST_CARVE
 * without a carve-out), ERANGE (NOPFN_TEST_CARVE past the carve-out's end),
 * EBUSY (NOPFN_TEST_CARVE while part of the carve-out has a struct page,
 * i.e. is memory the kernel manages).
 */
#define NOPFN_TEST_IOC_SET_PAGES \
	_IOW(NOPFN_TEST_IOC_MAGIC, 1, struct nopfn_test_pages)
/* NOPFN_TEST_IOC_SET_MAP_MODE: &enum nopfn_test_map_mode of later mmap()s. */
#define NOPFN_TEST_IOC_SET_MAP_MODE	_IOW(NOPFN_TEST_IOC_MAGIC, 2, __u32)
/* NOPFN_TEST_IOC_GET_STATS: read the counters. */
#define NOPFN_TEST_IOC_GET_STATS \
	_IOR(NOPFN_TEST_IOC_MAGIC, 3, struct nopfn_test_stats)
/* NOPFN_TEST_IOC_RESET_STATS: zero the call counters. */
#define NOPFN_TEST_IOC_RESET_STATS	_IO(NOPFN_TEST_IOC_MAGIC, 4)
/*
 * NOPFN_TEST_IOC_QUERY: look up the PTE of an address of the caller.
 * Errors: EFAULT (no mapping of this file at @addr).
 */
#define NOPFN_TEST_IOC_QUERY \
	_IOWR(NOPFN_TEST_IOC_MAGIC, 5, struct nopfn_test_query)
/* NOPFN_TEST_IOC_WAKE: end every wait of NOPFN_TEST_SLEEP_* pages now. */
#define NOPFN_TEST_IOC_WAKE		_IO(NOPFN_TEST_IOC_MAGIC, 6)

/*
 * Benchmark devices of the same module, the counterparts of mspec's
 * /dev/mspec_cached (->nopfn()) for tests/guest/fault_bench.c:
 *
 * /dev/nopfn_bench_fault: the same work per page as mspec_cached, through
 *	->fault() and vmf_insert_pfn() instead of ->nopfn(): on the first
 *	touch of a page index a zeroed page (GFP_USER | __GFP_ACCOUNT) is
 *	allocated, published in the mapping's bookkeeping under its spinlock
 *	and mapped cached, VM_PFNMAP, with vm_page_prot.
 * /dev/nopfn_bench_eager: every page of the mapping is allocated the same
 *	way and mapped with remap_pfn_range() in mmap(), before any touch.
 *
 * mmap() of either: MAP_SHARED, PROT_WRITE, offset 0, at most
 * NOPFN_BENCH_MAX_BYTES. Errors: EINVAL (a private mapping or a non-zero
 * offset), EPERM (no PROT_WRITE), EFBIG (longer than NOPFN_BENCH_MAX_BYTES),
 * ENOMEM. The pages of a mapping are shared by every VMA derived from it
 * (fork(), partial munmap() or mprotect()) and freed, cleared, when the
 * last of them goes, as mspec does.
 */
#define NOPFN_BENCH_FAULT_DEV	"/dev/nopfn_bench_fault"
#define NOPFN_BENCH_EAGER_DEV	"/dev/nopfn_bench_eager"
/* Longest mapping the benchmark devices accept, in bytes. */
#define NOPFN_BENCH_MAX_BYTES	(16U << 20)

/**
 * struct nopfn_bench_stats - counters of both benchmark devices together
 * @mappings: mappings alive (one per mmap(), whatever derives from it).
 * @pages_in_use: pages allocated and not freed yet.
 * @pages_allocated: pages ever allocated.
 * @pages_freed: pages ever freed.
 * @faults: ->fault() calls of /dev/nopfn_bench_fault mappings.
 * @alloc_failures: page allocations that failed.
 * @alloc_races: pages freed at once after a racing fault published one for
 *	the same page index first.
 */
struct nopfn_bench_stats {
	__u64 mappings;
	__u64 pages_in_use;
	__u64 pages_allocated;
	__u64 pages_freed;
	__u64 faults;
	__u64 alloc_failures;
	__u64 alloc_races;
};

/* NOPFN_BENCH_IOC_GET_STATS: read the counters (on either device). */
#define NOPFN_BENCH_IOC_GET_STATS \
	_IOR(NOPFN_TEST_IOC_MAGIC, 16, struct nopfn_bench_stats)

#endif /* _UAPI_NOPFN_TEST_H */
