// SPDX-License-Identifier: GPL-2.0
/*
 * Helpers shared by the mspec guest tests (tests/guest/mspec_*.c and the
 * programs that use the devices too): the device paths and type names,
 * the debugfs stats counters, knobs and pte file (lib/mspec.c,
 * lib/mspec_pte.c), single 64-bit and byte accesses; and, from
 * vm_util.h, device mapping helpers, the page size and wait_for().
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
#include "vm_util.h"

#define MSPEC_DEBUGFS	"/sys/kernel/debug/mspec"
#define NTYPES		3

static const char * const dev_path[NTYPES] = {
	"/dev/sgi_fetchop", "/dev/mspec_cached", "/dev/mspec_uncached",
};

static const char * const type_name[NTYPES] = {
	"fetchop", "cached", "uncached",
};

/*
 * The devices of the programs that drive mspec and test_nopfn together
 * (mmap_fuzz, mspec_stress): the three mspec types in dev_path[]'s
 * order, then test_nopfn's.
 */
enum { D_FETCHOP, D_CACHED, D_UNCACHED, D_NOPFN, NDEV };

static const char * const dev_file[NDEV] = {
	"/dev/sgi_fetchop", "/dev/mspec_cached", "/dev/mspec_uncached",
	"/dev/test_nopfn",
};

struct counters {
	long in_use, allocated, freed, leaked, faults, failures, races, mappings;
};

/* The stats of mspec/<type> in debugfs: 0, or -1 if not readable. */
int read_counters(const char *type, struct counters *c);

/* The devices and their debugfs files are there. */
bool have_mspec(void);

#define NO_MSPEC	"mspec module or debugfs not available"

/*
 * The types whose device maps here: all three, or fetchop and cached
 * where mspec_uncached refuses mmap() with ENODEV because the driver
 * cannot make it non-cached (its info file says "noncached 0": s390,
 * riscv64 without Svpbmt, mips with an L2; mspec_uncached.c's
 * uncached_refused asserts the refusal).  uncached is the last type, so
 * the tests that exercise every type loop over t < nmappable.  Set before
 * main() runs.
 */
extern int nmappable;

/* The "noncached" line of mspec/<type>/info: what the driver claims. */
int mspec_info_noncached(const char *type);

/*
 * A knob of mspec's debugfs (fail_next_alloc, fail_sigbus): its value,
 * -1 if it cannot be read; setting it: 0, or -1 with errno set.
 */
long mspec_knob(const char *name);
int mspec_set_knob(const char *name, long val);

/*
 * mspec's debugfs pte file: write a user address of a VM_IO or VM_PFNMAP
 * mapping of this process to it, read back what maps it there ("addr",
 * "pte", "pfn", "memtype", "noncached", "alias_memtype",
 * "alias_noncached" and "device" lines). The read fails with ENOENT where
 * no VMA is, ENXIO where no PTE is, EINVAL for another kind of VMA.
 *
 * pte_open(): the file, or -1; pte_write(): 0, or -1; pte_read(): the
 * text's length, NUL-terminated in @buf, or -1; errno set on failure.
 * pte_ask(): the three and close(). pte_pfn(): the PFN, or -errno (EIO:
 * the text has no "pfn" line).
 */
int pte_open(void);
int pte_write(int fd, const void *addr);
ssize_t pte_read(int fd, char *buf, size_t size);
ssize_t pte_ask(const void *addr, char *buf, size_t size);
long pte_pfn(const void *addr);

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

#endif /* MSPEC_TEST_H */
