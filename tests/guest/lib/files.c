// SPDX-License-Identifier: GPL-2.0
/*
 * Small files of debugfs, sysfs and procfs (files.h).
 */
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "files.h"

int write_file(const char *path, const char *val)
{
	ssize_t n;
	int fd = open(path, O_WRONLY | O_CLOEXEC);

	if (fd < 0)
		return -1;
	n = write(fd, val, strlen(val));
	close(fd);
	return n == (ssize_t)strlen(val) ? 0 : -1;
}

int read_file(const char *path, char *buf, size_t size)
{
	ssize_t n;
	int fd = open(path, O_RDONLY | O_CLOEXEC);

	if (fd < 0)
		return -1;
	n = read(fd, buf, size - 1);
	close(fd);
	if (n < 0)
		return -1;
	buf[n] = 0;
	while (n > 0 && (buf[n - 1] == '\n' || buf[n - 1] == ' '))
		buf[--n] = 0;
	return 0;
}

long long read_number(const char *path)
{
	char buf[64];

	if (read_file(path, buf, sizeof(buf)) || !buf[0])
		return -1;
	if (buf[0] == 'Y')
		return 1;
	if (buf[0] == 'N')
		return 0;
	return strtoll(buf, NULL, 0);
}
