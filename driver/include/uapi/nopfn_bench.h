/* SPDX-License-Identifier: GPL-2.0 WITH Linux-syscall-note */
/*
 * nopfn_bench: the benchmark devices of driver/nopfn_bench.c, for
 * tests/guest/fault_bench.c.
 */
#ifndef _UAPI_NOPFN_BENCH_H
#define _UAPI_NOPFN_BENCH_H

#include <linux/ioctl.h>
#include <linux/types.h>

/* The ioctl magic of lib/test_nopfn_uapi.h: its numbers are below 16. */
#define NOPFN_BENCH_IOC_MAGIC	0xB2

/*
 * Benchmark devices of the nopfn_bench module (driver/nopfn_bench.c), for
 * tests/guest/fault_bench.c; one driver, so that they differ only in how
 * a page gets mapped:
 *
 * /dev/nopfn_bench_nopfn: on the first touch of a page index a zeroed page
 *	(GFP_USER | __GFP_ACCOUNT) is allocated and published in the
 *	mapping's bookkeeping under its spinlock (mspec_cached's work), and
 *	its PFN returned from ->nopfn(): the core maps it cached, VM_PFNMAP,
 *	with vm_page_prot.
 * /dev/nopfn_bench_fault: the same handler as ->fault(), which maps the
 *	page itself with vmf_insert_pfn().
 * /dev/nopfn_bench_eager: every page of the mapping is allocated the same
 *	way and mapped with remap_pfn_range() in mmap(), before any touch.
 *
 * mmap() of any: MAP_SHARED, PROT_WRITE, offset 0, at most
 * NOPFN_BENCH_MAX_BYTES. Errors: EINVAL (a private mapping or a non-zero
 * offset), EPERM (no PROT_WRITE), EFBIG (longer than NOPFN_BENCH_MAX_BYTES),
 * ENOMEM. The pages of a mapping are shared by every VMA derived from it
 * (fork(), partial munmap() or mprotect()) and freed, cleared, when the
 * last of them goes, as mspec does.
 */
#define NOPFN_BENCH_NOPFN_DEV	"/dev/nopfn_bench_nopfn"
#define NOPFN_BENCH_FAULT_DEV	"/dev/nopfn_bench_fault"
#define NOPFN_BENCH_EAGER_DEV	"/dev/nopfn_bench_eager"
/* Longest mapping the benchmark devices accept, in bytes. */
#define NOPFN_BENCH_MAX_BYTES	(16U << 20)

/**
 * struct nopfn_bench_stats - counters of the benchmark devices together
 * @mappings: mappings alive (one per mmap(), whatever derives from it).
 * @pages_in_use: pages allocated and not freed yet.
 * @pages_allocated: pages ever allocated.
 * @pages_freed: pages ever freed.
 * @faults: handler calls (->nopfn() and ->fault()) of the lazy devices.
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
	_IOR(NOPFN_BENCH_IOC_MAGIC, 16, struct nopfn_bench_stats)

#endif /* _UAPI_NOPFN_BENCH_H */
