// SPDX-License-Identifier: GPL-2.0
/*
 * Kernel log reports seen from inside a guest test: read /dev/kmsg from the
 * point where the test opened it, and find WARN/BUG splats and one-line
 * reports (BUG, oops, KASAN, KFENCE, kmemleak, lockdep, hung task, RCU
 * stall, UBSAN, list corruption, bad page, refcount_t, MIPS and m68k
 * traps, page-table corruption, OOM killer, x86 PAT errors, mspec pages
 * kept back, allocation failures not forced by fault injection), the same
 * kinds that matrix/session/kernlog.py looks for in the whole log at the end of a
 * session. A test uses it to say which of its own steps made the kernel
 * complain, instead of only failing the session's log check afterwards.
 *
 * A splat ("cut here" to "end trace") is allowed when one of its lines
 * contains one of the strings the caller passes (the warnings the test
 * provokes on purpose); one-line reports are never allowed.
 *
 * An allocation failure the kernel warns about ("page allocation failure",
 * "Huh VM_FAULT_OOM leaked out") is a report unless fault injection forced
 * it: it comes right after a "FAULT_INJECTION: forcing a failure" record
 * and that dump's stack (verbose=2), and uses it up; or it comes while a
 * test has the injection on and says so in the log (kmsg_injection(),
 * KMSG_INJECTION_ON to KMSG_INJECTION_OFF), whatever its verbosity.
 */
#ifndef KMSG_CHECK_H
#define KMSG_CHECK_H

#include <ctype.h>
#include <errno.h>
#include <fcntl.h>
#include <stdbool.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

struct kmsg_check {
	int fd;			/* /dev/kmsg, -1 if it cannot be read */
	bool in_splat;		/* between "cut here" and "end trace" */
	bool splat_allowed;
	char splat_first[160];	/* first report line of the current splat */
	unsigned long lines;	/* records read */
	unsigned long reports;	/* reports found, allowed ones not counted */
	unsigned long allowed;	/* allowed splats seen through to their end */
	char first[256];	/* the first of them */
	bool injected;		/* in the dump of an injected failure */
	bool injecting;		/* between KMSG_INJECTION_ON and _OFF */
};

/*
 * What a test logs (at KERN_WARNING, which the matrix's console prints)
 * right before it turns the kernel's fault injection on and right after
 * it turns it off: the allocation failures in between are injected ones.
 */
#define KMSG_INJECTION_ON	"nopfn-test: kernel fault injection on"
#define KMSG_INJECTION_OFF	"nopfn-test: kernel fault injection off"

/* Log KMSG_INJECTION_ON (on) or _OFF; 0, or -1 with errno. */
static inline int kmsg_injection(bool on)
{
	char rec[64];
	int fd, n, ret;

	fd = open("/dev/kmsg", O_WRONLY | O_CLOEXEC);
	if (fd < 0)
		return -1;
	n = snprintf(rec, sizeof(rec), "<4>%s\n",
		     on ? KMSG_INJECTION_ON : KMSG_INJECTION_OFF);
	ret = write(fd, rec, n) == n ? 0 : -1;
	close(fd);
	return ret;
}

/* Start watching: only records logged from now on are looked at. */
static inline void kmsg_open(struct kmsg_check *k)
{
	memset(k, 0, sizeof(*k));
	k->fd = open("/dev/kmsg", O_RDONLY | O_NONBLOCK | O_CLOEXEC);
	if (k->fd >= 0)
		lseek(k->fd, 0, SEEK_END);
}

static inline void kmsg_close(struct kmsg_check *k)
{
	if (k->fd >= 0)
		close(k->fd);
	k->fd = -1;
}

/* "BUG" as a word: not the end of "DEBUG". */
static inline bool kmsg_has_bug(const char *s)
{
	const char *p;

	for (p = strstr(s, "BUG"); p; p = strstr(p + 1, "BUG")) {
		if (p > s && (isalnum((unsigned char)p[-1]) || p[-1] == '_'))
			continue;
		if (p[3] == ':' || p[3] == ' ')
			return true;
	}
	return false;
}

/*
 * A frame of a stack dump (" ? lockdep_hardirqs_on_prepare+0x352/0x352",
 * "[<ffffffff80006a02>] flush_icache_pte+0x28/0x46"): it names functions,
 * and a dump the kernel prints without a report (warn_alloc() for a failed
 * allocation, which fault injection causes on purpose) is not one because
 * a function in it is called lockdep_something.
 */
static inline bool kmsg_stack_frame(const char *s)
{
	const char *p;

	while (*s == ' ' || *s == '\t')
		s++;
	if (s[0] == '?' && s[1] == ' ')
		s += 2;
	if (s[0] == '[' && s[1] == '<') {	/* "[<ffffffff80006a02>] " */
		s = strstr(s, ">] ");
		if (!s)
			return false;
		s += 3;
	}
	/* The first word is symbol+0xoff/0xsize (and maybe " [module]"). */
	for (p = s; isalnum((unsigned char)*p) || *p == '_' || *p == '.'; p++)
		;
	return p > s && !strncmp(p, "+0x", 3) && strchr(p, '/') &&
	       (!strchr(p, ' ') || strchr(p, '/') < strchr(p, ' '));
}

/* The word w in s: not preceded or followed by a letter, digit or '_'. */
static inline bool kmsg_has_word(const char *s, const char *w)
{
	size_t n = strlen(w);
	const char *p;

	for (p = strstr(s, w); p; p = strstr(p + 1, w)) {
		if (p > s && (isalnum((unsigned char)p[-1]) || p[-1] == '_'))
			continue;
		if (isalnum((unsigned char)p[n]) || p[n] == '_')
			continue;
		return true;
	}
	return false;
}

/*
 * p?d_ERROR() of every architecture, p?d_clear_bad(): "mm/pgtable-
 * generic.c:51: bad pmd 00000000c0ffee00(800000000d2ae067)".
 */
static inline bool kmsg_bad_page_table(const char *s)
{
	static const char * const level[] = {
		"bad pte", "bad pmd", "bad pud", "bad p4d", "bad pgd",
	};
	unsigned int i;

	for (i = 0; i < sizeof(level) / sizeof(level[0]); i++)
		if (kmsg_has_word(s, level[i]))
			return true;
	return false;
}

/* The OOM killer: no guest of the suite may run out of memory. */
static inline bool kmsg_oom_kill(const char *s)
{
	const char *p = strstr(s, "Out of memory");

	if (!p)
		p = strstr(s, "out of memory");
	if (p && strstr(p, ": Killed process"))
		return true;
	return strstr(s, "invoked oom-killer") ||
	       strstr(s, "oom-kill:constraint");
}

/* x86 PAT (arch/x86/mm/pat/memtype*.c), every one of its errors. */
static inline bool kmsg_pat_error(const char *s)
{
	static const char * const err[] = {
		"conflicting memory types", "map pfn",
		"freeing invalid memtype", "memtype_reserve failed",
		"reserve_ram_pages_type failed", "ioremap_change_attr failed",
	};
	const char *p = strstr(s, "x86/PAT: ");
	unsigned int i;

	if (!p)
		return false;
	for (i = 0; i < sizeof(err) / sizeof(err[0]); i++)
		if (strstr(p, err[i]))
			return true;
	return false;
}

/*
 * A warned allocation failure: warn_alloc() of the page allocator's slow
 * path, and a VM_FAULT_OOM that reached pagefault_out_of_memory(). Not in
 * kmsg_bad_line(): kmsg_line() tells injected ones apart.
 */
static inline bool kmsg_failed_alloc(const char *s)
{
	return strstr(s, "page allocation failure") ||
	       strstr(s, "Huh VM_FAULT_OOM leaked out");
}

/*
 * A record that continues the fail_dump() of an injected failure after its
 * "FAULT_INJECTION: forcing a failure.\x0aname ..." record: with verbose=2
 * the header and frames of its dump_stack() (x86, arm64, riscv formats).
 * Anything else ends it.
 */
static inline bool kmsg_injection_dump(const char *s)
{
	const char *p;

	if (!strncmp(s, "name ", 5) && strstr(s, ", interval ") &&
	    strstr(s, ", probability "))
		return true;
	if ((!strncmp(s, "CPU: ", 5) && strstr(s, " PID: ") &&
	     strstr(s, " Comm: ")) || !strncmp(s, "Hardware name: ", 15) ||
	    !strcmp(s, "Call Trace:") || !strcmp(s, "Call trace:"))
		return true;
	/* x86: the user registers where the stack of a user fault ends */
	if (!strncmp(s, "RIP: ", 5) || !strncmp(s, "RSP: ", 5) ||
	    !strncmp(s, "RAX: ", 5) || !strncmp(s, "RDX: ", 5) ||
	    !strncmp(s, "RBP: ", 5) || !strncmp(s, "R10: ", 5) ||
	    !strncmp(s, "R13: ", 5) || !strncmp(s, "Code: ", 6))
		return true;
	for (p = s; *p == ' '; p++)		/* " <TASK>", " </IRQ>" */
		;
	if (*p == '<') {
		p += p[1] == '/' ? 2 : 1;
		while (*p >= 'A' && *p <= 'Z')
			p++;
		if (p[0] == '>' && !p[1])
			return true;
	}
	return kmsg_stack_frame(s);
}

/* A line that is a report on its own (matrix/session/kernlog.py's BAD). */
static inline bool kmsg_bad_line(const char *s)
{
	static const char * const bad[] = {
		"WARNING:", "Oops", "Kernel panic", "general protection fault",
		"Unable to handle kernel", "KASAN", "KFENCE",
		"unreferenced object", "possible circular locking",
		"possible recursive locking", "inconsistent lock state",
		"lockdep", "blocked for more than", "soft lockup",
		"hard LOCKUP", "UBSAN", "list_add corruption",
		"list_del corruption", "Bad page state", "Bad page map",
		"bad page", "refcount_t: ",
		"Kernel bug detected",		/* MIPS BUG(): "...[#1]:" */
		"BAD KERNEL TRAP",		/* m68k bad_super_trap() */
		/* driver/mspec_core.c: its linear map stayed uncached */
		"kept back, its kernel mapping could not be restored",
	};
	unsigned int i;

	if (kmsg_stack_frame(s))
		return false;
	if (kmsg_has_bug(s))
		return true;
	if (strstr(s, "kmemleak") && (strstr(s, "suspected memory leak") ||
				      strstr(s, "new memory leak")))
		return true;
	if (strstr(s, "INFO: rcu_") && strstr(s, "stall"))
		return true;
	if (kmsg_bad_page_table(s) || kmsg_oom_kill(s) || kmsg_pat_error(s))
		return true;
	for (i = 0; i < sizeof(bad) / sizeof(bad[0]); i++)
		if (strstr(s, bad[i]))
			return true;
	return false;
}

static inline bool kmsg_allowed(const char *s, const char * const *allow)
{
	for (; allow && *allow; allow++)
		if (strstr(s, *allow))
			return true;
	return false;
}

static inline void kmsg_report(struct kmsg_check *k, const char *s)
{
	if (!k->reports++)
		snprintf(k->first, sizeof(k->first), "%s", s);
}

/* One line of message text. */
static inline void kmsg_line(struct kmsg_check *k, const char *s,
			     const char * const *allow)
{
	bool bad = kmsg_bad_line(s);

	if (strstr(s, KMSG_INJECTION_ON))
		k->injecting = true;
	else if (strstr(s, KMSG_INJECTION_OFF))
		k->injecting = false;
	if (kmsg_failed_alloc(s)) {
		bad = bad || !(k->injected || k->injecting);
		k->injected = false;	/* one injected failure, one warning */
	} else if (strstr(s, "FAULT_INJECTION: forcing a failure")) {
		k->injected = true;
	} else if (!kmsg_injection_dump(s)) {
		k->injected = false;
	}
	if (strstr(s, "cut here ]")) {
		if (k->in_splat && !k->splat_allowed)
			kmsg_report(k, k->splat_first[0] ? k->splat_first :
				    "unterminated splat");
		k->in_splat = true;
		k->splat_allowed = false;
		k->splat_first[0] = 0;
		return;
	}
	if (k->in_splat) {
		if (kmsg_allowed(s, allow))
			k->splat_allowed = true;
		if (!k->splat_first[0] && bad)
			snprintf(k->splat_first, sizeof(k->splat_first), "%s",
				 s);
		if (strstr(s, "---[ end trace") ||
		    strstr(s, "---[ end Kernel panic")) {
			if (!k->splat_allowed)
				kmsg_report(k, k->splat_first[0] ?
					    k->splat_first : s);
			else
				k->allowed++;
			k->in_splat = false;
		}
		return;
	}
	if (bad)
		kmsg_report(k, s);
}

/*
 * Read every record logged since the last call. Returns the number of
 * reports found so far (k->first is the first), or -1 if /dev/kmsg is not
 * readable here.
 */
static inline long kmsg_scan(struct kmsg_check *k, const char * const *allow)
{
	char rec[2048], *text, *nl;
	ssize_t n;

	if (k->fd < 0)
		return -1;
	for (;;) {
		n = read(k->fd, rec, sizeof(rec) - 1);
		if (n < 0 && errno == EPIPE)
			continue;	/* overwritten records: go on */
		if (n < 0 && errno == EINTR)
			continue;
		if (n <= 0)
			break;
		rec[n] = 0;
		/* "prio,seq,usec,flags;text\n", then " KEY=value" lines. */
		text = strchr(rec, ';');
		if (!text)
			continue;
		text++;
		nl = strchr(text, '\n');
		if (nl)
			*nl = 0;
		k->lines++;
		kmsg_line(k, text, allow);
	}
	return (long)k->reports;
}

#endif /* KMSG_CHECK_H */
