/* SPDX-License-Identifier: GPL-2.0 */
/*
 * What the out-of-tree modules need that differs between the kernel trees
 * the ->nopfn() series applies to (linux-source-6.1 and -6.12), in one
 * place: each helper is the newer kernel's interface, and the older
 * kernel's code for it.  Kbuild probes the tree's headers for what it has
 * (KCOMPAT_HAVE_*), rather than comparing version numbers.
 */
#ifndef NOPFN_KCOMPAT_H
#define NOPFN_KCOMPAT_H

#include <linux/mm.h>

#if defined(CONFIG_RISCV) && defined(KCOMPAT_HAVE_ASM_CPUFEATURE_H)
/* riscv_isa_extension_available() left asm/hwcap.h for this in 6.4 */
#include <asm/cpufeature.h>
#endif

#ifndef KCOMPAT_HAVE_VM_FLAGS_SET
/* vma->vm_flags became read-only in 6.3: vm_flags_set() writes it. */
static inline void vm_flags_set(struct vm_area_struct *vma,
				vm_flags_t flags)
{
	vma->vm_flags |= flags;
}
#endif

/**
 * kcompat_read_pte - the PTE that maps @addr in @vma
 * @vma: a VM_IO or VM_PFNMAP VMA, with mmap_lock held for read
 * @addr: the address
 * @pte: out: the PTE, read under its page table lock
 *
 * follow_pte() on 6.1; follow_pfnmap_start() since 6.12, where
 * follow_pte() is gone.  A PFN mapping by PMD or PUD has no PTE: -ENXIO.
 *
 * Return: 0, or -ENXIO if no PTE maps @addr.
 */
static inline int kcompat_read_pte(struct vm_area_struct *vma,
				   unsigned long addr, pte_t *pte)
{
#ifdef KCOMPAT_HAVE_FOLLOW_PFNMAP
	struct follow_pfnmap_args args = { .vma = vma, .address = addr };
	int ret = 0;

	if (follow_pfnmap_start(&args))
		return -ENXIO;
	/* Not an interface, but the PTE the lookup holds locked. */
	if (args.ptep)
		*pte = ptep_get(args.ptep);
	else
		ret = -ENXIO;
	follow_pfnmap_end(&args);
	return ret;
#else
	spinlock_t *ptl;	/* the PTE lock, taken by follow_pte() */
	pte_t *ptep;

	if (follow_pte(vma->vm_mm, addr, &ptep, &ptl))
		return -ENXIO;
	*pte = ptep_get(ptep);
	pte_unmap_unlock(ptep, ptl);
	return 0;
#endif
}

#endif /* NOPFN_KCOMPAT_H */
