// SPDX-License-Identifier: GPL-2.0
/*
 * ioctl() for 6.1's userfaultfd selftest on kernels that lack a feature of
 * the uapi header. The test learns what the kernel has by asking UFFDIO_API
 * for every feature (UFFD_API_FEATURES), and 6.1's userfaultfd_api()
 * refuses with EINVAL a request that names one it lacks (the uffd-wp ones
 * need HAVE_ARCH_USERFAULTFD_WP, which only x86_64 has in 6.1): the test
 * stops before its first case. Later selftests ask with no feature first
 * and then for what the kernel reported.
 *
 * Linked with -Wl,--wrap=ioctl: every call is the real one; a UFFDIO_API
 * that the kernel refuses with EINVAL, and that asked for a feature a
 * second userfaultfd reports missing, is asked again for the requested
 * features the kernel has. The refusal happens before the kernel records
 * the features, so the same descriptor takes the second request. Any
 * other failure (EPERM, a bad api) is returned as it was.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <stdarg.h>
#include <unistd.h>
#include <linux/userfaultfd.h>
#include <sys/ioctl.h>
#include <sys/syscall.h>

int __real_ioctl(int fd, unsigned long request, ...);
int __wrap_ioctl(int fd, unsigned long request, ...);

/* The features the kernel has: UFFDIO_API with none, on a new descriptor. */
static int uffd_features(__u64 *features)
{
	struct uffdio_api api = { .api = UFFD_API };
	int fd, ret;

	fd = syscall(__NR_userfaultfd, O_CLOEXEC);
	if (fd < 0)
		return -1;
	ret = __real_ioctl(fd, UFFDIO_API, &api);
	close(fd);
	if (ret == 0)
		*features = api.features;
	return ret;
}

int __wrap_ioctl(int fd, unsigned long request, ...)
{
	struct uffdio_api *api;
	__u64 want, have;
	va_list ap;
	void *arg;
	int err;

	va_start(ap, request);
	arg = va_arg(ap, void *);
	va_end(ap);
	if (request != UFFDIO_API)
		return __real_ioctl(fd, request, arg);
	api = arg;
	want = api->features;
	if (__real_ioctl(fd, request, arg) == 0)
		return 0;
	err = errno;
	if (err != EINVAL || uffd_features(&have) || !(want & ~have)) {
		errno = err;
		return -1;
	}
	api->api = UFFD_API;
	api->features = want & have;
	return __real_ioctl(fd, request, arg);
}
