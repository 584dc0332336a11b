// SPDX-License-Identifier: GPL-2.0
/*
 * runas UID PROGRAM [ARGS...]: run PROGRAM as user and group UID, with
 * no supplementary groups, so that root's capabilities (CAP_IPC_LOCK
 * above all) are gone. Upstream's run_vmtests.sh runs on-fault-limit
 * with "sudo -u nobody"; the guests have neither sudo nor a passwd file.
 */
#include <errno.h>
#include <grp.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

int main(int argc, char **argv)
{
	char *end;
	unsigned long id;

	if (argc < 3) {
		fprintf(stderr, "usage: %s UID PROGRAM [ARGS...]\n", argv[0]);
		return 2;
	}
	errno = 0;
	id = strtoul(argv[1], &end, 10);
	if (errno || *end || end == argv[1] || id == 0 || id > 65535) {
		fprintf(stderr, "runas: bad uid '%s'\n", argv[1]);
		return 2;
	}
	if (setgroups(0, NULL) || setgid((gid_t)id) || setuid((uid_t)id)) {
		fprintf(stderr, "runas: cannot become %lu: %s\n", id,
			strerror(errno));
		return 2;
	}
	if (getuid() != (uid_t)id || geteuid() != (uid_t)id) {
		fprintf(stderr, "runas: still uid %u\n", (unsigned)geteuid());
		return 2;
	}
	execv(argv[2], argv + 2);
	fprintf(stderr, "runas: cannot run %s: %s\n", argv[2],
		strerror(errno));
	return 2;
}
