/* SPDX-License-Identifier: GPL-2.0 */
/*
 * The kernel log scan of the guest tests is lib/kmsg_check.h, which the
 * programs find on their include path; this name stays for
 * tests/unit/test_kernlog.py, which compiles it for the host with
 * -I tests/guest.
 */
#include "lib/kmsg_check.h"
