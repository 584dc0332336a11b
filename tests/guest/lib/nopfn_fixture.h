/* SPDX-License-Identifier: GPL-2.0 */
/*
 * The fixture of the kselftest_harness tests of /dev/test_nopfn in which
 * each test opens its own file (the module keeps its state per open
 * file): nopfn_faults.c. Included after
 * kselftest_harness.h, it is declared as
 *
 *	FIXTURE(name) {
 *		int fd;			(the file under test)
 *		int watch;		(a second one: module-wide counters)
 *		struct counts base;	(module-wide counters at setup)
 *	};
 *	NOPFN_FIXTURE_SETUP(name)
 *
 * and ASSERT_NO_LEAK() checks the module-wide counters of a test that
 * closed its file. map_page_with() maps a page of a given behaviour.
 */
#ifndef NOPFN_FIXTURE_H
#define NOPFN_FIXTURE_H

#include "nopfn_util.h"

static inline void nopfn_fixture_open(struct __test_metadata *_metadata,
				      int *fd, int *watch,
				      struct counts *base)
{
	*fd = -1;
	*watch = open_dev();
	if (*watch < 0)
		TH_LOG("cannot open %s: %s: is the test_nopfn module loaded?",
		       DEV_PATH, strerror(errno));
	ASSERT_LE(0, *watch);
	*base = stats(*watch);
	*fd = open_dev();
	ASSERT_LE(0, *fd);
}

static inline void nopfn_fixture_close(int fd, int watch)
{
	if (fd >= 0)
		close(fd);
	if (watch >= 0)
		close(watch);
}

#define NOPFN_FIXTURE_SETUP(name)					\
FIXTURE_SETUP(name)							\
{									\
	nopfn_fixture_open(_metadata, &self->fd, &self->watch,		\
			   &self->base);				\
}									\
									\
FIXTURE_TEARDOWN(name)							\
{									\
	nopfn_fixture_close(self->fd, self->watch);			\
}

/*
 * Page 0 of @fd, its behaviour set to @behaviour (a wait of @ms for the
 * kinds that wait), mapped alone, shared and read-write.
 */
static inline char *map_page_with(struct __test_metadata *_metadata, int fd,
				  uint32_t behaviour, uint32_t ms)
{
	char *m;

	ASSERT_EQ(0, set_pages(fd, 0, 1, behaviour, ms));
	m = map_pages(fd, 1, 0, PROT_READ | PROT_WRITE, MAP_SHARED);
	ASSERT_NE(NULL, m);
	return m;
}

/*
 * The module holds as many states and RAM pages as before the test's file
 * was opened: that file's state went with it and its last mapping.
 */
#define ASSERT_NO_LEAK() do {						\
	struct counts __now = stats(self->watch);			\
	ASSERT_EQ(self->base.all_states, __now.all_states);		\
	ASSERT_EQ(self->base.all_ram_pages, __now.all_ram_pages);	\
} while (0)

#endif /* NOPFN_FIXTURE_H */
