// SPDX-License-Identifier: GPL-2.0
/*
 * mspec: page allocation failures, injected through
 * /sys/kernel/debug/mspec/fail_next_alloc (the next N allocations fail,
 * whatever the device type) and fail_sigbus (0: the failure is reported
 * as NOPFN_OOM, like a real one; 1: as NOPFN_SIGBUS), and page reuse.
 *
 *  - SIGBUS: the touching process dies of SIGBUS, the failure is counted,
 *    nothing is allocated or leaked, other pages of the mapping keep their
 *    data, and the page can be touched again afterwards;
 *  - OOM path: NOPFN_OOM outside a memcg OOM, for a task that is not
 *    dying, is SIGBUS too (the series: 6.1's pagefault_out_of_memory()
 *    would retry the fault for ever), every time, and nothing leaks;
 *  - pages come back zeroed: whatever a mapping wrote, a later mapping of
 *    any type reads zeros on first touch.
 */
#include <errno.h>
#include <fcntl.h>
#include <sched.h>
#include <signal.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/wait.h>
#include <unistd.h>
#include <linux/types.h>

/* 6.1's harness macros have unused parameters of their own. */
#pragma GCC diagnostic ignored "-Wunused-parameter"
#include "kselftest_harness.h"
#include "mspec_test.h"

/* Touch page @i of @p in a child: its wait_for() result. */
static int touch_in_child(char *p, unsigned long i, bool expect_zero)
{
	pid_t pid = fork();

	if (pid < 0)
		return -1;
	if (pid == 0) {
		__u64 *w = (__u64 *)(p + i * psz);

		alarm(10);	/* a fault that retries forever fails here */
		if (expect_zero && peek64(w))
			_exit(1);
		poke64(w, 0xfeed);
		_exit(0);
	}
	return wait_for(pid);
}

/* The PFN that maps @addr in this process, 0 if unknown. */
static unsigned long pfn_of(const void *addr)
{
	long pfn = pte_pfn(addr);

	return pfn > 0 ? pfn : 0;
}

FIXTURE(alloc) {
	struct counters base[NTYPES];
};

FIXTURE_SETUP(alloc)
{
	int t;

	if (!have_mspec())
		return;
	ASSERT_EQ(0, mspec_set_knob("fail_next_alloc", 0));
	ASSERT_EQ(0, mspec_set_knob("fail_sigbus", 0));
	for (t = 0; t < nmappable; t++)
		ASSERT_EQ(0, read_counters(type_name[t], &self->base[t]));
}

/* Knobs off again, whatever happened; nothing leaked by the test. */
FIXTURE_TEARDOWN(alloc)
{
	struct counters c;
	int t;

	if (!have_mspec())
		return;
	mspec_set_knob("fail_next_alloc", 0);
	mspec_set_knob("fail_sigbus", 0);
	for (t = 0; t < nmappable; t++) {
		ASSERT_EQ(0, read_counters(type_name[t], &c));
		EXPECT_EQ(self->base[t].in_use, c.in_use)
			TH_LOG("%s", type_name[t]);
		EXPECT_EQ(self->base[t].mappings, c.mappings);
		EXPECT_EQ(self->base[t].leaked, c.leaked);
		EXPECT_EQ(c.allocated - self->base[t].allocated,
			  c.freed - self->base[t].freed);
	}
}

TEST_F(alloc, injected_failure_gives_sigbus)
{
	struct counters c;
	int t;

	if (!have_mspec())
		SKIP(return, NO_MSPEC);
	for (t = 0; t < nmappable; t++) {
		struct counters *base = &self->base[t];
		char *p = map_rw(dev_path[t], 4 * psz);

		ASSERT_NE(MAP_FAILED, p);
		memset(p, 0x77, psz);			/* page 0: allocated */

		ASSERT_EQ(0, mspec_set_knob("fail_sigbus", 1));
		ASSERT_EQ(0, mspec_set_knob("fail_next_alloc", 1));
		EXPECT_EQ(128 + SIGBUS, touch_in_child(p, 1, true))
			TH_LOG("%s", type_name[t]);
		EXPECT_EQ(0, mspec_knob("fail_next_alloc"));

		ASSERT_EQ(0, read_counters(type_name[t], &c));
		EXPECT_EQ(base->failures + 1, c.failures);
		EXPECT_EQ(base->in_use + 1, c.in_use);
		EXPECT_EQ((char)0x77, p[psz - 1]);

		/* The failure is not sticky: the page comes now. */
		EXPECT_EQ(0, touch_in_child(p, 1, true));
		ASSERT_EQ(0, read_counters(type_name[t], &c));
		EXPECT_EQ(base->in_use + 2, c.in_use);
		EXPECT_EQ(0xfeedULL, peek64(p + psz));
		munmap(p, 4 * psz);
	}
}

TEST_F(alloc, failures_count_down)
{
	struct counters c;
	char *p;

	if (!have_mspec())
		SKIP(return, NO_MSPEC);
	p = map_rw(dev_path[1], 4 * psz);
	ASSERT_NE(MAP_FAILED, p);
	ASSERT_EQ(0, mspec_set_knob("fail_sigbus", 1));
	ASSERT_EQ(0, mspec_set_knob("fail_next_alloc", 2));
	EXPECT_EQ(128 + SIGBUS, touch_in_child(p, 0, true));
	EXPECT_EQ(1, mspec_knob("fail_next_alloc"));
	EXPECT_EQ(128 + SIGBUS, touch_in_child(p, 3, true));
	EXPECT_EQ(0, mspec_knob("fail_next_alloc"));
	EXPECT_EQ(0, touch_in_child(p, 3, true));
	ASSERT_EQ(0, read_counters(type_name[1], &c));
	EXPECT_EQ(self->base[1].failures + 2, c.failures);
	EXPECT_EQ(self->base[1].in_use + 1, c.in_use);
	munmap(p, 4 * psz);
}

/*
 * NOPFN_OOM for a task that is not dying, without a memcg OOM to run: the
 * fault cannot be satisfied and the task gets SIGBUS, every time, instead
 * of faulting for ever; each failure is counted, nothing leaks, and once
 * the injected failures are used up the page comes.
 */
TEST_F(alloc, injected_oom_is_sigbus)
{
	struct counters c;
	int t, i;

	if (!have_mspec())
		SKIP(return, NO_MSPEC);
	ASSERT_EQ(0, mspec_set_knob("fail_sigbus", 0));
	for (t = 0; t < nmappable; t++) {
		struct counters before, *base = &before;
		char *p = map_rw(dev_path[t], 2 * psz);

		ASSERT_NE(MAP_FAILED, p);
		ASSERT_EQ(0, read_counters(type_name[t], base));
		ASSERT_EQ(0, mspec_set_knob("fail_next_alloc", 3));
		for (i = 0; i < 3; i++) {
			EXPECT_EQ(128 + SIGBUS, touch_in_child(p, 0, true))
				TH_LOG("%s: touch %d", type_name[t], i);
			EXPECT_EQ(2 - i, mspec_knob("fail_next_alloc"));
		}
		ASSERT_EQ(0, read_counters(type_name[t], &c));
		EXPECT_EQ(base->failures + 3, c.failures);
		EXPECT_EQ(base->faults + 3, c.faults);
		EXPECT_EQ(base->in_use, c.in_use);
		EXPECT_EQ(0, touch_in_child(p, 0, true));
		EXPECT_EQ(0xfeedULL, peek64(p));
		munmap(p, 2 * psz);
	}
}

/*
 * Whatever a mapping wrote, the pages come back zeroed: map, check zero,
 * fill, unmap, several rounds over every type, so that the page allocator
 * hands the same physical pages around (the pte file tells how many).
 */
TEST_F(alloc, pages_zeroed_after_reuse)
{
	const unsigned long npages = 16;
	unsigned long seen[3 * NTYPES * 16];
	unsigned long nseen = 0, reused = 0;
	int round, t;

	if (!have_mspec())
		SKIP(return, NO_MSPEC);
	for (round = 0; round < 3; round++) {
		for (t = 0; t < nmappable; t++) {
			__u64 *p = map_rw(dev_path[t], npages * psz);
			unsigned long i, k, n = npages * psz / 8, bad = 0;

			ASSERT_NE(MAP_FAILED, p);
			for (i = 0; i < n; i++)
				if (peek64(&p[i]) != fresh_word(t, i * 8))
					bad++;
			EXPECT_EQ(0UL, bad) TH_LOG("round %d %s: %lu dirty words",
						   round, type_name[t], bad);
			for (i = 0; i < n; i++)
				poke64(&p[i], 0xdead0000beef0000ULL | i);

			for (i = 0; i < npages; i++) {
				unsigned long pfn = pfn_of((char *)p + i * psz);

				for (k = 0; k < nseen; k++)
					if (seen[k] == pfn) {
						reused++;
						break;
					}
				if (k == nseen && nseen < ARRAY_SIZE(seen))
					seen[nseen++] = pfn;
			}
			munmap(p, npages * psz);
		}
	}
	TH_LOG("%lu of %lu page touches got a page used before by the test",
	       reused, 3 * nmappable * npages);
}

/*
 * Leave @npages pages dirty on this CPU's free lists of unmovable pages,
 * where mspec's next order-0 allocations on this CPU take them from: a
 * pipe's buffer pages (GFP_HIGHUSER, unmovable, without highmem on the
 * 64-bit targets) filled with 0xa5 and freed by closing the pipe. The
 * page allocator hands out the most recently freed page of a per-CPU list
 * first. 0, or -1 with errno.
 */
static int dirty_unmovable_pages(unsigned long npages, unsigned long psz)
{
	static char buf[65536];
	unsigned long want = npages * psz, done = 0;
	int fd[2], ret = -1;
	ssize_t n;

	memset(buf, 0xa5, sizeof(buf));
	if (pipe2(fd, O_NONBLOCK))
		return -1;
	if (fcntl(fd[1], F_SETPIPE_SZ, (int)want) < 0)
		goto out;
	while (done < want) {
		n = write(fd[1], buf, sizeof(buf) < want - done ?
			  sizeof(buf) : want - done);
		if (n <= 0)
			goto out;
		done += n;
	}
	ret = 0;
out:
	close(fd[0]);
	close(fd[1]);
	return ret;
}

/*
 * A page handed out must not carry what its previous user left there,
 * even when that user was not mspec (whose own pages are cleared when
 * freed). The test stays on one CPU and, right before each mapping, frees
 * four times as many dirty pages of mspec's kind (unmovable) as the
 * mapping takes onto that CPU's free list, so that without zeroing every
 * page of it comes back dirty: anonymous memory would not do, its pages
 * are movable and go to another list.
 */
TEST_F(alloc, no_data_from_previous_user)
{
	const unsigned long npages = 64;
	cpu_set_t cpu;
	int t;

	if (!have_mspec())
		SKIP(return, NO_MSPEC);
	CPU_ZERO(&cpu);
	CPU_SET(sched_getcpu(), &cpu);
	ASSERT_EQ(0, sched_setaffinity(0, sizeof(cpu), &cpu));
	for (t = 0; t < nmappable; t++) {
		unsigned long i, n = npages * psz / 8, bad = 0;
		__u64 *p;

		ASSERT_EQ(0, dirty_unmovable_pages(4 * npages, psz))
			TH_LOG("pipe: %s", strerror(errno));
		p = map_rw(dev_path[t], npages * psz);
		ASSERT_NE(MAP_FAILED, p);
		for (i = 0; i < n; i++)
			if (peek64(&p[i]) != fresh_word(t, i * 8))
				bad++;
		EXPECT_EQ(0UL, bad) TH_LOG("%s: %lu words not fresh",
					   type_name[t], bad);
		munmap(p, npages * psz);
	}
}

TEST_HARNESS_MAIN
