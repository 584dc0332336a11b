/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Helpers of the tests that drive /dev/nopfn_test (driver/nopfn_test.c):
 * its ioctls, a guarded access that reports SIGBUS/SIGSEGV, threads that
 * touch a page or send a signal once the handler was called, timing.
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
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <time.h>
#include <unistd.h>

#include "fault_addr.h"
#include "nopfn_test.h"

#define DEV_PATH	"/dev/nopfn_test"

static long psz;

static inline double now_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec * 1e3 + ts.tv_nsec / 1e6;
}

static inline void sleep_ms(unsigned int ms)
{
	struct timespec ts = { ms / 1000, (ms % 1000) * 1000000L };

	while (nanosleep(&ts, &ts) && errno == EINTR)
		;
}

/* A KTAP diagnostic line, flushed: test children end with _exit(). */
static inline void diag(const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	printf("# ");
	vprintf(fmt, ap);
	printf("\n");
	va_end(ap);
	fflush(stdout);
}

/* 0, or -errno */
static inline int set_pages(int fd, uint64_t first, uint64_t count,
		     uint32_t behaviour, uint32_t sleep_ms)
{
	struct nopfn_test_pages req = {
		.first = first, .count = count,
		.behaviour = behaviour, .sleep_ms = sleep_ms,
	};

	return ioctl(fd, NOPFN_TEST_IOC_SET_PAGES, &req) ? -errno : 0;
}

static inline int set_map_mode(int fd, uint32_t mode)
{
	return ioctl(fd, NOPFN_TEST_IOC_SET_MAP_MODE, &mode) ? -errno : 0;
}

/* struct nopfn_test_stats, signed: compared with plain numbers. */
struct counts {
	long long calls, ret_pfn, ret_sigbus, ret_oom, ret_refault, ret_retry;
	long long lock_kept, ram_pages, all_ram_pages, all_states;
	long long carve_pfn, carve_pages;
	long long fault_calls, mkwrite_calls, misuse_released, twice_released;
	long long gate_waiting, all_releases;
};

static inline struct counts stats(int fd)
{
	struct nopfn_test_stats s;

	if (ioctl(fd, NOPFN_TEST_IOC_GET_STATS, &s)) {
		fprintf(stderr, "# NOPFN_TEST_IOC_GET_STATS: %s\n",
			strerror(errno));
		memset(&s, 0xff, sizeof(s));	/* -1 everywhere */
	}
	return (struct counts){
		.calls = s.calls, .ret_pfn = s.ret_pfn,
		.ret_sigbus = s.ret_sigbus, .ret_oom = s.ret_oom,
		.ret_refault = s.ret_refault, .ret_retry = s.ret_retry,
		.lock_kept = s.lock_kept, .ram_pages = s.ram_pages,
		.all_ram_pages = s.all_ram_pages, .all_states = s.all_states,
		.carve_pfn = s.carve_pfn, .carve_pages = s.carve_pages,
		.fault_calls = s.fault_calls, .mkwrite_calls = s.mkwrite_calls,
		.misuse_released = s.misuse_released,
		.twice_released = s.twice_released,
		.gate_waiting = s.gate_waiting, .all_releases = s.all_releases,
	};
}

static inline int query(int fd, const void *addr,
			struct nopfn_test_query *q)
{
	memset(q, 0, sizeof(*q));
	q->addr = (uintptr_t)addr;
	return ioctl(fd, NOPFN_TEST_IOC_QUERY, q) ? -errno : 0;
}

static inline char *map_pages(int fd, size_t npages, uint64_t pgoff,
			       int prot, int flags)
{
	void *p = mmap(NULL, npages * psz, prot, flags, fd, pgoff * psz);

	return p == MAP_FAILED ? NULL : p;
}

static inline int open_dev(void)
{
	return open(DEV_PATH, O_RDWR | O_CLOEXEC);
}

/*
 * Access one byte and catch SIGBUS/SIGSEGV: returns 0 if the access
 * completed, else the signal number, with its siginfo in *info.
 */
static __thread sigjmp_buf probe_env;
static __thread volatile sig_atomic_t probe_armed;
static __thread siginfo_t probe_info;

static inline void probe_handler(int sig, siginfo_t *si, void *uc)
{
	(void)uc;
	if (!probe_armed) {
		signal(sig, SIG_DFL);	/* not ours: die of it */
		raise(sig);
		return;
	}
	probe_info = *si;
	siglongjmp(probe_env, 1);
}

static inline int probe(volatile char *addr, bool write, char *val,
			siginfo_t *info)
{
	struct sigaction sa = { .sa_sigaction = probe_handler,
				.sa_flags = SA_SIGINFO };
	struct sigaction old_bus, old_segv;
	int ret = 0;

	sigemptyset(&sa.sa_mask);
	sigaction(SIGBUS, &sa, &old_bus);
	sigaction(SIGSEGV, &sa, &old_segv);
	if (sigsetjmp(probe_env, 1) == 0) {
		probe_armed = 1;
		if (write)
			*addr = *val;
		else
			*val = *addr;
		probe_armed = 0;
	} else {
		probe_armed = 0;
		ret = probe_info.si_signo;
		if (info)
			*info = probe_info;
	}
	sigaction(SIGBUS, &old_bus, NULL);
	sigaction(SIGSEGV, &old_segv, NULL);
	return ret;
}

/* A signal handler that counts and stamps its runs. */
static volatile sig_atomic_t usr1_runs;
static volatile double usr1_when;

static inline void usr1_handler(int sig)
{
	(void)sig;
	usr1_runs++;
	usr1_when = now_ms();
}

static inline void install_usr1(void)
{
	struct sigaction sa = { .sa_handler = usr1_handler };

	sigemptyset(&sa.sa_mask);
	usr1_runs = 0;
	sigaction(SIGUSR1, &sa, NULL);
}

/*
 * Wait (at most 5 s) until the module has seen at least @n ->nopfn() calls
 * on @fd, then @extra_ms more: the faulting thread is then inside its wait.
 */
static inline bool wait_for_calls(int fd, long long n,
				  unsigned int extra_ms)
{
	double end = now_ms() + 5000;

	while (stats(fd).calls < n) {
		if (now_ms() > end)
			return false;
		sleep_ms(2);
	}
	sleep_ms(extra_ms);
	return true;
}

/* A thread that reads one byte of a mapping and times it. */
struct toucher {
	pthread_t thread;
	volatile char *addr;
	char val;
	double start, end;
};

static inline void *toucher_fn(void *arg)
{
	struct toucher *t = arg;

	t->start = now_ms();
	t->val = *t->addr;
	t->end = now_ms();
	return NULL;
}

static inline int toucher_start(struct toucher *t, volatile char *addr)
{
	memset(t, 0, sizeof(*t));
	t->addr = addr;
	return pthread_create(&t->thread, NULL, toucher_fn, t);
}

/* A thread that sends SIGUSR1 to @target once @fd saw a ->nopfn() call. */
struct signaller {
	pthread_t thread;
	pthread_t target;
	int fd;
	unsigned int delay_ms;
	bool ok;
	double sent;
};

static inline void *signaller_fn(void *arg)
{
	struct signaller *s = arg;

	s->ok = wait_for_calls(s->fd, 1, s->delay_ms);
	s->sent = now_ms();
	pthread_kill(s->target, SIGUSR1);
	return NULL;
}

/* Set one page's behaviour to return @value (NOPFN_TEST_RETURN). */
static inline int set_return(int fd, uint64_t page, uint64_t value)
{
	struct nopfn_test_pages req = {
		.first = page, .count = 1,
		.behaviour = NOPFN_TEST_RETURN, .value = value,
	};

	return ioctl(fd, NOPFN_TEST_IOC_SET_PAGES, &req) ? -errno : 0;
}

static inline int revoke_pages(int fd, uint64_t first, uint64_t count)
{
	struct nopfn_test_pages req = { .first = first, .count = count };

	return ioctl(fd, NOPFN_TEST_IOC_REVOKE, &req) ? -errno : 0;
}

#endif /* NOPFN_UTIL_H */
