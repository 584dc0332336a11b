/* A test that floods the console: the harness must kill the guest. */
#include <stdio.h>

int main(void)
{
	unsigned long n;

	for (n = 0;; n++)
		printf("flood line %lu: the quick brown fox jumps over the lazy dog\n",
		       n);
}
