// SPDX-License-Identifier: GPL-2.0
/*
 * KTAP diagnostic lines (nopfn_util.h).
 */
#include "nopfn_util.h"

void diag(const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	printf("# ");
	vprintf(fmt, ap);
	printf("\n");
	va_end(ap);
	fflush(stdout);
}
