// SPDX-License-Identifier: GPL-2.0
/*
 * A plain program that prints KTAP with a skip in it and declares its
 * cases: the skip must be a pytest skip with its reason, not a pass.
 * Used by tests/test_red.py only.
 *
 * matrix-cases: checked not_checked
 */
#include <stdio.h>

int main(void)
{
	puts("TAP version 13");
	puts("1..2");
	puts("ok 1 checked");
	puts("ok 2 # SKIP not_checked: nothing to check it on");
	return 0;
}
