/* A test that passes: the run goes on after the faults above. */
#include <stdio.h>

int main(void)
{
	printf("still here\n");
	return 0;
}
