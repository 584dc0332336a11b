// SPDX-License-Identifier: GPL-2.0
/*
 * mspec: the mmap() rules of the three devices and first touch.
 *
 * The devices (/dev/mspec_uncached, /dev/mspec_cached, /dev/sgi_fetchop)
 * come from driver/mspec_core.c, loaded by the matrix at boot; the counters
 * are in /sys/kernel/debug/mspec/<type>/stats.
 *
 *  - offset other than 0: EINVAL; private mapping: EINVAL; no PROT_WRITE:
 *    EPERM; a mapping whose bookkeeping would not fit: ENOMEM, and none of
 *    them leaves a mapping behind;
 *  - the VMA is VM_IO | VM_PFNMAP | VM_DONTEXPAND | VM_DONTDUMP ("io pf de
 *    dd" in smaps) and cannot grow with mremap();
 *  - nothing is allocated before the first touch, a first touch reads zero,
 *    allocates exactly one page per page touched, and munmap() gives every
 *    page back.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>
#include <linux/types.h>

/* 6.1's harness macros have unused parameters of their own. */
#pragma GCC diagnostic ignored "-Wunused-parameter"
#include "kselftest_harness.h"
#include "mspec_harness.h"

/* -------------------------------------------------------------- tests */

TEST(devices_present)
{
	struct stat st;
	char path[128];
	int t;

	if (!have_mspec())
		SKIP(return, NO_MSPEC);
	for (t = 0; t < NTYPES; t++) {
		ASSERT_EQ(0, stat(dev_path[t], &st)) TH_LOG("%s", dev_path[t]);
		ASSERT_TRUE(S_ISCHR(st.st_mode));
		snprintf(path, sizeof(path), MSPEC_DEBUGFS "/%s/info",
			 type_name[t]);
		ASSERT_EQ(0, access(path, R_OK));
	}
}

static void expect_refused(struct __test_metadata *_metadata, int prot,
			   int flags, off_t off, int expected_errno)
{
	struct counters before, after;
	int t;

	for (t = 0; t < nmappable; t++) {
		void *p;

		ASSERT_EQ(0, read_counters(type_name[t], &before));
		errno = 0;
		p = map_dev(dev_path[t], 4 * psz, prot, flags, off);
		ASSERT_EQ(MAP_FAILED, p) TH_LOG("%s accepted the mapping",
						dev_path[t]);
		ASSERT_EQ(expected_errno, errno) TH_LOG("%s: %s", dev_path[t],
							strerror(errno));
		ASSERT_EQ(0, read_counters(type_name[t], &after));
		ASSERT_EQ(before.mappings, after.mappings);
		ASSERT_EQ(before.in_use, after.in_use);
	}
}

TEST(offset_not_zero_is_einval)
{
	if (!have_mspec())
		SKIP(return, NO_MSPEC);
	expect_refused(_metadata, PROT_READ | PROT_WRITE, MAP_SHARED, psz,
		       EINVAL);
	expect_refused(_metadata, PROT_READ | PROT_WRITE, MAP_SHARED,
		       16 * psz, EINVAL);
}

TEST(private_mapping_is_einval)
{
	if (!have_mspec())
		SKIP(return, NO_MSPEC);
	expect_refused(_metadata, PROT_READ | PROT_WRITE, MAP_PRIVATE, 0,
		       EINVAL);
	expect_refused(_metadata, PROT_READ, MAP_PRIVATE, 0, EINVAL);
}

TEST(readonly_mapping_is_eperm)
{
	if (!have_mspec())
		SKIP(return, NO_MSPEC);
	expect_refused(_metadata, PROT_READ, MAP_SHARED, 0, EPERM);
	expect_refused(_metadata, PROT_NONE, MAP_SHARED, 0, EPERM);
}

/*
 * 2^28 pages need 2 GiB of bookkeeping (one unsigned long each), more than
 * kvzalloc() takes (INT_MAX): the driver says ENOMEM without trying.  On a
 * machine whose user address space is too small for the mapping, the core
 * says ENOMEM first; either way nothing is left behind.  A 32-bit machine
 * cannot even ask for such a mapping: there the largest page-aligned
 * length, beyond every 32-bit TASK_SIZE, is the core's ENOMEM.
 */
TEST(huge_mapping_is_enomem)
{
#if SIZE_MAX > 0xffffffffUL
	static const size_t sizes[] = { (size_t)1 << 40, (size_t)1 << 46 };
#else
	static const size_t sizes[] = { ~(size_t)0xfff };
#endif
	struct counters before, after;
	unsigned int i;
	int t;

	if (!have_mspec())
		SKIP(return, NO_MSPEC);
	for (t = 0; t < nmappable; t++) {
		for (i = 0; i < ARRAY_SIZE(sizes); i++) {
			void *p;

			ASSERT_EQ(0, read_counters(type_name[t], &before));
			errno = 0;
			p = map_dev(dev_path[t], sizes[i],
				    PROT_READ | PROT_WRITE,
				    MAP_SHARED | MAP_NORESERVE, 0);
			if (p != MAP_FAILED)
				munmap(p, sizes[i]);
			ASSERT_EQ(MAP_FAILED, p) TH_LOG("%s: %#zx bytes mapped",
							dev_path[t], sizes[i]);
			ASSERT_EQ(ENOMEM, errno);
			ASSERT_EQ(0, read_counters(type_name[t], &after));
			ASSERT_EQ(before.mappings, after.mappings);
		}
	}
}

/* The VmFlags line of the smaps entry that starts at @addr. */
static int vm_flags_of(void *addr, char *buf, size_t size)
{
	char line[512], want[32];
	bool in = false;
	FILE *f;

	snprintf(want, sizeof(want), "%lx-", (unsigned long)addr);
	f = fopen("/proc/self/smaps", "r");
	if (!f)
		return -1;
	while (fgets(line, sizeof(line), f)) {
		if (!strncmp(line, want, strlen(want))) {
			in = true;
		} else if (in && !strncmp(line, "VmFlags:", 8)) {
			snprintf(buf, size, "%s", line + 8);
			fclose(f);
			return 0;
		}
	}
	fclose(f);
	return -1;
}

static bool has_flag(const char *flags, const char *flag)
{
	char copy[512], *tok, *save;

	snprintf(copy, sizeof(copy), "%s", flags);
	for (tok = strtok_r(copy, "\n ", &save); tok;
	     tok = strtok_r(NULL, "\n ", &save))
		if (!strcmp(tok, flag))
			return true;
	return false;
}

TEST(vma_flags)
{
	static const char * const want[] = { "sh", "wr", "io", "pf", "de", "dd" };
	unsigned int i, missing = 0;
	char flags[512];
	int t;

	if (!have_mspec())
		SKIP(return, NO_MSPEC);
	if (access("/proc/self/smaps", R_OK))
		SKIP(return, "no /proc/self/smaps (CONFIG_PROC_PAGE_MONITOR=n)");
	for (t = 0; t < nmappable; t++) {
		char *p = map_rw(dev_path[t], 2 * psz);

		ASSERT_NE(MAP_FAILED, p);
		ASSERT_EQ(0, vm_flags_of(p, flags, sizeof(flags)));
		for (i = 0; i < ARRAY_SIZE(want); i++)
			if (!has_flag(flags, want[i]))
				missing++;
		EXPECT_EQ(0U, missing)
			TH_LOG("%s: VmFlags:%s", dev_path[t], flags);
		munmap(p, 2 * psz);
	}
}

TEST(mremap_cannot_grow)
{
	int t;

	if (!have_mspec())
		SKIP(return, NO_MSPEC);
	for (t = 0; t < nmappable; t++) {
		char *p = map_rw(dev_path[t], 2 * psz);
		void *q;

		ASSERT_NE(MAP_FAILED, p);
		p[0] = 1;
		q = mremap(p, 2 * psz, 4 * psz, 0);
		EXPECT_EQ(MAP_FAILED, q);
		q = mremap(p, 2 * psz, 4 * psz, MREMAP_MAYMOVE);
		EXPECT_EQ(MAP_FAILED, q);
		if (q != MAP_FAILED)
			p = q;
		EXPECT_EQ(1, p[0]);
		munmap(p, q != MAP_FAILED ? 4 * psz : 2 * psz);
	}
}

TEST(nothing_allocated_before_touch)
{
	struct counters base, c;
	int t;

	if (!have_mspec())
		SKIP(return, NO_MSPEC);
	for (t = 0; t < nmappable; t++) {
		char *p = map_counted(_metadata, t, 64, &base);

		ASSERT_EQ(0, read_counters(type_name[t], &c));
		EXPECT_EQ(base.mappings + 1, c.mappings);
		EXPECT_EQ(base.in_use, c.in_use);

		poke64(p + 5 * psz, 7);
		ASSERT_EQ(0, read_counters(type_name[t], &c));
		EXPECT_EQ(base.in_use + 1, c.in_use);
		EXPECT_EQ(base.allocated + 1 + (c.races - base.races),
			  c.allocated);

		munmap(p, 64 * psz);
		ASSERT_EQ(0, read_counters(type_name[t], &c));
		EXPECT_EQ(base.mappings, c.mappings);
		EXPECT_EQ(base.in_use, c.in_use);
	}
}

TEST(first_touch_reads_zero)
{
	const unsigned long npages = 16;
	struct counters base, c;
	int t;

	if (!have_mspec())
		SKIP(return, NO_MSPEC);
	for (t = 0; t < nmappable; t++) {
		unsigned long i, n = npages * psz / sizeof(__u64);
		__u64 *p;

		p = map_counted(_metadata, t, npages, &base);

		/*
		 * Read faults first: every word of every page is zero (on
		 * fetchop, FETCHOP_NO_AMO at the SN2 operation offsets).
		 */
		for (i = 0; i < n; i++)
			if (peek64(&p[i]) != fresh_word(t, i * sizeof(__u64)))
				break;
		ASSERT_EQ(n, i) TH_LOG("%s: word %lu is not fresh", dev_path[t],
				       i);

		ASSERT_EQ(0, read_counters(type_name[t], &c));
		EXPECT_EQ(base.in_use + (long)npages, c.in_use);
		EXPECT_LE(base.faults + (long)npages, c.faults);

		/* Then the memory is memory: what is written reads back. */
		for (i = 0; i < n; i++)
			poke64(&p[i], i * 0x9e3779b97f4a7c15ULL);
		for (i = 0; i < n; i++)
			if (peek64(&p[i]) != i * 0x9e3779b97f4a7c15ULL)
				break;
		ASSERT_EQ(n, i);
		/* Writing touched no new page. */
		ASSERT_EQ(0, read_counters(type_name[t], &c));
		EXPECT_EQ(base.in_use + (long)npages, c.in_use);

		munmap(p, npages * psz);
		expect_back_to(_metadata, t, &base);
	}
}

/* memset()/memcpy() and unaligned accesses work on every type. */
TEST(string_functions_and_unaligned)
{
	char buf[256];
	int t;

	if (!have_mspec())
		SKIP(return, NO_MSPEC);
	for (t = 0; t < nmappable; t++) {
		char *p = map_rw(dev_path[t], 2 * psz);
		__u32 v;

		ASSERT_NE(MAP_FAILED, p);
		memset(p, 0x5a, 2 * psz);
		memset(buf, 0x5a, sizeof(buf));
		ASSERT_EQ(0, memcmp(p + psz - 100, buf, sizeof(buf)));
		memcpy(p + 3, "unaligned", 10);
		memcpy(&v, p + 5, sizeof(v));
		ASSERT_EQ(0, memcmp(&v, "alig", 4));
		ASSERT_EQ(0, strcmp(p + 3, "unaligned"));
		/* A zeroing memset() may use DC ZVA on arm64. */
		memset(p, 0, 2 * psz);
		memset(buf, 0, sizeof(buf));
		ASSERT_EQ(0, memcmp(p + psz - 100, buf, sizeof(buf)));
		munmap(p, 2 * psz);
	}
}

TEST_HARNESS_MAIN
