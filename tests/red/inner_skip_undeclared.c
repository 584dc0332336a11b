// SPDX-License-Identifier: GPL-2.0
/*
 * A plain program that prints KTAP with a skip but declares no cases:
 * its one result cannot show the skip, so it must fail and say to
 * declare them. Used by tests/test_red.py only.
 */
#include <stdio.h>

int main(void)
{
	puts("TAP version 13");
	puts("1..2");
	puts("ok 1 checked");
	puts("ok 2 not_checked # SKIP nothing to check it on");
	return 0;
}
