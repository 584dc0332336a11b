// SPDX-License-Identifier: GPL-2.0
/*
 * mspec: one mmap() shared by the VMAs that fork(), munmap() of a part,
 * mprotect() of a part and mremap() derive from it.
 *
 *  - a child sees the parent's pages and the parent the child's, including
 *    pages that the child touched first: one page per index, whichever
 *    process faults first;
 *  - after a split, the page of an index is found from vmf->pgoff: a first
 *    touch in the upper part reads zero, not the data of the page at the
 *    start of the mapping, and the data of the other parts stays;
 *  - every page is given back when the last VMA goes: after munmap() and
 *    after exit(), with split VMAs and forked copies, the counters in
 *    /sys/kernel/debug/mspec/<type>/stats are back where they started.
 */
#include <errno.h>
#include <fcntl.h>
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
#include "mspec_harness.h"

/* The first word of page @i of @p. */
static __u64 *word(void *p, unsigned long i)
{
	return (__u64 *)((char *)p + i * psz);
}

static __u64 pattern(int t, unsigned long i)
{
	return 0x5eed000000000000ULL | (__u64)t << 32 | (i + 1);
}

/* Every word of page @i of @p is @v. */
static bool page_is(void *p, unsigned long i, __u64 v)
{
	__u64 *w = word(p, i);
	unsigned long k;

	for (k = 0; k < psz / sizeof(__u64); k++)
		if (peek64(&w[k]) != v)
			return false;
	return true;
}

/* Page @i of @p, a device of type @t, is as fresh (fresh_word()). */
static bool page_fresh(int t, void *p, unsigned long i)
{
	__u64 *w = word(p, i);
	unsigned long k;

	for (k = 0; k < psz / sizeof(__u64); k++)
		if (peek64(&w[k]) != fresh_word(t, k * sizeof(__u64)))
			return false;
	return true;
}

static void fill_page(void *p, unsigned long i, __u64 v)
{
	__u64 *w = word(p, i);
	unsigned long k;

	for (k = 0; k < psz / sizeof(__u64); k++)
		poke64(&w[k], v);
}

/* ------------------------------------------------------------- tests */

TEST(fork_shares_pages)
{
	struct counters base, c;
	int t;

	if (!have_mspec())
		SKIP(return, NO_MSPEC);
	for (t = 0; t < nmappable; t++) {
		char *p = map_counted(_metadata, t, 4, &base);
		pid_t pid;

		fill_page(p, 0, pattern(t, 0));

		pid = fork();
		ASSERT_LE(0, pid);
		if (pid == 0) {
			if (!page_is(p, 0, pattern(t, 0)))
				_exit(1);
			fill_page(p, 1, pattern(t, 1));
			/* First touch of page 2 is the child's. */
			fill_page(p, 2, pattern(t, 2));
			_exit(0);
		}
		ASSERT_EQ(0, wait_for(pid));

		EXPECT_TRUE(page_is(p, 1, pattern(t, 1)));
		EXPECT_TRUE(page_is(p, 2, pattern(t, 2)));
		EXPECT_TRUE(page_fresh(t, p, 3));
		ASSERT_EQ(0, read_counters(type_name[t], &c));
		/* Pages 0-3, one each, whoever touched them first. */
		EXPECT_EQ(base.in_use + 4, c.in_use);
		EXPECT_EQ(base.mappings + 1, c.mappings);

		munmap(p, 4 * psz);
		expect_back_to(_metadata, t, &base);
	}
}

TEST(partial_munmap_keeps_rest)
{
	struct counters base, c;
	int t;

	if (!have_mspec())
		SKIP(return, NO_MSPEC);
	for (t = 0; t < nmappable; t++) {
		char *p = map_counted(_metadata, t, 6, &base);

		fill_page(p, 0, pattern(t, 0));
		fill_page(p, 1, pattern(t, 1));

		/* [0] [2..5]: the upper VMA starts at page index 2. */
		ASSERT_EQ(0, munmap(p + psz, psz));
		EXPECT_TRUE(page_is(p, 0, pattern(t, 0)));
		/* First touch at the start of the upper VMA: a new page. */
		EXPECT_TRUE(page_fresh(t, p, 2));
		fill_page(p, 2, pattern(t, 2));
		EXPECT_TRUE(page_fresh(t, p, 5));
		fill_page(p, 5, pattern(t, 5));
		EXPECT_TRUE(page_is(p, 0, pattern(t, 0)));
		EXPECT_TRUE(page_is(p, 2, pattern(t, 2)));

		/* [0] [2] [4..5] */
		ASSERT_EQ(0, munmap(p + 3 * psz, psz));
		EXPECT_TRUE(page_fresh(t, p, 4));
		EXPECT_TRUE(page_is(p, 5, pattern(t, 5)));

		/* Pages of unmapped parts stay until the last VMA goes. */
		ASSERT_EQ(0, read_counters(type_name[t], &c));
		EXPECT_EQ(base.in_use + 5, c.in_use);
		EXPECT_EQ(base.mappings + 1, c.mappings);

		ASSERT_EQ(0, munmap(p, psz));
		EXPECT_TRUE(page_is(p, 2, pattern(t, 2)));
		ASSERT_EQ(0, read_counters(type_name[t], &c));
		EXPECT_EQ(base.in_use + 5, c.in_use);

		ASSERT_EQ(0, munmap(p, 6 * psz));
		expect_back_to(_metadata, t, &base);
	}
}

TEST(mprotect_part_keeps_rest)
{
	struct counters base, c;
	int t;

	if (!have_mspec())
		SKIP(return, NO_MSPEC);
	for (t = 0; t < nmappable; t++) {
		char *p = map_counted(_metadata, t, 6, &base);
		pid_t pid;

		fill_page(p, 0, pattern(t, 0));
		fill_page(p, 1, pattern(t, 1));

		/* [0..1] rw, [2..3] r, [4..5] rw */
		ASSERT_EQ(0, mprotect(p + 2 * psz, 2 * psz, PROT_READ));
		EXPECT_TRUE(page_fresh(t, p, 2));	/* read fault, read-only */
		EXPECT_TRUE(page_fresh(t, p, 4));
		fill_page(p, 4, pattern(t, 4));
		EXPECT_TRUE(page_is(p, 0, pattern(t, 0)));
		EXPECT_TRUE(page_is(p, 1, pattern(t, 1)));

		/* The read-only part is read-only. */
		pid = fork();
		ASSERT_LE(0, pid);
		if (pid == 0) {
			poke64(word(p, 3), 1);
			_exit(0);
		}
		EXPECT_EQ(128 + SIGSEGV, wait_for(pid));

		ASSERT_EQ(0, mprotect(p + 2 * psz, 2 * psz,
				      PROT_READ | PROT_WRITE));
		fill_page(p, 3, pattern(t, 3));
		EXPECT_TRUE(page_is(p, 0, pattern(t, 0)));
		EXPECT_TRUE(page_is(p, 1, pattern(t, 1)));
		EXPECT_TRUE(page_fresh(t, p, 2));
		EXPECT_TRUE(page_is(p, 3, pattern(t, 3)));
		EXPECT_TRUE(page_is(p, 4, pattern(t, 4)));
		EXPECT_TRUE(page_fresh(t, p, 5));

		ASSERT_EQ(0, read_counters(type_name[t], &c));
		EXPECT_EQ(base.in_use + 6, c.in_use);
		EXPECT_EQ(base.mappings + 1, c.mappings);

		ASSERT_EQ(0, munmap(p, 6 * psz));
		expect_back_to(_metadata, t, &base);
	}
}

TEST(split_then_fork)
{
	struct counters base, c;
	int t;

	if (!have_mspec())
		SKIP(return, NO_MSPEC);
	for (t = 0; t < nmappable; t++) {
		char *p = map_counted(_metadata, t, 4, &base);
		pid_t pid;

		ASSERT_EQ(0, munmap(p + psz, psz));	/* [0] [2..3] */

		pid = fork();
		ASSERT_LE(0, pid);
		if (pid == 0) {
			fill_page(p, 3, pattern(t, 3));
			fill_page(p, 0, pattern(t, 0));
			_exit(0);
		}
		ASSERT_EQ(0, wait_for(pid));
		EXPECT_TRUE(page_is(p, 3, pattern(t, 3)));
		EXPECT_TRUE(page_is(p, 0, pattern(t, 0)));
		EXPECT_TRUE(page_fresh(t, p, 2));

		ASSERT_EQ(0, read_counters(type_name[t], &c));
		EXPECT_EQ(base.in_use + 3, c.in_use);
		ASSERT_EQ(0, munmap(p, 4 * psz));
		expect_back_to(_metadata, t, &base);
	}
}

TEST(mremap_move_keeps_data)
{
	struct counters base, c;
	int t;

	if (!have_mspec())
		SKIP(return, NO_MSPEC);
	for (t = 0; t < nmappable; t++) {
		char *p, *dst, *q;

		p = map_counted(_metadata, t, 3, &base);
		fill_page(p, 0, pattern(t, 0));
		fill_page(p, 1, pattern(t, 1));

		/*
		 * A shared placeholder: where the data cache has aliases
		 * (MIPS, PA-RISC, ...), a shared mapping must sit at the
		 * colour of its offset, and the kernel places one of offset 0,
		 * as p, there; mremap() to another colour is EINVAL.
		 */
		dst = mmap(NULL, 3 * psz, PROT_NONE,
			   MAP_SHARED | MAP_ANONYMOUS, -1, 0);
		ASSERT_NE(MAP_FAILED, dst);
		q = mremap(p, 3 * psz, 3 * psz, MREMAP_MAYMOVE | MREMAP_FIXED,
			   dst);
		ASSERT_EQ(dst, q) TH_LOG("mremap: %s", strerror(errno));
		EXPECT_TRUE(page_is(q, 0, pattern(t, 0)));
		EXPECT_TRUE(page_is(q, 1, pattern(t, 1)));
		EXPECT_TRUE(page_fresh(t, q, 2));

		ASSERT_EQ(0, read_counters(type_name[t], &c));
		EXPECT_EQ(base.in_use + 3, c.in_use);
		EXPECT_EQ(base.mappings + 1, c.mappings);
		ASSERT_EQ(0, munmap(q, 3 * psz));
		expect_back_to(_metadata, t, &base);
	}
}

TEST(counters_back_after_unmap)
{
	struct counters base[NTYPES];
	char *p[NTYPES];
	unsigned long i;
	int t;

	if (!have_mspec())
		SKIP(return, NO_MSPEC);
	for (t = 0; t < nmappable; t++) {
		ASSERT_EQ(0, read_counters(type_name[t], &base[t]));
		p[t] = map_rw(dev_path[t], 8 * psz);
		ASSERT_NE(MAP_FAILED, p[t]);
		for (i = 0; i < 8; i++)
			poke64(word(p[t], i), pattern(t, i));
	}
	for (t = 0; t < nmappable; t++) {
		struct counters c;

		ASSERT_EQ(0, read_counters(type_name[t], &c));
		EXPECT_EQ(base[t].in_use + 8, c.in_use);
		ASSERT_EQ(0, munmap(p[t], 8 * psz));
		expect_back_to(_metadata, t, &base[t]);
	}
}

/*
 * A child maps every type, splits the mappings, forks a grandchild that
 * touches more pages, and both exit without munmap(): exit_mmap() closes
 * every VMA and the last one frees the pages.
 */
TEST(counters_back_after_exit)
{
	struct counters base[NTYPES];
	pid_t pid;
	int t;

	if (!have_mspec())
		SKIP(return, NO_MSPEC);
	for (t = 0; t < nmappable; t++)
		ASSERT_EQ(0, read_counters(type_name[t], &base[t]));

	pid = fork();
	ASSERT_LE(0, pid);
	if (pid == 0) {
		char *p[NTYPES];
		pid_t gc;

		for (t = 0; t < nmappable; t++) {
			p[t] = map_rw(dev_path[t], 8 * psz);
			if (p[t] == MAP_FAILED)
				_exit(1);
			fill_page(p[t], 0, 1);
			fill_page(p[t], 7, 7);
			if (munmap(p[t] + 2 * psz, psz) ||
			    mprotect(p[t] + 5 * psz, psz, PROT_READ))
				_exit(2);
		}
		gc = fork();
		if (gc < 0)
			_exit(3);
		if (gc == 0) {
			for (t = 0; t < nmappable; t++) {
				fill_page(p[t], 1, 1);
				fill_page(p[t], 6, 6);
			}
			_exit(0);
		}
		_exit(wait_for(gc) == 0 ? 0 : 4);
	}
	ASSERT_EQ(0, wait_for(pid));
	for (t = 0; t < nmappable; t++)
		expect_back_to(_metadata, t, &base[t]);
}

TEST_HARNESS_MAIN
