// SPDX-License-Identifier: GPL-2.0
/*
 * mspec_stress with one wild write in a worker (MSPEC_STRESS_WILD): a
 * worker killed by a real wild access must fail worker_exits, with or
 * without the kernel's fault injection. Used by tests/test_red.py only.
 * The files of mspec_stress, built as one.
 *
 * matrix-args: --seconds 3 --seed {seed}
 * matrix-cases: all_operations_ran data_and_errno_checks worker_exits
 *   stopped_in_time mspec_counters_back nopfn_counters_back
 *   injected_failures_accounted kernel_fault_injection
 *   fresh_pages_zero_after kernel_log_clean
 */
/* a --user-tests program: the defines tests/guest/ is compiled with */
#define _GNU_SOURCE
#define _FILE_OFFSET_BITS 64
#define MSPEC_STRESS_WILD 1
#include "../guest/mspec_stress/main.c"
#include "../guest/mspec_stress/kfi.c"
#include "../guest/mspec_stress/pool.c"
#include "../guest/mspec_stress/slots.c"
#include "../guest/mspec_stress/worker.c"
