// SPDX-License-Identifier: GPL-2.0
/*
 * mmap_fuzz: the process of one sequence (see main.c): the trace of its
 * operations, a difference from the model, running the operations one by
 * one and checking the counters after each.
 */
#include "fuzz.h"

int kpipe[2];			/* for kernel-mode accesses */
unsigned int cur_kind;		/* kind of the current operation */
static char *tr;		/* trace of the current operation */
static size_t trlen;

void __attribute__((format(printf, 1, 2))) T(const char *fmt, ...)
{
	va_list ap;

	if (trlen >= TRACE - 1)
		return;
	va_start(ap, fmt);
	trlen += vsnprintf(tr + trlen, TRACE - trlen, fmt, ap);
	va_end(ap);
	if (trlen >= TRACE)
		trlen = TRACE - 1;
}

/* A difference: say what, end the sequence's process. */
void __attribute__((format(printf, 1, 2), noreturn))
mismatch(const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(sh->msg, sizeof(sh->msg), fmt, ap);
	va_end(ap);
	if (h_pid > 0)
		kill(h_pid, SIGKILL);
	_exit(3);
}

/* An address as the trace shows it: relative to the arena if inside. */
const char *addr_str(unsigned long a, char *buf)
{
	unsigned long base = (unsigned long)env.arena;

	if (a >= base - GUARD * psz && a < base + (ARENA + GUARD) * psz) {
		long off = (long)(a - base);

		if (off % psz)
			sprintf(buf, "A%+ldp%+ld", off / (long)psz,
				off % (long)psz);
		else
			sprintf(buf, "A%+ldp", off / (long)psz);
	} else {
		sprintf(buf, "%#lx", a);
	}
	return buf;
}

const char *err_str(long ret, int err, char *buf)
{
	if (ret == -1)
		sprintf(buf, "-1 %s", strerrorname_np(err) ?
			strerrorname_np(err) : "?");
	else
		sprintf(buf, "%ld", ret);
	return buf;
}

int fd_of(int slot)
{
	return M->fds[slot].fd >= 0 ? M->fds[slot].fd : 900 + slot;
}

/*
 * About 5/8 of the operations are well-formed for the state they find
 * (an open file, a valid offset and protection for its device, a range
 * around a VMA, a free destination), so that sequences get far; the rest
 * take their parameters at random and mostly test the refusals.
 */
bool sane(const struct op *op)
{
	return (op->r[3] >> 61) < 5;
}

/* The k-th open slot (k taken modulo their number), or -1. */
int open_slot(uint64_t k, int dev)
{
	int f, n = 0;

	for (f = 0; f < NFD; f++)
		if (M->fds[f].fd >= 0 && (dev < 0 || M->fds[f].dev == dev))
			n++;
	if (!n)
		return -1;
	k %= n;
	for (f = 0; f < NFD; f++)
		if (M->fds[f].fd >= 0 && (dev < 0 || M->fds[f].dev == dev) &&
		    !k--)
			return f;
	return -1;
}

void expect_ret(const char *what, long got, int err, long want,
		int want_err)
{
	char g[48], w[48];

	T(" = %s", err_str(got, err, g));
	if (got != want || (want == -1 && err != want_err))
		mismatch("%s: got %s, model %s", what, g,
			 err_str(want, want_err, w));
	if (want != -1)
		sh->ok[cur_kind]++;
}

static void run_op(const struct op *op)
{
	switch (op->kind) {
	case K_OPEN:
		op_open(op);
		break;
	case K_CLOSE:
		op_close(op);
		break;
	case K_MMAP:
		op_mmap(op);
		break;
	case K_MUNMAP:
		op_munmap(op);
		break;
	case K_MPROTECT:
		op_mprotect(op);
		break;
	case K_MADVISE:
		op_madvise(op);
		break;
	case K_MREMAP:
		op_mremap(op);
		break;
	case K_TOUCH:
		op_touch(op, false);
		break;
	case K_UACCESS:
		op_uaccess(op);
		break;
	case K_PROCMEM:
		op_procmem(op);
		break;
	case K_QUERY:
		op_query(op);
		break;
	case K_SETPAGES:
		op_setpages(op);
		break;
	case K_INJECT:
		op_inject(op);
		break;
	case K_HFORK:
		op_hfork();
		break;
	case K_HTOUCH:
		op_touch(op, true);
		break;
	case K_REMAP:
		op_remap(op);
		break;
	default:
		op_hexit();
		break;
	}
}

void sequence_main(const struct op *ops, const unsigned char *idx,
		   unsigned int n)
{
	static struct model model;
	unsigned int i;
	int f;

	setpgid(0, 0);
	alarm(20);
	M = &model;
	memset(M, 0, sizeof(*M));
	for (f = 0; f < NFD; f++) {
		M->fds[f].fd = -1;
		M->fds[f].obj = -1;
	}
	if (pipe2(kpipe, O_NONBLOCK))
		mismatch("pipe: %s", strerror(errno));
	model_base();
	for (i = 0; i < n; i++) {
		tr = sh->trace[i];
		trlen = 0;
		tr[0] = 0;
		sh->failed_op = idx[i];
		T("#%u ", idx[i]);
		cur_kind = ops[idx[i]].kind;
		run_op(&ops[idx[i]]);
		check_counts();
		sh->kinds[ops[idx[i]].kind]++;
		sh->ops_done++;
	}
	sh->failed_op = -1;
	helper_stop();
	_exit(0);
}
