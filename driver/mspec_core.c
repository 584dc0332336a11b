// SPDX-License-Identifier: GPL-2.0
/*
 * Copyright (C) 2001-2006 Silicon Graphics, Inc.  All rights reserved.
 *
 * Special memory (mspec) driver, on the ->nopfn() fault operation.
 *
 * Three misc devices hand out memory to user space through mmap():
 *
 *  mspec_uncached  pages that user space accesses non-cached.  How that is
 *                  done, and what happens to the kernel's own (cacheable)
 *                  mapping of the page meanwhile, is up to the architecture
 *                  back end (mspec_arch.h, arch/mspec-*.c).
 *  mspec_cached    pages that user space accesses cached (on SN2: memory
 *                  that other partitions use uncached).
 *  sgi_fetchop     pages of 64-byte fetchop variables.  On SGI SN2 the SHub
 *                  memory controller executed atomic memory operations
 *                  (AMOs) selected by the address within the variable.  No
 *                  machine that 6.1 supports has that, so the page is
 *                  ordinary cacheable memory on which user space runs the
 *                  same operations with CPU atomics: see
 *                  include/uapi/mspec_fetchop.h for the layout.  A real AMO
 *                  back end plugs in through mspec_arch_pfn(): it returns
 *                  the PFN of the AMO alias of the page for MSPEC_FETCHOP
 *                  and mspec_arch_pgprot() makes that mapping uncached.
 *
 * Pages are allocated on first touch, one per page index, by ->nopfn(), and
 * mapped as raw PFNs (VM_PFNMAP: no struct page refcount, no rmap) with the
 * vm_page_prot chosen at mmap() time.  The bookkeeping of one mmap() is
 * shared, refcounted, by every VMA that fork() and split_vma() (partial
 * munmap(), mprotect() of a part, mremap() moves) derive from it; the last
 * one to close zeroes and frees every page.  Pages are indexed by
 * vmf->pgoff: mmap() only accepts offset 0, and a split keeps vm_pgoff in
 * step with vm_start, so vmf->pgoff is the index in the original mapping
 * in every derived VMA.
 *
 * Locking: ->nopfn() runs under mmap_lock for read and may sleep; the
 * arch allocator is called with no lock of ours held; mspec_data->lock
 * only orders the publication of a page in the bookkeeping.  ->open() and
 * ->close() run under mmap_lock for write of their mm, but VMAs of other
 * mms (fork) share the data, hence the refcount.
 */

#define pr_fmt(fmt) KBUILD_MODNAME ": " fmt

#include <linux/atomic.h>
#include <linux/err.h>
#include <linux/errno.h>
#include <linux/fs.h>
#include <linux/init.h>
#include <linux/kernel.h>
#include <linux/limits.h>
#include <linux/miscdevice.h>
#include <linux/mm.h>
#include <linux/module.h>
#include <linux/overflow.h>
#include <linux/refcount.h>
#include <linux/sched.h>
#include <linux/slab.h>
#include <linux/spinlock.h>
#include <linux/topology.h>
#include <asm/cacheflush.h>

#include <mspec_fetchop.h>

#include "kcompat.h"
#include "mspec.h"

#define REVISION	"5.0"

/*
 * One of these is allocated by mmap() and pointed to by vm_private_data of
 * every VMA derived from that mapping.
 */
struct mspec_data {
	refcount_t refcnt;	/* VMAs sharing the data */
	spinlock_t lock;	/* serialises the publication of pages */
	enum mspec_type type;
	unsigned long pages;	/* size of the original mapping, in pages */
	unsigned long populated;	/* maddr[] entries set, under lock */
	unsigned long maddr[];	/* per page index: back end address or 0 */
};

/* The bookkeeping must fit what kvzalloc() accepts. */
#define MSPEC_DATA_MAX	((size_t)INT_MAX)

struct mspec_stats mspec_stats[MSPEC_NR_TYPES];

const char * const mspec_type_name[MSPEC_NR_TYPES] = {
	[MSPEC_FETCHOP] = "fetchop",
	[MSPEC_CACHED] = "cached",
	[MSPEC_UNCACHED] = "uncached",
};

const char * const mspec_dev_name[MSPEC_NR_TYPES] = {
	[MSPEC_FETCHOP] = "sgi_fetchop",
	[MSPEC_CACHED] = "mspec_cached",
	[MSPEC_UNCACHED] = "mspec_uncached",
};

atomic_t mspec_fail_next_alloc = ATOMIC_INIT(0);
bool mspec_fail_sigbus;

static const struct vm_operations_struct mspec_vm_ops;

int mspec_vma_type(struct vm_area_struct *vma)
{
	struct mspec_data *vdata;

	if (vma->vm_ops != &mspec_vm_ops)
		return -1;
	vdata = vma->vm_private_data;
	return vdata->type;
}

static void mspec_free_page(enum mspec_type type, unsigned long maddr)
{
	struct mspec_stats *st = &mspec_stats[type];

	atomic_long_dec(&st->pages_in_use);
	if (mspec_arch_free_page(type, maddr)) {
		atomic_long_inc(&st->pages_freed);
	} else {
		atomic_long_inc(&st->pages_leaked);
		pr_warn_ratelimited("%s: page %#lx kept back, its kernel mapping could not be restored\n",
				    mspec_dev_name[type], maddr);
	}
}

/*
 * Called when a VMA is derived from an existing one (fork(), split_vma(),
 * mremap()): the new VMA shares the bookkeeping.
 */
static void mspec_open(struct vm_area_struct *vma)
{
	struct mspec_data *vdata = vma->vm_private_data;

	refcount_inc(&vdata->refcnt);
}

/*
 * Called when a VMA goes, after its PTEs were zapped and the TLB flushed.
 * The last VMA frees every page of the original mapping: a page may be
 * mapped by any VMA sharing the data until then.  The walk stops at the
 * last page populated, and yields after each page freed (clearing a page
 * is the costly part) or every MSPEC_CLOSE_BATCH empty indexes, so that a
 * large, sparsely touched mapping is cheap to close.
 */
#define MSPEC_CLOSE_BATCH	1024

static void mspec_close(struct vm_area_struct *vma)
{
	struct mspec_data *vdata = vma->vm_private_data;
	unsigned long index, left;

	if (!refcount_dec_and_test(&vdata->refcnt))
		return;

	/* No fault can run any more: no VMA maps the data. */
	left = vdata->populated;
	for (index = 0; left && index < vdata->pages; index++) {
		unsigned long maddr = vdata->maddr[index];

		if (maddr) {
			vdata->maddr[index] = 0;
			mspec_free_page(vdata->type, maddr);
			left--;
			cond_resched();
		} else if (index % MSPEC_CLOSE_BATCH == MSPEC_CLOSE_BATCH - 1) {
			cond_resched();
		}
	}
	WARN_ON_ONCE(left);
	atomic_long_dec(&mspec_stats[vdata->type].mappings);
	kvfree(vdata);
}

static bool mspec_inject_failure(void)
{
	return atomic_dec_if_positive(&mspec_fail_next_alloc) >= 0;
}

/*
 * A fetchop page emulates the SN2 operations with the CPU's atomics on the
 * value word of each variable (include/uapi/mspec_fetchop.h): the other
 * words, where SN2 selected an operation by the load's offset, read
 * FETCHOP_NO_AMO, so that an SN2-style load cannot pass for a result.
 * The page is not mapped yet: plain stores do.
 */
static void mspec_fetchop_fill(u64 *word)
{
	unsigned int i;

	for (i = 0; i < PAGE_SIZE / sizeof(u64); i++)
		if (i % (FETCHOP_VAR_SIZE / sizeof(u64)))
			word[i] = FETCHOP_NO_AMO;
}

/*
 * First touch of a page index: allocate the page, or find the one that a
 * racing fault (another thread, or another process after fork()) put
 * there first, and hand its PFN to the core, which maps it with
 * vm_page_prot.  No memory now is NOPFN_OOM, as the original driver did
 * (the core makes it SIGBUS unless the task is in a memcg OOM or dying);
 * a failure that retrying cannot change (the back end's errno) is
 * NOPFN_SIGBUS.
 */
static unsigned long mspec_nopfn(struct vm_fault *vmf)
{
	struct mspec_data *vdata = vmf->vma->vm_private_data;
	struct mspec_stats *st = &mspec_stats[vdata->type];
	pgoff_t index = vmf->pgoff;
	unsigned long maddr, old;

	atomic_long_inc(&st->faults);

	/* VM_DONTEXPAND and the offset check keep this from happening. */
	if (WARN_ON_ONCE(index >= vdata->pages))
		return NOPFN_SIGBUS;

	/* Pairs with smp_store_release() below: the page is zeroed. */
	maddr = smp_load_acquire(&vdata->maddr[index]);
	if (maddr)
		return mspec_arch_pfn(vdata->type, maddr);

	/* An injected failure takes the path of the back end's. */
	if (mspec_inject_failure())
		maddr = READ_ONCE(mspec_fail_sigbus) ? (unsigned long)-EIO : 0;
	else
		maddr = mspec_arch_alloc_page(vdata->type, numa_node_id());
	if (!maddr || IS_ERR_VALUE(maddr)) {
		atomic_long_inc(&st->alloc_failures);
		return maddr ? NOPFN_SIGBUS : NOPFN_OOM;
	}
	atomic_long_inc(&st->pages_allocated);
	atomic_long_inc(&st->pages_in_use);
	if (vdata->type == MSPEC_FETCHOP)
		mspec_fetchop_fill((u64 *)maddr);
	/*
	 * Zeroed (and filled) through the kernel's mapping: on a virtually
	 * indexed data cache with aliases those stores sit in lines of the
	 * kernel's colour, which the user's cacheable mapping of another
	 * colour does not see; flush_dcache_page() writes them back (a flag
	 * update or nothing where caches do not alias).  An uncached page is
	 * the back end's to make consistent.
	 */
	if (vdata->type != MSPEC_UNCACHED)
		flush_dcache_page(virt_to_page((void *)maddr));

	spin_lock(&vdata->lock);
	old = vdata->maddr[index];
	if (!old) {
		/* Pairs with smp_load_acquire() above. */
		smp_store_release(&vdata->maddr[index], maddr);
		vdata->populated++;
	}
	spin_unlock(&vdata->lock);

	if (old) {
		/* Lost the race: this page was never mapped. */
		atomic_long_inc(&st->alloc_races);
		mspec_free_page(vdata->type, maddr);
		maddr = old;
	}

	return mspec_arch_pfn(vdata->type, maddr);
}

static const struct vm_operations_struct mspec_vm_ops = {
	.open = mspec_open,
	.close = mspec_close,
	.nopfn = mspec_nopfn,
};

/*
 * Set up the bookkeeping of a new mapping.  The pages come on first touch.
 * Only shared, writable mappings at offset 0 make sense: the bookkeeping
 * is indexed from the start of the device, and a private copy-on-write
 * mapping of PFNs without struct page cannot work.
 */
static int mspec_mmap(struct file *file, struct vm_area_struct *vma,
		      enum mspec_type type)
{
	struct mspec_data *vdata;
	unsigned long pages;
	size_t size;

	/*
	 * Where the back end cannot make the user mapping non-cacheable (no
	 * memory types in the page tables: s390, riscv without Svpbmt; a
	 * cache it cannot flush; no back end at all) the uncached device
	 * refuses to map, rather than hand out cacheable pages as uncached.
	 */
	if (type == MSPEC_UNCACHED && !mspec_arch_noncached(type))
		return -ENODEV;

	if (vma->vm_pgoff != 0)
		return -EINVAL;

	if ((vma->vm_flags & VM_SHARED) == 0)
		return -EINVAL;

	if ((vma->vm_flags & VM_WRITE) == 0)
		return -EPERM;

	pages = vma_pages(vma);
	size = struct_size(vdata, maddr, pages);	/* SIZE_MAX on overflow */
	if (size > MSPEC_DATA_MAX)
		return -ENOMEM;

	/*
	 * A large mapping has a large bookkeeping: charge it to the caller,
	 * and let an unreasonable one fail instead of calling the OOM killer.
	 */
	vdata = kvzalloc(size, GFP_KERNEL_ACCOUNT | __GFP_RETRY_MAYFAIL |
			 __GFP_NOWARN);
	if (!vdata)
		return -ENOMEM;

	refcount_set(&vdata->refcnt, 1);
	spin_lock_init(&vdata->lock);
	vdata->type = type;
	vdata->pages = pages;
	atomic_long_inc(&mspec_stats[type].mappings);

	vma->vm_private_data = vdata;
	vm_flags_set(vma, VM_IO | VM_PFNMAP | VM_DONTEXPAND | VM_DONTDUMP);
	vma->vm_page_prot = mspec_arch_pgprot(type, vma->vm_page_prot);
	vma->vm_ops = &mspec_vm_ops;

	return 0;
}

static int fetchop_mmap(struct file *file, struct vm_area_struct *vma)
{
	return mspec_mmap(file, vma, MSPEC_FETCHOP);
}

static int cached_mmap(struct file *file, struct vm_area_struct *vma)
{
	return mspec_mmap(file, vma, MSPEC_CACHED);
}

static int uncached_mmap(struct file *file, struct vm_area_struct *vma)
{
	return mspec_mmap(file, vma, MSPEC_UNCACHED);
}

static const struct file_operations mspec_fops[MSPEC_NR_TYPES] = {
	[MSPEC_FETCHOP] = {
		.owner = THIS_MODULE,
		.mmap = fetchop_mmap,
		.llseek = noop_llseek,
	},
	[MSPEC_CACHED] = {
		.owner = THIS_MODULE,
		.mmap = cached_mmap,
		.llseek = noop_llseek,
	},
	[MSPEC_UNCACHED] = {
		.owner = THIS_MODULE,
		.mmap = uncached_mmap,
		.llseek = noop_llseek,
	},
};

static struct miscdevice mspec_miscdev[MSPEC_NR_TYPES];

static void mspec_deregister(unsigned int n)
{
	while (n--)
		misc_deregister(&mspec_miscdev[n]);
}

static int __init mspec_init(void)
{
	unsigned int i;
	int ret;

	ret = mspec_arch_init();
	if (ret)
		return ret;

	mspec_debugfs_init();

	for (i = 0; i < MSPEC_NR_TYPES; i++) {
		mspec_miscdev[i].minor = MISC_DYNAMIC_MINOR;
		mspec_miscdev[i].name = mspec_dev_name[i];
		mspec_miscdev[i].fops = &mspec_fops[i];
		ret = misc_register(&mspec_miscdev[i]);
		if (ret) {
			pr_err("failed to register device %s: %d\n",
			       mspec_dev_name[i], ret);
			mspec_deregister(i);
			mspec_debugfs_exit();
			mspec_arch_exit();
			return ret;
		}
	}

	pr_info("%s initialized devices: %s %s %s (%s back end)\n", REVISION,
		mspec_dev_name[MSPEC_FETCHOP], mspec_dev_name[MSPEC_CACHED],
		mspec_dev_name[MSPEC_UNCACHED], mspec_arch_name);
	for (i = 0; i < MSPEC_NR_TYPES; i++)
		pr_info("%s: %s\n", mspec_dev_name[i], mspec_arch_describe(i));

	return 0;
}

static void __exit mspec_exit(void)
{
	unsigned int i;

	/* Every mapping holds the module through its file: all are gone. */
	mspec_deregister(MSPEC_NR_TYPES);
	mspec_debugfs_exit();
	for (i = 0; i < MSPEC_NR_TYPES; i++)
		WARN_ON(atomic_long_read(&mspec_stats[i].pages_in_use) ||
			atomic_long_read(&mspec_stats[i].mappings));
	mspec_arch_exit();
}

module_init(mspec_init);
module_exit(mspec_exit);

MODULE_AUTHOR("Silicon Graphics, Inc. <linux-altix@sgi.com>");
MODULE_DESCRIPTION("Driver for SGI SN special memory operations, on ->nopfn()");
MODULE_LICENSE("GPL");
