/* SPDX-License-Identifier: GPL-2.0 */
/*
 * What a program says when it dies of a signal it did not expect: a KTAP
 * diagnostic line with the signal, its code and address, the mapping of
 * /proc/self/maps that holds the address and the bytes there (for SIGILL:
 * the instruction), then the same signal, so that the harness reports the
 * case as terminated by it.
 */
#ifndef CRASH_H
#define CRASH_H

/*
 * Report SIGILL, SIGSEGV, SIGBUS and SIGFPE of this process and its
 * threads (and, after fork(), of its children) before they kill it.
 */
void report_fatal_signals(void);
/*
 * Give the calling thread an alternate signal stack for the report (each
 * thread that may fault with a bad stack pointer calls it).
 */
void report_fatal_signals_on_own_stack(void);

#endif
