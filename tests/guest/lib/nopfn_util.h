/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Helpers of the tests that drive /dev/test_nopfn (lib/test_nopfn.c):
 * its ioctls (lib/nopfn_ioctl.c), threads that touch a page or send a
 * signal once the handler was called (lib/nopfn_wait.c), KTAP diagnostic
 * lines; and, from guard.h and clock.h, a guarded access that reports
 * SIGBUS/SIGSEGV, timing.
 */
#ifndef NOPFN_UTIL_H
#define NOPFN_UTIL_H

#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <setjmp.h>
#include <signal.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <time.h>
#include <unistd.h>

#include "clock.h"
#include "fault_addr.h"
#include "guard.h"
#include "test_nopfn_uapi.h"
#include "vm_util.h"

#define DEV_PATH	"/dev/test_nopfn"

/* A KTAP diagnostic line, flushed: test children end with _exit(). */
void __attribute__((format(printf, 1, 2))) diag(const char *fmt, ...);

/* ---------------------------------------------------------- the ioctls */

int open_dev(void);

/* 0, or -errno (errno set too) */
int set_pages(int fd, uint64_t first, uint64_t count, uint32_t behaviour,
	      uint32_t sleep_ms);
/* Set one page's behaviour to return @value (NOPFN_TEST_RETURN). */
int set_return(int fd, uint64_t page, uint64_t value);
int revoke_pages(int fd, uint64_t first, uint64_t count);
int set_map_mode(int fd, uint32_t mode);
int query(int fd, const void *addr, struct nopfn_test_query *q);
/*
 * The PTE of @addr made as KVM and VFIO make it: follow_pte(), else
 * fixup_user_fault() and follow_pte() (NOPFN_TEST_IOC_FIXUP).
 */
int fixup(int fd, const void *addr, bool write, struct nopfn_test_query *q);

/* struct nopfn_test_stats, signed: compared with plain numbers. */
struct counts {
	long long calls, ret_pfn, ret_sigbus, ret_oom, ret_refault, ret_retry;
	long long lock_kept, ram_pages, all_ram_pages, all_states;
	long long carve_pfn, carve_pages;
	long long fault_calls, mkwrite_calls, misuse_released, twice_released;
	long long gate_waiting, all_releases;
	/* -1 on a tree whose test module does not count it (6.1) */
	long long vma_locked;
};

/* -1 everywhere if NOPFN_TEST_IOC_GET_STATS fails */
struct counts stats(int fd);

/* @npages pages of @fd from page @pgoff, or NULL */
char *map_pages(int fd, size_t npages, uint64_t pgoff, int prot, int flags);

/* ---------------------------------------------------- faults that wait */

/* A SIGUSR1 handler that counts and stamps its runs. */
extern volatile sig_atomic_t usr1_runs;
extern volatile double usr1_when;
void install_usr1(void);

/*
 * Wait (at most 5 s) until the module has seen at least @n ->nopfn() calls
 * on @fd, then @extra_ms more: the faulting thread is then inside its wait.
 */
bool wait_for_calls(int fd, long long n, unsigned int extra_ms);

/* A thread that reads one byte of a mapping and times it. */
struct toucher {
	pthread_t thread;
	volatile char *addr;
	char val;
	double start, end;
};

int toucher_start(struct toucher *t, volatile char *addr);

/*
 * A thread that sends SIGUSR1 to @target once @fd saw a ->nopfn() call
 * (and @delay_ms more): pthread_create() it with signaller_fn.
 */
struct signaller {
	pthread_t thread;
	pthread_t target;
	int fd;
	unsigned int delay_ms;
	bool ok;
	double sent;
};

void *signaller_fn(void *arg);

#endif /* NOPFN_UTIL_H */
