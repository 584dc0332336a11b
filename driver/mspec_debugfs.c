// SPDX-License-Identifier: GPL-2.0
/*
 * mspec: debugfs interface for the tests.
 *
 * /sys/kernel/debug/mspec/
 *   <type>/stats      counters of the type, one "name value" per line
 *   <type>/info       "device", "noncached" and "description" lines
 *   fail_next_alloc   the next N page allocations fail (any type)
 *   fail_sigbus       0: an injected failure is "no memory now" (NOPFN_OOM),
 *                     1: it is a failure retrying cannot fix, the back
 *                     end's errno (NOPFN_SIGBUS), as a failed
 *                     set_memory_uc() or an exhausted ia64 pool
 *   pte               write a user address, read back the PTE that maps it
 *                     in the reader's mm and its decoded memory type
 *
 * <type> is fetchop, cached or uncached.  The pte file only looks at VMAs
 * that are VM_IO or VM_PFNMAP (what follow_pte() and follow_pfnmap_start()
 * support), and reads the PTE under mmap_lock and the PTE lock, so
 * "uncached" is read from the page tables rather than assumed.
 */

#define pr_fmt(fmt) KBUILD_MODNAME ": " fmt

#include <linux/debugfs.h>
#include <linux/fs.h>
#include <linux/kernel.h>
#include <linux/mm.h>
#include <linux/mmap_lock.h>
#include <linux/module.h>
#include <linux/mutex.h>
#include <linux/sched.h>
#include <linux/seq_file.h>
#include <linux/slab.h>
#include <linux/uaccess.h>

#include "kcompat.h"
#include "mspec.h"

static struct dentry *mspec_debugfs_root;

static int mspec_stats_show(struct seq_file *m, void *v)
{
	struct mspec_stats *st = m->private;

	seq_printf(m, "pages_in_use %ld\n",
		   atomic_long_read(&st->pages_in_use));
	seq_printf(m, "pages_allocated %ld\n",
		   atomic_long_read(&st->pages_allocated));
	seq_printf(m, "pages_freed %ld\n", atomic_long_read(&st->pages_freed));
	seq_printf(m, "pages_leaked %ld\n",
		   atomic_long_read(&st->pages_leaked));
	seq_printf(m, "faults %ld\n", atomic_long_read(&st->faults));
	seq_printf(m, "alloc_failures %ld\n",
		   atomic_long_read(&st->alloc_failures));
	seq_printf(m, "alloc_races %ld\n", atomic_long_read(&st->alloc_races));
	seq_printf(m, "mappings %ld\n", atomic_long_read(&st->mappings));
	return 0;
}
DEFINE_SHOW_ATTRIBUTE(mspec_stats);

static int mspec_info_show(struct seq_file *m, void *v)
{
	struct mspec_stats *st = m->private;
	enum mspec_type type = st - mspec_stats;

	seq_printf(m, "device %s\n", mspec_dev_name[type]);
	seq_printf(m, "arch %s\n", mspec_arch_name);
	seq_printf(m, "noncached %d\n", mspec_arch_noncached(type));
	seq_printf(m, "description %s\n", mspec_arch_describe(type));
	return 0;
}
DEFINE_SHOW_ATTRIBUTE(mspec_info);

/* The pte file: the address written by this open file. */
struct mspec_pte_query {
	struct mutex lock;	/* serialises @addr and @valid */
	unsigned long addr;
	bool valid;
};

#define MSPEC_PTE_BUF	384

/* Look up @addr in current's mm and describe its PTE into @buf. */
static ssize_t mspec_pte_describe(unsigned long addr, char *buf, size_t size)
{
	struct mm_struct *mm = current->mm;
	struct vm_area_struct *vma;
	const char *memtype, *alias_memtype;
	int cacheable, alias_cacheable;
	pte_t pte;
	unsigned long pfn;
	int type, ret;

	if (!mm)
		return -EINVAL;
	if (mmap_read_lock_killable(mm))
		return -EINTR;
	vma = vma_lookup(mm, addr);
	if (!vma) {
		ret = -ENOENT;
		goto unlock;
	}
	if (!(vma->vm_flags & (VM_IO | VM_PFNMAP))) {
		ret = -EINVAL;
		goto unlock;
	}
	type = mspec_vma_type(vma);
	ret = kcompat_read_pte(vma, addr, &pte);
	if (ret)
		goto unlock;	/* -ENXIO: no PTE, not touched yet */
	mmap_read_unlock(mm);

	pfn = pte_pfn(pte);
	cacheable = mspec_arch_pte_memtype(pte, &memtype);
	alias_cacheable = mspec_arch_alias_memtype(pfn, &alias_memtype);

	return scnprintf(buf, size,
			 "addr %#lx\npte %#llx\npfn %#lx\nmemtype %s\nnoncached %d\nalias_memtype %s\nalias_noncached %d\ndevice %s\n",
			 addr, (unsigned long long)pte_val(pte), pfn, memtype,
			 cacheable >= 0 ? !cacheable : -1, alias_memtype,
			 alias_cacheable >= 0 ? !alias_cacheable : -1,
			 type >= 0 ? mspec_type_name[type] : "none");

unlock:
	mmap_read_unlock(mm);
	return ret;
}

static int mspec_pte_open(struct inode *inode, struct file *file)
{
	struct mspec_pte_query *q;

	q = kzalloc(sizeof(*q), GFP_KERNEL);
	if (!q)
		return -ENOMEM;
	mutex_init(&q->lock);
	file->private_data = q;
	return 0;
}

static int mspec_pte_release(struct inode *inode, struct file *file)
{
	struct mspec_pte_query *q = file->private_data;

	mutex_destroy(&q->lock);
	kfree(q);
	return 0;
}

static ssize_t mspec_pte_write(struct file *file, const char __user *ubuf,
			       size_t count, loff_t *ppos)
{
	struct mspec_pte_query *q = file->private_data;
	unsigned long addr;
	int ret;

	ret = kstrtoul_from_user(ubuf, count, 0, &addr);
	if (ret)
		return ret;
	mutex_lock(&q->lock);
	q->addr = addr;
	q->valid = true;
	mutex_unlock(&q->lock);
	*ppos = 0;
	return count;
}

static ssize_t mspec_pte_read(struct file *file, char __user *ubuf,
			      size_t count, loff_t *ppos)
{
	struct mspec_pte_query *q = file->private_data;
	unsigned long addr;
	ssize_t len;
	char *buf;
	bool valid;

	mutex_lock(&q->lock);
	addr = q->addr;
	valid = q->valid;
	mutex_unlock(&q->lock);
	if (!valid)
		return -EINVAL;

	/* Not under q->lock: the copy to user space may fault. */
	buf = kmalloc(MSPEC_PTE_BUF, GFP_KERNEL);
	if (!buf)
		return -ENOMEM;
	len = mspec_pte_describe(addr, buf, MSPEC_PTE_BUF);
	if (len >= 0)
		len = simple_read_from_buffer(ubuf, count, ppos, buf, len);
	kfree(buf);
	return len;
}

static const struct file_operations mspec_pte_fops = {
	.owner = THIS_MODULE,
	.open = mspec_pte_open,
	.release = mspec_pte_release,
	.read = mspec_pte_read,
	.write = mspec_pte_write,
	.llseek = default_llseek,
};

void mspec_debugfs_init(void)
{
	unsigned int i;

	mspec_debugfs_root = debugfs_create_dir(KBUILD_MODNAME, NULL);
	for (i = 0; i < MSPEC_NR_TYPES; i++) {
		struct dentry *dir;

		dir = debugfs_create_dir(mspec_type_name[i], mspec_debugfs_root);
		debugfs_create_file("stats", 0444, dir, &mspec_stats[i],
				    &mspec_stats_fops);
		debugfs_create_file("info", 0444, dir, &mspec_stats[i],
				    &mspec_info_fops);
	}
	debugfs_create_atomic_t("fail_next_alloc", 0600, mspec_debugfs_root,
				&mspec_fail_next_alloc);
	debugfs_create_bool("fail_sigbus", 0600, mspec_debugfs_root,
			    &mspec_fail_sigbus);
	debugfs_create_file("pte", 0600, mspec_debugfs_root, NULL,
			    &mspec_pte_fops);
}

void mspec_debugfs_exit(void)
{
	debugfs_remove_recursive(mspec_debugfs_root);
	mspec_debugfs_root = NULL;
}
