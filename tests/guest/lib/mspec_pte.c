// SPDX-License-Identifier: GPL-2.0
/*
 * mspec's debugfs pte file: the PTE that maps an address (mspec_test.h).
 */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "mspec_test.h"

int pte_open(void)
{
	return open(MSPEC_DEBUGFS "/pte", O_RDWR | O_CLOEXEC);
}

int pte_write(int fd, const void *addr)
{
	char line[64];
	int n = snprintf(line, sizeof(line), "%#lx", (unsigned long)addr);

	return write(fd, line, n) == n ? 0 : -1;
}

ssize_t pte_read(int fd, char *buf, size_t size)
{
	ssize_t n = pread(fd, buf, size - 1, 0);

	if (n >= 0)
		buf[n] = 0;
	return n;
}

ssize_t pte_ask(const void *addr, char *buf, size_t size)
{
	int fd = pte_open(), err;
	ssize_t n = -1;

	if (fd < 0)
		return -1;
	if (!pte_write(fd, addr))
		n = pte_read(fd, buf, size);
	err = errno;
	close(fd);
	errno = err;
	return n;
}

long pte_pfn(const void *addr)
{
	char buf[512], *p;

	if (pte_ask(addr, buf, sizeof(buf)) < 0)
		return -errno;
	p = strstr(buf, "\npfn ");
	return p ? strtol(p + 5, NULL, 16) : -EIO;
}
