// SPDX-License-Identifier: GPL-2.0
/*
 * mmap_fuzz: seeded random sequences of mmap-family calls on the three
 * mspec devices and /dev/test_nopfn, each checked against a model of what
 * the kernel and the drivers must do.
 *
 *   mmap_fuzz [--seconds N] [--seed S] [--sequence I [--ops LIST]]
 *
 * matrix-args: --seconds 10 --seed {seed}
 * matrix-cases: sequences_match_model counters_back kernel_log_clean
 *   exec_mappings_without_struct_page ran_enough
 *
 * Sequence I of seed S is generated from splitmix64(S + I): up to 48
 * operations among open/close of a device, mmap() (lengths 0, unaligned,
 * huge; offsets 0, non-zero, unaligned, overflowing; MAP_SHARED, _PRIVATE,
 * _SHARED_VALIDATE, a bad type; MAP_FIXED, _FIXED_NOREPLACE, a hint, none;
 * MAP_POPULATE, _NORESERVE, _LOCKED; every useful protection), munmap(),
 * mprotect(), madvise() (every advice), mremap() (shrink, grow, move,
 * MREMAP_DONTUNMAP, bad flags), reads and writes of user space and of the
 * kernel (a pipe copies from or to the page), /proc/self/mem, the PTE
 * read back through /sys/kernel/debug/mspec/pte, test_nopfn page
 * behaviours, injected mspec allocation failures, and a helper process
 * fork()ed from the current state that touches pages too and exits.
 *
 * All of it happens in a fixed arena of address space (guarded on both
 * sides), so that the model knows every VMA in it. Each sequence runs in
 * a fresh process: after every operation the result (return value and
 * errno, signal with si_code and si_addr, value read) must be the model's,
 * and so must the mspec counters (mappings, pages in use, allocation
 * failures per type), test_nopfn's module-wide counters (states, RAM
 * pages) and the injection knob. After the process exited every counter
 * must be back and the kernel log must have no new report.
 *
 * A timed run must also have done something: at least MIN_SEQ_PER_10S
 * sequences per 10 s, and MIN_OPS_PER_SEQ operations per sequence on
 * average (ran_enough). The slowest guest measured, x86_64-debug under
 * TCG, did 27 sequences and 660 operations in 10 s; a sequence that
 * ends at its first operation every time (a broken setup) averages 1.
 *
 * On a difference, a crash, a hang, a leak or a kernel report the program
 * minimizes the sequence (delta debugging: subsequences re-run in fresh
 * processes, keeping the shortest that still fails), prints the seed, the
 * sequence number, the kept operation numbers (--sequence I --ops LIST
 * replays exactly that) and the trace of the minimal run, and fails.
 *
 * The model is written from the sources; the comments at each rule say
 * where it comes from: mm/mmap.c, mm/mremap.c, mm/mprotect.c, mm/madvise.c
 * of linux-source-6.1, the ->nopfn() series (kernel/patches/6.1/, described in
 * docs/nopfn-api.md), driver/mspec_core.c and lib/test_nopfn.c
 * (lib/test_nopfn_uapi.h).
 */
#include "kselftest.h"
#include "clock.h"
#include "guard.h"
#include "kmsg_check.h"
#include "rand.h"
#include "fuzz.h"

/* ----------------------------------------------------------- sequences */

static const char * const kind_name[NKINDS] = {
	"open", "close", "mmap", "munmap", "mprotect", "madvise", "mremap",
	"touch", "uaccess", "procmem", "query", "setpages", "inject",
	"hfork", "htouch", "hexit", "remap",
};
static const unsigned int kind_weight[NKINDS] = {
	8, 3, 16, 6, 6, 5, 7, 20, 6, 2, 5, 5, 3, 3, 6, 1, 4,
};

static void gen_sequence(uint64_t seed, unsigned long seq, struct op *ops,
			 unsigned int *n)
{
	uint64_t x = seed + seq, total = 0;
	unsigned int i, k;

	for (k = 0; k < NKINDS; k++)
		total += kind_weight[k];
	splitmix64(&x);
	*n = 4 + splitmix64(&x) % (MAXOPS - 3);
	for (i = 0; i < *n; i++) {
		uint64_t w = splitmix64(&x) % total;

		for (k = 0; w >= kind_weight[k]; k++)
			w -= kind_weight[k];
		ops[i].kind = k;
		for (k = 0; k < 4; k++)
			ops[i].r[k] = splitmix64(&x);
	}
	/*
	 * Most sequences start with files open and mapped, well-formed
	 * (see sane()), so that the rest has something to work on.
	 */
	if (splitmix64(&x) % 4) {
		unsigned int pro = 2 + splitmix64(&x) % 5;

		for (i = 0; i < pro && i < *n; i++) {
			ops[i].kind = i % 2 ? K_MMAP : K_OPEN;
			ops[i].r[3] &= ~(7ULL << 61);
		}
	}
}

/* ------------------------------------------------------- coordinator */

enum outcome { PASS, MISMATCH, CRASH, HANG, LEAK, KREPORT };
static const char * const outcome_name[] = {
	"pass", "model difference", "crash", "hang", "leak after exit",
	"kernel report",
};

struct run {
	enum outcome what;
	int op;			/* failing operation number, -1 */
	char msg[MSG];
};

static struct counts cbase;	/* the coordinator's baseline */
static struct kmsg_check km;

static bool counts_back(char *msg, size_t size)
{
	struct counts c;
	int t, tries;

	for (tries = 0; tries < 50; tries++) {
		bool ok = true;

		read_counts(&c, false);
		for (t = 0; t < NTYPES; t++)
			if (c.mappings[t] != cbase.mappings[t] ||
			    c.in_use[t] != cbase.in_use[t])
				ok = false;
		if (c.leaked != cbase.leaked || c.states != cbase.states ||
		    c.ram != cbase.ram)
			ok = false;
		if (ok)
			return true;
		usleep(10000);
	}
	snprintf(msg, size,
		 "after exit: mappings %+ld/%+ld/%+ld, pages in use %+ld/%+ld/%+ld, leaked %+ld, test_nopfn states %+ld, RAM pages %+ld",
		 c.mappings[0] - cbase.mappings[0],
		 c.mappings[1] - cbase.mappings[1],
		 c.mappings[2] - cbase.mappings[2],
		 c.in_use[0] - cbase.in_use[0], c.in_use[1] - cbase.in_use[1],
		 c.in_use[2] - cbase.in_use[2], c.leaked - cbase.leaked,
		 c.states - cbase.states, c.ram - cbase.ram);
	return false;
}

static const char * const allowed_reports[] = { NULL };

static struct run run_sequence(const struct op *ops, const unsigned char *idx,
			       unsigned int n)
{
	struct run r = { PASS, -1, "" };
	int status;
	pid_t pid;

	mspec_set_knob("fail_next_alloc", 0);
	mspec_set_knob("fail_sigbus", 0);
	memset(sh->trace, 0, sizeof(sh->trace));
	sh->msg[0] = 0;
	sh->failed_op = -1;
	fflush(stdout);
	pid = fork();
	if (pid < 0)
		ksft_exit_fail_msg("fork: %s\n", strerror(errno));
	if (pid == 0)
		sequence_main(ops, idx, n);
	while (waitpid(pid, &status, 0) < 0 && errno == EINTR)
		;
	/* The helper, if the sequence died without stopping it. */
	kill(-pid, SIGKILL);
	while (waitpid(-1, NULL, 0) > 0 || errno == EINTR)
		;
	mspec_set_knob("fail_next_alloc", 0);
	mspec_set_knob("fail_sigbus", 0);
	if (WIFEXITED(status) && WEXITSTATUS(status) == 3) {
		r.what = MISMATCH;
		r.op = sh->failed_op;
		snprintf(r.msg, sizeof(r.msg), "%s", sh->msg);
	} else if (WIFSIGNALED(status) && WTERMSIG(status) == SIGALRM) {
		r.what = HANG;
		r.op = sh->failed_op;
		snprintf(r.msg, sizeof(r.msg), "no progress for 20 s");
	} else if (!WIFEXITED(status) || WEXITSTATUS(status)) {
		r.what = CRASH;
		r.op = sh->failed_op;
		snprintf(r.msg, sizeof(r.msg), "%s %d",
			 WIFEXITED(status) ? "exit" : "signal",
			 WIFEXITED(status) ? WEXITSTATUS(status) :
			 WTERMSIG(status));
	}
	if (r.what == PASS && !counts_back(r.msg, sizeof(r.msg)))
		r.what = LEAK;
	if (kmsg_scan(&km, allowed_reports) > 0) {
		if (r.what == PASS) {
			r.what = KREPORT;
			snprintf(r.msg, sizeof(r.msg), "%s", km.first);
		}
		km.reports = 0;
	}
	return r;
}

/* ------------------------------------------------------- minimization */

static uint64_t min_deadline;
static unsigned int min_runs;

static bool still_fails(const struct op *ops, const unsigned char *idx,
			unsigned int n)
{
	struct run r;

	if (now_ns() > min_deadline)
		return false;
	min_runs++;
	r = run_sequence(ops, idx, n);
	return r.what != PASS;
}

/*
 * ddmin: remove chunks of the failing list (halves, quarters, ...) while
 * it still fails, then single operations; keeps the shortest it found
 * within the time allowed.
 */
static unsigned int minimize(const struct op *ops, unsigned char *idx,
			     unsigned int n)
{
	unsigned char trial[MAXOPS];
	unsigned int chunk = n / 2, start, i, m;

	min_deadline = now_ns() + 30000000000ULL;
	while (chunk >= 1 && n > 1 && now_ns() < min_deadline) {
		bool removed = false;

		start = 0;
		while (start < n && now_ns() < min_deadline) {
			m = 0;
			for (i = 0; i < n; i++)
				if (i < start || i >= start + chunk)
					trial[m++] = idx[i];
			if (m && still_fails(ops, trial, m)) {
				memcpy(idx, trial, m);
				n = m;
				removed = true;
			} else {
				start += chunk;
			}
		}
		if (!removed)
			chunk /= 2;
		else if (chunk > n / 2)
			chunk = n / 2;
	}
	return n;
}

/* ---------------------------------------------------------------- main */

struct shared *sh;
int probe_fd;				/* test_nopfn: module counters */
struct env env;

static uint64_t opt_seed;
static unsigned int opt_seconds = 10;

/* ran_enough's floors (see the top of this file) */
#define MIN_SEQ_PER_10S		10
#define MIN_OPS_PER_SEQ		5
static long opt_sequence = -1;
static char *opt_ops;

static void usage(const char *me)
{
	fprintf(stderr, "usage: %s [--seconds N] [--seed S] [--sequence I [--ops LIST]]\n",
		me);
	exit(KSFT_FAIL);
}

/*
 * How many times a uaccess that faults tries before it gives up with
 * EFAULT, at offset @off of a fresh mspec_cached page: each try is a
 * ->nopfn() call, and k injected allocation failures (NOPFN_OOM) make the
 * first k fail. The copy gives up after T failed tries: with k < T
 * injected it gets the page, with k >= T it is EFAULT; T is the smallest
 * k that fails it (x86-64 and arm64: 2; riscv64, arm, i386, s390x, mips:
 * 1; ppc64 at offset 4088: 3, where a copy with two injected failures got
 * its page and one with three was EFAULT after three ->nopfn() calls,
 * which a probe with one failure, telling 1 from more, modelled as 2).
 */
static int probe_uaccess_k(bool to_user, unsigned long off, int k)
{
	int fd = open(dev_file[D_CACHED], O_RDWR), pfd[2];
	uint64_t v = 1;
	char *m;
	long ret;

	if (fd < 0 || pipe2(pfd, O_NONBLOCK))
		ksft_exit_fail_msg("uaccess probe: %s\n", strerror(errno));
	m = mmap(NULL, psz, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
	if (m == MAP_FAILED || mspec_set_knob("fail_sigbus", 0) ||
	    mspec_set_knob("fail_next_alloc", k))
		ksft_exit_fail_msg("uaccess probe: %s\n", strerror(errno));
	if (to_user) {
		if (write(pfd[1], &v, 8) != 8)
			ksft_exit_fail_msg("uaccess probe: pipe\n");
		ret = read(pfd[0], m + off, 8);
	} else {
		ret = write(pfd[1], m + off, 8);
	}
	if (ret != 8 && !(ret == -1 && errno == EFAULT))
		ksft_exit_fail_msg("uaccess probe: %ld, %s\n", ret,
				   strerror(errno));
	mspec_set_knob("fail_next_alloc", 0);
	munmap(m, psz);
	close(fd);
	close(pfd[0]);
	close(pfd[1]);
	return ret == 8;
}

#define UACCESS_TRIES_MAX	8

static int probe_uaccess(bool to_user, unsigned long off)
{
	int k;

	for (k = 1; k <= UACCESS_TRIES_MAX; k++)
		if (!probe_uaccess_k(to_user, off, k))
			return k;
	ksft_exit_fail_msg("uaccess probe: a copy at offset %lu got its page after %d failed tries\n",
			   off, UACCESS_TRIES_MAX);
	return 0;
}

static void setup_env(void)
{
	struct utsname u;
	FILE *f;
	struct nopfn_test_stats s;
	struct nopfn_test_pages req = {
		.first = 0, .count = 1, .behaviour = NOPFN_TEST_CARVE,
	};
	unsigned long span;
	char *r;
	int i;

	/*
	 * riscv64's sys_mmap and 64-bit mips's mips_mmap take a signed off_t
	 * and shift it arithmetically (arch/riscv/kernel/sys_riscv.c,
	 * arch/mips/kernel/syscall.c): an offset with the top bit set is a
	 * negative pgoff there (EOVERFLOW), a large one elsewhere.
	 */
	env.signed_off = !uname(&u) && (!strcmp(u.machine, "riscv64") ||
					!strcmp(u.machine, "mips64"));
	/*
	 * Since Linux 6.9 ("mm/madvise: make MADV_POPULATE_(READ|WRITE)
	 * handle VM_FAULT_RETRY properly") do_madvise() hands the populate
	 * advices to madvise_populate() instead of madvise_walk_vmas(): the
	 * first hole (ENOMEM) or refused VMA (EINVAL) ends the call, where
	 * 6.1 remembers a hole and goes on to the VMAs after it.
	 */
	{
		unsigned int major = 0, minor = 0;

		if (sscanf(u.release, "%u.%u", &major, &minor) == 2)
			env.populate_walk = major > 6 ||
					    (major == 6 && minor >= 9);
	}
	env.overcommit = 0;
	f = fopen("/proc/sys/vm/overcommit_memory", "r");
	if (f) {
		if (fscanf(f, "%d", &env.overcommit) != 1)
			env.overcommit = 0;
		fclose(f);
	}
	f = fopen("/proc/meminfo", "r");
	if (!f || fscanf(f, "MemTotal: %lu kB", &env.ram_pages) != 1)
		ksft_exit_fail_msg("/proc/meminfo: no MemTotal\n");
	fclose(f);
	env.ram_pages = env.ram_pages * 1024 / psz;
	if (env.overcommit == 2)
		ksft_exit_skip("vm.overcommit_memory=2: private mappings not modelled\n");
	env.word_off[0] = 0;
	env.word_off[1] = 8;
	env.word_off[2] = psz / 2;
	env.word_off[3] = psz - 8;
	r = mmap(NULL, (ARENA + 2 * GUARD) * psz, PROT_NONE,
		 MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
	if (r == MAP_FAILED)
		ksft_exit_fail_msg("arena: %s\n", strerror(errno));
	env.arena = r + GUARD * psz;
	munmap(env.arena, ARENA * psz);
	for (i = 0; i < 3; i++) {
		void *p = mmap(NULL, huge_len[i], PROT_NONE,
			       MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE,
			       -1, 0);

		env.fits[i] = p != MAP_FAILED;
		if (p != MAP_FAILED)
			munmap(p, huge_len[i]);
	}
	probe_fd = open(dev_file[D_NOPFN], O_RDWR);
	if (probe_fd < 0 || ioctl(probe_fd, NOPFN_TEST_IOC_GET_STATS, &s))
		ksft_exit_fail_msg("test_nopfn: %s\n", strerror(errno));
	env.carve_pfn = s.carve_pfn;
	env.carve_pages = s.carve_pages;
	env.carve_err = 0;
	if (env.carve_pages &&
	    ioctl(probe_fd, NOPFN_TEST_IOC_SET_PAGES, &req))
		env.carve_err = errno;
	req.behaviour = NOPFN_TEST_RAM;
	ioctl(probe_fd, NOPFN_TEST_IOC_SET_PAGES, &req);
	for (i = 0; i < NW; i++) {
		uaccess_tries[i][0] = probe_uaccess(false, env.word_off[i]);
		uaccess_tries[i][1] = probe_uaccess(true, env.word_off[i]);
	}
	span = colour_span(probe_fd);
	if (!span)
		ksft_exit_fail_msg("colour probe: %s\n", strerror(errno));
	env.colour = span == (unsigned long)psz ? 0 : span - 1;
}

/*
 * Executable PTEs of PFNs without struct page: riscv64's __set_pte_at()
 * called flush_icache_pte() for every present executable PTE, which read
 * pte_page(pte)->flags, and oopsed on the test_nopfn carve-out (found by
 * this fuzzer; fixed by the series' first patch). The sequences map
 * test_nopfn executable everywhere; exec_carve_check() walks each path
 * that installs such a PTE (fault, mprotect(), fork(), mremap()) once:
 *
 * Map carve-out page 0 of a fresh test_nopfn file PROT_READ | PROT_EXEC
 * and install its PTE by each path that sets an executable PTE: the
 * fault, mprotect() back to executable, fork() (copy_page_range()) and
 * mremap() (move_ptes()), reading it after each. In a child, so that an
 * oops, which kills the task, is seen as its death. NULL when it went
 * through; else what went wrong, in @msg.
 */
static const char *exec_carve_check(char *msg, size_t size)
{
	struct nopfn_test_pages req = {
		.first = 0, .count = 1, .behaviour = NOPFN_TEST_CARVE,
	};
	int status;
	pid_t pid;

	if (!env.carve_pages || env.carve_err)
		return NULL;
	pid = fork();
	if (pid < 0) {
		snprintf(msg, size, "fork: %s", strerror(errno));
		return msg;
	}
	if (pid == 0) {
		volatile uint64_t *p, *q;
		uint64_t v;
		void *to;
		pid_t c;
		int fd;

		alarm(20);
		fd = open(dev_file[D_NOPFN], O_RDWR);
		if (fd < 0 || ioctl(fd, NOPFN_TEST_IOC_SET_PAGES, &req))
			_exit(10);
		p = mmap(NULL, psz, PROT_READ | PROT_EXEC, MAP_SHARED, fd, 0);
		if (p == MAP_FAILED)
			_exit(11);
		v = p[0];				/* the fault */
		if (mprotect((void *)p, psz, PROT_READ) ||
		    mprotect((void *)p, psz, PROT_READ | PROT_EXEC))
			_exit(12);
		if (p[0] != v)
			_exit(13);
		c = fork();				/* copy_page_range() */
		if (c == 0)
			_exit(p[0] == v ? 0 : 1);
		if (c < 0 || waitpid(c, &status, 0) != c ||
		    !WIFEXITED(status) || WEXITSTATUS(status))
			_exit(14);
		to = mmap(NULL, 2 * psz, PROT_NONE,
			  MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
		if (to == MAP_FAILED)
			_exit(15);
		q = mremap((void *)p, psz, psz, MREMAP_MAYMOVE | MREMAP_FIXED,
			   (char *)to + psz);		/* move_ptes() */
		if (q == MAP_FAILED || q[0] != v)
			_exit(16);
		_exit(0);
	}
	if (waitpid(pid, &status, 0) != pid) {
		snprintf(msg, size, "waitpid: %s", strerror(errno));
		return msg;
	}
	if (WIFEXITED(status) && !WEXITSTATUS(status))
		return NULL;
	if (WIFSIGNALED(status))
		snprintf(msg, size, "the task died of signal %d (an oops?)",
			 WTERMSIG(status));
	else
		snprintf(msg, size, "step %d failed (see exec_carve_check())",
			 WEXITSTATUS(status));
	return msg;
}

static void print_failure(uint64_t seed, unsigned long seq,
			  const struct op *ops, unsigned int n0,
			  struct run *first)
{
	unsigned char idx[MAXOPS];
	char list[MAXOPS * 4] = "";
	unsigned int i, n;
	struct run r;
	size_t len = 0;

	ksft_print_msg("FAILED: seed %llu sequence %lu: %s at operation #%d: %s\n",
		       (unsigned long long)seed, seq,
		       outcome_name[first->what], first->op, first->msg);
	for (i = 0; i < n0; i++)
		idx[i] = i;
	r = run_sequence(ops, idx, n0);
	if (r.what == PASS) {
		ksft_print_msg("the sequence passes when run again: not reproducible; its %u operations were:\n",
			       n0);
		for (i = 0; i < n0; i++)
			ksft_print_msg("  #%u %s\n", i, kind_name[ops[i].kind]);
		return;
	}
	ksft_print_msg("minimizing %u operations (at most 30 s)...\n", n0);
	n = minimize(ops, idx, n0);
	r = run_sequence(ops, idx, n);
	for (i = 0; i < n; i++)
		len += snprintf(list + len, sizeof(list) - len, "%s%u",
				i ? "," : "", idx[i]);
	ksft_print_msg("shortest: %u of %u operations (%u runs): %s at #%d: %s\n",
		       n, n0, min_runs, outcome_name[r.what], r.op, r.msg);
	ksft_print_msg("replay: mmap_fuzz --seed %llu --sequence %lu --ops %s\n",
		       (unsigned long long)seed, seq, list);
	for (i = 0; i < n; i++)
		if (sh->trace[i][0])
			ksft_print_msg("  %s\n", sh->trace[i]);
}

int main(int argc, char **argv)
{
	struct op ops[MAXOPS];
	unsigned char idx[MAXOPS];
	unsigned long seq, sequences = 0, ops_total = 0;
	uint64_t t0, deadline;
	unsigned int n, i;
	struct run r = { PASS, -1, "" };
	const char *exec_msg;
	char msg[MSG];
	bool failed = false;

	opt_seed = now_ns() ^ ((uint64_t)getpid() << 40);
	for (i = 1; i < (unsigned int)argc; i++) {
		if (i + 1 >= (unsigned int)argc)
			usage(argv[0]);
		if (!strcmp(argv[i], "--seconds"))
			opt_seconds = strtoul(argv[++i], NULL, 0);
		else if (!strcmp(argv[i], "--seed"))
			opt_seed = strtoull(argv[++i], NULL, 0);
		else if (!strcmp(argv[i], "--sequence"))
			opt_sequence = strtol(argv[++i], NULL, 0);
		else if (!strcmp(argv[i], "--ops"))
			opt_ops = argv[++i];
		else
			usage(argv[0]);
	}

	ksft_print_header();
	if (!have_mspec() || access(dev_file[D_NOPFN], R_OK | W_OK))
		ksft_exit_skip("mspec or test_nopfn module, or debugfs, not available\n");
	ksft_set_plan(5);
	ksft_print_msg("seed %llu, %u s\n", (unsigned long long)opt_seed,
		       opt_seconds);
	printf("# METRIC fuzz.seed %llu\n", (unsigned long long)opt_seed);

	sh = mmap(NULL, sizeof(*sh), PROT_READ | PROT_WRITE,
		  MAP_SHARED | MAP_ANONYMOUS, -1, 0);
	if (sh == MAP_FAILED)
		ksft_exit_fail_msg("shared memory: %s\n", strerror(errno));
	prctl(PR_SET_CHILD_SUBREAPER, 1);
	guard_install(guard_handler);
	setup_env();
	mspec_set_knob("fail_next_alloc", 0);
	mspec_set_knob("fail_sigbus", 0);
	read_counts(&cbase, false);
	kmsg_open(&km);
	ksft_print_msg("arena %p, %u pages; carve-out PFN %#lx, %lu pages%s; address space fits 1 GiB %d, 1 TiB %d, 64 TiB %d\n",
		       env.arena, ARENA, env.carve_pfn, env.carve_pages,
		       env.carve_err ? " (not usable)" : "", env.fits[0],
		       env.fits[1], env.fits[2]);
	ksft_print_msg("a failing uaccess tries, at offsets %lu %lu %lu %lu of a page: from user space %d %d %d %d times, to it %d %d %d %d; shared mappings' colour mask %#lx\n",
		       env.word_off[0], env.word_off[1], env.word_off[2],
		       env.word_off[3], uaccess_tries[0][0],
		       uaccess_tries[1][0], uaccess_tries[2][0],
		       uaccess_tries[3][0], uaccess_tries[0][1],
		       uaccess_tries[1][1], uaccess_tries[2][1],
		       uaccess_tries[3][1], env.colour);

	t0 = now_ns();
	deadline = t0 + opt_seconds * 1000000000ULL;
	for (seq = opt_sequence >= 0 ? (unsigned long)opt_sequence : 0;;
	     seq++) {
		gen_sequence(opt_seed, seq, ops, &n);
		if (opt_ops) {
			char *s = opt_ops, *e;
			unsigned int m = 0;

			while (*s && m < MAXOPS) {
				unsigned long v = strtoul(s, &e, 10);

				if (e == s || v >= n)
					usage(argv[0]);
				idx[m++] = v;
				s = *e ? e + 1 : e;
			}
			r = run_sequence(ops, idx, m);
			sequences++;
			ops_total += m;
			if (r.what != PASS) {
				failed = true;
				ksft_print_msg("%s at #%d: %s\n",
					       outcome_name[r.what], r.op,
					       r.msg);
			}
			for (i = 0; i < m; i++)
				ksft_print_msg("  %s\n", sh->trace[i]);
			break;
		}
		for (i = 0; i < n; i++)
			idx[i] = i;
		sh->ops_done = 0;
		r = run_sequence(ops, idx, n);
		sequences++;
		ops_total += sh->ops_done;
		if (r.what != PASS) {
			failed = true;
			print_failure(opt_seed, seq, ops, n, &r);
			break;
		}
		if (opt_sequence >= 0 || now_ns() >= deadline)
			break;
	}

	/* 1: every sequence matched the model. */
	if (failed)
		ksft_test_result_fail("sequences_match_model\n");
	else
		ksft_test_result_pass("sequences_match_model\n");

	/* 2: all counters back after the last process went. */
	if (counts_back(msg, sizeof(msg))) {
		ksft_test_result_pass("counters_back\n");
	} else {
		ksft_print_msg("%s\n", msg);
		ksft_test_result_fail("counters_back\n");
	}

	/* 4 first, so that an oops it provokes is in the log of 3. */
	exec_msg = exec_carve_check(msg, sizeof(msg));

	/* 3: nothing in the kernel log (the sequences report their own). */
	kmsg_scan(&km, allowed_reports);
	ksft_print_msg("kernel log: %lu new records\n", km.lines);
	if (km.fd < 0)
		ksft_test_result_skip("kernel_log_clean: no /dev/kmsg\n");
	else if (km.reports || r.what == KREPORT)
		ksft_test_result_fail("kernel_log_clean\n");
	else
		ksft_test_result_pass("kernel_log_clean\n");
	kmsg_close(&km);

	/* 4: executable PTEs of a PFN without struct page. */
	if (!env.carve_pages || env.carve_err) {
		ksft_test_result_skip("exec_mappings_without_struct_page: test_nopfn has no usable carve-out (carve_phys/carve_size not given, or %s)\n",
				      strerror(env.carve_err));
	} else if (exec_msg) {
		ksft_print_msg("exec_mappings_without_struct_page: %s\n",
			       exec_msg);
		ksft_test_result_fail("exec_mappings_without_struct_page\n");
	} else {
		ksft_test_result_pass("exec_mappings_without_struct_page\n");
	}

	/* 5: the run did something. */
	if (opt_sequence >= 0) {
		ksft_test_result_skip("ran_enough: a replay runs one sequence\n");
	} else if (failed) {
		ksft_test_result_skip("ran_enough: the run stopped at the failing sequence\n");
	} else {
		unsigned long want = MIN_SEQ_PER_10S * opt_seconds / 10;

		if (sequences < want || ops_total < MIN_OPS_PER_SEQ * sequences) {
			ksft_print_msg("ran_enough: %lu sequences (at least %lu), %lu operations (at least %d per sequence)\n",
				       sequences, want, ops_total,
				       MIN_OPS_PER_SEQ);
			ksft_test_result_fail("ran_enough\n");
		} else {
			ksft_test_result_pass("ran_enough\n");
		}
	}

	for (i = 0; i < NKINDS; i++)
		ksft_print_msg("%-9s %6lu done, %6lu succeeded\n", kind_name[i],
			       sh->kinds[i], sh->ok[i]);
	ksft_print_msg("accesses: %lu reached memory (%lu pages allocated by them), %lu SIGSEGV, %lu SIGBUS, %lu EFAULT\n",
		       sh->acc_data, sh->acc_fresh, sh->acc_segv, sh->acc_bus,
		       sh->acc_efault);
	printf("# METRIC fuzz.ops %lu ops\n", ops_total);
	printf("# METRIC fuzz.sequences %lu\n", sequences);
	printf("# METRIC fuzz.seconds %.3f s\n", (now_ns() - t0) / 1e9);
	printf("# METRIC fuzz.ops_per_s %.1f ops/s\n",
	       ops_total / ((now_ns() - t0) / 1e9));
	ksft_finished();
	return 0;
}
