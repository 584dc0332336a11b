// SPDX-License-Identifier: GPL-2.0
/*
 * Every return path of ->nopfn(), driven through /dev/test_nopfn (module
 * lib/test_nopfn.c, loaded by the matrix harness at guest boot):
 * a PFN of RAM and one without struct page, NOPFN_SIGBUS, NOPFN_OOM,
 * NOPFN_REFAULT after a signal, NOPFN_RETRY after a wait with mmap_lock
 * released; the mappings mmap() refuses; and what the VM does with a
 * nopfn mapping: fork, munmap, mprotect, madvise(MADV_DONTNEED). The
 * rules of the interface case by case (misuse, revocation, the lock kept,
 * GUP, unmapping during a wait) are the series' nopfn-tests.c (patch 15).
 *
 * Each test opens its own file: the module keeps its state (page behaviours,
 * RAM pages, counters) per open file.
 */
#include <errno.h>
#include <pthread.h>
#include <setjmp.h>
#include <signal.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>
#include <fcntl.h>

/* 6.1's harness has an unused parameter of its own. */
#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Wunused-parameter"
#include "kselftest_harness.h"
#pragma GCC diagnostic pop
#include "files.h"
#include "kmsg_check.h"
#include "nopfn_fixture.h"

/* ----------------------------------------------------------- fixture */

FIXTURE(nopfn) {
	int fd;		/* the file under test */
	int watch;	/* a second file, to read module-wide counters */
	struct counts base;	/* module-wide counters at setup */
};

NOPFN_FIXTURE_SETUP(nopfn)

/* ------------------------------------------------------------- tests */

/*
 * NOPFN_TEST_RAM: a PFN of ordinary RAM. Reads see zeroes, writes stick,
 * the PTE maps the module's page, and the data survives munmap and mmap
 * (the page belongs to the module, not to the mapping).
 */
TEST_F(nopfn, ram_read_write_remap)
{
	const int n = 4;
	struct nopfn_test_query q;
	struct counts s;
	uint64_t pfn[4];
	char *m;
	int i;

	m = map_pages(self->fd, n, 0, PROT_READ | PROT_WRITE, MAP_SHARED);
	ASSERT_NE(NULL, m);
	for (i = 0; i < n; i++) {
		ASSERT_EQ(0, m[i * psz]);
		ASSERT_EQ(0, m[i * psz + psz - 1]);
		memset(m + i * psz, 'A' + i, psz);
	}
	s = stats(self->fd);
	ASSERT_EQ(n, s.calls);
	ASSERT_EQ(n, s.ret_pfn);
	ASSERT_EQ(n, s.ram_pages);
	ASSERT_EQ(self->base.all_ram_pages + n, s.all_ram_pages);
	for (i = 0; i < n; i++) {
		ASSERT_EQ(0, query(self->fd, m + i * psz, &q));
		/*
		 * Read first, so the fault mapped it clean; whether the
		 * write then dirtied the PTE is the MMU's doing (QEMU's
		 * m68k leaves it clean): not checked here, a write fault's
		 * own PTE is (nopfn-tests' write_fault_maps_young_dirty).
		 */
		ASSERT_EQ(NOPFN_TEST_Q_PRESENT | NOPFN_TEST_Q_WRITE |
			  NOPFN_TEST_Q_PFN_VALID,
			  q.flags & ~(NOPFN_TEST_Q_DIRTY | NOPFN_TEST_Q_YOUNG));
		ASSERT_EQ((uint64_t)i, q.pgoff);
		ASSERT_NE(0ULL, q.ram_pfn);
		ASSERT_EQ(q.ram_pfn, q.pfn);
		pfn[i] = q.pfn;
	}
	ASSERT_EQ(0, munmap(m, n * psz));

	m = map_pages(self->fd, n, 0, PROT_READ | PROT_WRITE, MAP_SHARED);
	ASSERT_NE(NULL, m);
	ASSERT_EQ(0, query(self->fd, m, &q));
	ASSERT_FALSE(!!(q.flags & NOPFN_TEST_Q_PRESENT));
	for (i = 0; i < n; i++) {
		ASSERT_EQ('A' + i, m[i * psz]);
		ASSERT_EQ('A' + i, m[i * psz + psz - 1]);
		ASSERT_EQ(0, query(self->fd, m + i * psz, &q));
		ASSERT_EQ(pfn[i], q.pfn);
	}
	s = stats(self->fd);
	ASSERT_EQ(2 * n, s.calls);
	ASSERT_EQ(n, s.ram_pages);

	/* A mapping at an offset: page index = vm_pgoff + page. */
	ASSERT_EQ(0, munmap(m, n * psz));
	m = map_pages(self->fd, 2, 2, PROT_READ, MAP_SHARED);
	ASSERT_NE(NULL, m);
	ASSERT_EQ('C', m[0]);
	ASSERT_EQ('D', m[psz]);
	ASSERT_EQ(0, query(self->fd, m + psz, &q));
	ASSERT_EQ(3ULL, q.pgoff);
	ASSERT_EQ(pfn[3], q.pfn);
	ASSERT_EQ(0, munmap(m, 2 * psz));

	close(self->fd);
	self->fd = -1;
	ASSERT_NO_LEAK();
}

#if defined(__x86_64__) || defined(__i386__)
/* Whether the kernel uses the PAT: it lists memtypes in debugfs then. */
static bool pat_enabled(void)
{
	return access("/sys/kernel/debug/x86/pat_memtype_list", F_OK) == 0;
}
#endif

/*
 * NOPFN_TEST_CARVE: PFNs of RAM the kernel does not manage (above mem=):
 * no struct page. Page i maps carve_phys + i * PAGE_SIZE, and data written
 * there survives munmap, mmap, and even the file and its state.
 */
TEST_F(nopfn, carve_no_struct_page)
{
	const int n = 3;
	struct nopfn_test_query q;
	struct counts s;
	char *m, cookie[64];
	int i, ret;

	ret = set_pages(self->fd, 0, n, NOPFN_TEST_CARVE, 0);
	/* Given a carve-out, the module must serve it. */
	if (ret == -ENODEV &&
	    read_number("/sys/module/test_nopfn/parameters/carve_size") == 0)
		SKIP(return, "module loaded without carve_phys/carve_size");
	ASSERT_EQ(0, ret) {
		TH_LOG("NOPFN_TEST_CARVE: %s, with carve_size=%lld", strerror(-ret),
		       read_number("/sys/module/test_nopfn/parameters/carve_size"));
	}
	s = stats(self->fd);
	ASSERT_NE(0, s.carve_pfn);
	ASSERT_LE(n, s.carve_pages);
	diag("carve-out: PFN %#llx, %llu pages",
	     (unsigned long long)s.carve_pfn,
	     (unsigned long long)s.carve_pages);
	/* Past the end of the carve-out: refused. */
	if (s.carve_pages < NOPFN_TEST_MAX_PAGES)
		ASSERT_EQ(-ERANGE, set_pages(self->fd, s.carve_pages - 1, 2,
					     NOPFN_TEST_CARVE, 0));

	m = map_pages(self->fd, n, 0, PROT_READ | PROT_WRITE, MAP_SHARED);
	ASSERT_NE(NULL, m);
	snprintf(cookie, sizeof(cookie), "nopfn carve %d %.0f", getpid(),
		 now_ms());
	for (i = 0; i < n; i++) {
		m[i * psz] = (char)i;
		strcpy(m + i * psz + 1, cookie);
		m[i * psz + psz - 1] = (char)(0x5a + i);
		ASSERT_EQ(0, query(self->fd, m + i * psz, &q));
		/* written first: the write fault made it young and dirty */
		ASSERT_EQ(NOPFN_TEST_Q_PRESENT | NOPFN_TEST_Q_WRITE |
			  NOPFN_TEST_Q_DIRTY | NOPFN_TEST_Q_YOUNG, q.flags);
		ASSERT_EQ((uint64_t)(s.carve_pfn + i), q.pfn);
#if defined(__x86_64__) || defined(__i386__)
		/*
		 * Memory nobody reserved a type for (past mem=): the PAT
		 * makes it UC- (track_pfn_insert()), whatever vm_page_prot
		 * says, so that it cannot alias a mapping of another type.
		 * Without the PAT (i386: its CPU model has no MTRRs, and
		 * "x86/PAT: MTRRs disabled, skipping PAT initialization
		 * too"), vm_page_prot's write-back stays.
		 */
		ASSERT_EQ(pat_enabled() ? NOPFN_TEST_MT_UC_MINUS :
			  NOPFN_TEST_MT_WB, q.memtype) {
			TH_LOG("PAT %s", pat_enabled() ? "on" : "off");
		}
#else
		ASSERT_EQ(NOPFN_TEST_MT_NONE, q.memtype);
#endif
		ASSERT_EQ(0ULL, q.ram_pfn);
	}
	s = stats(self->fd);
	ASSERT_EQ(n, s.ret_pfn);
	ASSERT_EQ(0, s.ram_pages);
	ASSERT_EQ(0, munmap(m, n * psz));

	m = map_pages(self->fd, n, 0, PROT_READ, MAP_SHARED);
	ASSERT_NE(NULL, m);
	for (i = 0; i < n; i++) {
		ASSERT_EQ((char)i, m[i * psz]);
		ASSERT_STREQ(cookie, m + i * psz + 1);
		ASSERT_EQ((char)(0x5a + i), m[i * psz + psz - 1]);
	}
	ASSERT_EQ(0, munmap(m, n * psz));

	/* A new file, a new state: the same physical memory. */
	close(self->fd);
	self->fd = open_dev();
	ASSERT_LE(0, self->fd);
	ASSERT_EQ(0, set_pages(self->fd, 0, n, NOPFN_TEST_CARVE, 0));
	m = map_pages(self->fd, n, 0, PROT_READ, MAP_SHARED);
	ASSERT_NE(NULL, m);
	for (i = 0; i < n; i++)
		ASSERT_STREQ(cookie, m + i * psz + 1);
	ASSERT_EQ(0, munmap(m, n * psz));
	close(self->fd);
	self->fd = -1;
	ASSERT_NO_LEAK();
}

/* NOPFN_SIGBUS: SIGBUS at the faulting address, for reads and writes. */
TEST_F(nopfn, sigbus_si_addr)
{
	struct counts s;
	siginfo_t si;
	char *m, v = 'x';

	ASSERT_EQ(0, set_pages(self->fd, 1, 1, NOPFN_TEST_SIGBUS, 0));
	m = map_pages(self->fd, 3, 0, PROT_READ | PROT_WRITE, MAP_SHARED);
	ASSERT_NE(NULL, m);

	ASSERT_EQ(SIGBUS, probe(m + psz + 123, false, &v, &si));
	ASSERT_EQ(SIGBUS, si.si_signo);
	ASSERT_EQ(BUS_ADRERR, si.si_code);
	ASSERT_EQ(fault_addr(m + psz + 123), si.si_addr);

	ASSERT_EQ(SIGBUS, probe(m + 2 * psz - 1, true, &v, &si));
	ASSERT_EQ(fault_addr(m + 2 * psz - 1), si.si_addr);

	/* Its neighbours are fine. */
	ASSERT_EQ(0, probe(m, true, &v, NULL));
	ASSERT_EQ(0, probe(m + 2 * psz, true, &v, NULL));
	ASSERT_EQ('x', m[2 * psz]);

	s = stats(self->fd);
	ASSERT_EQ(2, s.ret_sigbus);
	ASSERT_EQ(2, s.ret_pfn);
	ASSERT_EQ(4, s.calls);
	ASSERT_EQ(0, munmap(m, 3 * psz));
}

/*
 * NOPFN_OOM once, then a PFN: outside a memcg OOM and for a task that is
 * not being killed, the fault cannot be satisfied (6.1's
 * pagefault_out_of_memory() would only retry it): SIGBUS at the address.
 * The next access gets the page.
 */
TEST_F(nopfn, oom_once_is_sigbus)
{
	struct counts s;
	siginfo_t si;
	char *m, v = 0;

	m = map_page_with(_metadata, self->fd, NOPFN_TEST_OOM_ONCE, 0);
	ASSERT_EQ(SIGBUS, probe(m + 8, false, &v, &si)) {
		TH_LOG("NOPFN_OOM: no SIGBUS, %lld calls",
		       stats(self->fd).calls);
	}
	ASSERT_EQ(BUS_ADRERR, si.si_code);
	ASSERT_EQ(fault_addr(m + 8), si.si_addr);
	ASSERT_EQ(1, stats(self->fd).calls);
	ASSERT_EQ(0, probe(m, false, &v, &si)) {
		TH_LOG("signal %d at %p", si.si_signo, si.si_addr);
	}
	ASSERT_EQ(0, v);
	s = stats(self->fd);
	ASSERT_EQ(2, s.calls);
	ASSERT_EQ(1, s.ret_oom);
	ASSERT_EQ(1, s.ret_pfn);
	m[0] = 'o';
	ASSERT_EQ('o', m[0]);
	ASSERT_EQ(2, stats(self->fd).calls);
	ASSERT_EQ(0, munmap(m, psz));
}

/*
 * Read a page of @behaviour, a wait of @wait_ms, while another thread
 * sends SIGUSR1 50 ms into the wait: the read gets the page (zero), the
 * signal handler runs once, while the read is pending. Returns the
 * counters of @fd after the read, the time it took in *@took and when
 * the signal was sent, from its start, in *@sent.
 */
static struct counts read_signalled(struct __test_metadata *_metadata,
				    int fd, uint32_t behaviour,
				    unsigned int wait_ms, double *took,
				    double *sent)
{
	struct signaller sig = { .fd = fd, .delay_ms = 50 };
	struct counts s;
	double t0, t1;
	char *m;
	char v;

	install_usr1();
	m = map_page_with(_metadata, fd, behaviour, wait_ms);
	sig.target = pthread_self();
	ASSERT_EQ(0, pthread_create(&sig.thread, NULL, signaller_fn, &sig));

	t0 = now_ms();
	v = *(volatile char *)m;
	t1 = now_ms();
	pthread_join(sig.thread, NULL);

	ASSERT_TRUE(sig.ok);
	ASSERT_EQ(0, v);
	ASSERT_EQ(1, usr1_runs);
	/* The handler ran while the access was pending. */
	ASSERT_LT(t0, usr1_when);
	ASSERT_LT(usr1_when, t1);
	s = stats(fd);
	ASSERT_EQ(0, munmap(m, psz));
	*took = t1 - t0;
	*sent = sig.sent - t0;
	return s;
}

/*
 * NOPFN_REFAULT: the handler waits interruptibly holding mmap_lock; a
 * signal ends the wait, the handler runs, and the access faults again and
 * completes once the wait is over.
 */
TEST_F(nopfn, refault_after_signal)
{
	const unsigned int wait_ms = 400;
	double took, sent;
	struct counts s;

	s = read_signalled(_metadata, self->fd, NOPFN_TEST_SLEEP_LOCKED,
			   wait_ms, &took, &sent);
	ASSERT_LE(2, s.calls);
	ASSERT_LE(1, s.ret_refault);
	ASSERT_EQ(1, s.ret_pfn);
	ASSERT_EQ(0, s.ret_retry);
	/* The wait ran to its end, a signal did not cut it short. */
	ASSERT_LE(wait_ms * 3 / 4, took);
	diag("access with a signal %.0f ms into a %u ms locked wait: %.0f ms, %llu calls",
	     sent, wait_ms, took, (unsigned long long)s.calls);
}

/*
 * NOPFN_RETRY: the handler releases mmap_lock, waits and returns
 * NOPFN_RETRY; the retried fault maps the page.
 */
TEST_F(nopfn, retry_after_unlocked_wait)
{
	const unsigned int wait_ms = 300;
	struct counts s;
	double t0, t1;
	char *m;

	m = map_page_with(_metadata, self->fd, NOPFN_TEST_SLEEP_UNLOCKED,
			  wait_ms);
	t0 = now_ms();
	m[0] = 'r';
	t1 = now_ms();
	ASSERT_EQ('r', m[0]);
	s = stats(self->fd);
	ASSERT_EQ(2, s.calls);
	ASSERT_EQ(1, s.ret_retry);
	ASSERT_EQ(1, s.ret_pfn);
	ASSERT_EQ(0, s.lock_kept);
	ASSERT_EQ(0, s.ret_refault);
	ASSERT_LE(wait_ms * 3 / 4, t1 - t0);
	ASSERT_EQ(0, munmap(m, psz));
}

/*
 * A signal during the unlocked wait: the retry is cut short, the signal
 * handler runs, the access faults again, waits out the rest and completes.
 */
TEST_F(nopfn, retry_signal_during_unlocked_wait)
{
	const unsigned int wait_ms = 400;
	double took, sent;
	struct counts s;

	s = read_signalled(_metadata, self->fd, NOPFN_TEST_SLEEP_UNLOCKED,
			   wait_ms, &took, &sent);
	ASSERT_LE(2, s.ret_retry);
	ASSERT_LE(3, s.calls);
	ASSERT_EQ(1, s.ret_pfn);
	ASSERT_LE(wait_ms * 3 / 4, took);
}

/*
 * A fault from kernel mode (a system call reading the mapping): the wait
 * with mmap_lock released ends in a retry and the call completes. A
 * signal does not end a kernel-mode fault unless it is fatal: the handler
 * waits killably there, and a NOPFN_REFAULT with a signal pending repeats
 * the access instead of failing the call with EFAULT. The signal handler
 * runs once the call has returned.
 */
TEST_F(nopfn, uaccess_from_waiting_page)
{
	const unsigned int wait_ms = 300;
	struct signaller sig = { .fd = self->fd, .delay_ms = 50 };
	struct counts s;
	int pipefd[2];
	double t0, t1;
	ssize_t ret;
	char c;
	char *m;
	int k;

	install_usr1();
	ASSERT_EQ(0, pipe(pipefd));
	ASSERT_EQ(0, set_pages(self->fd, 0, 1, NOPFN_TEST_SLEEP_UNLOCKED,
			       wait_ms));
	ASSERT_EQ(0, set_pages(self->fd, 1, 1, NOPFN_TEST_SLEEP_LOCKED,
			       wait_ms));
	/*
	 * Two NOPFN_REFAULTs: x86's copy routines repeat a faulting copy
	 * once, byte by byte, which would hide what the core does with the
	 * first one.
	 */
	{
		struct nopfn_test_pages req = {
			.first = 2, .count = 1, .sleep_ms = wait_ms,
			.behaviour = NOPFN_TEST_SLEEP_REFAULT, .value = 2,
		};

		ASSERT_EQ(0, ioctl(self->fd, NOPFN_TEST_IOC_SET_PAGES, &req));
	}
	m = map_pages(self->fd, 3, 0, PROT_READ | PROT_WRITE, MAP_SHARED);
	ASSERT_NE(NULL, m);

	/* write() copies from page 0, which waits with the lock released. */
	t0 = now_ms();
	ASSERT_EQ(1, write(pipefd[1], m, 1));
	t1 = now_ms();
	ASSERT_EQ(1, read(pipefd[0], &c, 1));
	ASSERT_EQ(0, c);
	ASSERT_LE(wait_ms * 3 / 4, t1 - t0);
	s = stats(self->fd);
	ASSERT_EQ(1, s.ret_retry);
	ASSERT_EQ(1, s.ret_pfn);

	/*
	 * write() from page 1 (a wait holding the lock) and page 2 (a wait,
	 * then NOPFN_REFAULT), with SIGUSR1 sent during the wait: the call
	 * completes after the whole wait.
	 */
	for (k = 1; k <= 2; k++) {
		ASSERT_EQ(0, ioctl(self->fd, NOPFN_TEST_IOC_RESET_STATS));
		usr1_runs = 0;
		sig.target = pthread_self();
		ASSERT_EQ(0, pthread_create(&sig.thread, NULL, signaller_fn,
					    &sig));
		t0 = now_ms();
		ret = write(pipefd[1], m + k * psz, 1);
		t1 = now_ms();
		pthread_join(sig.thread, NULL);
		ASSERT_TRUE(sig.ok);
		s = stats(self->fd);
		ASSERT_EQ(1, ret) {
			TH_LOG("page %d: write() %s after %.0f ms, %lld refaults",
			       k, strerror(errno), t1 - t0, s.ret_refault);
		}
		ASSERT_EQ(1, read(pipefd[0], &c, 1));
		ASSERT_EQ(0, c);
		ASSERT_EQ(1, usr1_runs);
		ASSERT_LE(wait_ms * 3 / 4, t1 - t0);
		ASSERT_EQ(1, s.ret_pfn);
		ASSERT_EQ(k == 2 ? 2 : 0, s.ret_refault);
		diag("page %d: write() with a signal %.0f ms into a %u ms wait: %.0f ms, %lld calls",
		     k, sig.sent - t0, wait_ms, t1 - t0, s.calls);
	}
	ASSERT_EQ(0, munmap(m, 3 * psz));
	close(pipefd[0]);
	close(pipefd[1]);
}

/*
 * Another thread's mmap() goes through while a fault waits with its lock
 * released, and waits for the end of a wait that holds mmap_lock.  A wait
 * that holds only its VMA's lock (6.12's per-VMA locks: the module counts
 * such calls) does not keep mmap() of another range waiting either.
 */
TEST_F(nopfn, mmap_during_wait)
{
	const unsigned int wait_ms = 400;
	double during[2], access[2];
	long long vma_locked = -1;
	struct toucher t;
	int k;
	char *m;

	ASSERT_EQ(0, set_pages(self->fd, 0, 1, NOPFN_TEST_SLEEP_UNLOCKED,
			       wait_ms));
	ASSERT_EQ(0, set_pages(self->fd, 1, 1, NOPFN_TEST_SLEEP_LOCKED,
			       wait_ms));
	m = map_pages(self->fd, 2, 0, PROT_READ | PROT_WRITE, MAP_SHARED);
	ASSERT_NE(NULL, m);

	for (k = 0; k < 2; k++) {
		double t0;
		void *a;

		ASSERT_EQ(0, ioctl(self->fd, NOPFN_TEST_IOC_RESET_STATS));
		ASSERT_EQ(0, toucher_start(&t, m + k * psz));
		ASSERT_TRUE(wait_for_calls(self->fd, 1, 30));
		t0 = now_ms();
		a = mmap(NULL, psz, PROT_READ | PROT_WRITE,
			 MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
		during[k] = now_ms() - t0;
		pthread_join(t.thread, NULL);
		ASSERT_NE(MAP_FAILED, a);
		ASSERT_EQ(0, munmap(a, psz));
		access[k] = t.end - t.start;
		ASSERT_EQ(0, t.val);
		if (k == 1)
			vma_locked = stats(self->fd).vma_locked;
	}
	diag("mmap during unlocked sleep: %.0f ms, during locked sleep: %.0f ms",
	     during[0], during[1]);
	diag("faulting access: %.0f ms unlocked, %.0f ms locked (sleep %u ms); locked wait under the VMA lock: %s",
	     access[0], access[1], wait_ms, vma_locked < 0 ? "not counted" :
	     vma_locked ? "yes" : "no, mmap_lock");
	ASSERT_LE(wait_ms * 3 / 4, access[0]);
	ASSERT_LE(wait_ms * 3 / 4, access[1]);
	/* Unlocked: mmap() did not wait for the fault. */
	ASSERT_GT(wait_ms / 4, during[0]);
	if (vma_locked > 0) {
		/* Under the VMA lock only: mmap() did not wait either. */
		ASSERT_GT(wait_ms / 4, during[1]);
	} else {
		/* Under mmap_lock: mmap() waited for most of the wait. */
		ASSERT_LT(wait_ms / 2, during[1]);
	}
	ASSERT_EQ(0, munmap(m, 2 * psz));
}

/* NOPFN_TEST_IOC_WAKE ends a long wait at once, locked or not. */
TEST_F(nopfn, wake_ends_waits)
{
	const unsigned int wait_ms = NOPFN_TEST_MAX_SLEEP_MS;
	struct toucher t;
	char *m;
	int k;

	ASSERT_EQ(-EINVAL, set_pages(self->fd, 0, 1, NOPFN_TEST_SLEEP_LOCKED,
				     NOPFN_TEST_MAX_SLEEP_MS + 1));
	ASSERT_EQ(0, set_pages(self->fd, 0, 1, NOPFN_TEST_SLEEP_UNLOCKED,
			       wait_ms));
	ASSERT_EQ(0, set_pages(self->fd, 1, 1, NOPFN_TEST_SLEEP_LOCKED,
			       wait_ms));
	m = map_pages(self->fd, 2, 0, PROT_READ, MAP_SHARED);
	ASSERT_NE(NULL, m);
	for (k = 0; k < 2; k++) {
		ASSERT_EQ(0, ioctl(self->fd, NOPFN_TEST_IOC_RESET_STATS));
		ASSERT_EQ(0, toucher_start(&t, m + k * psz));
		ASSERT_TRUE(wait_for_calls(self->fd, 1, 50));
		ASSERT_EQ(0, ioctl(self->fd, NOPFN_TEST_IOC_WAKE));
		pthread_join(t.thread, NULL);
		ASSERT_GT(wait_ms / 2, t.end - t.start);
		ASSERT_EQ(1, stats(self->fd).ret_pfn);
	}
	ASSERT_EQ(0, munmap(m, 2 * psz));
}

/*
 * Many threads fault the same page at once: one PTE, one RAM page, the
 * same data everywhere. With NOPFN_TEST_SLEEP_LOCKED they all pile up in
 * the handler and return the same PFN together.
 */
#define NTHREADS 8

struct racer {
	pthread_t thread;
	pthread_barrier_t *barrier;
	int fd;
	volatile char *page;
	int index;
	char seen;
	uint64_t pfn;
	int qerr;
};

static void *racer_fn(void *arg)
{
	struct racer *r = arg;
	struct nopfn_test_query q;

	pthread_barrier_wait(r->barrier);
	r->seen = r->page[0];
	r->page[64 + r->index] = (char)(0x40 + r->index);
	r->qerr = query(r->fd, (const void *)r->page, &q);
	r->pfn = q.pfn;
	return NULL;
}

TEST_F(nopfn, threads_fault_same_page)
{
	struct racer r[NTHREADS];
	pthread_barrier_t barrier;
	struct nopfn_test_query q;
	struct counts s;
	int k, i;
	char *m;

	ASSERT_EQ(0, set_pages(self->fd, 1, 1, NOPFN_TEST_SLEEP_LOCKED, 200));
	m = map_pages(self->fd, 2, 0, PROT_READ | PROT_WRITE, MAP_SHARED);
	ASSERT_NE(NULL, m);

	for (k = 0; k < 2; k++) {	/* page 0: RAM, page 1: waits */
		char *page = m + k * psz;

		ASSERT_EQ(0, ioctl(self->fd, NOPFN_TEST_IOC_RESET_STATS));
		pthread_barrier_init(&barrier, NULL, NTHREADS);
		for (i = 0; i < NTHREADS; i++) {
			r[i] = (struct racer){ .barrier = &barrier,
					       .fd = self->fd, .page = page,
					       .index = i };
			ASSERT_EQ(0, pthread_create(&r[i].thread, NULL,
						    racer_fn, &r[i]));
		}
		for (i = 0; i < NTHREADS; i++)
			pthread_join(r[i].thread, NULL);
		pthread_barrier_destroy(&barrier);

		ASSERT_EQ(0, query(self->fd, page, &q));
		ASSERT_TRUE(!!(q.flags & NOPFN_TEST_Q_PRESENT));
		ASSERT_EQ(q.ram_pfn, q.pfn);
		for (i = 0; i < NTHREADS; i++) {
			ASSERT_EQ(0, r[i].seen);
			ASSERT_EQ(0, r[i].qerr);
			ASSERT_EQ(q.pfn, r[i].pfn);
			ASSERT_EQ((char)(0x40 + i), page[64 + i]);
		}
		s = stats(self->fd);
		diag("%d threads on a %s page: %llu nopfn calls", NTHREADS,
		     k ? "waiting" : "RAM", (unsigned long long)s.calls);
		ASSERT_LE(1, s.calls);
		ASSERT_GE(NTHREADS, s.calls);
		ASSERT_EQ(s.calls, s.ret_pfn);
		ASSERT_EQ(k + 1, s.ram_pages);
		ASSERT_EQ(self->base.all_ram_pages + k + 1, s.all_ram_pages);
	}
	/* With the wait, they all got into the handler. */
	ASSERT_LT(1, s.calls);
	ASSERT_EQ(0, munmap(m, 2 * psz));
	close(self->fd);
	self->fd = -1;
	ASSERT_NO_LEAK();
}

/*
 * Mappings the core refuses at mmap() time with EINVAL, after the driver's
 * ->mmap() set them up (its ->close() undoes that: no state leaks): a
 * private, copy-on-write one, one without VM_PFNMAP and one with
 * VM_MIXEDMAP. No fault reaches the handler and the kernel does not warn
 * (the harness's kernel log check would see it).
 */
TEST_F(nopfn, mmap_refuses_cow_mapping)
{
	char *m;

	/* The correct mode refuses private writable mappings itself. */
	ASSERT_EQ(NULL, map_pages(self->fd, 1, 0, PROT_READ, MAP_PRIVATE));
	ASSERT_EQ(EINVAL, errno);

	ASSERT_EQ(0, set_map_mode(self->fd, NOPFN_TEST_MAP_COW));
	ASSERT_EQ(NULL, map_pages(self->fd, 1, 0, PROT_READ, MAP_SHARED));
	m = map_pages(self->fd, 2, 0, PROT_READ | PROT_WRITE, MAP_PRIVATE);
	ASSERT_EQ(NULL, m) {
		TH_LOG("mmap() of a COW ->nopfn() mapping succeeded");
		munmap(m, 2 * psz);
	}
	ASSERT_EQ(EINVAL, errno);
	ASSERT_EQ(0, stats(self->fd).calls);

	/* The file still works for correct mappings. */
	ASSERT_EQ(0, set_map_mode(self->fd, NOPFN_TEST_MAP_PFNMAP));
	m = map_pages(self->fd, 1, 0, PROT_READ | PROT_WRITE, MAP_SHARED);
	ASSERT_NE(NULL, m);
	m[0] = 1;
	ASSERT_EQ(1, stats(self->fd).calls);
	ASSERT_EQ(0, munmap(m, psz));
	close(self->fd);
	self->fd = -1;
	ASSERT_NO_LEAK();
}

TEST_F(nopfn, mmap_refuses_no_pfnmap)
{
	static const uint32_t modes[] = { NOPFN_TEST_MAP_NO_PFNMAP,
					  NOPFN_TEST_MAP_MIXED };
	unsigned int i;
	char *m;

	ASSERT_EQ(-EINVAL, set_map_mode(self->fd, NOPFN_TEST_NR_MAP_MODES));
	for (i = 0; i < sizeof(modes) / sizeof(modes[0]); i++) {
		ASSERT_EQ(0, set_map_mode(self->fd, modes[i]));
		m = map_pages(self->fd, 2, 0, PROT_READ | PROT_WRITE,
			      MAP_SHARED);
		ASSERT_EQ(NULL, m) {
			TH_LOG("mode %u: mmap() succeeded", modes[i]);
			munmap(m, 2 * psz);
		}
		ASSERT_EQ(EINVAL, errno);
	}
	ASSERT_EQ(0, stats(self->fd).calls);
	close(self->fd);
	self->fd = -1;
	ASSERT_NO_LEAK();
}

/*
 * fork(): the child has the same shared mapping: it sees the parent's
 * data, faults further pages through ->nopfn() itself, and writes go both
 * ways.
 */
static int wait_byte(int fd, char want)
{
	char c;

	return read(fd, &c, 1) == 1 && c == want ? 0 : -1;
}

TEST_F(nopfn, fork_shares_mapping)
{
	struct nopfn_test_query q;
	uint64_t parent_pfn;
	int to_child[2], to_parent[2], status;
	char *m;
	pid_t pid;

	m = map_pages(self->fd, 2, 0, PROT_READ | PROT_WRITE, MAP_SHARED);
	ASSERT_NE(NULL, m);
	strcpy(m, "from parent");
	ASSERT_EQ(0, query(self->fd, m, &q));
	parent_pfn = q.pfn;
	ASSERT_EQ(0, pipe(to_child));
	ASSERT_EQ(0, pipe(to_parent));

	pid = fork();
	ASSERT_LE(0, pid);
	if (pid == 0) {
		int bad = 0;

		/* Exit codes name the failed check. */
		if (strcmp(m, "from parent"))
			_exit(10);
		if (query(self->fd, m, &q) || q.pfn != parent_pfn)
			_exit(11);
		if (m[psz] != 0)	/* faulted in the child */
			_exit(12);
		strcpy(m, "from child");
		strcpy(m + psz, "child page 1");
		if (write(to_parent[1], "c", 1) != 1)
			_exit(13);
		if (wait_byte(to_child[0], 'p'))
			_exit(14);
		bad |= strcmp(m, "parent again") ? 1 : 0;
		bad |= strcmp(m + psz, "parent page 1") ? 2 : 0;
		_exit(bad ? 20 + bad : 0);
	}
	ASSERT_EQ(0, wait_byte(to_parent[0], 'c'));
	ASSERT_STREQ("from child", m);
	ASSERT_STREQ("child page 1", m + psz);
	strcpy(m, "parent again");
	strcpy(m + psz, "parent page 1");
	ASSERT_EQ(1, write(to_child[1], "p", 1));
	ASSERT_EQ(pid, waitpid(pid, &status, 0));
	ASSERT_TRUE(WIFEXITED(status));
	ASSERT_EQ(0, WEXITSTATUS(status));
	ASSERT_EQ(2, stats(self->fd).ram_pages);
	ASSERT_EQ(0, munmap(m, 2 * psz));
	close(self->fd);
	self->fd = -1;
	ASSERT_NO_LEAK();
}

/*
 * munmap() of part of a mapping: that part is gone (SIGSEGV), the rest
 * still works, and the state goes with the last piece and the file, even
 * when the file was closed first.
 */
TEST_F(nopfn, munmap_partial)
{
	siginfo_t si;
	char *m, v = 0;

	m = map_pages(self->fd, 3, 0, PROT_READ | PROT_WRITE, MAP_SHARED);
	ASSERT_NE(NULL, m);
	memset(m, 'a', 3 * psz);
	ASSERT_EQ(0, munmap(m + psz, psz));
	ASSERT_EQ(SIGSEGV, probe(m + psz, false, &v, &si));
	ASSERT_EQ(SEGV_MAPERR, si.si_code);
	ASSERT_EQ((void *)(m + psz), si.si_addr);
	ASSERT_EQ('a', m[0]);
	ASSERT_EQ('a', m[2 * psz]);

	/* The pieces keep the state alive without the file descriptor. */
	close(self->fd);
	self->fd = -1;
	ASSERT_EQ(self->base.all_states + 1, stats(self->watch).all_states);
	m[0] = 'b';
	ASSERT_EQ('b', m[0]);
	ASSERT_EQ(0, munmap(m, psz));
	ASSERT_EQ('a', m[2 * psz + 5]);
	ASSERT_EQ(0, munmap(m + 2 * psz, psz));
	ASSERT_NO_LEAK();
}

/*
 * mprotect(): read-only, a write is SIGSEGV (SEGV_ACCERR) and the PTE is
 * not writable; back to read-write, writes work again.
 */
/*
 * mprotect() changes the PTEs of a VM_PFNMAP mapping, which must stay
 * special (pte_modify() keeps _PAGE_SPECIAL): mips lost it, and the
 * munmap() at the end then dropped a mapcount of the handler's RAM page
 * that was never taken ("BUG: Bad page map", the series' patch 5).
 */
TEST_F(nopfn, mprotect_readonly)
{
	struct nopfn_test_query q;
	struct kmsg_check k;
	siginfo_t si;
	char *m, v = 'w';

	kmsg_open(&k);
	m = map_pages(self->fd, 2, 0, PROT_READ | PROT_WRITE, MAP_SHARED);
	ASSERT_NE(NULL, m);
	m[0] = 'a';
	ASSERT_EQ(0, mprotect(m, 2 * psz, PROT_READ));
	ASSERT_EQ(0, query(self->fd, m, &q));
	ASSERT_EQ(NOPFN_TEST_Q_PRESENT, q.flags & (NOPFN_TEST_Q_PRESENT |
						   NOPFN_TEST_Q_WRITE));
	ASSERT_EQ('a', m[0]);
	ASSERT_EQ(SIGSEGV, probe(m, true, &v, &si));
	ASSERT_EQ(SEGV_ACCERR, si.si_code);
	ASSERT_EQ((void *)m, si.si_addr);
	/* A page first faulted read-only, then written. */
	ASSERT_EQ(0, m[psz]);
	ASSERT_EQ(SIGSEGV, probe(m + psz + 1, true, &v, &si));
	ASSERT_EQ(SEGV_ACCERR, si.si_code);
	ASSERT_EQ('a', m[0]);
	ASSERT_EQ(0, m[psz + 1]);

	ASSERT_EQ(0, mprotect(m, 2 * psz, PROT_READ | PROT_WRITE));
	ASSERT_EQ(0, probe(m, true, &v, NULL));
	ASSERT_EQ(0, probe(m + psz + 1, true, &v, NULL));
	ASSERT_EQ('w', m[0]);
	ASSERT_EQ('w', m[psz + 1]);
	ASSERT_EQ(0, query(self->fd, m, &q));
	ASSERT_TRUE(!!(q.flags & NOPFN_TEST_Q_WRITE));
	/* Only the two first faults went to the handler. */
	ASSERT_EQ(2, stats(self->fd).calls);

	/* PROT_NONE: any access is SIGSEGV. */
	ASSERT_EQ(0, mprotect(m, psz, PROT_NONE));
	ASSERT_EQ(SIGSEGV, probe(m, false, &v, &si));
	ASSERT_EQ(0, mprotect(m, psz, PROT_READ));
	ASSERT_EQ('w', m[0]);
	ASSERT_EQ(0, munmap(m, 2 * psz));
	if (kmsg_scan(&k, NULL) > 0)
		TH_LOG("kernel report after munmap(): %s", k.first);
	ASSERT_EQ(0UL, k.reports);
	kmsg_close(&k);
}

/*
 * madvise(MADV_DONTNEED) is refused on every VM_PFNMAP VMA in 6.1 (as
 * for a remap_pfn_range() mapping): EINVAL, and the mapping is left as
 * it was: PTEs present, data there, no new call to ->nopfn().
 */
TEST_F(nopfn, madvise_dontneed_refused)
{
	struct nopfn_test_query q;
	uint64_t pfn;
	char *m;

	m = map_pages(self->fd, 2, 0, PROT_READ | PROT_WRITE, MAP_SHARED);
	ASSERT_NE(NULL, m);
	strcpy(m, "kept");
	strcpy(m + psz, "kept too");
	ASSERT_EQ(0, query(self->fd, m, &q));
	pfn = q.pfn;
	ASSERT_EQ(2, stats(self->fd).calls);

	errno = 0;
	ASSERT_EQ(-1, madvise(m, 2 * psz, MADV_DONTNEED));
	ASSERT_EQ(EINVAL, errno);
	ASSERT_EQ(0, query(self->fd, m, &q));
	ASSERT_TRUE(!!(q.flags & NOPFN_TEST_Q_PRESENT));
	ASSERT_EQ(pfn, q.pfn);
	ASSERT_STREQ("kept", m);
	ASSERT_STREQ("kept too", m + psz);
	ASSERT_EQ(2, stats(self->fd).calls);
	ASSERT_EQ(0, munmap(m, 2 * psz));
}

/* The ioctl interface refuses what it does not understand. */
TEST_F(nopfn, ioctl_validation)
{
	struct nopfn_test_query q;
	int x = 0;

	ASSERT_EQ(-EINVAL, set_pages(self->fd, 0, 0, NOPFN_TEST_RAM, 0));
	ASSERT_EQ(-EINVAL, set_pages(self->fd, NOPFN_TEST_MAX_PAGES, 1,
				     NOPFN_TEST_RAM, 0));
	ASSERT_EQ(-EINVAL, set_pages(self->fd, 1, NOPFN_TEST_MAX_PAGES,
				     NOPFN_TEST_RAM, 0));
	ASSERT_EQ(-EINVAL, set_pages(self->fd, 0, 1,
				     NOPFN_TEST_NR_BEHAVIOURS, 0));
	ASSERT_EQ(-EINVAL, set_pages(self->fd, 0, 1, NOPFN_TEST_RAM, 10));
	ASSERT_EQ(-EINVAL, set_pages(self->fd, 0, 1, NOPFN_TEST_SLEEP_UNLOCKED,
				     NOPFN_TEST_MAX_SLEEP_MS + 1));
	ASSERT_EQ(0, set_pages(self->fd, 0, NOPFN_TEST_MAX_PAGES,
			       NOPFN_TEST_RAM, 0));
	ASSERT_EQ(-1, ioctl(self->fd, _IO(NOPFN_TEST_IOC_MAGIC, 99)));
	ASSERT_EQ(ENOTTY, errno);
	ASSERT_EQ(-EFAULT, query(self->fd, &x, &q));
	ASSERT_EQ(NULL, map_pages(self->fd, 2, NOPFN_TEST_MAX_PAGES - 1,
				  PROT_READ, MAP_SHARED));
	ASSERT_EQ(EINVAL, errno);
	ASSERT_EQ(0, stats(self->fd).calls);
}

TEST_HARNESS_MAIN
