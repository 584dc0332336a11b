// SPDX-License-Identifier: GPL-2.0
/*
 * The test of docs/examples/mydriver/nopfn_example.c, run in every guest
 * with --user-tests (README, "Test your own driver"): each TEST() is a
 * KTAP case, and each case a pytest item of its own,
 * test_case[TARGET-user/nopfn_example-global.NAME].
 *
 * It defines _GNU_SOURCE itself, as most Linux test programs do (for
 * asprintf() here): a --user-tests program is compiled as written.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/mman.h>
#include <unistd.h>

/* 6.1's harness macros have unused parameters of their own. */
#pragma GCC diagnostic ignored "-Wunused-parameter"
#include "kselftest_harness.h"

#define DEV		"/dev/nopfn_example"
#define MAGIC		0x6e6f70666e000000ULL
#define PAGES		8	/* module-params.yaml: nopfn_example: pages=8 */

/* A parameter of the module (/sys/module/nopfn_example/parameters/), or -1 */
static long param(const char *name)
{
	char *path;
	long v = -1;
	FILE *f;

	if (asprintf(&path, "/sys/module/nopfn_example/parameters/%s",
		     name) < 0)
		return -1;
	f = fopen(path, "r");
	free(path);
	if (!f)
		return -1;
	if (fscanf(f, "%ld", &v) != 1)
		v = -1;
	fclose(f);
	return v;
}

/* @n pages of the device from offset 0, shared, or MAP_FAILED */
static void *map(int fd, size_t n, int prot)
{
	return mmap(NULL, n * getpagesize(), prot, MAP_SHARED, fd, 0);
}

static uint64_t word(const void *base, size_t page, size_t i)
{
	return ((const volatile uint64_t *)((const char *)base +
					     page * getpagesize()))[i];
}

TEST(the_harness_passed_our_parameters)
{
	ASSERT_EQ(PAGES, param("pages"));
}

TEST(each_page_reads_its_own_pattern)
{
	int fd = open(DEV, O_RDWR);
	void *m;
	size_t i;

	ASSERT_LE(0, fd);
	m = map(fd, PAGES, PROT_READ);
	ASSERT_NE(MAP_FAILED, m);
	for (i = 0; i < PAGES; i++)
		EXPECT_EQ(MAGIC + i, word(m, i, 0));
	munmap(m, PAGES * getpagesize());
	close(fd);
}

TEST(one_nopfn_call_per_page)
{
	int fd = open(DEV, O_RDWR);
	long before = param("faults");
	void *m;
	size_t i;

	ASSERT_LE(0, fd);
	ASSERT_LE(0, before);
	m = map(fd, PAGES, PROT_READ);
	ASSERT_NE(MAP_FAILED, m);
	for (i = 0; i < 2 * PAGES; i++)	/* each page twice */
		word(m, i % PAGES, 0);
	EXPECT_EQ(before + PAGES, param("faults"));
	munmap(m, PAGES * getpagesize());
	close(fd);
}

TEST(two_mappings_share_the_page)
{
	int fd = open(DEV, O_RDWR);
	volatile uint64_t *a, *b;
	uint64_t old;

	ASSERT_LE(0, fd);
	a = map(fd, 1, PROT_READ | PROT_WRITE);
	b = map(fd, 1, PROT_READ);
	ASSERT_NE(MAP_FAILED, (void *)a);
	ASSERT_NE(MAP_FAILED, (void *)b);
	ASSERT_NE(a, b);
	old = a[1];
	a[1] = 0x1234567890abcdefULL;
	EXPECT_EQ(0x1234567890abcdefULL, b[1]);
	a[1] = old;		/* as the next run expects it */
	munmap((void *)a, getpagesize());
	munmap((void *)b, getpagesize());
	close(fd);
}

/* The core refuses a copy-on-write VMA of ->nopfn(): EINVAL, no warning */
TEST(private_mapping_of_a_writable_file_is_refused)
{
	int fd = open(DEV, O_RDWR);
	void *m;

	ASSERT_LE(0, fd);
	m = mmap(NULL, getpagesize(), PROT_READ, MAP_PRIVATE, fd, 0);
	EXPECT_EQ(MAP_FAILED, m);
	EXPECT_EQ(EINVAL, errno);
	if (m != MAP_FAILED)
		munmap(m, getpagesize());
	close(fd);
}

/* ->nopfn() returns NOPFN_SIGBUS past the device's last page */
TEST_SIGNAL(past_the_last_page_is_sigbus, SIGBUS)
{
	int fd = open(DEV, O_RDWR);
	void *m;

	ASSERT_LE(0, fd);
	m = map(fd, PAGES + 1, PROT_READ);
	ASSERT_NE(MAP_FAILED, m);
	word(m, PAGES - 1, 0);
	word(m, PAGES, 0);	/* SIGBUS */
}

TEST_HARNESS_MAIN
