/*
 * A test that panics the kernel: panic_on_warn, then the ->nopfn() misuse
 * that the core reports with WARN_ONCE (a copy-on-write mapping of
 * /dev/nopfn_test, see tests/guest/nopfn_faults.c misuse_cow_mapping).
 */
#include <fcntl.h>
#include <stdio.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <unistd.h>

#include <nopfn_test.h>

int main(void)
{
	__u32 mode = NOPFN_TEST_MAP_COW;
	volatile char *m;
	int fd;

	fd = open("/proc/sys/kernel/panic_on_warn", O_WRONLY);
	if (fd < 0 || write(fd, "1\n", 2) != 2)
		return perror("panic_on_warn"), 2;
	close(fd);
	fd = open("/dev/nopfn_test", O_RDWR);
	if (fd < 0 || ioctl(fd, NOPFN_TEST_IOC_SET_MAP_MODE, &mode))
		return perror("/dev/nopfn_test"), 2;
	m = mmap(NULL, 4096, PROT_READ, MAP_PRIVATE, fd, 0);
	if (m == MAP_FAILED)
		return perror("mmap"), 2;
	printf("about to panic\n");
	fflush(stdout);
	return m[0];	/* not reached: the WARN panics the kernel */
}
