/* SPDX-License-Identifier: GPL-2.0 WITH Linux-syscall-note */
/*
 * Fetchop variables of /dev/sgi_fetchop (mspec driver).
 *
 * A fetchop mapping is an array of 64-byte variables (FETCHOP_VAR_SIZE),
 * mmap()ed MAP_SHARED with PROT_READ | PROT_WRITE at offset 0, page by
 * page allocated (zeroed) on first touch.  The value of variable i is the
 * 64-bit word at byte 64 * i of the mapping; the other 56 bytes of the
 * variable are reserved (on SN2 they were the operation selector).
 *
 * SGI SN2 layout (include/asm-ia64/sn/fetchop.h of 2.4/2.6 kernels): the
 * SHub memory controller performed the operation that the offset of the
 * 8-byte access within the variable selected, on uncached memory:
 *
 *   8-byte load at   +0  FETCHOP_LOAD       value
 *                    +8  FETCHOP_INCREMENT  value++, returns the old value
 *                   +16  FETCHOP_DECREMENT  value--, returns the old value
 *                   +24  FETCHOP_CLEAR      value = 0, returns the old value
 *   8-byte store at  +0  FETCHOP_STORE      value = x
 *                   +24  FETCHOP_AND        value &= x
 *                   +32  FETCHOP_OR         value |= x
 *                   +56  FETCHOP_CLEAR_CACHE (SHub2 AMO cache flush)
 *
 * No machine that Linux 6.1 supports has those memory-side operations, so
 * the driver maps the fetchop page as ordinary cacheable memory and the
 * functions below perform the same operations with the CPU's atomic
 * instructions on the value word.  They are the interface: the operation
 * offsets do nothing there.  So that an SN2 program's plain load at one of
 * them is not mistaken for a result (it would read a plausible 0, and the
 * variable would not change), every word of a fresh fetchop page at an
 * offset other than +0 of its variable reads FETCHOP_NO_AMO, a value no
 * SN2 operation returns by itself on a zeroed variable, until something
 * stores there.  They are atomic with respect to each
 * other across all threads and processes that share the mapping.  Each
 * mmap() of the device is its own set of variables: processes share them
 * by inheriting the mapping through fork().
 *
 * Memory ordering: every operation is sequentially consistent
 * (__ATOMIC_SEQ_CST): all fetchop operations on all variables appear in one
 * total order that every thread agrees on, and each is a full barrier for
 * the caller's ordinary loads and stores, as the uncached AMO accesses of
 * SN2 were.  Loads and stores are single-copy atomic 64-bit accesses.
 *
 * Define MSPEC_FETCHOP_SN2_AMO before including this header to get the SN2
 * address-selected accesses instead (only meaningful with a driver back
 * end that maps the AMO alias of the memory controller).
 */
#ifndef _UAPI_MSPEC_FETCHOP_H
#define _UAPI_MSPEC_FETCHOP_H

#include <linux/types.h>

#define FETCHOP_BASENAME	"sgi_fetchop"
#define FETCHOP_FULLNAME	"/dev/sgi_fetchop"
#define MSPEC_CACHED_FULLNAME	"/dev/mspec_cached"
#define MSPEC_UNCACHED_FULLNAME	"/dev/mspec_uncached"

#define FETCHOP_VAR_SIZE	64	/* bytes per fetchop variable */

/*
 * What the words at the SN2 operation offsets (+8 .. +56) of each variable
 * of a fresh page read on a device that emulates the operations ("NO AMO!"
 * in ASCII, most significant byte first).
 */
#define FETCHOP_NO_AMO		0x4e4f20414d4f2021ULL

/* SN2 operation offsets within a variable: loads */
#define FETCHOP_LOAD		0
#define FETCHOP_INCREMENT	8
#define FETCHOP_DECREMENT	16
#define FETCHOP_CLEAR		24
/* SN2 operation offsets within a variable: stores */
#define FETCHOP_STORE		0
#define FETCHOP_AND		24
#define FETCHOP_OR		32
#define FETCHOP_CLEAR_CACHE	56

/* Variables per page of a fetchop mapping. */
#define FETCHOP_VARS_PER_PAGE(page_size)	((page_size) / FETCHOP_VAR_SIZE)

struct fetchop_var {
	__s64 value;
	__u8 reserved[FETCHOP_VAR_SIZE - sizeof(__s64)];
} __attribute__((aligned(FETCHOP_VAR_SIZE)));

#ifndef __KERNEL__

/* Variable @index of a fetchop mapping at @base. */
static inline struct fetchop_var *fetchop_var(void *base, unsigned long index)
{
	return (struct fetchop_var *)base + index;
}

#ifdef MSPEC_FETCHOP_SN2_AMO

/* One uncached 8-byte access at offset @op of the variable. */
#define FETCHOP_LOAD_OP(var, op) \
	__atomic_load_n((__s64 *)((char *)(var) + (op)), __ATOMIC_SEQ_CST)
#define FETCHOP_STORE_OP(var, op, x) \
	__atomic_store_n((__s64 *)((char *)(var) + (op)), (__s64)(x), \
			 __ATOMIC_SEQ_CST)

static inline __s64 fetchop_load(struct fetchop_var *var)
{
	return FETCHOP_LOAD_OP(var, FETCHOP_LOAD);
}

static inline __s64 fetchop_increment(struct fetchop_var *var)
{
	return FETCHOP_LOAD_OP(var, FETCHOP_INCREMENT);
}

static inline __s64 fetchop_decrement(struct fetchop_var *var)
{
	return FETCHOP_LOAD_OP(var, FETCHOP_DECREMENT);
}

static inline __s64 fetchop_clear(struct fetchop_var *var)
{
	return FETCHOP_LOAD_OP(var, FETCHOP_CLEAR);
}

static inline void fetchop_store(struct fetchop_var *var, __s64 x)
{
	FETCHOP_STORE_OP(var, FETCHOP_STORE, x);
}

static inline void fetchop_and(struct fetchop_var *var, __s64 x)
{
	FETCHOP_STORE_OP(var, FETCHOP_AND, x);
}

static inline void fetchop_or(struct fetchop_var *var, __s64 x)
{
	FETCHOP_STORE_OP(var, FETCHOP_OR, x);
}

#elif __GCC_ATOMIC_LLONG_LOCK_FREE != 2

/*
 * A 32-bit target without lock-free 64-bit atomics (mips o32, ARMv5):
 * the C library's fallback (libatomic) locks in a table private to the
 * process, which is no atomicity between the processes that share a
 * mapping after fork().  So each operation takes a spinlock kept in the
 * variable itself, the 32-bit word at FETCHOP_LOCK_OFFSET (an offset that
 * no SN2 operation uses), with the 32-bit atomics every such target has.
 * The word is FETCHOP_LOCKED while an operation runs and whatever it held
 * otherwise (FETCHOP_NO_AMO's half on a fresh page): the holder puts that
 * back.  All operations on a variable are serialised in one total order,
 * and each is a full barrier (sequentially consistent lock and unlock).
 */
#include <sched.h>

#define FETCHOP_LOCK_OFFSET	40
#define FETCHOP_LOCKED		0x4c4f434bU	/* "LOCK" */

static inline __u32 *fetchop_lockword(struct fetchop_var *var)
{
	return (__u32 *)((char *)var + FETCHOP_LOCK_OFFSET);
}

/* Returns what the lock word held, for fetchop_unlock(). */
static inline __u32 fetchop_lock(struct fetchop_var *var)
{
	__u32 *lock = fetchop_lockword(var);
	unsigned int spins = 0;
	__u32 old;

	for (;;) {
		old = __atomic_load_n(lock, __ATOMIC_RELAXED);
		if (old != FETCHOP_LOCKED &&
		    __atomic_compare_exchange_n(lock, &old, FETCHOP_LOCKED,
						false, __ATOMIC_SEQ_CST,
						__ATOMIC_RELAXED))
			return old;
		if (++spins % 64 == 0)
			sched_yield();	/* the holder may be preempted */
	}
}

static inline void fetchop_unlock(struct fetchop_var *var, __u32 saved)
{
	__atomic_store_n(fetchop_lockword(var), saved, __ATOMIC_SEQ_CST);
}

enum fetchop_locked_op {
	FETCHOP_OP_LOAD, FETCHOP_OP_ADD, FETCHOP_OP_SET, FETCHOP_OP_AND,
	FETCHOP_OP_OR,
};

/*
 * One operation under the variable's lock; returns the old value.  The
 * lock's atomics order the plain accesses to the value (the compiler
 * does not move them across an __atomic operation with __ATOMIC_SEQ_CST).
 */
static inline __s64 fetchop_locked(struct fetchop_var *var,
				   enum fetchop_locked_op op, __s64 x)
{
	__u32 saved;
	__s64 old;

	saved = fetchop_lock(var);
	old = var->value;
	switch (op) {
	case FETCHOP_OP_LOAD:
		break;
	case FETCHOP_OP_ADD:
		var->value = old + x;
		break;
	case FETCHOP_OP_SET:
		var->value = x;
		break;
	case FETCHOP_OP_AND:
		var->value = old & x;
		break;
	case FETCHOP_OP_OR:
		var->value = old | x;
		break;
	}
	fetchop_unlock(var, saved);
	return old;
}

static inline __s64 fetchop_load(struct fetchop_var *var)
{
	return fetchop_locked(var, FETCHOP_OP_LOAD, 0);
}

static inline __s64 fetchop_increment(struct fetchop_var *var)
{
	return fetchop_locked(var, FETCHOP_OP_ADD, 1);
}

static inline __s64 fetchop_decrement(struct fetchop_var *var)
{
	return fetchop_locked(var, FETCHOP_OP_ADD, -1);
}

static inline __s64 fetchop_clear(struct fetchop_var *var)
{
	return fetchop_locked(var, FETCHOP_OP_SET, 0);
}

static inline void fetchop_store(struct fetchop_var *var, __s64 x)
{
	fetchop_locked(var, FETCHOP_OP_SET, x);
}

static inline void fetchop_and(struct fetchop_var *var, __s64 x)
{
	fetchop_locked(var, FETCHOP_OP_AND, x);
}

static inline void fetchop_or(struct fetchop_var *var, __s64 x)
{
	fetchop_locked(var, FETCHOP_OP_OR, x);
}

#else /* emulation with CPU atomics */

static inline __s64 fetchop_load(struct fetchop_var *var)
{
	return __atomic_load_n(&var->value, __ATOMIC_SEQ_CST);
}

static inline __s64 fetchop_increment(struct fetchop_var *var)
{
	return __atomic_fetch_add(&var->value, 1, __ATOMIC_SEQ_CST);
}

static inline __s64 fetchop_decrement(struct fetchop_var *var)
{
	return __atomic_fetch_sub(&var->value, 1, __ATOMIC_SEQ_CST);
}

static inline __s64 fetchop_clear(struct fetchop_var *var)
{
	return __atomic_exchange_n(&var->value, 0, __ATOMIC_SEQ_CST);
}

static inline void fetchop_store(struct fetchop_var *var, __s64 x)
{
	__atomic_store_n(&var->value, x, __ATOMIC_SEQ_CST);
}

static inline void fetchop_and(struct fetchop_var *var, __s64 x)
{
	__atomic_fetch_and(&var->value, x, __ATOMIC_SEQ_CST);
}

static inline void fetchop_or(struct fetchop_var *var, __s64 x)
{
	__atomic_fetch_or(&var->value, x, __ATOMIC_SEQ_CST);
}

#endif /* MSPEC_FETCHOP_SN2_AMO */

#endif /* !__KERNEL__ */

#endif /* _UAPI_MSPEC_FETCHOP_H */
