// SPDX-License-Identifier: GPL-2.0
/*
 * Accesses that may fault, caught (guard.h).
 */
#include <setjmp.h>
#include <signal.h>
#include <stddef.h>

#include "guard.h"

__thread siginfo_t guard_info;
static __thread sigjmp_buf *guard_jb;

int guarded(void (*fn)(void *), void *arg)
{
	sigjmp_buf jb;

	if (sigsetjmp(jb, 1)) {
		guard_jb = NULL;
		return guard_info.si_signo;
	}
	guard_jb = &jb;
	fn(arg);
	guard_jb = NULL;
	return 0;
}

bool guard_armed(void)
{
	return guard_jb != NULL;
}

void guard_jump(int sig, const siginfo_t *si)
{
	guard_info = *si;
	guard_info.si_signo = sig;
	siglongjmp(*guard_jb, 1);
}

void guard_handler(int sig, siginfo_t *si, void *uc)
{
	(void)uc;
	if (!guard_jb) {
		signal(sig, SIG_DFL);	/* not ours: die of it */
		raise(sig);
		return;
	}
	guard_jump(sig, si);
}

void guard_install(void (*handler)(int, siginfo_t *, void *))
{
	struct sigaction sa = { 0 };

	sa.sa_sigaction = handler;
	sa.sa_flags = SA_SIGINFO | SA_NODEFER;
	sigaction(SIGSEGV, &sa, NULL);
	sigaction(SIGBUS, &sa, NULL);
}

struct probe_access {
	volatile char *addr;
	bool write;
	char *val;
};

static void probe_access(void *arg)
{
	struct probe_access *p = arg;

	if (p->write)
		*p->addr = *p->val;
	else
		*p->val = *p->addr;
}

int probe(volatile char *addr, bool write, char *val, siginfo_t *info)
{
	struct sigaction sa = { .sa_sigaction = guard_handler,
				.sa_flags = SA_SIGINFO };
	struct probe_access p = { addr, write, val };
	struct sigaction old_bus, old_segv;
	int ret;

	sigemptyset(&sa.sa_mask);
	sigaction(SIGBUS, &sa, &old_bus);
	sigaction(SIGSEGV, &sa, &old_segv);
	ret = guarded(probe_access, &p);
	if (ret && info)
		*info = guard_info;
	sigaction(SIGBUS, &old_bus, NULL);
	sigaction(SIGSEGV, &old_segv, NULL);
	return ret;
}
