/*
 * A test that panics the kernel: panic_on_warn, then a ->nopfn() misuse
 * that the core reports with WARN_ONCE (a handler that returns a value of
 * the reserved range, see nopfn-tests.c in the series), re-armed first
 * through debugfs clear_warn_once.
 */
#include <fcntl.h>
#include <stdio.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <unistd.h>

#include "test_nopfn_uapi.h"

static int write_file(const char *path, const char *s, size_t n)
{
	int fd = open(path, O_WRONLY);
	int ok = fd >= 0 && write(fd, s, n) == (ssize_t)n;

	if (fd >= 0)
		close(fd);
	return ok ? 0 : -1;
}

int main(void)
{
	struct nopfn_test_pages req = {
		.first = 0, .count = 1, .behaviour = NOPFN_TEST_RETURN,
		.value = (__u64)-4095,
	};
	volatile char *m;
	int fd;

	if (write_file("/proc/sys/kernel/panic_on_warn", "1\n", 2))
		return perror("panic_on_warn"), 2;
	if (write_file("/sys/kernel/debug/clear_warn_once", "1", 1))
		return perror("clear_warn_once"), 2;
	fd = open("/dev/test_nopfn", O_RDWR);
	if (fd < 0 || ioctl(fd, NOPFN_TEST_IOC_SET_PAGES, &req))
		return perror("/dev/test_nopfn"), 2;
	m = mmap(NULL, 4096, PROT_READ, MAP_SHARED, fd, 0);
	if (m == MAP_FAILED)
		return perror("mmap"), 2;
	printf("about to panic\n");
	fflush(stdout);
	return m[0];	/* not reached: the WARN panics the kernel */
}
