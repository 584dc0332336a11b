// SPDX-License-Identifier: GPL-2.0
/*
 * The page size, device mappings, colours, a child's exit (vm_util.h).
 */
#include <errno.h>
#include <fcntl.h>
#include <sys/mman.h>
#include <sys/wait.h>
#include <unistd.h>

#include "vm_util.h"

long psz;

static void __attribute__((constructor)) init_psz(void)
{
	psz = sysconf(_SC_PAGESIZE);
}

void *map_dev(const char *path, size_t len, int prot, int flags, off_t off)
{
	int fd = open(path, O_RDWR);
	void *p;
	int err;

	if (fd < 0)
		return MAP_FAILED;
	p = mmap(NULL, len, prot, flags, fd, off);
	err = errno;
	close(fd);
	errno = err;
	return p;
}

void *map_rw(const char *path, size_t len)
{
	return map_dev(path, len, PROT_READ | PROT_WRITE, MAP_SHARED, 0);
}

unsigned long colour_span(int fd)
{
	unsigned long span = 16UL << 20, step;
	char *r, *base, *m;
	int err = 0;

	r = mmap(NULL, 2 * span, PROT_NONE,
		 MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
	if (r == MAP_FAILED)
		return 0;
	base = (char *)(((unsigned long)r + span - 1) & ~(span - 1));
	for (step = psz; step < span; step *= 2) {
		m = mmap(base + step, psz, PROT_READ | PROT_WRITE,
			 MAP_SHARED | MAP_FIXED, fd, 0);
		if (m != MAP_FAILED)
			break;
		if (errno != EINVAL) {
			err = errno;
			break;
		}
	}
	munmap(r, 2 * span);
	if (!err && step >= span)
		err = ENOSPC;
	errno = err;
	return err ? 0 : step;
}

int wait_for(pid_t pid)
{
	int status;

	if (waitpid(pid, &status, 0) != pid)
		return -1;
	if (WIFEXITED(status))
		return WEXITSTATUS(status);
	if (WIFSIGNALED(status))
		return 128 + WTERMSIG(status);
	return -1;
}
