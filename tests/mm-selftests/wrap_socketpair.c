// SPDX-License-Identifier: GPL-2.0
/*
 * socketpair() for the mm selftests that use one only to make two
 * processes take turns (map_populate), on guests without CONFIG_NET.
 * Linked with -Wl,--wrap=socketpair: the real call is tried first; when
 * the kernel has no sockets at all, the pair is a pseudo-terminal in raw
 * mode instead (CONFIG_UNIX98_PTYS, devpts on /dev/pts): like a
 * connected socket pair, each end reads what the other end writes, in
 * order, and blocks until there is something. Message boundaries are
 * not kept; the tests read a few bytes and only check that they came.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <termios.h>
#include <unistd.h>
#include <sys/socket.h>

int __real_socketpair(int domain, int type, int protocol, int sv[2]);
int __wrap_socketpair(int domain, int type, int protocol, int sv[2]);

int __wrap_socketpair(int domain, int type, int protocol, int sv[2])
{
	struct termios raw;
	int master, slave = -1, saved;
	char *name;

	if (__real_socketpair(domain, type, protocol, sv) == 0)
		return 0;
	if (errno != ENOSYS && errno != EAFNOSUPPORT)
		return -1;
	master = posix_openpt(O_RDWR | O_NOCTTY);
	if (master < 0)
		return -1;
	if (grantpt(master) || unlockpt(master))
		goto fail;
	name = ptsname(master);
	if (!name)
		goto fail;
	slave = open(name, O_RDWR | O_NOCTTY);
	if (slave < 0 || tcgetattr(slave, &raw))
		goto fail;
	cfmakeraw(&raw);		/* no echo, no line editing */
	raw.c_cc[VMIN] = 1;
	raw.c_cc[VTIME] = 0;
	if (tcsetattr(slave, TCSANOW, &raw))
		goto fail;
	sv[0] = slave;
	sv[1] = master;
	return 0;
fail:
	saved = errno;
	if (slave >= 0)
		close(slave);
	close(master);
	errno = saved;
	return -1;
}
