/* SPDX-License-Identifier: GPL-2.0 */
/*
 * mspec: what the core (mspec_core.c) and its debugfs interface
 * (mspec_debugfs.c) share.
 */
#ifndef _MSPEC_H
#define _MSPEC_H

#include <linux/atomic.h>
#include <linux/mm_types.h>
#include <linux/types.h>

#include "mspec_arch.h"

/* Counters of one device type, shown in debugfs mspec/<type>/stats. */
struct mspec_stats {
	atomic_long_t pages_in_use;	/* allocated and not yet freed */
	atomic_long_t pages_allocated;	/* ever allocated */
	atomic_long_t pages_freed;	/* ever given back */
	atomic_long_t pages_leaked;	/* kept back: the alias was not restored */
	atomic_long_t faults;		/* ->nopfn() calls */
	atomic_long_t alloc_failures;	/* real and injected */
	atomic_long_t alloc_races;	/* pages freed after losing a race */
	atomic_long_t mappings;		/* live bookkeeping (one per mmap()) */
};

extern struct mspec_stats mspec_stats[MSPEC_NR_TYPES];
extern const char * const mspec_type_name[MSPEC_NR_TYPES];
extern const char * const mspec_dev_name[MSPEC_NR_TYPES];

/* Fault injection, set through debugfs. */
extern atomic_t mspec_fail_next_alloc;
extern bool mspec_fail_sigbus;

/* The type of an mspec VMA, or -1 if @vma is not one of ours. */
int mspec_vma_type(struct vm_area_struct *vma);

void mspec_debugfs_init(void);
void mspec_debugfs_exit(void);

#endif /* _MSPEC_H */
