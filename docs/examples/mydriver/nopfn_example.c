// SPDX-License-Identifier: GPL-2.0
/*
 * nopfn_example: the smallest device on ->nopfn(), the worked example of
 * README's "Test your own driver".
 *
 * /dev/nopfn_example has @pages pages of RAM, allocated at load; word 0 of
 * page i holds NOPFN_EXAMPLE_MAGIC + i.  A shared mapping of it is a
 * VM_PFNMAP mapping whose PTEs ->nopfn() provides, one fault per page:
 * page i of the device for offset i, SIGBUS past the last page.  The
 * handler counts its calls in the read-only parameter @faults.
 *
 * The core refuses a copy-on-write mapping (MAP_PRIVATE of the device
 * opened for writing) with EINVAL after ->mmap(): nothing to undo here,
 * ->mmap() takes no reference.  A mapping holds the file, and the file
 * the module, so the pages stay until the last mapping is gone and the
 * module is unloaded.
 */

#define pr_fmt(fmt) KBUILD_MODNAME ": " fmt

#include <linux/atomic.h>
#include <linux/fs.h>
#include <linux/gfp.h>
#include <linux/miscdevice.h>
#include <linux/mm.h>
#include <linux/module.h>
#include <linux/moduleparam.h>
#include <linux/slab.h>
#include <asm/cacheflush.h>

#define NOPFN_EXAMPLE_MAGIC	0x6e6f70666e000000ULL	/* "nopfn", 0, ... */
#define NOPFN_EXAMPLE_MAX_PAGES	64
/* how far a mapping may reach: past @pages, faults are SIGBUS */
#define NOPFN_EXAMPLE_MAP_PAGES	(2 * NOPFN_EXAMPLE_MAX_PAGES)

static unsigned int pages = 4;
module_param(pages, uint, 0444);
MODULE_PARM_DESC(pages, "Pages of the device (1 to 64)");

static atomic_long_t nopfn_example_faults = ATOMIC_LONG_INIT(0);

static int nopfn_example_faults_get(char *buf, const struct kernel_param *kp)
{
	return sysfs_emit(buf, "%ld\n", atomic_long_read(&nopfn_example_faults));
}

static const struct kernel_param_ops nopfn_example_faults_ops = {
	.get = nopfn_example_faults_get,
};
module_param_cb(faults, &nopfn_example_faults_ops, NULL, 0444);
MODULE_PARM_DESC(faults, "Calls of ->nopfn() since the module was loaded");

static struct page **nopfn_example_pages;

/*
 * Called with mmap_lock held for read and no PTE lock: a handler may sleep
 * (this one does not).  Returns a PFN, or a NOPFN_* code.
 */
static unsigned long nopfn_example_nopfn(struct vm_fault *vmf)
{
	atomic_long_inc(&nopfn_example_faults);
	if (vmf->pgoff >= pages)
		return NOPFN_SIGBUS;
	return page_to_pfn(nopfn_example_pages[vmf->pgoff]);
}

static const struct vm_operations_struct nopfn_example_vm_ops = {
	.nopfn = nopfn_example_nopfn,
};

static int nopfn_example_mmap(struct file *file, struct vm_area_struct *vma)
{
	if (vma->vm_pgoff >= NOPFN_EXAMPLE_MAP_PAGES ||
	    vma_pages(vma) > NOPFN_EXAMPLE_MAP_PAGES - vma->vm_pgoff)
		return -EINVAL;
	/* ->nopfn() serves VM_PFNMAP mappings only; no mremap() growth */
	vma->vm_flags |= VM_PFNMAP | VM_IO | VM_DONTEXPAND | VM_DONTDUMP;
	vma->vm_ops = &nopfn_example_vm_ops;
	return 0;
}

static const struct file_operations nopfn_example_fops = {
	.owner = THIS_MODULE,
	.mmap = nopfn_example_mmap,
	.llseek = noop_llseek,
};

static struct miscdevice nopfn_example_dev = {
	.minor = MISC_DYNAMIC_MINOR,
	.name = "nopfn_example",
	.fops = &nopfn_example_fops,
	.mode = 0600,
};

static void nopfn_example_free(void)
{
	unsigned int i;

	for (i = 0; i < pages; i++) {
		if (nopfn_example_pages[i])
			__free_page(nopfn_example_pages[i]);
	}
	kfree(nopfn_example_pages);
}

static int __init nopfn_example_init(void)
{
	unsigned int i;
	int ret;

	if (!pages || pages > NOPFN_EXAMPLE_MAX_PAGES) {
		pr_err("pages=%u: give 1 to %u\n", pages, NOPFN_EXAMPLE_MAX_PAGES);
		return -EINVAL;
	}
	nopfn_example_pages = kcalloc(pages, sizeof(*nopfn_example_pages),
				      GFP_KERNEL);
	if (!nopfn_example_pages)
		return -ENOMEM;
	for (i = 0; i < pages; i++) {
		struct page *page = alloc_page(GFP_KERNEL | __GFP_ZERO);
		u64 *word;

		if (!page) {
			nopfn_example_free();
			return -ENOMEM;
		}
		nopfn_example_pages[i] = page;
		word = page_address(page);
		*word = NOPFN_EXAMPLE_MAGIC + i;
		/* user space may map it at another colour of a virtual cache */
		flush_dcache_page(page);
	}
	ret = misc_register(&nopfn_example_dev);
	if (ret)
		nopfn_example_free();
	return ret;
}

static void __exit nopfn_example_exit(void)
{
	misc_deregister(&nopfn_example_dev);
	nopfn_example_free();
}

module_init(nopfn_example_init);
module_exit(nopfn_example_exit);

MODULE_DESCRIPTION("The worked example of a device on ->nopfn()");
MODULE_LICENSE("GPL");
