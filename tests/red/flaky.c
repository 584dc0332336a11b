// SPDX-License-Identifier: GPL-2.0
/*
 * Fails the first time it runs in a guest, passes the second (a file in
 * /tmp remembers): the rerun makes it "flaky", which must fail the run
 * unless --tolerate-flaky. Used by tests/test_red.py only.
 */
#include <fcntl.h>
#include <stdio.h>
#include <unistd.h>

int main(void)
{
	int fd = open("/tmp/flaky-ran", O_CREAT | O_EXCL | O_WRONLY, 0600);

	if (fd >= 0) {
		close(fd);
		puts("first run: fail");
		return 1;
	}
	puts("second run: pass");
	return 0;
}
