// SPDX-License-Identifier: GPL-2.0
/*
 * Fatal signals, described before they kill (crash.h). The handler uses
 * only async-signal-safe calls: open(), read(), pread(), write(),
 * gettid.
 */
#include <fcntl.h>
#include <signal.h>
#include <ucontext.h>
#include <stdbool.h>
#include <stdint.h>
#include <string.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "crash.h"

static void put(const char *s)
{
	if (write(STDOUT_FILENO, s, strlen(s)) < 0)
		return;
}

static void put_hex(uintptr_t v)
{
	char buf[2 + 2 * sizeof(v) + 1], *p = buf + sizeof(buf) - 1;

	*p = 0;
	do {
		*--p = "0123456789abcdef"[v & 15];
		v >>= 4;
	} while (v);
	*--p = 'x';
	*--p = '0';
	put(p);
}

static void put_dec(long v)
{
	char buf[24], *p = buf + sizeof(buf) - 1;
	bool neg = v < 0;
	unsigned long u = neg ? -(unsigned long)v : (unsigned long)v;

	*p = 0;
	do {
		*--p = '0' + u % 10;
		u /= 10;
	} while (u);
	if (neg)
		*--p = '-';
	put(p);
}

/* The hexadecimal number at *@s, up to @end or the string's end. */
static unsigned long hex_field(const char **s, char end)
{
	unsigned long v = 0;

	for (; **s && **s != end; (*s)++)
		v = v * 16 + (**s <= '9' ? **s - '0' : **s - 'a' + 10);
	return v;
}

/* The line of /proc/self/maps whose range holds @addr, if any. */
static void put_mapping(uintptr_t addr)
{
	char buf[4096], line[256];
	size_t len = 0;
	ssize_t n, i;
	int fd;

	fd = open("/proc/self/maps", O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return;
	while ((n = read(fd, buf, sizeof(buf))) > 0) {
		for (i = 0; i < n; i++) {
			unsigned long lo, hi;
			const char *s = line;

			if (buf[i] != '\n') {
				if (len < sizeof(line) - 1)
					line[len++] = buf[i];
				continue;
			}
			line[len] = 0;
			len = 0;
			lo = hex_field(&s, '-');
			s += *s == '-';
			hi = hex_field(&s, ' ');
			if (addr >= lo && addr < hi) {
				put("# mapping: ");
				put(line);
				put("\n");
				close(fd);
				return;
			}
		}
	}
	put("# mapping: none holds the address\n");
	close(fd);
}

/* The 16 bytes at @addr, read through /proc/self/mem (no second fault). */
static void put_bytes(uintptr_t addr)
{
	unsigned char b[16];
	ssize_t n, i;
	int fd;

	fd = open("/proc/self/mem", O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return;
	n = pread(fd, b, sizeof(b), (off_t)addr);
	close(fd);
	if (n <= 0) {
		put("# bytes: unreadable\n");
		return;
	}
	put("# bytes:");
	for (i = 0; i < n; i++) {
		char h[4] = { ' ', "0123456789abcdef"[b[i] >> 4],
			      "0123456789abcdef"[b[i] & 15], 0 };

		put(h);
	}
	put("\n");
}

/* Where the CPU was: the instruction and stack pointers, where known. */
static void put_regs(void *uc)
{
#if defined(__i386__) || defined(__x86_64__)
	const ucontext_t *u = uc;

#if defined(__i386__)
	put("# registers: ip ");
	put_hex((uint32_t)u->uc_mcontext.gregs[REG_EIP]);
	put(" sp ");
	put_hex((uint32_t)u->uc_mcontext.gregs[REG_ESP]);
#else
	put("# registers: ip ");
	put_hex(u->uc_mcontext.gregs[REG_RIP]);
	put(" sp ");
	put_hex(u->uc_mcontext.gregs[REG_RSP]);
#endif
	put("\n");
#else
	(void)uc;
#endif
}

static void on_fatal(int sig, siginfo_t *si, void *uc)
{
	static int reporting;
	uintptr_t addr = (uintptr_t)si->si_addr;

	/*
	 * The handler stays installed (no SA_RESETHAND): a second thread
	 * that faults meanwhile must not kill the process before the first
	 * one has said where. It waits for the first one's raise().
	 */
	if (__atomic_exchange_n(&reporting, 1, __ATOMIC_SEQ_CST)) {
		put("# fatal signal in a second thread too\n");
		for (;;)
			pause();
	}
	put("# fatal signal ");
	put_dec(sig);
	put(" code ");
	put_dec(si->si_code);
	put(" at ");
	put_hex(addr);
	put(" in pid ");
	put_dec(getpid());
	put(" tid ");
	put_dec(syscall(SYS_gettid));
	put("\n");
	put_regs(uc);
	put_mapping(addr);
	put_bytes(addr);
	signal(sig, SIG_DFL);
	raise(sig);
}

/*
 * An alternate stack for this thread's handler, so that a fault with a
 * bad stack pointer is reported too (instead of the SIGSEGV the kernel
 * forces when it cannot push the handler's frame).
 */
void report_fatal_signals_on_own_stack(void)
{
	static __thread char stack[64 * 1024] __attribute__((aligned(16)));
	stack_t ss = { .ss_sp = stack, .ss_size = sizeof(stack) };

	sigaltstack(&ss, NULL);
}

void report_fatal_signals(void)
{
	static const int sigs[] = { SIGILL, SIGSEGV, SIGBUS, SIGFPE };
	struct sigaction sa;
	unsigned int i;

	memset(&sa, 0, sizeof(sa));
	sa.sa_sigaction = on_fatal;
	sa.sa_flags = SA_SIGINFO | SA_NODEFER | SA_ONSTACK;
	for (i = 0; i < sizeof(sigs) / sizeof(sigs[0]); i++)
		sigaction(sigs[i], &sa, NULL);
}
