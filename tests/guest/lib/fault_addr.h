/* SPDX-License-Identifier: GPL-2.0 */
/*
 * The address a fault's siginfo reports, for the tests that check it.
 */
#ifndef FAULT_ADDR_H
#define FAULT_ADDR_H

#include <stdint.h>
#include <unistd.h>

/*
 * si_addr of a SIGSEGV or SIGBUS raised by an access at @p.  s390's
 * translation-exception identification names the failing page, not the
 * byte: arch/s390/mm/fault.c masks the address with __FAIL_ADDR_MASK, so
 * si_addr there is @p rounded down to its page.  Everywhere else it is @p.
 */
static inline void *fault_addr(const void *p)
{
#if defined(__s390__)
	uintptr_t mask = (uintptr_t)sysconf(_SC_PAGESIZE) - 1;

	return (void *)((uintptr_t)p & ~mask);
#else
	return (void *)p;
#endif
}

#endif /* FAULT_ADDR_H */
