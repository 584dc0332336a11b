/* SPDX-License-Identifier: GPL-2.0 */
/*
 * The part of libcap's <sys/capability.h> that the mm selftests use
 * (mlock-random-test: cap_init() and cap_set_proc() of the empty set, to
 * drop CAP_IPC_LOCK), on the bare capset() system call. The guests'
 * cross toolchains have no static libcap; this header stands in for it
 * and is only on the include path of the tests the list marks with
 * "libs: [cap]". Only the empty set is supported: cap_init() returns
 * one, and no call here can add a capability to it.
 */
#ifndef MM_SELFTESTS_SYS_CAPABILITY_H
#define MM_SELFTESTS_SYS_CAPABILITY_H

#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <sys/syscall.h>
#include <linux/capability.h>

typedef struct mm_selftests_cap {
	struct __user_cap_data_struct data[_LINUX_CAPABILITY_U32S_3];
} *cap_t;

static inline cap_t cap_init(void)
{
	return calloc(1, sizeof(struct mm_selftests_cap));
}

static inline int cap_free(void *cap)
{
	free(cap);
	return 0;
}

static inline int cap_set_proc(cap_t cap)
{
	struct __user_cap_header_struct hdr = {
		.version = _LINUX_CAPABILITY_VERSION_3,
		.pid = 0,
	};

	if (!cap) {
		errno = EINVAL;
		return -1;
	}
	return syscall(SYS_capset, &hdr, cap->data);
}

#endif
