/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Checks of the kselftest_harness tests of mspec (mspec_share.c,
 * mspec_mmap.c), included after kselftest_harness.h and mspec_test.h.
 */
#ifndef MSPEC_HARNESS_H
#define MSPEC_HARNESS_H

#include "mspec_test.h"

/*
 * A shared read-write mapping of @pages pages of type @t, the type's
 * counters before it in *@base.
 */
static inline void *map_counted(struct __test_metadata *_metadata, int t,
				unsigned long pages, struct counters *base)
{
	void *p;

	ASSERT_EQ(0, read_counters(type_name[t], base));
	p = map_rw(dev_path[t], pages * psz);
	ASSERT_NE(MAP_FAILED, p);
	return p;
}

/* Type @t's counters are back to *@base: every page given back. */
static inline void expect_back_to(struct __test_metadata *_metadata, int t,
				  const struct counters *base)
{
	struct counters c;

	ASSERT_EQ(0, read_counters(type_name[t], &c));
	EXPECT_EQ(base->in_use, c.in_use) TH_LOG("%s", type_name[t]);
	EXPECT_EQ(base->mappings, c.mappings) TH_LOG("%s", type_name[t]);
	EXPECT_EQ(c.allocated - base->allocated, c.freed - base->freed);
	EXPECT_EQ(base->leaked, c.leaked);
}

#endif /* MSPEC_HARNESS_H */
