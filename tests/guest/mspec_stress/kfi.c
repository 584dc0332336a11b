// SPDX-License-Identifier: GPL-2.0
/*
 * mspec_stress: the kernel's own fault injection (see main.c), on the
 * hammer threads only, and its attributes put back afterwards.
 */
#include "stress.h"
#include "fault_inject.h"
#include "kmsg_check.h"

#define KFI_TIMES	1000000
static struct fault_inject kfi[2] = {
	{ .dir = "/sys/kernel/debug/fail_page_alloc/" },
	{ .dir = "/sys/kernel/debug/failslab/" },
};

bool kfi_start(unsigned int percent)
{
	unsigned int d;

	for (d = 0; d < 2; d++)
		fi_save(&kfi[d]);
	if (!kfi[0].have && !kfi[1].have)
		return false;
	/*
	 * The kernel's allocation failure warnings from here on are ours; a
	 * log that cannot say so would count them as real: no injection.
	 */
	if (kmsg_injection(true)) {
		kfi[0].have = kfi[1].have = false;
		return false;
	}
	for (d = 0; d < 2; d++) {
		/* failslab hits every syscall that allocates: fewer there */
		if (kfi[d].have)
			fi_set(&kfi[d], d ? (percent + 1) / 2 : percent,
			       KFI_TIMES);
	}
	return true;
}

/* Stop injecting, put the attributes back; failures injected, per dir. */
void kfi_stop(long used[2])
{
	bool had = kfi[0].have || kfi[1].have;
	unsigned int d;

	for (d = 0; d < 2; d++)
		used[d] = fi_restore(&kfi[d]);
	if (had)
		kmsg_injection(false);	/* as at the start: it can */
}
