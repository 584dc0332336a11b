// SPDX-License-Identifier: GPL-2.0
/*
 * Helpers shared by the mspec guest tests (tests/guest/mspec_*.c): the
 * device paths and type names, the debugfs stats counters, single 64-bit
 * and byte accesses, device mapping helpers, the page size and wait_for().
 */
#ifndef MSPEC_TEST_H
#define MSPEC_TEST_H

#include <errno.h>
#include <fcntl.h>
#include <stdbool.h>
#include <stdio.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/types.h>
#include <sys/wait.h>
#include <unistd.h>
#include <linux/types.h>
#include <mspec_fetchop.h>

#include "fault_addr.h"

#define MSPEC_DEBUGFS	"/sys/kernel/debug/mspec"
#define NTYPES		3

static const char * const dev_path[NTYPES] = {
	"/dev/sgi_fetchop", "/dev/mspec_cached", "/dev/mspec_uncached",
};

static const char * const type_name[NTYPES] = {
	"fetchop", "cached", "uncached",
};

struct counters {
	long in_use, allocated, freed, leaked, faults, failures, races, mappings;
};

static inline int read_counters(const char *type, struct counters *c)
{
	char path[128], key[64];
	long val;
	FILE *f;

	memset(c, 0, sizeof(*c));
	snprintf(path, sizeof(path), MSPEC_DEBUGFS "/%s/stats", type);
	f = fopen(path, "r");
	if (!f)
		return -1;
	while (fscanf(f, "%63s %ld", key, &val) == 2) {
		if (!strcmp(key, "pages_in_use"))
			c->in_use = val;
		else if (!strcmp(key, "pages_allocated"))
			c->allocated = val;
		else if (!strcmp(key, "pages_freed"))
			c->freed = val;
		else if (!strcmp(key, "pages_leaked"))
			c->leaked = val;
		else if (!strcmp(key, "faults"))
			c->faults = val;
		else if (!strcmp(key, "alloc_failures"))
			c->failures = val;
		else if (!strcmp(key, "alloc_races"))
			c->races = val;
		else if (!strcmp(key, "mappings"))
			c->mappings = val;
	}
	fclose(f);
	return 0;
}

static inline bool have_mspec(void)
{
	return access(dev_path[2], F_OK) == 0 &&
	       access(MSPEC_DEBUGFS "/uncached/stats", R_OK) == 0;
}

#define NO_MSPEC	"mspec module or debugfs not available"

/*
 * The types whose device maps here: all three, or fetchop and cached
 * where mspec_uncached refuses mmap() with ENODEV because the driver
 * cannot make it non-cached (its info file says "noncached 0": s390,
 * riscv64 without Svpbmt, mips with an L2; mspec_uncached.c's
 * uncached_refused asserts the refusal).  uncached is the last type, so
 * the tests that exercise every type loop over t < nmappable.
 */
static int nmappable = NTYPES;

static void __attribute__((constructor)) init_nmappable(void)
{
	char line[256];
	int v = -1;
	FILE *f = fopen(MSPEC_DEBUGFS "/uncached/info", "r");

	if (!f)
		return;
	while (fgets(line, sizeof(line), f))
		if (sscanf(line, "noncached %d", &v) == 1)
			break;
	fclose(f);
	if (v == 0)
		nmappable = NTYPES - 1;
}

/*
 * Single accesses that the compiler keeps one for one (each may be the
 * first touch of a page, or must see what another process stored).
 */
/*
 * The 64-bit word at byte @off of a fresh page of device @type: zero, but
 * FETCHOP_NO_AMO at the SN2 operation offsets of a fetchop variable.
 */
static inline __u64 fresh_word(int type, unsigned long off)
{
	return type == 0 && off % FETCHOP_VAR_SIZE ? FETCHOP_NO_AMO : 0;
}

#if __GCC_ATOMIC_LLONG_LOCK_FREE == 2
static inline __u64 peek64(const void *p)
{
	return __atomic_load_n((const __u64 *)p, __ATOMIC_RELAXED);
}
#else
/*
 * No lock-free 64-bit atomics (mips o32, ARMv5): libatomic would take a
 * lock private to the process.  Two volatile 32-bit loads, the word at
 * @p first, so that a fault is reported at @p as on the other targets (a
 * plain 64-bit volatile load is two loads in the compiler's order: mipsel
 * faulted at @p + 4); a store racing with it may be seen half done.
 */
static inline __u64 peek64(const void *p)
{
	const volatile __u32 *w = p;
	__u64 first = w[0];
	__u64 second = w[1];

#if __BYTE_ORDER__ == __ORDER_LITTLE_ENDIAN__
	return second << 32 | first;
#else
	return first << 32 | second;
#endif
}
#endif

#if __GCC_ATOMIC_LLONG_LOCK_FREE == 2 && __SIZEOF_POINTER__ == 8
static inline void poke64(void *p, __u64 v)
{
	__atomic_store_n((__u64 *)p, v, __ATOMIC_RELAXED);
}
#else
/*
 * poke64() must store and nothing else: a first touch by it is a write
 * fault, and a write to a read-only page must fault at once (SEGV_ACCERR).
 * A 32-bit target's 64-bit atomic store may read first (32-bit Arm:
 * LDREXD/STREXD; mips o32 has none): a read fault that maps the page,
 * or under fault injection a SIGBUS.  There it is two volatile 32-bit
 * stores, the word at @p first (see peek64()), which a racing reader may
 * see half done.
 */
static inline void poke64(void *p, __u64 v)
{
	volatile __u32 *w = p;

#if __BYTE_ORDER__ == __ORDER_LITTLE_ENDIAN__
	w[0] = (__u32)v;
	w[1] = (__u32)(v >> 32);
#else
	w[0] = (__u32)(v >> 32);
	w[1] = (__u32)v;
#endif
}
#endif

static inline char peek8(const void *p)
{
	return __atomic_load_n((const char *)p, __ATOMIC_RELAXED);
}

/* mmap() of a device; the file is closed, the mapping keeps it open. */
static inline void *map_dev(const char *path, size_t len, int prot, int flags,
		     off_t off)
{
	int fd = open(path, O_RDWR);
	void *p;
	int err;

	if (fd < 0)
		return MAP_FAILED;
	p = mmap(NULL, len, prot, flags, fd, off);
	err = errno;
	close(fd);
	errno = err;
	return p;
}

static inline void *map_rw(const char *path, size_t len)
{
	return map_dev(path, len, PROT_READ | PROT_WRITE, MAP_SHARED, 0);
}

static long psz;

static void __attribute__((constructor)) init_psz(void)
{
	psz = sysconf(_SC_PAGESIZE);
}

/*
 * Where the data cache has aliases (MIPS with cpu_has_dc_aliases,
 * PA-RISC, SPARC64, ...), a shared file mapping must start at the colour
 * of its offset, (addr - pgoff * PAGE_SIZE) % span == 0: MAP_FIXED (and
 * mremap(MREMAP_FIXED)) elsewhere is EINVAL, and a hint is moved up to
 * that colour (arch_get_unmapped_area() of those architectures). The
 * span of a colour of @fd's shared mappings (a page where there are no
 * colours): the smallest step from an address aligned to 16 MiB at which
 * MAP_FIXED of offset 0 is accepted. 0 with errno set on failure
 * (ENOSPC: no colour below 16 MiB).
 */
static inline unsigned long colour_span(int fd)
{
	unsigned long span = 16UL << 20, step;
	char *r, *base, *m;
	int err = 0;

	r = mmap(NULL, 2 * span, PROT_NONE,
		 MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
	if (r == MAP_FAILED)
		return 0;
	base = (char *)(((unsigned long)r + span - 1) & ~(span - 1));
	for (step = psz; step < span; step *= 2) {
		m = mmap(base + step, psz, PROT_READ | PROT_WRITE,
			 MAP_SHARED | MAP_FIXED, fd, 0);
		if (m != MAP_FAILED)
			break;
		if (errno != EINVAL) {
			err = errno;
			break;
		}
	}
	munmap(r, 2 * span);
	if (!err && step >= span)
		err = ENOSPC;
	errno = err;
	return err ? 0 : step;
}

/* Wait for @pid: its exit code, 128 + signal if killed, -1 on error. */
static inline int wait_for(pid_t pid)
{
	int status;

	if (waitpid(pid, &status, 0) != pid)
		return -1;
	if (WIFEXITED(status))
		return WEXITSTATUS(status);
	if (WIFSIGNALED(status))
		return 128 + WTERMSIG(status);
	return -1;
}

#endif /* MSPEC_TEST_H */
