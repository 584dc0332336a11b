/* SPDX-License-Identifier: GPL-2.0 */
/*
 * The kernel's fault injection (CONFIG_FAULT_INJECTION_DEBUG_FS): one
 * directory such as /sys/kernel/debug/fail_page_alloc, its attributes
 * saved, set for a test, and put back.
 */
#ifndef GUEST_FAULT_INJECT_H
#define GUEST_FAULT_INJECT_H

#include <stdbool.h>

#define FI_NR_ATTRS	9

struct fault_inject {
	const char *dir;	/* with a trailing '/' */
	bool have;		/* saved by fi_save(), to be put back */
	long long times;	/* the "times" fi_set() wrote */
	char saved[FI_NR_ATTRS][32];
};

/*
 * Save @fi->dir's attributes: 0, or -errno (ENOENT: not in this kernel).
 * Those the directory lacks (failslab has no min-order) are left alone
 * by fi_set() and fi_restore().
 */
int fi_save(struct fault_inject *fi);

/*
 * Fail allocations of the tasks that ask for it (task-filter: their
 * make-it-fail), of any order and gfp mask, quietly (verbose 0), with
 * probability @percent, at most @times of them: 0, or -errno.
 */
int fi_set(struct fault_inject *fi, unsigned int percent, long long times);

/*
 * Stop injecting and put every attribute back (probability last): how
 * many failures were injected, or -1 if @fi was not saved.
 */
long long fi_restore(struct fault_inject *fi);

#endif /* GUEST_FAULT_INJECT_H */
