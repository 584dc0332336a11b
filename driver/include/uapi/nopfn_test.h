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
 * The nopfn_bench module offers two benchmark devices,
 * /dev/nopfn_bench_fault and /dev/nopfn_bench_eager, described at the end
 * of this file.
 */
#ifndef _UAPI_NOPFN_TEST_H
#define _UAPI_NOPFN_TEST_H

#include <linux/ioctl.h>
#include <linux/types.h>

/* Page indexes a file offers: mappings must lie below this many pages. */
#define NOPFN_TEST_MAX_PAGES		1024
/* Longest wait that NOPFN_TEST_SLEEP_* accept, in milliseconds. */
#define NOPFN_TEST_MAX_SLEEP_MS		2000
/* Most NOPFN_REFAULTs a NOPFN_TEST_SLEEP_REFAULT page gives. */
#define NOPFN_TEST_MAX_REFAULTS		16

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
 * @NOPFN_TEST_OOM: return NOPFN_OOM, every time (a failure that persists).
 * @NOPFN_TEST_RETURN: return @value of &struct nopfn_test_pages as it is
 *	(a reserved value, or NOPFN_RETRY without releasing mmap_lock).
 * @NOPFN_TEST_RELEASE_RETURN: misuse: release mmap_lock, then return the
 *	page's RAM PFN instead of NOPFN_RETRY; when the lock may not be
 *	released, return the PFN holding it.
 * @NOPFN_TEST_RELEASE_TWICE: misuse: call nopfn_release_mmap_lock() a
 *	second time after it released the lock, then return NOPFN_RETRY; when
 *	the lock may not be released, behave as @NOPFN_TEST_RAM.
 * @NOPFN_TEST_SLEEP_SPLIT: as @NOPFN_TEST_SLEEP_UNLOCKED, but the first,
 *	unlocked wait lasts only half of sleep_ms: the retried fault cannot
 *	release the lock again and waits the other half holding it.
 * @NOPFN_TEST_SLEEP_REFAULT: the first call waits sleep_ms (holding
 *	mmap_lock) and returns NOPFN_REFAULT, as a handler does that changed
 *	the page's state and wants the access repeated, and so do the next
 *	calls, @value of them in all (1 if zero, at most
 *	%NOPFN_TEST_MAX_REFAULTS); later calls behave as @NOPFN_TEST_RAM.
 * @NOPFN_TEST_GATE: look up the RAM PFN (after nopfn_read_begin() on the
 *	file's revoke count), then wait holding mmap_lock, at most sleep_ms,
 *	until %NOPFN_TEST_IOC_WAKE opens the gate, and return the PFN looked
 *	up before the wait.
 * @NOPFN_TEST_GATE_UNLOCKED: release mmap_lock, wait at the gate as
 *	@NOPFN_TEST_GATE (at most sleep_ms) and return NOPFN_RETRY; when the
 *	lock may not be released, behave as @NOPFN_TEST_RAM.
 * @NOPFN_TEST_NR_BEHAVIOURS: number of behaviours.
 *
 * Waits end early on a signal for a fault from user mode, and only on a
 * fatal signal for a fault from kernel mode (a uaccess or
 * fixup_user_fault()), as Documentation/mm/nopfn.rst asks.
 */
enum nopfn_test_behaviour {
	NOPFN_TEST_RAM,
	NOPFN_TEST_CARVE,
	NOPFN_TEST_SIGBUS,
	NOPFN_TEST_OOM_ONCE,
	NOPFN_TEST_SLEEP_LOCKED,
	NOPFN_TEST_SLEEP_UNLOCKED,
	NOPFN_TEST_OOM,
	NOPFN_TEST_RETURN,
	NOPFN_TEST_RELEASE_RETURN,
	NOPFN_TEST_RELEASE_TWICE,
	NOPFN_TEST_SLEEP_SPLIT,
	NOPFN_TEST_SLEEP_REFAULT,
	NOPFN_TEST_GATE,
	NOPFN_TEST_GATE_UNLOCKED,
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
 * @NOPFN_TEST_MAP_MIXED: misuse: a shared VM_MIXEDMAP mapping with
 *	->nopfn().
 * @NOPFN_TEST_MAP_FAULT: a shared VM_PFNMAP mapping whose ops have both
 *	->fault() and ->nopfn(): ->fault() (which maps the page's RAM with
 *	vmf_insert_pfn() and counts @fault_calls) must win.
 * @NOPFN_TEST_MAP_MKWRITE: as @NOPFN_TEST_MAP_PFNMAP, with a ->pfn_mkwrite()
 *	that counts @mkwrite_calls and lets the write go on.
 * @NOPFN_TEST_MAP_MKWRITE_MISUSE: as @NOPFN_TEST_MAP_MKWRITE, and the
 *	->pfn_mkwrite() calls nopfn_release_mmap_lock(), which must refuse;
 *	should it release the lock, the module takes it back and counts
 *	@misuse_released.
 * @NOPFN_TEST_MAP_NO_FILE: as @NOPFN_TEST_MAP_PFNMAP, but the VMA has no
 *	vm_file: ->mmap() moves the VMA's reference on the file into the
 *	module's state (each VMA derived from it takes its own), so the file
 *	and thereby the module stay as long as the VMA does.
 * @NOPFN_TEST_NR_MAP_MODES: number of modes.
 *
 * In @NOPFN_TEST_MAP_PFNMAP mode a private mapping of a file opened
 * read-only is accepted: it lacks VM_MAYWRITE and is not copy-on-write.
 */
enum nopfn_test_map_mode {
	NOPFN_TEST_MAP_PFNMAP,
	NOPFN_TEST_MAP_NO_PFNMAP,
	NOPFN_TEST_MAP_COW,
	NOPFN_TEST_MAP_MIXED,
	NOPFN_TEST_MAP_FAULT,
	NOPFN_TEST_MAP_MKWRITE,
	NOPFN_TEST_MAP_MKWRITE_MISUSE,
	NOPFN_TEST_MAP_NO_FILE,
	NOPFN_TEST_NR_MAP_MODES,
};

/**
 * struct nopfn_test_pages - behaviour of a range of page indexes
 * @first: first page index.
 * @count: number of pages, at least one; @first + @count must not exceed
 *	%NOPFN_TEST_MAX_PAGES.
 * @behaviour: an &enum nopfn_test_behaviour.
 * @sleep_ms: length of the wait of the NOPFN_TEST_SLEEP_* and NOPFN_TEST_GATE*
 *	behaviours, at most %NOPFN_TEST_MAX_SLEEP_MS; must be zero for the
 *	others.
 * @value: what NOPFN_TEST_RETURN returns, or how many NOPFN_REFAULTs
 *	NOPFN_TEST_SLEEP_REFAULT gives; must be zero for the others.
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
	__u64 value;
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
 * @fault_calls: ->fault() calls (NOPFN_TEST_MAP_FAULT).
 * @mkwrite_calls: ->pfn_mkwrite() calls (NOPFN_TEST_MAP_MKWRITE*).
 * @misuse_released: calls of nopfn_release_mmap_lock() from ->pfn_mkwrite()
 *	that released mmap_lock (the core must refuse them).
 * @twice_released: second calls of nopfn_release_mmap_lock() in a handler
 *	that returned true (NOPFN_TEST_RELEASE_TWICE).
 * @gate_waiting: handlers of all states waiting at a gate now.
 * @all_releases: files of the module released since it was loaded.
 *
 * The counters from @calls to @lock_kept, and @fault_calls to
 * @twice_released, are those that %NOPFN_TEST_IOC_RESET_STATS sets to zero.
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
	__u64 fault_calls;
	__u64 mkwrite_calls;
	__u64 misuse_released;
	__u64 twice_released;
	__u64 gate_waiting;
	__u64 all_releases;
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
/*
 * NOPFN_TEST_IOC_WAKE: end every wait of NOPFN_TEST_SLEEP_* pages now, and
 * open the gate of NOPFN_TEST_GATE* pages (until their behaviour is set
 * again).
 */
#define NOPFN_TEST_IOC_WAKE		_IO(NOPFN_TEST_IOC_MAGIC, 6)
/*
 * NOPFN_TEST_IOC_REVOKE: revoke the PFNs of a range of pages (@first and
 * @count of struct nopfn_test_pages; the rest must be zero): within a
 * write section of the file's revoke count (nopfn_read_begin()), the pages
 * become NOPFN_TEST_SIGBUS; then every PTE of them is zapped with
 * nopfn_revoke_range() (in every VMA of the file, a fork()ed child's
 * too). Gates stay as they are. Errors: EINVAL.
 */
#define NOPFN_TEST_IOC_REVOKE \
	_IOW(NOPFN_TEST_IOC_MAGIC, 7, struct nopfn_test_pages)
/*
 * NOPFN_TEST_IOC_FIXUP: make the PTE of an address of the caller the way
 * KVM and VFIO do for a VM_PFNMAP mapping: follow_pte(), and where there is
 * no PTE, fixup_user_fault() (a write fault if @flags has
 * NOPFN_TEST_Q_WRITE, the only flag it may have) and follow_pte() again,
 * starting over where fixup_user_fault() released mmap_lock; then fill in
 * struct nopfn_test_query as NOPFN_TEST_IOC_QUERY does. Errors: EINVAL,
 * EFAULT (no mapping of this file at @addr, or fixup_user_fault() failed
 * the fault: SIGBUS, a fatal signal), EINTR (a fatal signal), ENODATA
 * (fixup_user_fault() returned success but follow_pte() found no PTE: KVM
 * and VFIO would fail the page with EFAULT).
 */
#define NOPFN_TEST_IOC_FIXUP \
	_IOWR(NOPFN_TEST_IOC_MAGIC, 8, struct nopfn_test_query)
/*
 * The module parameter gate_waiting (/sys/module/nopfn_test/parameters/)
 * is @gate_waiting of struct nopfn_test_stats, readable without opening a
 * file (which would pin the module).
 */

/*
 * Benchmark devices of the nopfn_bench module (driver/nopfn_bench.c), the
 * counterparts of mspec's /dev/mspec_cached (->nopfn()) for
 * tests/guest/fault_bench.c:
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
