// SPDX-License-Identifier: GPL-2.0
/*
 * Threads and signals around faults that wait in ->nopfn() (nopfn_util.h).
 */
#include "nopfn_util.h"

volatile sig_atomic_t usr1_runs;
volatile double usr1_when;

static void usr1_handler(int sig)
{
	(void)sig;
	usr1_runs++;
	usr1_when = now_ms();
}

void install_usr1(void)
{
	struct sigaction sa = { .sa_handler = usr1_handler };

	sigemptyset(&sa.sa_mask);
	usr1_runs = 0;
	sigaction(SIGUSR1, &sa, NULL);
}

bool wait_for_calls(int fd, long long n, unsigned int extra_ms)
{
	double end = now_ms() + 5000;

	while (stats(fd).calls < n) {
		if (now_ms() > end)
			return false;
		sleep_ms(2);
	}
	sleep_ms(extra_ms);
	return true;
}

static void *toucher_fn(void *arg)
{
	struct toucher *t = arg;

	t->start = now_ms();
	t->val = *t->addr;
	t->end = now_ms();
	return NULL;
}

int toucher_start(struct toucher *t, volatile char *addr)
{
	memset(t, 0, sizeof(*t));
	t->addr = addr;
	return pthread_create(&t->thread, NULL, toucher_fn, t);
}

void *signaller_fn(void *arg)
{
	struct signaller *s = arg;

	s->ok = wait_for_calls(s->fd, 1, s->delay_ms);
	s->sent = now_ms();
	pthread_kill(s->target, SIGUSR1);
	return NULL;
}
