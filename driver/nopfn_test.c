// SPDX-License-Identifier: GPL-2.0
/*
 * nopfn_test: a misc device whose mappings are served by ->nopfn(), with a
 * per-page behaviour chosen by ioctl, so that a test in user space can drive
 * every return path of the fault operation.
 *
 * Every open file has a state (struct nopfn_test_state): the behaviour of its
 * page indexes, the RAM pages allocated for them and counters. The file and
 * every VMA hold a reference on it; the last one frees the RAM pages, so a
 * RAM page is never freed while a PTE may still map it (PTEs are zapped
 * before ->close()).
 *
 * Locking: mmap_lock (taken by the core around ->mmap() and ->nopfn(), and
 * by NOPFN_TEST_IOC_QUERY) nests outside state->lock. Nothing copies from or
 * to user space with state->lock held, as that may fault on a mapping of the
 * same state.
 *
 * Waits of NOPFN_TEST_SLEEP_* and NOPFN_TEST_GATE* pages are bounded by
 * NOPFN_TEST_MAX_SLEEP_MS; they are interruptible for a fault from user mode
 * and killable for one from kernel mode, as Documentation/mm/nopfn.rst asks.
 * A wait with mmap_lock held keeps the VMA and so its file alive; for a wait
 * with the lock released, the core holds the handler's module and the file,
 * if the VMA has one (see nopfn_release_mmap_lock()), and the handler the
 * state. So neither the release of the file nor the unload of the module
 * can happen while a fault waits: rmmod fails until the wait is over.
 * NOPFN_TEST_IOC_WAKE and a change of the page's behaviour end waits at once.
 *
 * Misuse is on purpose here: NOPFN_TEST_RETURN, NOPFN_TEST_RELEASE_* and
 * NOPFN_TEST_MAP_MKWRITE_MISUSE make the mistakes that the core must catch
 * (tests/guest/nopfn_api.c).
 *
 * The benchmark devices of tests/guest/fault_bench.c are another module,
 * nopfn_bench.c.
 */

#define pr_fmt(fmt) KBUILD_MODNAME ": " fmt

#include <linux/atomic.h>
#include <linux/file.h>
#include <linux/fs.h>
#include <linux/jiffies.h>
#include <linux/kernel.h>
#include <linux/miscdevice.h>
#include <linux/mm.h>
#include <linux/mmap_lock.h>
#include <linux/module.h>
#include <linux/moduleparam.h>
#include <linux/mutex.h>
#include <linux/pagemap.h>
#include <linux/refcount.h>
#include <linux/sched.h>
#include <linux/sched/signal.h>
#include <linux/seqlock.h>
#include <linux/slab.h>
#include <linux/spinlock.h>
#include <linux/uaccess.h>
#include <linux/wait.h>

#include <nopfn_test.h>

static unsigned long carve_phys;
module_param(carve_phys, ulong, 0444);
MODULE_PARM_DESC(carve_phys,
		 "Physical address of RAM the kernel does not manage (no struct page), page aligned");

static unsigned long carve_size;
module_param(carve_size, ulong, 0444);
MODULE_PARM_DESC(carve_size, "Size of that RAM in bytes, page aligned (0: none)");

static unsigned long carve_pfn;		/* first PFN of the carve-out */
static unsigned long carve_pages;	/* its size in pages, 0 if none */

/* RAM pages and states alive in the whole module, to catch leaks. */
static atomic_long_t nopfn_test_all_ram_pages = ATOMIC_LONG_INIT(0);
static atomic_long_t nopfn_test_all_states = ATOMIC_LONG_INIT(0);

struct nopfn_test_page {
	struct page *ram;	/* RAM for NOPFN_TEST_RAM and after waits */
	u32 behaviour;		/* enum nopfn_test_behaviour */
	u32 sleep_ms;
	u64 value;		/* what NOPFN_TEST_RETURN returns */
	unsigned long wait_end;	/* jiffies, valid once wait_armed */
	bool wait_armed;	/* a NOPFN_TEST_SLEEP_* wait has started */
	bool oom_done;		/* NOPFN_TEST_OOM_ONCE failed once */
	u32 refaults;		/* NOPFN_TEST_SLEEP_REFAULT: NOPFN_REFAULTs done */
};

struct nopfn_test_counters {
	atomic64_t calls;
	atomic64_t ret_pfn;
	atomic64_t ret_sigbus;
	atomic64_t ret_oom;
	atomic64_t ret_refault;
	atomic64_t ret_retry;
	atomic64_t lock_kept;
	atomic64_t fault_calls;
	atomic64_t mkwrite_calls;
	atomic64_t misuse_released;
	atomic64_t twice_released;
};

struct nopfn_test_state {
	refcount_t ref;			/* the file and every VMA */
	struct mutex lock;		/* map_mode, ram_pages, pages[] */
	wait_queue_head_t wq;		/* waits of NOPFN_TEST_SLEEP_*, gates */
	u32 map_mode;			/* enum nopfn_test_map_mode */
	bool gate_open;			/* NOPFN_TEST_IOC_WAKE opened the gate */
	unsigned long ram_pages;	/* pages[].ram allocated */
	struct file *file;		/* the file (NOPFN_TEST_MAP_NO_FILE) */
	spinlock_t seq_lock;		/* serialises writers of seq */
	seqcount_spinlock_t seq;	/* revokes, for nopfn_read_begin() */
	struct nopfn_test_counters cnt;
	struct nopfn_test_page pages[NOPFN_TEST_MAX_PAGES];
};

/* Handlers of every state waiting at a gate, for the gate_waiting param. */
static atomic_t nopfn_test_gate_waiting = ATOMIC_INIT(0);
static atomic_long_t nopfn_test_all_releases = ATOMIC_LONG_INIT(0);

static int nopfn_test_gate_waiting_get(char *buf,
				       const struct kernel_param *kp)
{
	return sysfs_emit(buf, "%d\n", atomic_read(&nopfn_test_gate_waiting));
}

static const struct kernel_param_ops nopfn_test_gate_waiting_ops = {
	.get = nopfn_test_gate_waiting_get,
};
module_param_cb(gate_waiting, &nopfn_test_gate_waiting_ops, NULL, 0444);
MODULE_PARM_DESC(gate_waiting, "->nopfn() calls waiting at a gate now");

static const struct vm_operations_struct nopfn_test_vm_ops;
static const struct vm_operations_struct nopfn_test_fault_vm_ops;
static const struct vm_operations_struct nopfn_test_mkwrite_vm_ops;
static const struct vm_operations_struct nopfn_test_mkwrite_misuse_vm_ops;
static const struct vm_operations_struct nopfn_test_nofile_vm_ops;

static bool nopfn_test_vma(struct vm_area_struct *vma)
{
	return vma->vm_ops == &nopfn_test_vm_ops ||
	       vma->vm_ops == &nopfn_test_fault_vm_ops ||
	       vma->vm_ops == &nopfn_test_mkwrite_vm_ops ||
	       vma->vm_ops == &nopfn_test_mkwrite_misuse_vm_ops ||
	       vma->vm_ops == &nopfn_test_nofile_vm_ops;
}

static struct nopfn_test_state *nopfn_test_state_alloc(void)
{
	struct nopfn_test_state *st;

	st = kvzalloc(sizeof(*st), GFP_KERNEL);
	if (!st)
		return NULL;
	refcount_set(&st->ref, 1);
	mutex_init(&st->lock);
	init_waitqueue_head(&st->wq);
	spin_lock_init(&st->seq_lock);
	seqcount_spinlock_init(&st->seq, &st->seq_lock);
	st->map_mode = NOPFN_TEST_MAP_PFNMAP;
	atomic_long_inc(&nopfn_test_all_states);
	return st;
}

static void nopfn_test_state_get(struct nopfn_test_state *st)
{
	refcount_inc(&st->ref);
}

static void nopfn_test_state_put(struct nopfn_test_state *st)
{
	unsigned int i;

	if (!refcount_dec_and_test(&st->ref))
		return;

	for (i = 0; i < NOPFN_TEST_MAX_PAGES; i++) {
		if (st->pages[i].ram)
			__free_page(st->pages[i].ram);
	}
	atomic_long_sub(st->ram_pages, &nopfn_test_all_ram_pages);
	atomic_long_dec(&nopfn_test_all_states);
	mutex_destroy(&st->lock);
	kvfree(st);
}

/*
 * The PFN of the RAM page of @p, allocated (zeroed) on first use, or
 * NOPFN_OOM. Called with st->lock held.
 */
static unsigned long nopfn_test_ram_pfn(struct nopfn_test_state *st,
					struct nopfn_test_page *p)
{
	lockdep_assert_held(&st->lock);

	if (!p->ram) {
		p->ram = alloc_page(GFP_KERNEL | __GFP_ZERO);
		if (!p->ram)
			return NOPFN_OOM;
		st->ram_pages++;
		atomic_long_inc(&nopfn_test_all_ram_pages);
	}
	return page_to_pfn(p->ram);
}

static unsigned long nopfn_test_ram_pfn_locked(struct nopfn_test_state *st,
					       struct nopfn_test_page *p)
{
	unsigned long pfn;

	mutex_lock(&st->lock);
	pfn = nopfn_test_ram_pfn(st, p);
	mutex_unlock(&st->lock);
	return pfn;
}

/* How many NOPFN_REFAULTs a NOPFN_TEST_SLEEP_REFAULT page gives. */
static u32 nopfn_test_refaults(struct nopfn_test_page *p)
{
	return p->value ? p->value : 1;
}

static bool nopfn_test_wait_over(struct nopfn_test_page *p)
{
	return !READ_ONCE(p->wait_armed) ||
	       time_after_eq(jiffies, READ_ONCE(p->wait_end));
}

/*
 * Sleep on st->wq until the wait of @p is over or @timeout (jiffies) ends:
 * interruptibly for a fault from user mode, killably for one from kernel
 * mode, which the core repeats on anything but a fatal signal
 * (Documentation/mm/nopfn.rst). Returns the remaining time (at least 1) if
 * the wait is over, 0 on timeout, -ERESTARTSYS on a signal.
 */
static long nopfn_test_sleep_on(struct nopfn_test_state *st,
				struct nopfn_test_page *p, unsigned int flags,
				long timeout)
{
	if (flags & FAULT_FLAG_USER)
		return wait_event_interruptible_timeout(st->wq,
							nopfn_test_wait_over(p),
							timeout);
	return wait_event_killable_timeout(st->wq, nopfn_test_wait_over(p),
					   timeout);
}

/*
 * Wait until the wait of @p is over, or until @until (jiffies) if that comes
 * first. Returns 0 then, -ERESTARTSYS on a signal.
 */
static int nopfn_test_wait(struct nopfn_test_state *st,
			   struct nopfn_test_page *p, unsigned int vmf_flags,
			   unsigned long until)
{
	unsigned long end;
	long left;

	while (!nopfn_test_wait_over(p)) {
		end = READ_ONCE(p->wait_end);
		if (time_before(until, end))
			end = until;
		left = (long)(end - jiffies);
		if (left <= 0)
			break;
		left = nopfn_test_sleep_on(st, p, vmf_flags, left);
		if (left < 0)
			return left;
	}
	return 0;
}

/* Return @pfn from ->nopfn(), counting it. */
static unsigned long nopfn_test_ret(struct nopfn_test_state *st,
				    unsigned long pfn)
{
	switch (pfn) {
	case NOPFN_SIGBUS:
		atomic64_inc(&st->cnt.ret_sigbus);
		break;
	case NOPFN_OOM:
		atomic64_inc(&st->cnt.ret_oom);
		break;
	case NOPFN_REFAULT:
		atomic64_inc(&st->cnt.ret_refault);
		break;
	case NOPFN_RETRY:
		atomic64_inc(&st->cnt.ret_retry);
		break;
	default:
		atomic64_inc(&st->cnt.ret_pfn);
		break;
	}
	return pfn;
}

/*
 * Release mmap_lock for a wait, holding the state ourselves: once the lock
 * is gone the VMA may go (the core holds the module and the file). Returns
 * false, counting it, if the core kept the lock.
 */
static bool nopfn_test_unlock(struct vm_fault *vmf,
			      struct nopfn_test_state *st)
{
	nopfn_test_state_get(st);
	if (nopfn_release_mmap_lock(vmf))
		return true;
	nopfn_test_state_put(st);
	atomic64_inc(&st->cnt.lock_kept);
	return false;
}

/* The NOPFN_TEST_SLEEP_* behaviours, once the wait of @p has started. */
static unsigned long nopfn_test_sleep(struct vm_fault *vmf,
				      struct nopfn_test_state *st,
				      struct nopfn_test_page *p, u32 behaviour)
{
	unsigned int flags = vmf->flags;
	unsigned long pfn, until = MAX_JIFFY_OFFSET + jiffies;

	if (behaviour == NOPFN_TEST_SLEEP_UNLOCKED ||
	    behaviour == NOPFN_TEST_SLEEP_SPLIT) {
		if (behaviour == NOPFN_TEST_SLEEP_SPLIT)
			until = READ_ONCE(p->wait_end) -
				msecs_to_jiffies(p->sleep_ms) / 2;
		/*
		 * The wait ends early on a signal: the fault is then retried
		 * only after the signal was handled, and waits for the rest.
		 */
		if (nopfn_test_unlock(vmf, st)) {
			nopfn_test_wait(st, p, flags, until);
			pfn = nopfn_test_ret(st, NOPFN_RETRY);
			nopfn_test_state_put(st);
			return pfn;
		}
	}

	if (nopfn_test_wait(st, p, flags, MAX_JIFFY_OFFSET + jiffies))
		return nopfn_test_ret(st, NOPFN_REFAULT);

	if (behaviour == NOPFN_TEST_SLEEP_REFAULT) {
		mutex_lock(&st->lock);
		if (p->refaults < nopfn_test_refaults(p)) {
			p->refaults++;
			mutex_unlock(&st->lock);
			return nopfn_test_ret(st, NOPFN_REFAULT);
		}
		mutex_unlock(&st->lock);
	}
	return nopfn_test_ret(st, nopfn_test_ram_pfn_locked(st, p));
}

/*
 * Wait at the gate of @st, at most @ms: until NOPFN_TEST_IOC_WAKE opens it,
 * or a signal (interruptibly or killably, as nopfn_test_sleep_on()).
 */
static void nopfn_test_gate(struct nopfn_test_state *st, unsigned int flags,
			    unsigned int ms)
{
	long timeout = msecs_to_jiffies(ms);

	atomic_inc(&nopfn_test_gate_waiting);
	if (flags & FAULT_FLAG_USER)
		wait_event_interruptible_timeout(st->wq, READ_ONCE(st->gate_open),
						 timeout);
	else
		wait_event_killable_timeout(st->wq, READ_ONCE(st->gate_open),
					    timeout);
	atomic_dec(&nopfn_test_gate_waiting);
}

/* NOPFN_TEST_GATE*: the page's wait is a gate. */
static unsigned long nopfn_test_gated(struct vm_fault *vmf,
				      struct nopfn_test_state *st,
				      struct nopfn_test_page *p, u32 behaviour)
{
	unsigned long pfn;

	if (behaviour == NOPFN_TEST_GATE_UNLOCKED) {
		if (nopfn_test_unlock(vmf, st)) {
			nopfn_test_gate(st, vmf->flags, p->sleep_ms);
			pfn = nopfn_test_ret(st, NOPFN_RETRY);
			nopfn_test_state_put(st);
			return pfn;
		}
		return nopfn_test_ret(st, nopfn_test_ram_pfn_locked(st, p));
	}
	/* Looked up before the wait: a revoke meanwhile makes it stale. */
	pfn = nopfn_test_ram_pfn_locked(st, p);
	nopfn_test_gate(st, vmf->flags, p->sleep_ms);
	return nopfn_test_ret(st, pfn);
}

/* NOPFN_TEST_RELEASE_*: what a handler must not do. */
static unsigned long nopfn_test_misuse(struct vm_fault *vmf,
				       struct nopfn_test_state *st,
				       struct nopfn_test_page *p, u32 behaviour)
{
	unsigned long pfn;

	if (!nopfn_test_unlock(vmf, st))
		return nopfn_test_ret(st, nopfn_test_ram_pfn_locked(st, p));

	if (behaviour == NOPFN_TEST_RELEASE_TWICE) {
		if (nopfn_release_mmap_lock(vmf))
			atomic64_inc(&st->cnt.twice_released);
		pfn = NOPFN_RETRY;
	} else {
		/* A PFN with the lock released. */
		pfn = nopfn_test_ram_pfn_locked(st, p);
	}
	pfn = nopfn_test_ret(st, pfn);
	nopfn_test_state_put(st);
	return pfn;
}

static unsigned long nopfn_test_nopfn(struct vm_fault *vmf)
{
	struct vm_area_struct *vma = vmf->vma;
	struct nopfn_test_state *st = vma->vm_private_data;
	struct nopfn_test_page *p;
	unsigned long pfn;
	u32 behaviour;

	atomic64_inc(&st->cnt.calls);

	/* The core must never call us for these: count it as a failure. */
	if (!(vma->vm_flags & VM_PFNMAP) || is_cow_mapping(vma->vm_flags) ||
	    vmf->pgoff >= NOPFN_TEST_MAX_PAGES)
		return nopfn_test_ret(st, NOPFN_SIGBUS);

	p = &st->pages[vmf->pgoff];

	/* Before anything that NOPFN_TEST_IOC_REVOKE changes is read. */
	nopfn_read_begin(vmf, &st->seq);

	mutex_lock(&st->lock);
	behaviour = p->behaviour;
	switch (behaviour) {
	case NOPFN_TEST_CARVE:
		pfn = carve_pfn + vmf->pgoff;
		break;
	case NOPFN_TEST_SIGBUS:
		pfn = NOPFN_SIGBUS;
		break;
	case NOPFN_TEST_OOM:
		pfn = NOPFN_OOM;
		break;
	case NOPFN_TEST_RETURN:
		pfn = p->value;
		break;
	case NOPFN_TEST_OOM_ONCE:
		if (!p->oom_done) {
			p->oom_done = true;
			pfn = NOPFN_OOM;
			break;
		}
		pfn = nopfn_test_ram_pfn(st, p);
		break;
	case NOPFN_TEST_RELEASE_RETURN:
	case NOPFN_TEST_RELEASE_TWICE:
		mutex_unlock(&st->lock);
		return nopfn_test_misuse(vmf, st, p, behaviour);
	case NOPFN_TEST_GATE:
	case NOPFN_TEST_GATE_UNLOCKED:
		mutex_unlock(&st->lock);
		return nopfn_test_gated(vmf, st, p, behaviour);
	case NOPFN_TEST_SLEEP_LOCKED:
	case NOPFN_TEST_SLEEP_UNLOCKED:
	case NOPFN_TEST_SLEEP_SPLIT:
	case NOPFN_TEST_SLEEP_REFAULT:
		if (!p->wait_armed) {
			WRITE_ONCE(p->wait_end,
				   jiffies + msecs_to_jiffies(p->sleep_ms));
			WRITE_ONCE(p->wait_armed, true);
		}
		if (!nopfn_test_wait_over(p) ||
		    (behaviour == NOPFN_TEST_SLEEP_REFAULT &&
		     p->refaults < nopfn_test_refaults(p))) {
			mutex_unlock(&st->lock);
			return nopfn_test_sleep(vmf, st, p, behaviour);
		}
		pfn = nopfn_test_ram_pfn(st, p);
		break;
	default:
		pfn = nopfn_test_ram_pfn(st, p);
		break;
	}
	mutex_unlock(&st->lock);

	return nopfn_test_ret(st, pfn);
}

/* NOPFN_TEST_MAP_FAULT: ->fault() beside ->nopfn(); the core must call it. */
static vm_fault_t nopfn_test_fault(struct vm_fault *vmf)
{
	struct nopfn_test_state *st = vmf->vma->vm_private_data;
	unsigned long pfn;

	atomic64_inc(&st->cnt.fault_calls);
	if (vmf->pgoff >= NOPFN_TEST_MAX_PAGES)
		return VM_FAULT_SIGBUS;
	pfn = nopfn_test_ram_pfn_locked(st, &st->pages[vmf->pgoff]);
	if (pfn == NOPFN_OOM)
		return VM_FAULT_OOM;
	return vmf_insert_pfn(vmf->vma, vmf->address, pfn);
}

/* NOPFN_TEST_MAP_MKWRITE*: the first write to a read-only PTE. */
static vm_fault_t nopfn_test_pfn_mkwrite(struct vm_fault *vmf)
{
	struct vm_area_struct *vma = vmf->vma;
	struct nopfn_test_state *st = vma->vm_private_data;

	atomic64_inc(&st->cnt.mkwrite_calls);
	if (vma->vm_ops == &nopfn_test_mkwrite_misuse_vm_ops &&
	    nopfn_release_mmap_lock(vmf)) {
		/*
		 * The helper let go of the lock outside ->nopfn(): take it
		 * back, so that the fault path's unlock stays balanced, and
		 * report it.
		 */
		atomic64_inc(&st->cnt.misuse_released);
		mmap_read_lock(vma->vm_mm);
	}
	return 0;
}

static void nopfn_test_vm_open(struct vm_area_struct *vma)
{
	nopfn_test_state_get(vma->vm_private_data);
}

static void nopfn_test_vm_close(struct vm_area_struct *vma)
{
	nopfn_test_state_put(vma->vm_private_data);
}

/* NOPFN_TEST_MAP_NO_FILE: each VMA holds the file through the state. */
static void nopfn_test_nofile_open(struct vm_area_struct *vma)
{
	struct nopfn_test_state *st = vma->vm_private_data;

	nopfn_test_state_get(st);
	get_file(st->file);
}

static void nopfn_test_nofile_close(struct vm_area_struct *vma)
{
	struct nopfn_test_state *st = vma->vm_private_data;
	struct file *file = st->file;

	nopfn_test_state_put(st);
	fput(file);
}

static const struct vm_operations_struct nopfn_test_vm_ops = {
	.open = nopfn_test_vm_open,
	.close = nopfn_test_vm_close,
	.nopfn = nopfn_test_nopfn,
};

static const struct vm_operations_struct nopfn_test_fault_vm_ops = {
	.open = nopfn_test_vm_open,
	.close = nopfn_test_vm_close,
	.fault = nopfn_test_fault,
	.nopfn = nopfn_test_nopfn,
};

static const struct vm_operations_struct nopfn_test_mkwrite_vm_ops = {
	.open = nopfn_test_vm_open,
	.close = nopfn_test_vm_close,
	.nopfn = nopfn_test_nopfn,
	.pfn_mkwrite = nopfn_test_pfn_mkwrite,
};

static const struct vm_operations_struct nopfn_test_mkwrite_misuse_vm_ops = {
	.open = nopfn_test_vm_open,
	.close = nopfn_test_vm_close,
	.nopfn = nopfn_test_nopfn,
	.pfn_mkwrite = nopfn_test_pfn_mkwrite,
};

static const struct vm_operations_struct nopfn_test_nofile_vm_ops = {
	.open = nopfn_test_nofile_open,
	.close = nopfn_test_nofile_close,
	.nopfn = nopfn_test_nopfn,
};

static int nopfn_test_open(struct inode *inode, struct file *file)
{
	struct nopfn_test_state *st;

	st = nopfn_test_state_alloc();
	if (!st)
		return -ENOMEM;
	st->file = file;
	file->private_data = st;
	return nonseekable_open(inode, file);
}

static int nopfn_test_release(struct inode *inode, struct file *file)
{
	atomic_long_inc(&nopfn_test_all_releases);
	nopfn_test_state_put(file->private_data);
	return 0;
}

static int nopfn_test_mmap(struct file *file, struct vm_area_struct *vma)
{
	struct nopfn_test_state *st = file->private_data;
	const struct vm_operations_struct *ops = &nopfn_test_vm_ops;
	unsigned long pages = vma_pages(vma);
	bool shared = vma->vm_flags & VM_SHARED;
	u32 mode;

	if (vma->vm_pgoff >= NOPFN_TEST_MAX_PAGES ||
	    pages > NOPFN_TEST_MAX_PAGES - vma->vm_pgoff)
		return -EINVAL;

	mutex_lock(&st->lock);
	mode = st->map_mode;
	mutex_unlock(&st->lock);

	switch (mode) {
	case NOPFN_TEST_MAP_PFNMAP:
		/* Private is fine without VM_MAYWRITE: not copy-on-write. */
		if (is_cow_mapping(vma->vm_flags))
			return -EINVAL;
		vma->vm_flags |= VM_PFNMAP | VM_IO;
		break;
	case NOPFN_TEST_MAP_NO_PFNMAP:
		if (!shared)
			return -EINVAL;
		break;
	case NOPFN_TEST_MAP_COW:
		if (shared || !is_cow_mapping(vma->vm_flags))
			return -EINVAL;
		vma->vm_flags |= VM_PFNMAP | VM_IO;
		break;
	case NOPFN_TEST_MAP_MIXED:
		if (!shared)
			return -EINVAL;
		vma->vm_flags |= VM_MIXEDMAP | VM_IO;
		break;
	case NOPFN_TEST_MAP_FAULT:
	case NOPFN_TEST_MAP_MKWRITE:
	case NOPFN_TEST_MAP_MKWRITE_MISUSE:
	case NOPFN_TEST_MAP_NO_FILE:
		if (!shared)
			return -EINVAL;
		vma->vm_flags |= VM_PFNMAP | VM_IO;
		if (mode == NOPFN_TEST_MAP_FAULT)
			ops = &nopfn_test_fault_vm_ops;
		else if (mode == NOPFN_TEST_MAP_MKWRITE)
			ops = &nopfn_test_mkwrite_vm_ops;
		else if (mode == NOPFN_TEST_MAP_MKWRITE_MISUSE)
			ops = &nopfn_test_mkwrite_misuse_vm_ops;
		else
			ops = &nopfn_test_nofile_vm_ops;
		break;
	default:
		return -EINVAL;
	}
	vma->vm_flags |= VM_DONTEXPAND | VM_DONTDUMP;
	vma->vm_ops = ops;
	vma->vm_private_data = st;
	nopfn_test_state_get(st);	/* ->open() is not called for this VMA */
	if (ops == &nopfn_test_nofile_vm_ops) {
		/*
		 * The VMA's reference on the file, taken by mmap(), is kept by
		 * the state instead (st->file is this file): the VMA has no
		 * vm_file, and ->close() drops it.
		 */
		vma->vm_file = NULL;
	}
	return 0;
}

/* Is the whole carve-out free of struct pages? */
static bool nopfn_test_carve_unmanaged(void)
{
	unsigned long i;

	for (i = 0; i < carve_pages; i++) {
		if (pfn_valid(carve_pfn + i)) {
			pr_warn_ratelimited("carve-out PFN %#lx has a struct page: not used\n",
					    carve_pfn + i);
			return false;
		}
	}
	return true;
}

static long nopfn_test_set_pages(struct nopfn_test_state *st,
				 void __user *argp)
{
	struct nopfn_test_pages req;
	struct nopfn_test_page *p;
	unsigned long i;

	if (copy_from_user(&req, argp, sizeof(req)))
		return -EFAULT;
	if (!req.count || req.first >= NOPFN_TEST_MAX_PAGES ||
	    req.count > NOPFN_TEST_MAX_PAGES - req.first ||
	    req.behaviour >= NOPFN_TEST_NR_BEHAVIOURS)
		return -EINVAL;
	switch (req.behaviour) {
	case NOPFN_TEST_SLEEP_LOCKED:
	case NOPFN_TEST_SLEEP_UNLOCKED:
	case NOPFN_TEST_SLEEP_SPLIT:
	case NOPFN_TEST_SLEEP_REFAULT:
	case NOPFN_TEST_GATE:
	case NOPFN_TEST_GATE_UNLOCKED:
		if (req.sleep_ms > NOPFN_TEST_MAX_SLEEP_MS)
			return -EINVAL;
		break;
	default:
		if (req.sleep_ms)
			return -EINVAL;
	}
	if (req.value && req.behaviour != NOPFN_TEST_RETURN &&
	    (req.behaviour != NOPFN_TEST_SLEEP_REFAULT ||
	     req.value > NOPFN_TEST_MAX_REFAULTS))
		return -EINVAL;
	if (req.behaviour == NOPFN_TEST_CARVE) {
		if (!carve_pages)
			return -ENODEV;
		if (req.first + req.count > carve_pages)
			return -ERANGE;
		if (!nopfn_test_carve_unmanaged())
			return -EBUSY;
	}

	mutex_lock(&st->lock);
	for (i = req.first; i < req.first + req.count; i++) {
		p = &st->pages[i];
		p->behaviour = req.behaviour;
		p->sleep_ms = req.sleep_ms;
		p->value = req.value;
		p->oom_done = false;
		p->refaults = 0;
		WRITE_ONCE(p->wait_armed, false);
	}
	if (req.behaviour == NOPFN_TEST_GATE ||
	    req.behaviour == NOPFN_TEST_GATE_UNLOCKED)
		WRITE_ONCE(st->gate_open, false);
	mutex_unlock(&st->lock);
	/* Waits of pages whose behaviour changed are over. */
	wake_up_all(&st->wq);
	return 0;
}

static long nopfn_test_get_stats(struct nopfn_test_state *st,
				 void __user *argp)
{
	struct nopfn_test_stats s = {
		.calls = atomic64_read(&st->cnt.calls),
		.ret_pfn = atomic64_read(&st->cnt.ret_pfn),
		.ret_sigbus = atomic64_read(&st->cnt.ret_sigbus),
		.ret_oom = atomic64_read(&st->cnt.ret_oom),
		.ret_refault = atomic64_read(&st->cnt.ret_refault),
		.ret_retry = atomic64_read(&st->cnt.ret_retry),
		.lock_kept = atomic64_read(&st->cnt.lock_kept),
		.all_ram_pages = atomic_long_read(&nopfn_test_all_ram_pages),
		.all_states = atomic_long_read(&nopfn_test_all_states),
		.carve_pfn = carve_pages ? carve_pfn : 0,
		.carve_pages = carve_pages,
		.fault_calls = atomic64_read(&st->cnt.fault_calls),
		.mkwrite_calls = atomic64_read(&st->cnt.mkwrite_calls),
		.misuse_released = atomic64_read(&st->cnt.misuse_released),
		.twice_released = atomic64_read(&st->cnt.twice_released),
		.gate_waiting = atomic_read(&nopfn_test_gate_waiting),
		.all_releases = atomic_long_read(&nopfn_test_all_releases),
	};

	mutex_lock(&st->lock);
	s.ram_pages = st->ram_pages;
	mutex_unlock(&st->lock);

	return copy_to_user(argp, &s, sizeof(s)) ? -EFAULT : 0;
}

static void nopfn_test_reset_stats(struct nopfn_test_state *st)
{
	atomic64_set(&st->cnt.calls, 0);
	atomic64_set(&st->cnt.ret_pfn, 0);
	atomic64_set(&st->cnt.ret_sigbus, 0);
	atomic64_set(&st->cnt.ret_oom, 0);
	atomic64_set(&st->cnt.ret_refault, 0);
	atomic64_set(&st->cnt.ret_retry, 0);
	atomic64_set(&st->cnt.lock_kept, 0);
	atomic64_set(&st->cnt.fault_calls, 0);
	atomic64_set(&st->cnt.mkwrite_calls, 0);
	atomic64_set(&st->cnt.misuse_released, 0);
	atomic64_set(&st->cnt.twice_released, 0);
}

/*
 * Fill @q (but @addr) from the PTE that maps @q->addr in @vma, a mapping of
 * @st, and from the RAM page @st holds for it. Returns whether a PTE is
 * there. Called with mmap_lock held.
 */
static bool nopfn_test_fill(struct nopfn_test_state *st,
			    struct vm_area_struct *vma, struct nopfn_test_query *q)
{
	spinlock_t *ptl;	/* the page table lock follow_pte() took */
	pte_t *ptep;
	pte_t pte;

	q->pfn = 0;
	q->ram_pfn = 0;
	q->flags = 0;
	q->pgoff = linear_page_index(vma, q->addr);
	if (!follow_pte(vma->vm_mm, q->addr, &ptep, &ptl)) {
		pte = ptep_get(ptep);
		pte_unmap_unlock(ptep, ptl);
		q->pfn = pte_pfn(pte);
		q->flags |= NOPFN_TEST_Q_PRESENT;
		if (pte_write(pte))
			q->flags |= NOPFN_TEST_Q_WRITE;
		if (pfn_valid(q->pfn))
			q->flags |= NOPFN_TEST_Q_PFN_VALID;
	}
	if (q->pgoff < NOPFN_TEST_MAX_PAGES) {
		mutex_lock(&st->lock);
		if (st->pages[q->pgoff].ram)
			q->ram_pfn = page_to_pfn(st->pages[q->pgoff].ram);
		mutex_unlock(&st->lock);
	}
	return q->flags & NOPFN_TEST_Q_PRESENT;
}

/* The VMA of @st at @addr in @mm, or NULL. Called with mmap_lock held. */
static struct vm_area_struct *nopfn_test_find(struct nopfn_test_state *st,
					      struct mm_struct *mm,
					      unsigned long addr)
{
	struct vm_area_struct *vma = vma_lookup(mm, addr);

	if (!vma || !nopfn_test_vma(vma) || vma->vm_private_data != st)
		return NULL;
	return vma;
}

static long nopfn_test_query(struct nopfn_test_state *st, void __user *argp)
{
	struct mm_struct *mm = current->mm;
	struct nopfn_test_query q;
	struct vm_area_struct *vma;
	int ret = 0;

	if (copy_from_user(&q, argp, sizeof(q)))
		return -EFAULT;
	if (q.pad)
		return -EINVAL;
	if (!mm)
		return -EFAULT;

	if (mmap_read_lock_killable(mm))
		return -EINTR;
	vma = nopfn_test_find(st, mm, q.addr);
	if (vma)
		nopfn_test_fill(st, vma, &q);
	else
		ret = -EFAULT;
	mmap_read_unlock(mm);
	if (ret)
		return ret;
	return copy_to_user(argp, &q, sizeof(q)) ? -EFAULT : 0;
}

/*
 * NOPFN_TEST_IOC_FIXUP: get the PFN that maps an address the way KVM
 * (hva_to_pfn_remapped()) and VFIO (follow_fault_pfn()) get one of a
 * VM_PFNMAP mapping: follow_pte(); if there is no PTE, fixup_user_fault()
 * and follow_pte() again. Where fixup_user_fault() released mmap_lock they
 * start over (-EAGAIN), and so does this.
 */
static long nopfn_test_fixup(struct nopfn_test_state *st, void __user *argp)
{
	struct mm_struct *mm = current->mm;
	struct nopfn_test_query q;
	struct vm_area_struct *vma;
	unsigned int fault_flags;
	bool unlocked;
	int ret = 0;

	if (copy_from_user(&q, argp, sizeof(q)))
		return -EFAULT;
	if (q.pad || (q.flags & ~NOPFN_TEST_Q_WRITE))
		return -EINVAL;
	if (!mm)
		return -EFAULT;
	fault_flags = (q.flags & NOPFN_TEST_Q_WRITE) ? FAULT_FLAG_WRITE : 0;

	if (mmap_read_lock_killable(mm))
		return -EINTR;
	do {
		vma = nopfn_test_find(st, mm, q.addr);
		if (!vma) {
			ret = -EFAULT;
			break;
		}
		if (nopfn_test_fill(st, vma, &q))
			break;
		unlocked = false;
		ret = fixup_user_fault(mm, q.addr, fault_flags, &unlocked);
		if (ret)
			break;
		if (unlocked)
			continue;	/* the VMA may be gone: look again */
		vma = nopfn_test_find(st, mm, q.addr);
		/* The fault was a success: then there is a PTE. */
		if (!vma || !nopfn_test_fill(st, vma, &q))
			ret = -ENODATA;
		break;
	} while (!fatal_signal_pending(current));
	mmap_read_unlock(mm);
	if (!ret && !(q.flags & NOPFN_TEST_Q_PRESENT))
		ret = -EINTR;
	if (ret)
		return ret;
	return copy_to_user(argp, &q, sizeof(q)) ? -EFAULT : 0;
}

/* End every wait of @st now, and open its gate. */
static void nopfn_test_wake(struct nopfn_test_state *st)
{
	unsigned int i;

	mutex_lock(&st->lock);
	for (i = 0; i < NOPFN_TEST_MAX_PAGES; i++) {
		if (st->pages[i].wait_armed)
			WRITE_ONCE(st->pages[i].wait_end, jiffies);
	}
	WRITE_ONCE(st->gate_open, true);
	mutex_unlock(&st->lock);
	wake_up_all(&st->wq);
}

/*
 * Revoke the PFNs of a range of pages, as a driver whose memory goes away
 * does (Documentation/mm/nopfn.rst, "Revoking PFNs"): change the state in a
 * write section of the revoke count, then zap the PTEs.
 */
static long nopfn_test_revoke(struct file *file, struct nopfn_test_state *st,
			      void __user *argp)
{
	struct nopfn_test_pages req;
	unsigned long i;

	if (copy_from_user(&req, argp, sizeof(req)))
		return -EFAULT;
	if (!req.count || req.first >= NOPFN_TEST_MAX_PAGES ||
	    req.count > NOPFN_TEST_MAX_PAGES - req.first || req.behaviour ||
	    req.sleep_ms || req.value)
		return -EINVAL;

	mutex_lock(&st->lock);
	spin_lock(&st->seq_lock);
	write_seqcount_begin(&st->seq);
	for (i = req.first; i < req.first + req.count; i++)
		st->pages[i].behaviour = NOPFN_TEST_SIGBUS;
	write_seqcount_end(&st->seq);
	spin_unlock(&st->seq_lock);
	mutex_unlock(&st->lock);

	nopfn_revoke_range(file->f_mapping, (loff_t)req.first << PAGE_SHIFT,
			   (loff_t)req.count << PAGE_SHIFT);
	return 0;
}

static long nopfn_test_ioctl(struct file *file, unsigned int cmd,
			     unsigned long arg)
{
	struct nopfn_test_state *st = file->private_data;
	void __user *argp = (void __user *)arg;
	u32 mode;

	switch (cmd) {
	case NOPFN_TEST_IOC_SET_PAGES:
		return nopfn_test_set_pages(st, argp);
	case NOPFN_TEST_IOC_SET_MAP_MODE:
		if (get_user(mode, (u32 __user *)argp))
			return -EFAULT;
		if (mode >= NOPFN_TEST_NR_MAP_MODES)
			return -EINVAL;
		mutex_lock(&st->lock);
		st->map_mode = mode;
		mutex_unlock(&st->lock);
		return 0;
	case NOPFN_TEST_IOC_GET_STATS:
		return nopfn_test_get_stats(st, argp);
	case NOPFN_TEST_IOC_RESET_STATS:
		nopfn_test_reset_stats(st);
		return 0;
	case NOPFN_TEST_IOC_QUERY:
		return nopfn_test_query(st, argp);
	case NOPFN_TEST_IOC_WAKE:
		nopfn_test_wake(st);
		return 0;
	case NOPFN_TEST_IOC_REVOKE:
		return nopfn_test_revoke(file, st, argp);
	case NOPFN_TEST_IOC_FIXUP:
		return nopfn_test_fixup(st, argp);
	default:
		return -ENOTTY;
	}
}

static const struct file_operations nopfn_test_fops = {
	.owner = THIS_MODULE,
	.open = nopfn_test_open,
	.release = nopfn_test_release,
	.mmap = nopfn_test_mmap,
	.unlocked_ioctl = nopfn_test_ioctl,
	.compat_ioctl = compat_ptr_ioctl,
	.llseek = no_llseek,
};

static struct miscdevice nopfn_test_dev = {
	.minor = MISC_DYNAMIC_MINOR,
	.name = "nopfn_test",
	.fops = &nopfn_test_fops,
	.mode = 0600,
};

static int __init nopfn_test_init(void)
{
	if (carve_size) {
		if (!PAGE_ALIGNED(carve_phys) || !PAGE_ALIGNED(carve_size) ||
		    carve_phys + carve_size < carve_phys) {
			pr_err("carve_phys=%#lx carve_size=%#lx: not page aligned or wrapping\n",
			       carve_phys, carve_size);
			return -EINVAL;
		}
		carve_pfn = PHYS_PFN(carve_phys);
		carve_pages = carve_size >> PAGE_SHIFT;
		if (!nopfn_test_carve_unmanaged()) {
			pr_err("carve-out %#lx+%#lx is managed by the kernel (it has struct pages): not RAM hidden by mem=\n",
			       carve_phys, carve_size);
			return -EBUSY;
		}
	}
	return misc_register(&nopfn_test_dev);
}

static void __exit nopfn_test_exit(void)
{
	misc_deregister(&nopfn_test_dev);
}

module_init(nopfn_test_init);
module_exit(nopfn_test_exit);

MODULE_DESCRIPTION("Test device for the ->nopfn() fault operation");
MODULE_LICENSE("GPL");
