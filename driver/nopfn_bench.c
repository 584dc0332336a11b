// SPDX-License-Identifier: GPL-2.0
/*
 * nopfn_bench: three benchmark devices for tests/guest/fault_bench.c, one
 * driver behind all three, so that they differ only in how a page gets
 * mapped: /dev/nopfn_bench_nopfn and /dev/nopfn_bench_fault run the same
 * handler (allocate a zeroed page on first touch, publish it under a
 * spinlock; mspec_cached's work), the first as ->nopfn(), which returns the
 * PFN for the core to map, the second as ->fault() with vmf_insert_pfn();
 * /dev/nopfn_bench_eager allocates every page the same way in ->mmap() and
 * maps it there with remap_pfn_range(). Like mspec, a mapping's pages are
 * shared, refcounted, by every VMA derived from it and cleared and freed
 * when the last one closes (after its PTEs were zapped).
 *
 * The interface (device names, the length limit, the counters' ioctl) is
 * in include/uapi/nopfn_bench.h.
 */

#include <linux/atomic.h>
#include <linux/err.h>
#include <linux/fs.h>
#include <linux/gfp.h>
#include <linux/kernel.h>
#include <linux/miscdevice.h>
#include <linux/mm.h>
#include <linux/module.h>
#include <linux/overflow.h>
#include <linux/refcount.h>
#include <linux/sched.h>
#include <linux/slab.h>
#include <linux/spinlock.h>
#include <linux/topology.h>
#include <linux/uaccess.h>
#include <asm/cacheflush.h>

#include <nopfn_bench.h>

#include "kcompat.h"

/* As mspec's MSPEC_GFP: for the faulting task, charged, zeroed. */
#define NOPFN_BENCH_GFP	(GFP_USER | __GFP_ZERO | __GFP_ACCOUNT)

/*
 * The bookkeeping of one mmap() of a benchmark device, shared by every VMA
 * derived from it, as mspec's struct mspec_data: page i of the original
 * mapping is maddr[i], indexed by vmf->pgoff (mmap() accepts offset 0 only,
 * and a split keeps vm_pgoff in step with vm_start).
 */
struct nopfn_bench_map {
	refcount_t ref;		/* VMAs sharing the map */
	spinlock_t lock;	/* serialises the publication of pages */
	unsigned long pages;	/* size of the original mapping, in pages */
	unsigned long populated;	/* pages published, under @lock */
	unsigned long maddr[];	/* per page index: linear address or 0 */
};

struct nopfn_bench_counters {
	atomic_long_t mappings;
	atomic_long_t pages_in_use;
	atomic_long_t pages_allocated;
	atomic_long_t pages_freed;
	atomic_long_t faults;
	atomic_long_t alloc_failures;
	atomic_long_t alloc_races;
};

static struct nopfn_bench_counters nopfn_bench_cnt;

/* A zeroed page, as mspec_arch_alloc_page() for MSPEC_CACHED, or 0. */
static unsigned long nopfn_bench_alloc_page(void)
{
	struct page *page;

	page = alloc_pages_node(numa_node_id(), NOPFN_BENCH_GFP, 0);
	if (!page) {
		atomic_long_inc(&nopfn_bench_cnt.alloc_failures);
		return 0;
	}
	atomic_long_inc(&nopfn_bench_cnt.pages_allocated);
	atomic_long_inc(&nopfn_bench_cnt.pages_in_use);
	/* mspec's core does the same for its cached types */
	flush_dcache_page(page);
	return (unsigned long)page_address(page);
}

/* As mspec_arch_free_page() for MSPEC_CACHED: clear, then free. */
static void nopfn_bench_free_page(unsigned long maddr)
{
	clear_page((void *)maddr);
	free_page(maddr);
	atomic_long_dec(&nopfn_bench_cnt.pages_in_use);
	atomic_long_inc(&nopfn_bench_cnt.pages_freed);
}

/*
 * The last VMA frees the pages, walking the indexes as mspec_close() does:
 * up to the last page populated, yielding after each page freed or every
 * NOPFN_BENCH_CLOSE_BATCH empty indexes (so that closing a large, sparsely
 * touched mapping costs what it costs mspec).
 */
#define NOPFN_BENCH_CLOSE_BATCH	1024

static void nopfn_bench_map_put(struct nopfn_bench_map *map)
{
	unsigned long i, left;

	if (!refcount_dec_and_test(&map->ref))
		return;

	left = map->populated;
	for (i = 0; left && i < map->pages; i++) {
		if (map->maddr[i]) {
			nopfn_bench_free_page(map->maddr[i]);
			left--;
			cond_resched();
		} else if (i % NOPFN_BENCH_CLOSE_BATCH ==
			   NOPFN_BENCH_CLOSE_BATCH - 1) {
			cond_resched();
		}
	}
	WARN_ON_ONCE(left);
	atomic_long_dec(&nopfn_bench_cnt.mappings);
	kvfree(map);
}

static void nopfn_bench_vm_open(struct vm_area_struct *vma)
{
	struct nopfn_bench_map *map = vma->vm_private_data;

	refcount_inc(&map->ref);
}

/* After the PTEs of @vma were zapped: the last VMA frees the pages. */
static void nopfn_bench_vm_close(struct vm_area_struct *vma)
{
	nopfn_bench_map_put(vma->vm_private_data);
}

/*
 * The handler of both lazy devices, mspec_nopfn() step for step (less its
 * failure injection, one atomic read that never fires here): the PFN of
 * the page at @vmf->pgoff, allocated on its first touch; 0 if no page
 * could be allocated.
 */
static unsigned long nopfn_bench_pfn(struct vm_fault *vmf)
{
	struct nopfn_bench_map *map = vmf->vma->vm_private_data;
	pgoff_t index = vmf->pgoff;
	unsigned long maddr, old;

	atomic_long_inc(&nopfn_bench_cnt.faults);

	/* Pairs with smp_store_release() below: the page is zeroed. */
	maddr = smp_load_acquire(&map->maddr[index]);
	if (!maddr) {
		maddr = nopfn_bench_alloc_page();
		if (!maddr)
			return 0;

		spin_lock(&map->lock);
		old = map->maddr[index];
		if (!old) {
			/* Pairs with smp_load_acquire() above. */
			smp_store_release(&map->maddr[index], maddr);
			map->populated++;
		}
		spin_unlock(&map->lock);

		if (old) {
			/* Lost the race: this page was never mapped. */
			atomic_long_inc(&nopfn_bench_cnt.alloc_races);
			nopfn_bench_free_page(maddr);
			maddr = old;
		}
	}
	return __pa(maddr) >> PAGE_SHIFT;
}

/* VM_DONTEXPAND and the offset check keep an index from being too big. */
static bool nopfn_bench_index_bad(struct vm_fault *vmf)
{
	struct nopfn_bench_map *map = vmf->vma->vm_private_data;

	return WARN_ON_ONCE(vmf->pgoff >= map->pages);
}

/* The handler as ->fault(): it maps the page itself. */
static vm_fault_t nopfn_bench_fault(struct vm_fault *vmf)
{
	unsigned long pfn;

	if (nopfn_bench_index_bad(vmf))
		return VM_FAULT_SIGBUS;
	pfn = nopfn_bench_pfn(vmf);
	if (!pfn)
		return VM_FAULT_OOM;
	return vmf_insert_pfn(vmf->vma, vmf->address, pfn);
}

/* The handler as ->nopfn(): the core maps the page. */
static unsigned long nopfn_bench_nopfn(struct vm_fault *vmf)
{
	unsigned long pfn;

	if (nopfn_bench_index_bad(vmf))
		return NOPFN_SIGBUS;
	pfn = nopfn_bench_pfn(vmf);
	return pfn ? pfn : NOPFN_OOM;
}

static const struct vm_operations_struct nopfn_bench_nopfn_vm_ops = {
	.open = nopfn_bench_vm_open,
	.close = nopfn_bench_vm_close,
	.nopfn = nopfn_bench_nopfn,
};

static const struct vm_operations_struct nopfn_bench_fault_vm_ops = {
	.open = nopfn_bench_vm_open,
	.close = nopfn_bench_vm_close,
	.fault = nopfn_bench_fault,
};

/*
 * What mspec_mmap() checks and sets up, plus a bound on the length. Returns
 * the new bookkeeping, attached to @vma, or an ERR_PTR().
 */
static struct nopfn_bench_map *
nopfn_bench_mmap_common(struct vm_area_struct *vma,
			const struct vm_operations_struct *ops)
{
	unsigned long pages = vma_pages(vma);
	struct nopfn_bench_map *map;

	if (vma->vm_pgoff != 0 || !(vma->vm_flags & VM_SHARED))
		return ERR_PTR(-EINVAL);
	if (!(vma->vm_flags & VM_WRITE))
		return ERR_PTR(-EPERM);
	if (vma->vm_end - vma->vm_start > NOPFN_BENCH_MAX_BYTES)
		return ERR_PTR(-EFBIG);

	map = kvzalloc(struct_size(map, maddr, pages),
		       GFP_KERNEL_ACCOUNT | __GFP_RETRY_MAYFAIL | __GFP_NOWARN);
	if (!map)
		return ERR_PTR(-ENOMEM);
	refcount_set(&map->ref, 1);
	spin_lock_init(&map->lock);
	map->pages = pages;
	atomic_long_inc(&nopfn_bench_cnt.mappings);

	vma->vm_private_data = map;
	vm_flags_set(vma, VM_IO | VM_PFNMAP | VM_DONTEXPAND | VM_DONTDUMP);
	vma->vm_ops = ops;
	return map;
}

static int nopfn_bench_fault_mmap(struct file *file,
				  struct vm_area_struct *vma)
{
	return PTR_ERR_OR_ZERO(nopfn_bench_mmap_common(vma,
						       &nopfn_bench_fault_vm_ops));
}

static int nopfn_bench_nopfn_mmap(struct file *file,
				  struct vm_area_struct *vma)
{
	return PTR_ERR_OR_ZERO(nopfn_bench_mmap_common(vma,
						       &nopfn_bench_nopfn_vm_ops));
}

/* Every PTE is there from mmap() on: no fault handler at all. */
static const struct vm_operations_struct nopfn_bench_eager_vm_ops = {
	.open = nopfn_bench_vm_open,
	.close = nopfn_bench_vm_close,
};

/*
 * Allocate every page of the mapping and map it, one remap_pfn_range() per
 * page: the pages come one by one from the page allocator, as they do for
 * the lazy devices, so they are not physically contiguous.
 */
static int nopfn_bench_eager_mmap(struct file *file,
				  struct vm_area_struct *vma)
{
	struct nopfn_bench_map *map;
	unsigned long i, maddr;
	int ret = 0;

	map = nopfn_bench_mmap_common(vma, &nopfn_bench_eager_vm_ops);
	if (IS_ERR(map))
		return PTR_ERR(map);

	for (i = 0; i < map->pages; i++) {
		maddr = nopfn_bench_alloc_page();
		if (!maddr) {
			ret = -ENOMEM;
			break;
		}
		map->maddr[i] = maddr;
		map->populated++;
		ret = remap_pfn_range(vma, vma->vm_start + i * PAGE_SIZE,
				      __pa(maddr) >> PAGE_SHIFT, PAGE_SIZE,
				      vma->vm_page_prot);
		if (ret)
			break;
		cond_resched();
	}
	if (!ret)
		return 0;

	/*
	 * ->close() is not called for a VMA whose ->mmap() failed, and the
	 * core zaps its PTEs only later: zap them before the pages go.
	 */
	zap_vma_ptes(vma, vma->vm_start, vma->vm_end - vma->vm_start);
	vma->vm_private_data = NULL;
	nopfn_bench_map_put(map);
	return ret;
}

static long nopfn_bench_ioctl(struct file *file, unsigned int cmd,
			      unsigned long arg)
{
	struct nopfn_bench_counters *c = &nopfn_bench_cnt;
	struct nopfn_bench_stats s;

	if (cmd != NOPFN_BENCH_IOC_GET_STATS)
		return -ENOTTY;

	s = (struct nopfn_bench_stats) {
		.mappings = atomic_long_read(&c->mappings),
		.pages_in_use = atomic_long_read(&c->pages_in_use),
		.pages_allocated = atomic_long_read(&c->pages_allocated),
		.pages_freed = atomic_long_read(&c->pages_freed),
		.faults = atomic_long_read(&c->faults),
		.alloc_failures = atomic_long_read(&c->alloc_failures),
		.alloc_races = atomic_long_read(&c->alloc_races),
	};
	return copy_to_user((void __user *)arg, &s, sizeof(s)) ? -EFAULT : 0;
}

static const struct file_operations nopfn_bench_fops[] = {
	{
		.owner = THIS_MODULE,
		.mmap = nopfn_bench_fault_mmap,
		.unlocked_ioctl = nopfn_bench_ioctl,
		.compat_ioctl = compat_ptr_ioctl,
		.llseek = noop_llseek,
	},
	{
		.owner = THIS_MODULE,
		.mmap = nopfn_bench_eager_mmap,
		.unlocked_ioctl = nopfn_bench_ioctl,
		.compat_ioctl = compat_ptr_ioctl,
		.llseek = noop_llseek,
	},
	{
		.owner = THIS_MODULE,
		.mmap = nopfn_bench_nopfn_mmap,
		.unlocked_ioctl = nopfn_bench_ioctl,
		.compat_ioctl = compat_ptr_ioctl,
		.llseek = noop_llseek,
	},
};

static struct miscdevice nopfn_bench_dev[] = {
	{
		.minor = MISC_DYNAMIC_MINOR,
		.name = "nopfn_bench_fault",
		.fops = &nopfn_bench_fops[0],
		.mode = 0600,
	},
	{
		.minor = MISC_DYNAMIC_MINOR,
		.name = "nopfn_bench_eager",
		.fops = &nopfn_bench_fops[1],
		.mode = 0600,
	},
	{
		.minor = MISC_DYNAMIC_MINOR,
		.name = "nopfn_bench_nopfn",
		.fops = &nopfn_bench_fops[2],
		.mode = 0600,
	},
};

static int __init nopfn_bench_init(void)
{
	unsigned int i;
	int ret;

	for (i = 0; i < ARRAY_SIZE(nopfn_bench_dev); i++) {
		ret = misc_register(&nopfn_bench_dev[i]);
		if (ret) {
			while (i--)
				misc_deregister(&nopfn_bench_dev[i]);
			return ret;
		}
	}
	return 0;
}

static void __exit nopfn_bench_exit(void)
{
	unsigned int i = ARRAY_SIZE(nopfn_bench_dev);

	while (i--)
		misc_deregister(&nopfn_bench_dev[i]);
	/* Every mapping holds the module through its file: all are gone. */
	WARN_ON(atomic_long_read(&nopfn_bench_cnt.pages_in_use) ||
		atomic_long_read(&nopfn_bench_cnt.mappings));
}

module_init(nopfn_bench_init);
module_exit(nopfn_bench_exit);

MODULE_DESCRIPTION("Benchmark devices: ->fault() and eager counterparts of mspec_cached");
MODULE_LICENSE("GPL");
