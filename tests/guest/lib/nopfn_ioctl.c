// SPDX-License-Identifier: GPL-2.0
/*
 * The ioctls of /dev/test_nopfn (nopfn_util.h).
 */
#include "nopfn_util.h"

int open_dev(void)
{
	return open(DEV_PATH, O_RDWR | O_CLOEXEC);
}

int set_pages(int fd, uint64_t first, uint64_t count, uint32_t behaviour,
	      uint32_t sleep_ms)
{
	struct nopfn_test_pages req = {
		.first = first, .count = count,
		.behaviour = behaviour, .sleep_ms = sleep_ms,
	};

	return ioctl(fd, NOPFN_TEST_IOC_SET_PAGES, &req) ? -errno : 0;
}

int set_return(int fd, uint64_t page, uint64_t value)
{
	struct nopfn_test_pages req = {
		.first = page, .count = 1,
		.behaviour = NOPFN_TEST_RETURN, .value = value,
	};

	return ioctl(fd, NOPFN_TEST_IOC_SET_PAGES, &req) ? -errno : 0;
}

int revoke_pages(int fd, uint64_t first, uint64_t count)
{
	struct nopfn_test_pages req = { .first = first, .count = count };

	return ioctl(fd, NOPFN_TEST_IOC_REVOKE, &req) ? -errno : 0;
}

int set_map_mode(int fd, uint32_t mode)
{
	return ioctl(fd, NOPFN_TEST_IOC_SET_MAP_MODE, &mode) ? -errno : 0;
}

int query(int fd, const void *addr, struct nopfn_test_query *q)
{
	memset(q, 0, sizeof(*q));
	q->addr = (uintptr_t)addr;
	return ioctl(fd, NOPFN_TEST_IOC_QUERY, q) ? -errno : 0;
}

int fixup(int fd, const void *addr, bool write, struct nopfn_test_query *q)
{
	memset(q, 0, sizeof(*q));
	q->addr = (uintptr_t)addr;
	q->flags = write ? NOPFN_TEST_Q_WRITE : 0;
	return ioctl(fd, NOPFN_TEST_IOC_FIXUP, q) ? -errno : 0;
}

/*
 * @vma_locked, which the 6.12 series' test module counts after
 * @all_releases (faults under FAULT_FLAG_VMA_LOCK): read by its place, as
 * 6.1's struct has no such member; -1 without it.
 */
static long long vma_locked_of(const struct nopfn_test_stats *s)
{
	const size_t at = offsetof(struct nopfn_test_stats, all_releases) +
			  sizeof(s->all_releases);
	__u64 v;

	if (sizeof(*s) < at + sizeof(v))
		return -1;
	memcpy(&v, (const char *)s + at, sizeof(v));
	return v;
}

struct counts stats(int fd)
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
		.vma_locked = vma_locked_of(&s),
	};
}

char *map_pages(int fd, size_t npages, uint64_t pgoff, int prot, int flags)
{
	void *p = mmap(NULL, npages * psz, prot, flags, fd, pgoff * psz);

	return p == MAP_FAILED ? NULL : p;
}
