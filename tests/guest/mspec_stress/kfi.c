// SPDX-License-Identifier: GPL-2.0
/*
 * mspec_stress: the kernel's own fault injection (see main.c), on the
 * hammer threads only, and its attributes put back afterwards.
 */
#include "stress.h"
#include "kmsg_check.h"

/* The kernel's own fault injection (CONFIG_FAULT_INJECTION_DEBUG_FS). */
static const char * const kfi_dir[] = {
	"/sys/kernel/debug/fail_page_alloc", "/sys/kernel/debug/failslab",
};
static const char * const kfi_attr[] = {
	"probability", "interval", "times", "space", "verbose", "task-filter",
	"ignore-gfp-wait", "ignore-gfp-highmem", "min-order",
};
#define KFI_TIMES	1000000
static char kfi_saved[2][9][32];
static bool kfi_have[2];

bool kfi_start(unsigned int percent)
{
	char path[160], val[32];
	unsigned int d, i;

	for (d = 0; d < 2; d++) {
		snprintf(path, sizeof(path), "%s/probability", kfi_dir[d]);
		if (access(path, W_OK))
			continue;
		kfi_have[d] = true;
		for (i = 0; i < ARRAY_SIZE(kfi_attr); i++) {
			snprintf(path, sizeof(path), "%s/%s", kfi_dir[d],
				 kfi_attr[i]);
			if (read_file(path, kfi_saved[d][i], 32))
				kfi_saved[d][i][0] = 0;
		}
	}
	if (!kfi_have[0] && !kfi_have[1])
		return false;
	/*
	 * The kernel's allocation failure warnings from here on are ours; a
	 * log that cannot say so would count them as real: no injection.
	 */
	if (kmsg_injection(true)) {
		kfi_have[0] = kfi_have[1] = false;
		return false;
	}
	for (d = 0; d < 2; d++) {
		static const char * const set[][2] = {
			{ "task-filter", "Y" }, { "interval", "1" },
			{ "space", "0" }, { "verbose", "0" },
			{ "ignore-gfp-wait", "N" }, { "ignore-gfp-highmem", "N" },
			{ "min-order", "0" },
		};

		if (!kfi_have[d])
			continue;
		for (i = 0; i < ARRAY_SIZE(set); i++) {
			snprintf(path, sizeof(path), "%s/%s", kfi_dir[d],
				 set[i][0]);
			write_file(path, set[i][1]);	/* min-order: page only */
		}
		snprintf(path, sizeof(path), "%s/times", kfi_dir[d]);
		snprintf(val, sizeof(val), "%d", KFI_TIMES);
		write_file(path, val);
		/* failslab hits every syscall that allocates: fewer there */
		snprintf(path, sizeof(path), "%s/probability", kfi_dir[d]);
		snprintf(val, sizeof(val), "%u", d ? (percent + 1) / 2 : percent);
		write_file(path, val);
	}
	return true;
}

/* Stop injecting, put the attributes back; failures injected, per dir. */
void kfi_stop(long used[2])
{
	char path[160];
	unsigned int d, i;

	for (d = 0; d < 2; d++) {
		used[d] = -1;
		if (!kfi_have[d])
			continue;
		snprintf(path, sizeof(path), "%s/probability", kfi_dir[d]);
		write_file(path, "0");
		snprintf(path, sizeof(path), "%s/times", kfi_dir[d]);
		used[d] = KFI_TIMES - read_number(path);
		for (i = 0; i < ARRAY_SIZE(kfi_attr); i++) {
			if (!kfi_saved[d][i][0] || !strcmp(kfi_attr[i],
							   "probability"))
				continue;
			snprintf(path, sizeof(path), "%s/%s", kfi_dir[d],
				 kfi_attr[i]);
			write_file(path, kfi_saved[d][i]);
		}
		snprintf(path, sizeof(path), "%s/probability", kfi_dir[d]);
		write_file(path, kfi_saved[d][0][0] ? kfi_saved[d][0] : "0");
	}
	if (kfi_have[0] || kfi_have[1])
		kmsg_injection(false);	/* as at the start: it can */
}
