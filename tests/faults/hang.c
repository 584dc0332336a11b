/* A test that hangs silently: the harness must kill the guest. */
#include <unistd.h>

int main(void)
{
	for (;;)
		pause();
}
