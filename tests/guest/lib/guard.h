/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Accesses that may fault, caught: guarded() runs a function under
 * sigsetjmp(), and the SIGSEGV or SIGBUS handler jumps back into it with
 * the fault's siginfo. A fault outside guarded() is not caught: the
 * handler lets the process die of it.
 *
 * guard_install() sets a handler for good: guard_handler(), or one of the
 * program's own that calls guard_jump() for a fault in guarded(). probe()
 * sets guard_handler() around one byte access and puts back what was
 * there.
 */
#ifndef GUEST_GUARD_H
#define GUEST_GUARD_H

#include <signal.h>
#include <stdbool.h>

/* The siginfo of the last fault that guarded() caught in this thread. */
extern __thread siginfo_t guard_info;

/* Run @fn(@arg) with faults caught: 0, or the signal (see guard_info). */
int guarded(void (*fn)(void *), void *arg);

/* For a handler: is this thread in guarded()? */
bool guard_armed(void);

/* For a handler, when guard_armed(): back into guarded(), with @si. */
void __attribute__((noreturn)) guard_jump(int sig, const siginfo_t *si);

/* guard_jump() in guarded(), else die of @sig. */
void guard_handler(int sig, siginfo_t *si, void *uc);

/* @handler for SIGSEGV and SIGBUS, with SA_SIGINFO | SA_NODEFER. */
void guard_install(void (*handler)(int, siginfo_t *, void *));

/*
 * Access one byte and catch SIGBUS/SIGSEGV: returns 0 if the access
 * completed, else the signal number, with its siginfo in *info.
 */
int probe(volatile char *addr, bool write, char *val, siginfo_t *info);

#endif /* GUEST_GUARD_H */
