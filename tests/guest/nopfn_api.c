// SPDX-License-Identifier: GPL-2.0
/*
 * The rules of the ->nopfn() interface (Documentation/mm/nopfn.rst in the
 * patched tree), one case each, driven through /dev/nopfn_test
 * (driver/nopfn_test.c): what the core does with a handler's misuse
 * (reserved values, nopfn_release_mmap_lock() misused), the lock kept for
 * a retried fault and for fixup_user_fault(), GUP refused, a persistent
 * NOPFN_OOM, a revoke racing a fault, the VMA unmapped, moved or closed
 * and the module unloaded while a handler waits without mmap_lock, SIGKILL
 * during a wait, ->fault() beside ->nopfn(), ->pfn_mkwrite(), a private
 * read-only mapping and userfaultfd.
 *
 * A misuse costs one warning: each such test clears the WARN_ONCE() flags
 * (debugfs clear_warn_once), provokes it twice and counts the splats in
 * /dev/kmsg, so that it holds in any boot and on a rerun.
 *
 * The last test unloads nopfn_test and loads it again, with the
 * parameters it had.
 */
#include <errno.h>
#include <fcntl.h>
#include <linux/futex.h>
#include <linux/userfaultfd.h>
#include <pthread.h>
#include <signal.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <sys/syscall.h>
#include <sys/uio.h>
#include <sys/wait.h>
#include <unistd.h>

/* 6.1's harness has an unused parameter of its own. */
#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Wunused-parameter"
#include "kselftest_harness.h"
#pragma GCC diagnostic pop
#include "fault_inject.h"
#include "files.h"
#include "kmsg_check.h"
#include "nopfn_fixture.h"

/* The kernel's NOPFN_RETRY (include/linux/mm.h), as ->nopfn() returns it. */
#define RET_NOPFN_RETRY		((uint64_t)-4)
/* A value of the reserved IS_ERR_VALUE() range that means nothing. */
#define RET_RESERVED		((uint64_t)-4095)

#define MODULE_KO		"/modules/nopfn_test.ko"
#define MODULE_PARAMS		"/sys/module/nopfn_test/parameters/"

/* ----------------------------------------------------------- helpers */

/* Re-arm every WARN_ONCE(): 0, or -errno. */
static int clear_warn_once(void)
{
	if (write_file("/sys/kernel/debug/clear_warn_once", "1"))
		return -errno;
	return 0;
}

/* A thread that reads one byte through probe(), and what it got. */
struct prober {
	pthread_t thread;
	volatile char *addr;
	char val;
	int sig;		/* 0, or the signal the access got */
	siginfo_t si;
	double start, end;
};

static void *prober_fn(void *arg)
{
	struct prober *t = arg;

	t->start = now_ms();
	t->sig = probe(t->addr, false, &t->val, &t->si);
	t->end = now_ms();
	return NULL;
}

static int prober_start(struct prober *t, volatile char *addr)
{
	memset(t, 0, sizeof(*t));
	t->addr = addr;
	return pthread_create(&t->thread, NULL, prober_fn, t);
}

/* A thread that makes a PTE through fixup() (NOPFN_TEST_IOC_FIXUP). */
struct fixer {
	pthread_t thread;
	int fd, ret;
	char *addr;
	struct nopfn_test_query q;
};

static void *fixer_fn(void *arg)
{
	struct fixer *f = arg;

	f->ret = fixup(f->fd, f->addr, false, &f->q);
	return NULL;
}

static long long read_param(const char *name)
{
	char path[128];

	snprintf(path, sizeof(path), MODULE_PARAMS "%s", name);
	return read_number(path);
}

/*
 * Wait (at most 5 s) until some handler of the module waits at a gate,
 * read through the module parameter, which pins nothing; then @extra_ms.
 */
static bool wait_for_gate(unsigned int extra_ms)
{
	double end = now_ms() + 5000;

	while (read_param("gate_waiting") < 1) {
		if (now_ms() > end)
			return false;
		sleep_ms(2);
	}
	sleep_ms(extra_ms);
	return true;
}

/* ----------------------------------------------------------- fixture */

FIXTURE(api) {
	int fd;		/* the file under test */
	int watch;	/* a second file, for module-wide counters */
	struct counts base;
};

NOPFN_FIXTURE_SETUP(api)

/*
 * Two faults on pages of @beh_ (with @val_ for NOPFN_TEST_RETURN)
 * must get @want_sig each and, together, exactly one warning splat that
 * contains @warning, and no other report.
 */
#define ASSERT_MISUSE(beh_, val_, want_sig, warning) do {		\
	const char *__allow[] = { warning, NULL };			\
	struct kmsg_check __k;						\
	siginfo_t __si;							\
	char *__m, __v = 0;						\
	int __i;							\
									\
	ASSERT_EQ(0, clear_warn_once());				\
	kmsg_open(&__k);						\
	ASSERT_LE(0, __k.fd);						\
	for (__i = 0; __i < 2; __i++) {					\
		struct nopfn_test_pages __req = {			\
			.first = __i, .count = 1,			\
			.behaviour = (beh_), .value = (val_),		\
		};							\
		ASSERT_EQ(0, ioctl(self->fd, NOPFN_TEST_IOC_SET_PAGES,	\
				   &__req));				\
	}								\
	__m = map_pages(self->fd, 2, 0, PROT_READ | PROT_WRITE,	\
			MAP_SHARED);					\
	ASSERT_NE(NULL, __m);						\
	for (__i = 0; __i < 2; __i++) {					\
		ASSERT_EQ((want_sig), probe(__m + __i * psz + 16, false,\
					    &__v, &__si)) {		\
			TH_LOG("fault %d: signal %d, want %d", __i,	\
			       guard_info.si_signo, (want_sig));	\
		}							\
		if (want_sig) {						\
			ASSERT_EQ(BUS_ADRERR, __si.si_code);		\
			ASSERT_EQ(fault_addr(__m + __i * psz + 16),	\
				  __si.si_addr);			\
		}							\
	}								\
	ASSERT_EQ(0, kmsg_scan(&__k, __allow)) {			\
		TH_LOG("unexpected kernel report: %s", __k.first);	\
	}								\
	ASSERT_EQ(1UL, __k.allowed) {					\
		TH_LOG("%lu warnings containing \"%s\", want 1",	\
		       __k.allowed, warning);				\
	}								\
	kmsg_close(&__k);						\
	ASSERT_EQ(0, munmap(__m, 2 * psz));				\
} while (0)

/* ------------------------------------------------------------- misuse */

/* A value of the reserved range: one warning, SIGBUS each time. */
TEST_F(api, reserved_value_warns_once)
{
	ASSERT_MISUSE(NOPFN_TEST_RETURN, RET_RESERVED, SIGBUS,
		      "->nopfn() returned reserved value");
	ASSERT_EQ(2, stats(self->fd).calls);
	ASSERT_EQ(2, stats(self->fd).ret_pfn);	/* counted as returned */
}

/* NOPFN_RETRY without nopfn_release_mmap_lock(): lock kept, SIGBUS. */
TEST_F(api, retry_without_release_warns_once)
{
	ASSERT_MISUSE(NOPFN_TEST_RETURN, RET_NOPFN_RETRY, SIGBUS,
		      "NOPFN_RETRY without nopfn_release_mmap_lock()");
	ASSERT_EQ(2, stats(self->fd).ret_retry);
}

/*
 * A PFN after releasing the lock: the VMA may be gone, so nothing is
 * mapped; the core takes the lock back and the fault gets SIGBUS.
 */
TEST_F(api, release_then_pfn_warns_once)
{
	void *a;

	ASSERT_MISUSE(NOPFN_TEST_RELEASE_RETURN, 0, SIGBUS,
		      "->nopfn() released mmap_lock, returned");
	ASSERT_EQ(2, stats(self->fd).calls);
	ASSERT_EQ(0, stats(self->fd).lock_kept);
	/* mmap_lock is balanced: a writer of it still gets through. */
	a = mmap(NULL, psz, PROT_READ, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	ASSERT_NE(MAP_FAILED, a);
	ASSERT_EQ(0, munmap(a, psz));
}

/* A second release in the same call: warns, the fault is retried. */
TEST_F(api, release_twice_warns_once)
{
	struct counts s;

	ASSERT_MISUSE(NOPFN_TEST_RELEASE_TWICE, 0, 0,
		      "nopfn_release_mmap_lock() called twice");
	s = stats(self->fd);
	ASSERT_EQ(2, s.twice_released);
	ASSERT_EQ(2, s.ret_retry);
	/* The retries could not release the lock again. */
	ASSERT_EQ(2, s.lock_kept);
	ASSERT_EQ(2, s.ret_pfn);
}

/*
 * nopfn_release_mmap_lock() from ->pfn_mkwrite(): not the ->nopfn() call
 * of do_nopfn(), so the helper warns once and keeps the lock.
 */
TEST_F(api, release_outside_nopfn_refused)
{
	const char *allow[] = { "nopfn_release_mmap_lock() outside ->nopfn()",
				NULL };
	struct kmsg_check k;
	struct counts s;
	char *m;
	int i;

	ASSERT_EQ(0, clear_warn_once());
	kmsg_open(&k);
	ASSERT_LE(0, k.fd);
	ASSERT_EQ(0, set_map_mode(self->fd, NOPFN_TEST_MAP_MKWRITE_MISUSE));
	m = map_pages(self->fd, 2, 0, PROT_READ | PROT_WRITE, MAP_SHARED);
	ASSERT_NE(NULL, m);
	for (i = 0; i < 2; i++) {
		ASSERT_EQ(0, m[i * psz]);	/* ->nopfn(): read-only PTE */
		m[i * psz] = 'w';		/* ->pfn_mkwrite() */
		ASSERT_EQ('w', m[i * psz]);
	}
	s = stats(self->fd);
	ASSERT_EQ(2, s.mkwrite_calls);
	ASSERT_EQ(0, s.misuse_released) {
		TH_LOG("the helper released mmap_lock %lld times from ->pfn_mkwrite()",
		       s.misuse_released);
	}
	ASSERT_EQ(2, s.calls);
	ASSERT_EQ(0, kmsg_scan(&k, allow)) {
		TH_LOG("unexpected kernel report: %s", k.first);
	}
	ASSERT_EQ(1UL, k.allowed);
	kmsg_close(&k);
	ASSERT_EQ(0, munmap(m, 2 * psz));
}

/* ------------------------------------------------------ the lock kept */

/*
 * The retried fault (FAULT_FLAG_TRIED) cannot release mmap_lock again: the
 * second half of the wait holds it, and another thread's mmap() waits.
 */
TEST_F(api, lock_kept_on_retry)
{
	const unsigned int wait_ms = 600;
	double during[2], t0;
	struct toucher t;
	struct counts s;
	void *a;
	char *m;
	int k;

	m = map_page_with(_metadata, self->fd, NOPFN_TEST_SLEEP_SPLIT, wait_ms);
	ASSERT_EQ(0, toucher_start(&t, m));
	for (k = 0; k < 2; k++) {
		/* the first call (unlocked), then the retry (locked) */
		ASSERT_TRUE(wait_for_calls(self->fd, k + 1, 30));
		t0 = now_ms();
		a = mmap(NULL, psz, PROT_READ, MAP_PRIVATE | MAP_ANONYMOUS,
			 -1, 0);
		during[k] = now_ms() - t0;
		ASSERT_NE(MAP_FAILED, a);
		ASSERT_EQ(0, munmap(a, psz));
	}
	pthread_join(t.thread, NULL);
	s = stats(self->fd);
	diag("mmap() during the unlocked half: %.0f ms, during the locked half: %.0f ms",
	     during[0], during[1]);
	ASSERT_EQ(0, t.val);
	ASSERT_EQ(2, s.calls);
	ASSERT_EQ(1, s.ret_retry);
	ASSERT_EQ(1, s.lock_kept);
	ASSERT_EQ(1, s.ret_pfn);
	ASSERT_GT(wait_ms / 6, during[0]);
	ASSERT_LT(wait_ms / 6, during[1]);
	ASSERT_LE(wait_ms * 3 / 4, t.end - t.start);
	ASSERT_EQ(0, munmap(m, psz));
}

/*
 * fixup_user_fault() without FAULT_FLAG_ALLOW_RETRY, through a futex op on
 * a nopfn page: FUTEX_WAKE_OP's atomic op faults with page faults
 * disabled, futex fixes the page up and tries again. The handler may not
 * release the lock there and waits holding it; the op lands.
 */
TEST_F(api, futex_op_through_fixup_user_fault)
{
	const unsigned int wait_ms = 200;
	uint32_t word = 0;
	struct counts s;
	double t0, t1;
	long ret;
	char *m;

	m = map_page_with(_metadata, self->fd, NOPFN_TEST_SLEEP_UNLOCKED,
			  wait_ms);
	t0 = now_ms();
	ret = syscall(SYS_futex, &word, FUTEX_WAKE_OP | FUTEX_PRIVATE_FLAG,
		      0, (void *)0, (uint32_t *)m,
		      FUTEX_OP(FUTEX_OP_ADD, 5, FUTEX_OP_CMP_EQ, 0));
	t1 = now_ms();
	if (ret < 0 && errno == ENOSYS)
		SKIP(return, "no futex() in this kernel");
	ASSERT_EQ(0, ret) {
		TH_LOG("FUTEX_WAKE_OP: %s", strerror(errno));
	}
	ASSERT_EQ(5U, *(volatile uint32_t *)m);
	s = stats(self->fd);
	ASSERT_EQ(1, s.lock_kept);
	ASSERT_EQ(0, s.ret_retry);
	ASSERT_EQ(1, s.ret_pfn);
	ASSERT_LE(wait_ms * 3 / 4, t1 - t0);
	ASSERT_EQ(0, munmap(m, psz));
}

/*
 * fixup_user_fault() as KVM (hva_to_pfn_remapped()) and VFIO
 * (follow_fault_pfn()) use it: a success must leave a PTE for their
 * follow_pte(), also where ->nopfn() said NOPFN_REFAULT (twice here), and
 * for a write fault a writable one.
 */
TEST_F(api, fixup_user_fault_after_refault_maps)
{
	struct nopfn_test_pages req = {
		.first = 0, .count = 1,
		.behaviour = NOPFN_TEST_SLEEP_REFAULT, .value = 2,
	};
	struct nopfn_test_query q;
	struct counts s;
	char *m;
	int ret;

	ASSERT_EQ(0, ioctl(self->fd, NOPFN_TEST_IOC_SET_PAGES, &req));
	m = map_pages(self->fd, 1, 0, PROT_READ | PROT_WRITE, MAP_SHARED);
	ASSERT_NE(NULL, m);
	ret = fixup(self->fd, m, true, &q);
	s = stats(self->fd);
	ASSERT_EQ(0, ret) {
		TH_LOG("fixup_user_fault() + follow_pte(): %s after %lld calls, %lld refaults%s",
		       strerror(-ret), s.calls, s.ret_refault,
		       ret == -ENODATA ?
		       " (the fault succeeded and left no PTE)" : "");
	}
	ASSERT_TRUE(!!(q.flags & NOPFN_TEST_Q_PRESENT));
	ASSERT_TRUE(!!(q.flags & NOPFN_TEST_Q_WRITE));
	ASSERT_NE(0ULL, q.ram_pfn);
	ASSERT_EQ(q.ram_pfn, q.pfn);
	ASSERT_EQ(3, s.calls);
	ASSERT_EQ(2, s.ret_refault);
	ASSERT_EQ(1, s.ret_pfn);
	ASSERT_EQ(0, munmap(m, psz));
}

/*
 * The same where the PFN the handler looked up was revoked during the
 * fault and the page then restored: the core installs nothing for the
 * stale lookup (nopfn_read_begin()), and fixup_user_fault() must still end
 * with the PTE of the page as it is now.
 */
TEST_F(api, fixup_user_fault_after_revoke_maps)
{
	struct fixer f = { .fd = self->fd };
	struct counts s;

	f.addr = map_page_with(_metadata, self->fd, NOPFN_TEST_GATE, 2000);
	ASSERT_EQ(0, ioctl(self->fd, NOPFN_TEST_IOC_RESET_STATS));
	ASSERT_EQ(0, pthread_create(&f.thread, NULL, fixer_fn, &f));
	ASSERT_TRUE(wait_for_gate(20));
	ASSERT_EQ(0, revoke_pages(self->fd, 0, 1));
	ASSERT_EQ(0, set_pages(self->fd, 0, 1, NOPFN_TEST_RAM, 0));
	ASSERT_EQ(0, ioctl(self->fd, NOPFN_TEST_IOC_WAKE));
	pthread_join(f.thread, NULL);
	s = stats(self->fd);
	ASSERT_EQ(0, f.ret) {
		TH_LOG("fixup_user_fault() + follow_pte(): %s after %lld calls%s",
		       strerror(-f.ret), s.calls, f.ret == -ENODATA ?
		       " (the fault succeeded and left no PTE)" : "");
	}
	ASSERT_TRUE(!!(f.q.flags & NOPFN_TEST_Q_PRESENT));
	ASSERT_EQ(f.q.ram_pfn, f.q.pfn);
	/* the stale lookup, then the page as restored */
	ASSERT_EQ(2, s.calls);
	ASSERT_EQ(2, s.ret_pfn);
	ASSERT_EQ(0, munmap(f.addr, psz));
}

/* ---------------------------------------------------------------- GUP */

/*
 * get_user_pages() refuses VM_PFNMAP: process_vm_readv() of a nopfn page
 * fails with EFAULT without calling the handler, mapped or not.
 */
TEST_F(api, gup_process_vm_readv_refused)
{
	char buf[16], *m;
	struct iovec local = { buf, sizeof(buf) }, remote;
	ssize_t n;

	m = map_pages(self->fd, 2, 0, PROT_READ | PROT_WRITE, MAP_SHARED);
	ASSERT_NE(NULL, m);
	m[0] = 'x';			/* page 0 mapped, page 1 not */
	remote.iov_base = m;
	remote.iov_len = sizeof(buf);
	n = process_vm_readv(getpid(), &local, 1, &remote, 1, 0);
	if (n < 0 && errno == ENOSYS)
		SKIP(return, "no process_vm_readv() (CONFIG_CROSS_MEMORY_ATTACH)");
	ASSERT_EQ(-1, n);
	ASSERT_EQ(EFAULT, errno);
	remote.iov_base = m + psz;
	ASSERT_EQ(-1, process_vm_readv(getpid(), &local, 1, &remote, 1, 0));
	ASSERT_EQ(EFAULT, errno);
	ASSERT_EQ(1, stats(self->fd).calls);
	ASSERT_EQ(0, munmap(m, 2 * psz));
}

/* vmsplice() pins the pages it splices: EFAULT on a nopfn page. */
TEST_F(api, gup_vmsplice_refused)
{
	struct iovec iov;
	int pipefd[2];
	char *m;

	ASSERT_EQ(0, pipe(pipefd));
	m = map_pages(self->fd, 2, 0, PROT_READ | PROT_WRITE, MAP_SHARED);
	ASSERT_NE(NULL, m);
	m[0] = 'x';
	iov.iov_base = m;
	iov.iov_len = psz;
	ASSERT_EQ(-1, vmsplice(pipefd[1], &iov, 1, 0));
	ASSERT_EQ(EFAULT, errno);
	iov.iov_base = m + psz;
	ASSERT_EQ(-1, vmsplice(pipefd[1], &iov, 1, 0));
	ASSERT_EQ(EFAULT, errno);
	ASSERT_EQ(1, stats(self->fd).calls);
	ASSERT_EQ(0, munmap(m, 2 * psz));
	close(pipefd[0]);
	close(pipefd[1]);
}

/* O_DIRECT I/O into a nopfn buffer: the pages cannot be pinned. */
TEST_F(api, gup_o_direct_refused)
{
	const char *path = "/tmp/nopfn_api.odirect";
	char *m;
	int fd;

	fd = open(path, O_CREAT | O_RDWR | O_TRUNC | O_DIRECT, 0600);
	if (fd < 0 && errno == EINVAL)
		SKIP(return, "no file system here takes O_DIRECT (the guest has only tmpfs, which has no O_DIRECT in 6.1)");
	ASSERT_LE(0, fd);
	unlink(path);
	ASSERT_EQ(0, ftruncate(fd, psz));
	m = map_pages(self->fd, 1, 0, PROT_READ | PROT_WRITE, MAP_SHARED);
	ASSERT_NE(NULL, m);
	ASSERT_EQ(-1, pread(fd, m, psz, 0));
	ASSERT_EQ(EFAULT, errno);
	ASSERT_EQ(0, munmap(m, psz));
	close(fd);
}

/* ------------------------------------------------------- out of memory */

/*
 * A failure that persists (NOPFN_OOM every time) ends the task's access
 * with SIGBUS at once; 6.1's pagefault_out_of_memory() would have the
 * access fault again for ever. The child gets 5 s before SIGALRM.
 */
TEST_F(api, persistent_oom_is_sigbus)
{
	int status;
	pid_t pid;
	char *m;

	m = map_page_with(_metadata, self->fd, NOPFN_TEST_OOM, 0);
	pid = fork();
	ASSERT_LE(0, pid);
	if (pid == 0) {
		siginfo_t si;
		char v;

		alarm(5);
		if (probe(m + 64, true, &v, &si) != SIGBUS)
			_exit(1);
		_exit(si.si_code == BUS_ADRERR && si.si_addr == fault_addr(m + 64) ? 0 : 2);
	}
	ASSERT_EQ(pid, waitpid(pid, &status, 0));
	ASSERT_TRUE(WIFEXITED(status)) {
		TH_LOG("child killed by signal %d after %lld ->nopfn() calls",
		       WTERMSIG(status), stats(self->fd).calls);
	}
	ASSERT_EQ(0, WEXITSTATUS(status));
	ASSERT_EQ(1, stats(self->fd).calls);
	ASSERT_EQ(1, stats(self->fd).ret_oom);
	ASSERT_EQ(0, munmap(m, psz));
}

/*
 * The kernel's page allocation fault injection (CONFIG_FAIL_PAGE_ALLOC) for
 * the calling thread only: its next @times page allocations fail, whatever
 * their order and gfp mask. 0, or -errno (ENOENT: no fail_page_alloc in this
 * kernel). fail_alloc_stop() puts every attribute back and returns how many
 * failures were injected.
 */
static struct fault_inject fpa = { .dir = "/sys/kernel/debug/fail_page_alloc/" };

static int fail_alloc_start(unsigned int times)
{
	int ret = fi_save(&fpa);

	if (ret)
		return ret;
	/* The allocation failure reports from here on are ours. */
	if (kmsg_injection(true))
		return -errno;
	ret = fi_set(&fpa, 100, times);
	if (ret)
		return ret;
	/* Last: nothing allocates after this write has set the flag. */
	if (write_file("/proc/thread-self/make-it-fail", "1"))
		return -errno;
	return 0;
}

static long long fail_alloc_stop(void)
{
	long long injected;

	write_file("/proc/thread-self/make-it-fail", "0");
	injected = fi_restore(&fpa);
	kmsg_injection(false);
	return injected;
}

/*
 * The other out-of-memory source of a ->nopfn() fault: the handler found
 * its PFN, but the page table to put it in could not be allocated
 * (insert_pfn()'s VM_FAULT_OOM). It is treated as NOPFN_OOM is: SIGBUS,
 * not a VM_FAULT_OOM that pagefault_out_of_memory() only retries with a
 * "leaked out" warning. Page 0 is mapped twice, 4 MiB apart within one
 * gigabyte: the first mapping's fault allocates the handler's page and
 * the page tables above the second's, so the second's fault allocates
 * exactly one page, its page table, and that allocation is made to fail.
 */
TEST_F(api, page_table_oom_is_sigbus)
{
	const size_t span = 4UL << 20, gig = 1UL << 30;
	char *res, *a, *b, v = 0;
	uintptr_t base;
	long long injected;
	siginfo_t si;
	int sig, ret;

	res = mmap(NULL, 4 * span, PROT_NONE,
		   MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
	ASSERT_NE(MAP_FAILED, res);
	base = ((uintptr_t)res + span - 1) & ~(uintptr_t)(span - 1);
	if ((base & ~(uintptr_t)(gig - 1)) !=
	    ((base + span) & ~(uintptr_t)(gig - 1)))
		base += span;
	a = mmap((void *)base, psz, PROT_READ | PROT_WRITE,
		 MAP_SHARED | MAP_FIXED, self->fd, 0);
	ASSERT_EQ((void *)base, a);
	b = mmap((void *)(base + span), psz, PROT_READ | PROT_WRITE,
		 MAP_SHARED | MAP_FIXED, self->fd, 0);
	ASSERT_EQ((void *)(base + span), b);
	a[8] = 'p';

	ret = fail_alloc_start(1);
	if (ret == -ENOENT) {
		ASSERT_EQ(0, munmap(res, 4 * span));
		SKIP(return, "no fail_page_alloc in this kernel (CONFIG_FAIL_PAGE_ALLOC)");
	}
	sig = ret ? -1 : probe(b + 8, false, &v, &si);
	injected = fail_alloc_stop();
	ASSERT_EQ(0, ret) {
		TH_LOG("fail_page_alloc: %s", strerror(-ret));
	}
	ASSERT_EQ(1, injected) {
		TH_LOG("%lld page allocations failed, want the page table's only",
		       injected);
	}
	ASSERT_EQ(SIGBUS, sig) {
		TH_LOG("the fault whose page table could not be allocated got signal %d (read '%c')",
		       sig, v ? v : '0');
	}
	ASSERT_EQ(BUS_ADRERR, si.si_code);
	ASSERT_EQ(fault_addr(b + 8), si.si_addr);
	/* Not sticky: with memory, the same access maps the same page. */
	ASSERT_EQ(0, probe(b + 8, false, &v, NULL));
	ASSERT_EQ('p', v);
	/* a's fault, b's that failed, b's again */
	ASSERT_EQ(3, stats(self->fd).ret_pfn);
	ASSERT_EQ(0, munmap(res, 4 * span));
}

/* ------------------------------------------------------------- revoke */

/*
 * A revoke between the handler's lookup and the PTE: the zap finds no PTE,
 * and the PFN the handler looked up must not be installed after it. The
 * handler waits at a gate, holding mmap_lock, after its lookup; the
 * revoke runs meanwhile; the gate opens. The fault must not map the
 * revoked page: it faults again and gets NOPFN_SIGBUS.
 */
TEST_F(api, revoke_racing_fault)
{
	struct nopfn_test_query q;
	struct prober t;
	struct counts s;
	char *m, v;

	ASSERT_EQ(0, set_pages(self->fd, 0, 1, NOPFN_TEST_GATE, 2000));
	m = map_pages(self->fd, 2, 0, PROT_READ | PROT_WRITE, MAP_SHARED);
	ASSERT_NE(NULL, m);

	/* A mapped page first: the revoke zaps it, the next access fails. */
	m[psz] = 'r';
	ASSERT_EQ(0, query(self->fd, m + psz, &q));
	ASSERT_TRUE(!!(q.flags & NOPFN_TEST_Q_PRESENT));
	ASSERT_EQ(0, revoke_pages(self->fd, 1, 1));
	ASSERT_EQ(0, query(self->fd, m + psz, &q));
	ASSERT_FALSE(!!(q.flags & NOPFN_TEST_Q_PRESENT));
	ASSERT_EQ(SIGBUS, probe(m + psz, false, &v, NULL));

	/* The race. */
	ASSERT_EQ(0, ioctl(self->fd, NOPFN_TEST_IOC_RESET_STATS));
	ASSERT_EQ(0, prober_start(&t, m));
	ASSERT_TRUE(wait_for_gate(20));
	ASSERT_EQ(1, stats(self->fd).calls);
	ASSERT_EQ(0, revoke_pages(self->fd, 0, 1));
	ASSERT_EQ(0, ioctl(self->fd, NOPFN_TEST_IOC_WAKE));
	pthread_join(t.thread, NULL);
	ASSERT_EQ(0, query(self->fd, m, &q));
	s = stats(self->fd);
	ASSERT_EQ(SIGBUS, t.sig) {
		TH_LOG("the access after the revoke got signal %d, PTE %s (pfn %#llx, revoked page %#llx)",
		       t.sig, q.flags & NOPFN_TEST_Q_PRESENT ? "present" :
		       "none", (unsigned long long)q.pfn,
		       (unsigned long long)q.ram_pfn);
	}
	ASSERT_FALSE(!!(q.flags & NOPFN_TEST_Q_PRESENT));
	/* The stale PFN was returned, not installed; then SIGBUS. */
	ASSERT_EQ(2, s.calls);
	ASSERT_EQ(1, s.ret_pfn);
	ASSERT_EQ(1, s.ret_sigbus);
	ASSERT_EQ(0, munmap(m, 2 * psz));
}

/*
 * fork() copies the PTEs of a VM_PFNMAP mapping into the child: a revoke
 * must zap the child's too (nopfn_revoke_range() goes through the file's
 * mapping; zap_vma_ptes() on the revoker's VMA would not), so that the
 * child's next access faults and gets NOPFN_SIGBUS instead of reaching the
 * revoked page through its copied PTE.
 */
TEST_F(api, revoke_reaches_forked_child)
{
	int ready[2], go[2], status;
	struct nopfn_test_query q;
	pid_t pid;
	char *m, c;

	m = map_pages(self->fd, 1, 0, PROT_READ | PROT_WRITE, MAP_SHARED);
	ASSERT_NE(NULL, m);
	m[0] = 'f';
	ASSERT_EQ(0, pipe(ready));
	ASSERT_EQ(0, pipe(go));
	pid = fork();
	ASSERT_LE(0, pid);
	if (pid == 0) {
		struct nopfn_test_query cq;
		char v = 0;

		/* The PTE came with fork(): no fault needed to see it. */
		if (query(self->fd, m, &cq) ||
		    !(cq.flags & NOPFN_TEST_Q_PRESENT))
			_exit(2);
		if (m[0] != 'f' || write(ready[1], "r", 1) != 1 ||
		    read(go[0], &c, 1) != 1)
			_exit(3);
		if (query(self->fd, m, &cq) || (cq.flags & NOPFN_TEST_Q_PRESENT))
			_exit(4);
		_exit(probe(m, false, &v, NULL) == SIGBUS ? 0 : 1);
	}
	ASSERT_EQ(1, read(ready[0], &c, 1));
	ASSERT_EQ(0, revoke_pages(self->fd, 0, 1));
	ASSERT_EQ(0, query(self->fd, m, &q));
	ASSERT_FALSE(!!(q.flags & NOPFN_TEST_Q_PRESENT));
	ASSERT_EQ(1, write(go[1], "g", 1));
	ASSERT_EQ(pid, waitpid(pid, &status, 0));
	ASSERT_TRUE(WIFEXITED(status));
	ASSERT_EQ(0, WEXITSTATUS(status)) {
		static const char * const why[] = {
			"?", "read the revoked page", "no PTE after fork()",
			"a pipe failed", "its PTE survived the revoke",
		};

		TH_LOG("child: %s", why[WEXITSTATUS(status) < 5 ?
					 WEXITSTATUS(status) : 0]);
	}
	ASSERT_EQ(0, munmap(m, psz));
	close(ready[0]);
	close(ready[1]);
	close(go[0]);
	close(go[1]);
}

/* ---------------------------------------- the VMA goes during a wait */

/*
 * munmap() during a wait without mmap_lock does not wait for it; the
 * retried fault finds nothing there: SIGSEGV.
 */
TEST_F(api, munmap_during_unlocked_wait)
{
	struct prober t;
	struct counts s;
	double t0, took;
	char *m;

	m = map_page_with(_metadata, self->fd, NOPFN_TEST_GATE_UNLOCKED, 2000);
	ASSERT_EQ(0, prober_start(&t, m));
	ASSERT_TRUE(wait_for_gate(20));
	t0 = now_ms();
	ASSERT_EQ(0, munmap(m, psz));
	took = now_ms() - t0;
	ASSERT_EQ(1, stats(self->fd).gate_waiting);
	ASSERT_EQ(0, ioctl(self->fd, NOPFN_TEST_IOC_WAKE));
	pthread_join(t.thread, NULL);
	diag("munmap() during the wait: %.0f ms", took);
	ASSERT_GT(500, took);
	ASSERT_EQ(SIGSEGV, t.sig);
	ASSERT_EQ(SEGV_MAPERR, t.si.si_code);
	s = stats(self->fd);
	ASSERT_EQ(1, s.calls);
	ASSERT_EQ(1, s.ret_retry);
	ASSERT_EQ(0, s.gate_waiting);
	close(self->fd);
	self->fd = -1;
	ASSERT_NO_LEAK();
}

/*
 * mremap() moves the VMA during the wait: the retried fault at the old
 * address gets SIGSEGV, the page is there at the new one.
 */
TEST_F(api, mremap_during_unlocked_wait)
{
	struct prober t;
	char *m, *to, *moved;

	m = map_page_with(_metadata, self->fd, NOPFN_TEST_GATE_UNLOCKED, 2000);
	/* Shared: at the colour of offset 0, as m (mspec_share.c says why). */
	to = mmap(NULL, psz, PROT_NONE, MAP_SHARED | MAP_ANONYMOUS, -1, 0);
	ASSERT_NE(MAP_FAILED, to);
	ASSERT_EQ(0, prober_start(&t, m));
	ASSERT_TRUE(wait_for_gate(20));
	moved = mremap(m, psz, psz, MREMAP_MAYMOVE | MREMAP_FIXED, to);
	ASSERT_EQ(to, moved);
	ASSERT_EQ(0, ioctl(self->fd, NOPFN_TEST_IOC_WAKE));
	pthread_join(t.thread, NULL);
	ASSERT_EQ(SIGSEGV, t.sig);
	ASSERT_EQ(0, moved[0]);
	moved[1] = 'm';
	ASSERT_EQ('m', moved[1]);
	ASSERT_EQ(0, munmap(moved, psz));
}

/*
 * munmap() and close() during the wait: the core holds the file until the
 * handler has returned, so the file is released only then.
 */
TEST_F(api, close_during_unlocked_wait)
{
	const unsigned int gate_ms = 600;
	long long releases;
	struct prober t;
	char *m;

	m = map_page_with(_metadata, self->fd, NOPFN_TEST_GATE_UNLOCKED,
			  gate_ms);
	ASSERT_EQ(0, prober_start(&t, m));
	ASSERT_TRUE(wait_for_gate(20));
	releases = stats(self->watch).all_releases;
	ASSERT_EQ(0, munmap(m, psz));
	ASSERT_EQ(0, close(self->fd));
	self->fd = -1;
	sleep_ms(50);
	ASSERT_EQ(releases, stats(self->watch).all_releases);
	ASSERT_EQ(1, stats(self->watch).gate_waiting);
	pthread_join(t.thread, NULL);	/* the gate times out */
	ASSERT_EQ(SIGSEGV, t.sig);
	ASSERT_LE(gate_ms * 3 / 4, t.end - t.start);
	ASSERT_EQ(releases + 1, stats(self->watch).all_releases);
	ASSERT_NO_LEAK();
}

/*
 * SIGKILL ends a wait at once, with mmap_lock released or held: the child
 * is gone long before its 2 s gate would open.
 */
TEST_F(api, sigkill_during_wait)
{
	static const uint32_t gates[] = { NOPFN_TEST_GATE_UNLOCKED,
					  NOPFN_TEST_GATE };
	unsigned int i;

	for (i = 0; i < 2; i++) {
		double t0, took;
		int status;
		pid_t pid;
		char *m;

		ASSERT_EQ(0, set_pages(self->fd, 0, 1, gates[i], 2000));
		m = map_pages(self->fd, 1, 0, PROT_READ | PROT_WRITE,
			      MAP_SHARED);
		ASSERT_NE(NULL, m);
		pid = fork();
		ASSERT_LE(0, pid);
		if (pid == 0) {
			(void)*(volatile char *)m;
			_exit(0);
		}
		ASSERT_TRUE(wait_for_gate(20));
		t0 = now_ms();
		ASSERT_EQ(0, kill(pid, SIGKILL));
		ASSERT_EQ(pid, waitpid(pid, &status, 0));
		took = now_ms() - t0;
		diag("%s wait: child gone %.0f ms after SIGKILL",
		     i ? "locked" : "unlocked", took);
		ASSERT_TRUE(WIFSIGNALED(status));
		ASSERT_EQ(SIGKILL, WTERMSIG(status));
		ASSERT_GT(1000, took);
		ASSERT_EQ(0, munmap(m, psz));
	}
	ASSERT_EQ(0, stats(self->fd).gate_waiting);
	close(self->fd);
	self->fd = -1;
	ASSERT_NO_LEAK();
}

/*
 * SIGKILL ends a system call whose uaccess waits in the handler: write()
 * from a waiting page into a pipe (a read fault) and read() from a pipe
 * into one (a write fault). The handler waits killably and returns
 * NOPFN_REFAULT; the core must fail the kernel-mode fault for the fatal
 * signal rather than repeat it until the 2 s wait is over.
 */
TEST_F(api, sigkill_during_uaccess_wait)
{
	unsigned int i;

	for (i = 0; i < 2; i++) {
		int pipefd[2], status;
		double t0, took;
		pid_t pid;
		char *m;

		ASSERT_EQ(0, pipe(pipefd));
		ASSERT_EQ(1, write(pipefd[1], "k", 1));
		m = map_page_with(_metadata, self->fd,
				  NOPFN_TEST_SLEEP_LOCKED, 2000);
		ASSERT_EQ(0, ioctl(self->fd, NOPFN_TEST_IOC_RESET_STATS));
		pid = fork();
		ASSERT_LE(0, pid);
		if (pid == 0) {
			if (i == 0)
				_exit(write(pipefd[1], m, 1) == 1 ? 0 : 1);
			_exit(read(pipefd[0], m, 1) == 1 ? 0 : 1);
		}
		ASSERT_TRUE(wait_for_calls(self->fd, 1, 20));
		t0 = now_ms();
		ASSERT_EQ(0, kill(pid, SIGKILL));
		ASSERT_EQ(pid, waitpid(pid, &status, 0));
		took = now_ms() - t0;
		diag("%s() from a waiting page: child gone %.0f ms after SIGKILL, %lld calls",
		     i ? "read" : "write", took, stats(self->fd).calls);
		ASSERT_TRUE(WIFSIGNALED(status));
		ASSERT_EQ(SIGKILL, WTERMSIG(status));
		ASSERT_GT(1000, took);
		ASSERT_EQ(0, munmap(m, psz));
		close(pipefd[0]);
		close(pipefd[1]);
	}
}

/* ----------------------------------------------------- other vm_ops */

/* ->fault() beside ->nopfn(): the core calls ->fault(). */
TEST_F(api, fault_wins_over_nopfn)
{
	struct nopfn_test_query q;
	struct counts s;
	char *m;

	ASSERT_EQ(0, set_map_mode(self->fd, NOPFN_TEST_MAP_FAULT));
	m = map_pages(self->fd, 1, 0, PROT_READ | PROT_WRITE, MAP_SHARED);
	ASSERT_NE(NULL, m);
	m[3] = 'f';
	ASSERT_EQ('f', m[3]);
	s = stats(self->fd);
	ASSERT_EQ(1, s.fault_calls);
	ASSERT_EQ(0, s.calls);
	ASSERT_EQ(0, query(self->fd, m, &q));
	ASSERT_TRUE(!!(q.flags & NOPFN_TEST_Q_PRESENT));
	ASSERT_EQ(q.ram_pfn, q.pfn);
	ASSERT_EQ(0, munmap(m, psz));
}

/*
 * ->pfn_mkwrite(): ->nopfn() maps a read-only PTE, as vm_page_prot asks,
 * even for a write fault; the write reaches ->pfn_mkwrite().
 */
TEST_F(api, pfn_mkwrite_sees_first_write)
{
	struct nopfn_test_query q;
	struct counts s;
	char *m;

	ASSERT_EQ(0, set_map_mode(self->fd, NOPFN_TEST_MAP_MKWRITE));
	m = map_pages(self->fd, 2, 0, PROT_READ | PROT_WRITE, MAP_SHARED);
	ASSERT_NE(NULL, m);

	ASSERT_EQ(0, m[0]);
	ASSERT_EQ(0, query(self->fd, m, &q));
	ASSERT_TRUE(!!(q.flags & NOPFN_TEST_Q_PRESENT));
	ASSERT_FALSE(!!(q.flags & NOPFN_TEST_Q_WRITE));
	ASSERT_EQ(0, stats(self->fd).mkwrite_calls);
	m[0] = 'a';
	ASSERT_EQ(1, stats(self->fd).mkwrite_calls);
	ASSERT_EQ(0, query(self->fd, m, &q));
	ASSERT_TRUE(!!(q.flags & NOPFN_TEST_Q_WRITE));

	m[psz] = 'b';		/* a write first: both calls */
	s = stats(self->fd);
	ASSERT_EQ(2, s.calls);
	ASSERT_EQ(2, s.mkwrite_calls);
	ASSERT_EQ('b', m[psz]);
	ASSERT_EQ(0, munmap(m, 2 * psz));
}

/*
 * A private read-only mapping (MAP_SHARED of a file opened read-only: no
 * VM_SHARED, no VM_MAYWRITE) is not copy-on-write and is served; it can
 * never become writable. MAP_PRIVATE of the same file keeps VM_MAYWRITE,
 * is copy-on-write and is refused.
 */
TEST_F(api, private_readonly_mapping)
{
	struct nopfn_test_query q;
	char *m;
	int ro;

	ro = open(DEV_PATH, O_RDONLY | O_CLOEXEC);
	ASSERT_LE(0, ro);
	ASSERT_EQ(NULL, map_pages(ro, 1, 0, PROT_READ, MAP_PRIVATE));
	ASSERT_EQ(EINVAL, errno);
	m = map_pages(ro, 2, 0, PROT_READ, MAP_SHARED);
	ASSERT_NE(NULL, m) {
		TH_LOG("mmap: %s", strerror(errno));
	}
	ASSERT_EQ(0, m[psz + 5]);
	ASSERT_EQ(0, query(ro, m + psz, &q));
	ASSERT_TRUE(!!(q.flags & NOPFN_TEST_Q_PRESENT));
	ASSERT_FALSE(!!(q.flags & NOPFN_TEST_Q_WRITE));
	ASSERT_EQ(q.ram_pfn, q.pfn);
	ASSERT_EQ(-1, mprotect(m, 2 * psz, PROT_READ | PROT_WRITE));
	ASSERT_EQ(EACCES, errno);
	ASSERT_EQ(1, stats(ro).calls);
	ASSERT_EQ(0, munmap(m, 2 * psz));
	close(ro);
}

/* userfaultfd cannot register a VM_PFNMAP range. */
TEST_F(api, uffd_register_refused)
{
	struct uffdio_api api = { .api = UFFD_API };
	struct uffdio_register reg;
	char *m;
	int uffd;

	uffd = syscall(SYS_userfaultfd, O_CLOEXEC | O_NONBLOCK);
	if (uffd < 0 && errno == ENOSYS)
		SKIP(return, "no userfaultfd() (CONFIG_USERFAULTFD)");
	ASSERT_LE(0, uffd);
	ASSERT_EQ(0, ioctl(uffd, UFFDIO_API, &api));
	m = map_pages(self->fd, 1, 0, PROT_READ | PROT_WRITE, MAP_SHARED);
	ASSERT_NE(NULL, m);
	memset(&reg, 0, sizeof(reg));
	reg.range.start = (uintptr_t)m;
	reg.range.len = psz;
	reg.mode = UFFDIO_REGISTER_MODE_MISSING;
	ASSERT_EQ(-1, ioctl(uffd, UFFDIO_REGISTER, &reg));
	ASSERT_EQ(EINVAL, errno);
	m[0] = 'u';		/* still an ordinary nopfn mapping */
	ASSERT_EQ(1, stats(self->fd).calls);
	ASSERT_EQ(0, munmap(m, psz));
	close(uffd);
}

/* ------------------------------------------------------------- rmmod */

static long delete_module(const char *name, unsigned int flags)
{
	return syscall(SYS_delete_module, name, flags);
}

/*
 * rmmod while a handler waits without mmap_lock, for a VMA that has no
 * vm_file: the core pins the handler's module itself, so the unload is
 * refused until the handler has returned. Then the module goes and comes
 * back with its parameters.
 */
/*
 * Its own fixture, declared last: the harness runs fixtures in that order
 * (TEST() ones first), and this one unloads the module the others use.
 */
FIXTURE(unload) {
	int unused;
};

FIXTURE_SETUP(unload)
{
}

FIXTURE_TEARDOWN(unload)
{
}

TEST_F(unload, rmmod_during_unlocked_wait)
{
	long long carve_phys = read_param("carve_phys");
	long long carve_size = read_param("carve_size");
	char params[96];
	struct prober t;
	double end;
	long ret;
	int fd, ko;
	char *m;

	ASSERT_LE(0, carve_phys);
	ASSERT_LE(0, carve_size);
	snprintf(params, sizeof(params), "carve_phys=%#llx carve_size=%#llx",
		 carve_phys, carve_size);
	ko = open(MODULE_KO, O_RDONLY | O_CLOEXEC);
	ASSERT_LE(0, ko);

	fd = open_dev();
	ASSERT_LE(0, fd);
	ASSERT_EQ(0, set_map_mode(fd, NOPFN_TEST_MAP_NO_FILE));
	m = map_page_with(_metadata, fd, NOPFN_TEST_GATE_UNLOCKED, 800);
	ASSERT_EQ(0, close(fd));	/* the VMA holds the file itself */
	ASSERT_EQ(0, prober_start(&t, m));
	ASSERT_TRUE(wait_for_gate(20));
	/* The VMA, and with it the last reference on the file, goes. */
	ASSERT_EQ(0, munmap(m, psz));
	ret = delete_module("nopfn_test", O_NONBLOCK);
	ASSERT_EQ(-1, ret) {
		TH_LOG("nopfn_test was unloaded while its ->nopfn() still waited in it");
	}
	ASSERT_EQ(EWOULDBLOCK, errno);
	pthread_join(t.thread, NULL);
	ASSERT_EQ(SIGSEGV, t.sig);

	/* The handler has returned: nothing holds the module now. */
	end = now_ms() + 2000;
	while ((ret = delete_module("nopfn_test", O_NONBLOCK)) &&
	       errno == EWOULDBLOCK && now_ms() < end)
		sleep_ms(10);
	ASSERT_EQ(0, ret) {
		TH_LOG("delete_module: %s", strerror(errno));
	}
	ASSERT_EQ(0, syscall(SYS_finit_module, ko, params, 0)) {
		TH_LOG("loading %s %s again: %s", MODULE_KO, params,
		       strerror(errno));
	}
	close(ko);
	end = now_ms() + 2000;
	while ((fd = open_dev()) < 0 && now_ms() < end)
		sleep_ms(10);
	ASSERT_LE(0, fd);
	close(fd);
}

TEST_HARNESS_MAIN
