// SPDX-License-Identifier: GPL-2.0
/*
 * mspec_stress: many threads in several processes hammer the three mspec
 * devices and /dev/test_nopfn at once, for a bounded time, while their
 * mappings are unmapped, mprotect()ed, remapped, forked, signalled and
 * killed under them and page allocations fail on purpose.
 *
 *   mspec_stress [--seconds N] [--threads N] [--procs N] [--seed S]
 *                [--inject-percent P] [--scale K]
 *
 * matrix-args: --seconds 10 --seed {seed} --scale {scale}
 * matrix-cases: all_operations_ran data_and_errno_checks worker_exits
 *   stopped_in_time mspec_counters_back nopfn_counters_back
 *   injected_failures_accounted kernel_fault_injection
 *   fresh_pages_zero_after kernel_log_clean
 *
 * --scale multiplies the time: a debug kernel (KASAN, lockdep, fault
 * injection) under TCG does some 40 times fewer operations a second.
 *
 * The controller (this process) forks --procs workers and replaces each one
 * that ends, until the time is up. A worker has --threads hammer threads and
 * its main thread, which sends them SIGUSR1 all the time and ends the worker
 * after a random lifetime: cleanly, or with exit_group() while its threads
 * are in the middle of faults; the controller also SIGKILLs workers and
 * SIGSTOPs/SIGCONTs them at random.
 *
 * Each hammer thread owns a few slots (address ranges the worker reserved
 * for it, between guard pages, so that no other mapping ever lands there)
 * and does, at random: map a device there (MAP_FIXED over what was there,
 * or after munmap()), touch pages (a fresh page must read all zero, then it
 * is filled with a pattern of the thread that is checked on every later
 * touch, and its PFN, read back from debugfs, must not change while it is
 * mapped), fork() a child that checks the pages, writes to them and
 * touches fresh ones (the parent must see the child's writes),
 * mprotect(PROT_READ) (a write must get SIGSEGV/ACCERR, the
 * data stays), madvise(MADV_DONTNEED) and friends (EINVAL on VM_PFNMAP,
 * data stays), mremap() (growing is refused with EFAULT, MREMAP_DONTUNMAP
 * with EINVAL, a move keeps the data), partial munmap() (the unmapped part
 * gets SIGSEGV/MAPERR). test_nopfn slots have pages that give SIGBUS
 * (SIGBUS with si_addr, every time), that fail once with NOPFN_OOM (SIGBUS
 * too, once: no memcg OOM here), that
 * wait 2-20 ms with or without mmap_lock (SIGUSR1 interrupts them:
 * NOPFN_REFAULT/NOPFN_RETRY), and pages of the carve-out (memory without
 * struct page; each thread has its own window of it).
 *
 * Each worker also has a pool of mappings that all its threads touch at
 * once, each thread its own word of each page, under a seqlock: one thread
 * replaces a pool mapping (mmap(MAP_FIXED) over it, or munmap() and a new
 * mmap(), or mprotect(PROT_READ) and back) while the others fault on it.
 * A touch that no replacement overlapped must find its own last write (or
 * zero in a new mapping) and must not get a signal.
 *
 * Allocation failures: the controller keeps injecting mspec failures
 * (/sys/kernel/debug/mspec/fail_next_alloc, fail_sigbus alternating): an
 * mspec touch may then get SIGBUS, never more often than failures were
 * used. On a kernel with fault injection (the debug variant), the hammer
 * threads also get fail_page_alloc and failslab failures (task-filter, so
 * only they are hit): syscalls may then fail with ENOMEM/EAGAIN, which is
 * tolerated (and the slot is thrown away), but nothing may crash or leak.
 *
 * At the end: every mspec counter (pages_in_use, mappings, pages_leaked)
 * and test_nopfn's module-wide counters (states, RAM pages) are back to
 * their start, the mspec failures counted match the ones injected, freshly
 * mapped pages of every device read zero, and the kernel log has no new
 * report. Each check is a KTAP result; "# METRIC" lines give the figures.
 *
 * The run is bounded: workers stop at the deadline, the controller kills
 * what is left after a grace period, and an alarm ends the controller
 * itself if it ever got stuck.
 */
#include "kselftest.h"
#include "kmsg_check.h"
#include "stress.h"

struct shared *sh;

/* ------------------------------------------------------------ options */

unsigned int opt_threads = 4;
static unsigned int opt_seconds = 10, opt_procs = 3;
static unsigned int opt_inject = 5, opt_scale = 1;
static uint64_t opt_seed;

static void usage(const char *me)
{
	fprintf(stderr, "usage: %s [--seconds N] [--threads N] [--procs N] [--seed S] [--inject-percent P] [--scale K]\n",
		me);
	exit(KSFT_FAIL);
}

static void parse_args(int argc, char **argv)
{
	int i;

	opt_seed = now_ns() ^ ((uint64_t)getpid() << 32);
	for (i = 1; i < argc; i++) {
		const char *v = i + 1 < argc ? argv[i + 1] : NULL;

		if (!v)
			usage(argv[0]);
		if (!strcmp(argv[i], "--seconds"))
			opt_seconds = strtoul(v, NULL, 0);
		else if (!strcmp(argv[i], "--threads"))
			opt_threads = strtoul(v, NULL, 0);
		else if (!strcmp(argv[i], "--procs"))
			opt_procs = strtoul(v, NULL, 0);
		else if (!strcmp(argv[i], "--seed"))
			opt_seed = strtoull(v, NULL, 0);
		else if (!strcmp(argv[i], "--inject-percent"))
			opt_inject = strtoul(v, NULL, 0);
		else if (!strcmp(argv[i], "--scale"))
			opt_scale = strtoul(v, NULL, 0);
		else
			usage(argv[0]);
		i++;
	}
	if (!opt_seconds || !opt_threads || opt_threads > MAX_THREADS ||
	    !opt_procs || opt_procs > MAX_PROCS || opt_inject > 100 ||
	    !opt_scale || opt_scale > 16)
		usage(argv[0]);
	opt_seconds *= opt_scale;
}

/* ============================================================ controller */

/* The controller: report a crash of its own before dying of it. */
static void controller_crash(int sig, siginfo_t *si, void *uc)
{
	crash_note("controller", sig, si, uc);
	signal(sig, SIG_DFL);
	raise(sig);
}

struct wslot {
	pid_t pid;
	unsigned int gen;
	bool killed;		/* by us, with SIGKILL */
};

static struct wslot workers[MAX_PROCS];
static volatile sig_atomic_t alarmed;

static void alarm_handler(int sig)
{
	unsigned int i;

	(void)sig;
	if (alarmed++) {
		static const char msg[] = "Bail out! mspec_stress: controller stuck\n";

		if (write(1, msg, sizeof(msg) - 1) < 0)
			_exit(KSFT_FAIL);
		_exit(KSFT_FAIL);
	}
	for (i = 0; i < MAX_PROCS; i++)
		if (workers[i].pid > 0)
			kill(workers[i].pid, SIGKILL);
	alarm(10);
}

static unsigned long unexpected_ends;
static char unexpected_first[240];

static void reaped(struct wslot *ws, int status)
{
	unsigned int w = ws - workers;
	int seen = sh->worker_seen[w].sig;

	sh->worker_seen[w].sig = 0;
	sh->worker_ends++;
	if (WIFEXITED(status) && WEXITSTATUS(status) == 0)
		goto out;
	if (WIFSIGNALED(status) && WTERMSIG(status) == SIGKILL &&
	    (ws->killed || sh->stop)) {
		atomic_add_ul(&sh->worker_end[END_KILLED], 1);
		goto out;
	}
	if (WIFSIGNALED(status) && WTERMSIG(status) == SIGSEGV &&
	    sh->worker_forced[w]) {
		sh->worker_forced[w] = 0;
		atomic_add_ul(&sh->worker_end[END_FORCED], 1);
		goto out;
	}
	if (seen) {
		/*
		 * The handler saw a fault that no guard expected and that the
		 * kernel did not force: a wild access, whatever the injection.
		 */
		atomic_add_ul(&sh->worker_end[END_OTHER], 1);
		if (!unexpected_ends++)
			snprintf(unexpected_first, sizeof(unexpected_first),
				 "worker %d: signal %d code %d at %p (pc %#lx) outside any guarded access (a wild access)",
				 ws->pid, seen, sh->worker_seen[w].code,
				 sh->worker_seen[w].addr, sh->worker_seen[w].pc);
		goto out;
	}
	/*
	 * With the kernel's fault injection on, a worker also dies of a
	 * SIGSEGV that its handler never saw: the kernel could not set up
	 * the frame of the SIGSEGV it forced either, so force_sigsegv()
	 * reset the handler. Tolerated, counted and bounded (see
	 * UNSEEN_MAX); a wild access runs the handler and is caught above;
	 * without kernel fault injection any such death is a failure.
	 */
	if (WIFSIGNALED(status) && WTERMSIG(status) == SIGSEGV &&
	    sh->kinject) {
		atomic_add_ul(&sh->unseen_segv, 1);
		atomic_add_ul(&sh->worker_end[END_FORCED], 1);
		goto out;
	}
	atomic_add_ul(&sh->worker_end[END_OTHER], 1);
	if (!unexpected_ends++)
		snprintf(unexpected_first, sizeof(unexpected_first),
			 "worker %d: %s %d", ws->pid,
			 WIFEXITED(status) ? "exit" : "signal",
			 WIFEXITED(status) ? WEXITSTATUS(status) :
			 WTERMSIG(status));
out:
	ws->pid = 0;
}

/* Every worker pid ever started: the leader of its process group. */
static pid_t groups[4096];
static unsigned int ngroups;

static pid_t spawn(unsigned int w, uint64_t seed, uint64_t deadline)
{
	uint64_t s = seed ^ ((uint64_t)w << 32 | workers[w].gen);
	pid_t pid;

	pid = fork();
	if (pid == 0) {
		setpgid(0, 0);	/* with its fork() children, to kill at once */
		splitmix64(&s);
		worker(w, workers[w].gen, s, deadline);
	}
	if (pid > 0) {
		setpgid(pid, pid);
		if (ngroups < ARRAY_SIZE(groups))
			groups[ngroups++] = pid;
		workers[w].pid = pid;
		workers[w].killed = false;
		workers[w].gen++;
	}
	return pid;
}

/*
 * Reap whatever ended: workers, and the fork() children of workers that
 * died before them (we are their subreaper). With @block, wait until no
 * worker is left or @until.
 */
static unsigned int reap(bool block, uint64_t until)
{
	unsigned int i, alive;
	int status;
	pid_t pid;

	for (;;) {
		while ((pid = waitpid(-1, &status, WNOHANG)) > 0)
			for (i = 0; i < opt_procs; i++)
				if (workers[i].pid == pid)
					reaped(&workers[i], status);
		alive = 0;
		for (i = 0; i < opt_procs; i++)
			if (workers[i].pid > 0)
				alive++;
		if (!block || !alive || now_ns() >= until)
			return alive;
		sleep_us(5000);
	}
}

/* Kill what is left of every worker's process group, reap it all. */
static bool reap_all(uint64_t until)
{
	unsigned int i;
	int status;
	pid_t pid;

	for (i = 0; i < ngroups; i++)
		kill(-groups[i], SIGKILL);
	for (;;) {
		pid = waitpid(-1, &status, WNOHANG);
		if (pid < 0 && errno == ECHILD)
			return true;
		if (pid > 0) {
			for (i = 0; i < opt_procs; i++)
				if (workers[i].pid == pid)
					reaped(&workers[i], status);
			continue;
		}
		if (now_ns() >= until)
			return false;
		sleep_us(5000);
	}
}

/* mspec failure injection: counts what was asked for. */
static unsigned long injected;

static void inject_tick(struct rng *r)
{
	unsigned int n;

	if (mspec_knob("fail_next_alloc") != 0)
		return;
	mspec_set_knob("fail_sigbus", below(r, 2));
	n = 1 + below(r, 3);
	if (!mspec_set_knob("fail_next_alloc", n))
		injected += n;
}

struct nopfn_counts {
	long states, ram;
};

static int nopfn_counts(int fd, struct nopfn_counts *c)
{
	struct nopfn_test_stats s;

	if (ioctl(fd, NOPFN_TEST_IOC_GET_STATS, &s))
		return -1;
	c->states = s.all_states;
	c->ram = s.all_ram_pages;
	return 0;
}

static void result(bool ok, const char *name, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));

static void result(bool ok, const char *name, const char *fmt, ...)
{
	va_list ap;

	if (!ok && fmt) {
		va_start(ap, fmt);
		printf("# %s: ", name);
		vprintf(fmt, ap);
		printf("\n");
		va_end(ap);
	}
	if (ok)
		ksft_test_result_pass("%s\n", name);
	else
		ksft_test_result_fail("%s\n", name);
}

static void result_skip(const char *name, const char *why)
{
	ksft_inc_xskip_cnt();
	printf("ok %u %s # SKIP %s\n", ksft_test_num(), name, why);
}

/* Every page of a fresh mapping of each device reads zero (fresh_word()). */
static bool sweep_zero(char *msg, size_t size)
{
	const unsigned long npages = 32;
	unsigned int d;

	for (d = 0; d < NDEV; d++) {
		uint64_t *p = map_dev(dev_file[d], npages * psz,
				      PROT_READ | PROT_WRITE, MAP_SHARED, 0);
		unsigned long i, n = npages * psz / 8;

		/* refused where it cannot be mapped: mspec_uncached.c */
		if (p == MAP_FAILED && d == D_UNCACHED && nmappable < NTYPES)
			continue;
		if (p == MAP_FAILED) {
			snprintf(msg, size, "mmap %s: %s", dev_file[d],
				 strerror(errno));
			return false;
		}
		for (i = 0; i < n; i++)
			if (peek64(&p[i]) != fresh_word(d, i * 8))
				break;
		if (i < n) {
			snprintf(msg, size, "%s word %lu = %#llx", dev_file[d],
				 i, (unsigned long long)peek64(&p[i]));
			munmap(p, npages * psz);
			return false;
		}
		munmap(p, npages * psz);
	}
	return true;
}

int main(int argc, char **argv)
{
	struct counters base[NTYPES], c[NTYPES];
	struct nopfn_counts nbase, nnow = { -1, -1 };
	struct kmsg_check km;
	struct sigaction sa = { 0 };
	struct nopfn_test_stats st;
	struct rng r;
	uint64_t t0, deadline, tend, total = 0;
	unsigned long remaining, failures_seen = 0;
	long kfi_used[2] = { -1, -1 };
	unsigned int i, t, alive;
	char msg[256];
	bool ok, orphans_gone;
	int nfd, fd;

	parse_args(argc, argv);
	ksft_print_header();
	ksft_print_msg("seed %llu, %u s, %u processes x %u threads\n",
		       (unsigned long long)opt_seed, opt_seconds, opt_procs,
		       opt_threads);
	if (!have_mspec() || access(dev_file[D_NOPFN], R_OK | W_OK))
		ksft_exit_skip("mspec or test_nopfn module, or debugfs, not available\n");
	ksft_set_plan(PLAN);
	rng_seed(&r, opt_seed);

	sh = mmap(NULL, sizeof(*sh), PROT_READ | PROT_WRITE,
		  MAP_SHARED | MAP_ANONYMOUS | MAP_POPULATE, -1, 0);
	if (sh == MAP_FAILED)
		ksft_exit_fail_msg("shared memory: %s\n", strerror(errno));
	prctl(PR_SET_CHILD_SUBREAPER, 1);
	fd = open(dev_file[D_CACHED], O_RDWR | O_CLOEXEC);
	sh->colour_span = fd < 0 ? 0 : colour_span(fd);
	if (!sh->colour_span)
		ksft_exit_fail_msg("colour probe of %s: %s\n",
				   dev_file[D_CACHED], strerror(errno));
	close(fd);
	if (sh->colour_span > (unsigned long)psz)
		ksft_print_msg("shared mappings start at a multiple of %#lx (data cache aliases)\n",
			       sh->colour_span);

	nfd = open(dev_file[D_NOPFN], O_RDWR | O_CLOEXEC);
	if (nfd < 0 || ioctl(nfd, NOPFN_TEST_IOC_GET_STATS, &st))
		ksft_exit_fail_msg("test_nopfn: %s\n", strerror(errno));
	/* Each hammer thread maps its own window of page indexes. */
	sh->carve_window = NOPFN_TEST_MAX_PAGES / (opt_procs * opt_threads);
	if (st.carve_pages && !set_pages(nfd, 0, 1, NOPFN_TEST_CARVE, 0)) {
		if (sh->carve_window > st.carve_pages /
		    (opt_procs * opt_threads))
			sh->carve_window = st.carve_pages /
					   (opt_procs * opt_threads);
		sh->carve_ok = 1;
		set_pages(nfd, 0, 1, NOPFN_TEST_RAM, 0);
	}
	/* Each window starts at a colour's first page (mips64el: 2 pages). */
	sh->carve_window -= sh->carve_window % (sh->colour_span / psz);
	if (sh->carve_window < SLOT_PAGES)
		ksft_exit_fail_msg("%u x %u threads: fewer than %u test_nopfn pages each\n",
				   opt_procs, opt_threads, SLOT_PAGES);
	if (!sh->carve_ok)
		ksft_print_msg("carve-out not usable: no NOPFN_TEST_CARVE pages\n");

	mspec_set_knob("fail_next_alloc", 0);
	mspec_set_knob("fail_sigbus", 0);
	for (t = 0; t < NTYPES; t++)
		if (read_counters(type_name[t], &base[t]))
			ksft_exit_fail_msg("read %s stats\n", type_name[t]);
	if (nopfn_counts(nfd, &nbase))
		ksft_exit_fail_msg("test_nopfn stats: %s\n", strerror(errno));
	kmsg_open(&km);

	sh->kinject = opt_inject && kfi_start(opt_inject);
	ksft_print_msg("kernel fault injection: %s\n", sh->kinject ?
		       "fail_page_alloc/failslab on the hammer threads" :
		       "not available (no /sys/kernel/debug/fail_page_alloc)");

	sa.sa_handler = alarm_handler;
	sigaction(SIGALRM, &sa, NULL);
	{
		struct sigaction crash = { .sa_sigaction = controller_crash,
					   .sa_flags = SA_SIGINFO };

		sigaction(SIGSEGV, &crash, NULL);
		sigaction(SIGBUS, &crash, NULL);
	}
	alarm(opt_seconds + 30);

	t0 = now_ns();
	deadline = t0 + opt_seconds * 1000000000ULL;
	for (i = 0; i < opt_procs; i++)
		if (spawn(i, opt_seed, deadline) < 0)
			ksft_exit_fail_msg("fork: %s\n", strerror(errno));
	while (now_ns() < deadline && !alarmed) {
		unsigned int k = below(&r, opt_procs);

		inject_tick(&r);
		reap(false, 0);
		for (i = 0; i < opt_procs; i++)
			if (workers[i].pid <= 0 &&
			    now_ns() + 300000000ULL < deadline)
				spawn(i, opt_seed, deadline);
		if (workers[k].pid > 0) {
			unsigned int what = below(&r, 200);

			if (what == 0) {
				workers[k].killed = true;
				kill(workers[k].pid, SIGKILL);
			} else if (what < 4) {
				kill(workers[k].pid, SIGSTOP);
				sleep_us(2000 + below(&r, 10000));
				kill(workers[k].pid, SIGCONT);
			}
		}
		sleep_us(10000);
	}
	sh->stop = 1;
	/* Grace: a fault waits at most 20 ms; TCG and the debug kernel. */
	alive = reap(true, now_ns() + 10000000000ULL);
	for (i = 0; i < opt_procs; i++)
		if (workers[i].pid > 0) {
			workers[i].killed = true;
			kill(workers[i].pid, SIGKILL);
		}
	if (alive)
		reap(true, now_ns() + 10000000000ULL);
	/* Orphaned fork() children of killed workers: alarm(10) at most. */
	orphans_gone = reap_all(now_ns() + 15000000000ULL);
	tend = now_ns();
	alarm(0);

	kfi_stop(kfi_used);
	remaining = mspec_knob("fail_next_alloc");
	mspec_set_knob("fail_next_alloc", 0);
	mspec_set_knob("fail_sigbus", 0);

	for (i = 0; i < NOPS; i++)
		total += sh->ops[i];

	/*
	 * 1: it did what it says, every kind of operation, and each kind
	 * more than by accident: at least OPS_KIND_MIN times and a
	 * twentieth of an even share (the rarest kind measured, race_replace
	 * on x86_64-debug, had 1.5% of the operations, against the 0.5% this
	 * asks).
	 */
	ok = total > 0;
	for (i = 0; i < NOPS; i++) {
		unsigned long long want = total / (NOPS * 20);

		if (want < OPS_KIND_MIN)
			want = OPS_KIND_MIN;
		if (sh->ops[i] < want) {
			ok = false;
			ksft_print_msg("%lu %s operations ran, of %llu: at least %llu wanted\n",
				       sh->ops[i], op_name[i],
				       (unsigned long long)total, want);
		}
	}
	result(ok, "all_operations_ran", "%llu operations",
	       (unsigned long long)total);

	/* 2: every data and errno check of every thread and child. */
	failures_seen = sh->failures;
	result(!failures_seen, "data_and_errno_checks", "%lu failed, first: %s",
	       failures_seen, sh->first_failure);

	/*
	 * 3: workers ended as they were told to; deaths of a SIGSEGV no
	 * handler saw (kernel fault injection only) stay rare: at most
	 * UNSEEN_MAX, and at most one reaped worker in UNSEEN_SHARE.
	 */
	if (sh->unseen_segv > UNSEEN_MAX ||
	    sh->unseen_segv * UNSEEN_SHARE > sh->worker_ends) {
		if (!unexpected_ends++)
			snprintf(unexpected_first, sizeof(unexpected_first),
				 "%lu of %lu workers died of a SIGSEGV no handler saw (bound: %d, and 1 in %d)",
				 sh->unseen_segv, sh->worker_ends, UNSEEN_MAX,
				 UNSEEN_SHARE);
	}
	result(!unexpected_ends, "worker_exits", "%lu unexpected, first: %s",
	       unexpected_ends, unexpected_first);

	/* 4: bounded. */
	ok = true;
	for (i = 0; i < opt_procs; i++)
		if (workers[i].pid > 0)
			ok = false;
	result(ok && !alarmed && orphans_gone, "stopped_in_time",
	       "workers or their children left, or the alarm fired");

	/*
	 * 5, 6: counters back where they started. Exit and fput() of the
	 * workers' files are over once they are reaped, but give deferred
	 * work a moment.
	 */
	for (i = 0; i < 100; i++) {
		ok = true;
		for (t = 0; t < NTYPES; t++) {
			read_counters(type_name[t], &c[t]);
			if (c[t].in_use != base[t].in_use ||
			    c[t].mappings != base[t].mappings)
				ok = false;
		}
		if (ok)
			break;
		sleep_us(20000);
	}
	msg[0] = 0;
	for (t = 0; t < NTYPES; t++) {
		if (c[t].in_use != base[t].in_use ||
		    c[t].mappings != base[t].mappings ||
		    c[t].leaked != base[t].leaked ||
		    c[t].allocated - base[t].allocated !=
		    c[t].freed - base[t].freed) {
			snprintf(msg, sizeof(msg),
				 "%s: in_use %ld->%ld mappings %ld->%ld leaked %ld->%ld allocated +%ld freed +%ld",
				 type_name[t], base[t].in_use, c[t].in_use,
				 base[t].mappings, c[t].mappings,
				 base[t].leaked, c[t].leaked,
				 c[t].allocated - base[t].allocated,
				 c[t].freed - base[t].freed);
		}
		ksft_print_msg("%s: %ld faults, %ld pages allocated, %ld races, %ld allocation failures\n",
			       type_name[t], c[t].faults - base[t].faults,
			       c[t].allocated - base[t].allocated,
			       c[t].races - base[t].races,
			       c[t].failures - base[t].failures);
	}
	result(!msg[0], "mspec_counters_back", "%s", msg);

	for (i = 0; i < 100; i++) {
		if (!nopfn_counts(nfd, &nnow) && nnow.states == nbase.states &&
		    nnow.ram == nbase.ram)
			break;
		sleep_us(20000);
	}
	result(nnow.states == nbase.states && nnow.ram == nbase.ram,
	       "nopfn_counters_back", "states %ld->%ld, RAM pages %ld->%ld",
	       nbase.states, nnow.states, nbase.ram, nnow.ram);

	/*
	 * 7: each mspec failure counted was injected, SIGBUS only for them.
	 * Under kernel fault injection the driver's own page allocations
	 * fail too: they are counted as well, and NOPFN_OOM outside a memcg
	 * OOM is SIGBUS, so there each SIGBUS must be one counted failure.
	 */
	{
		unsigned long used = injected - (remaining > 0 ? remaining : 0);
		long counted = 0;

		for (t = 0; t < NTYPES; t++)
			counted += c[t].failures - base[t].failures;
		if (sh->kinject)
			ok = counted >= (long)used &&
			     sh->mspec_sigbus <= (unsigned long)counted;
		else
			ok = counted == (long)used && sh->mspec_sigbus <= used;
		ok = ok && used > 0;
		result(ok, "injected_failures_accounted",
		       "%lu injected, %lu used, %ld counted, %lu SIGBUS",
		       injected, used, counted, sh->mspec_sigbus);
		ksft_print_msg("mspec failures: %lu injected, %lu used, %ld counted, %lu gave SIGBUS\n",
			       injected, used, counted, sh->mspec_sigbus);
	}

	/* 8: the kernel's fault injection hit the threads. */
	if (!sh->kinject) {
		result_skip("kernel_fault_injection",
			    "no fail_page_alloc/failslab in debugfs");
	} else {
		ksft_print_msg("kernel fault injection: %ld page allocations and %ld slab allocations failed, %lu ENOMEM/EAGAIN tolerated, %lu forced SIGSEGV (%lu killed a worker, %lu unseen by a handler), %lu SIGSEGV without siginfo resumed\n",
			       kfi_used[0], kfi_used[1], sh->tolerated,
			       sh->forced_segv, sh->worker_end[END_FORCED],
			       sh->unseen_segv, sh->lost_info_segv);
		ksft_print_msg("kernel fault injection: %lu touches of test_nopfn RAM pages got SIGBUS (its page allocation failed: NOPFN_OOM)\n",
			       sh->nopfn_kinject_sigbus);
		result(kfi_used[0] > 0 || kfi_used[1] > 0,
		       "kernel_fault_injection", "no failure was injected");
	}

	/* 9: pages that came back are handed out zeroed again. */
	result(sweep_zero(msg, sizeof(msg)), "fresh_pages_zero_after", "%s",
	       msg);

	/* 10: nothing in the kernel log. */
	{
		long reports = kmsg_scan(&km, NULL);

		if (reports < 0) {
			result_skip("kernel_log_clean", "no /dev/kmsg");
		} else {
			ksft_print_msg("kernel log: %lu new records, %ld reports\n",
				       km.lines, reports);
			result(reports == 0, "kernel_log_clean",
			       "%ld reports, first: %s", reports, km.first);
		}
	}
	kmsg_close(&km);

	/* Counters back also after the sweep. */
	for (t = 0; t < NTYPES; t++) {
		read_counters(type_name[t], &c[t]);
		if (c[t].in_use != base[t].in_use)
			ksft_print_msg("%s: pages_in_use %ld after the sweep, %ld at the start\n",
				       type_name[t], c[t].in_use,
				       base[t].in_use);
	}
	close(nfd);

	ksft_print_msg("ops: %llu in %.2f s; worker ends: %lu clean, %lu exit_group, %lu killed, %lu other\n",
		       (unsigned long long)total, (tend - t0) / 1e9,
		       sh->worker_end[END_CLEAN], sh->worker_end[END_EXIT_GROUP],
		       sh->worker_end[END_KILLED], sh->worker_end[END_OTHER]);
	ksft_print_msg("test_nopfn: %lu NOPFN_REFAULT, %lu NOPFN_RETRY, %lu NOPFN_OOM, %lu NOPFN_SIGBUS; %lu SIGUSR1 handled; %lu race windows\n",
		       sh->refault, sh->retry, sh->oom, sh->sigbus_ret,
		       sh->usr1_got, sh->race_windows);
	printf("# METRIC stress.seed %llu\n", (unsigned long long)opt_seed);
	printf("# METRIC stress.ops %llu ops\n", (unsigned long long)total);
	printf("# METRIC stress.seconds %.3f s\n", (tend - t0) / 1e9);
	printf("# METRIC stress.ops_per_s %.1f ops/s\n",
	       total / ((tend - t0) / 1e9));
	for (i = 0; i < NOPS; i++)
		printf("# METRIC stress.op.%s %lu ops\n", op_name[i],
		       sh->ops[i]);
	printf("# METRIC stress.fresh_pages %lu pages\n", sh->fresh_pages);
	printf("# METRIC stress.children %lu\n", sh->children);
	printf("# METRIC stress.mspec_sigbus %lu\n", sh->mspec_sigbus);
	printf("# METRIC stress.nopfn_refault %lu\n", sh->refault);
	printf("# METRIC stress.nopfn_retry %lu\n", sh->retry);
	printf("# METRIC stress.tolerated %lu\n", sh->tolerated);
	if (sh->kinject)
		printf("# METRIC stress.kernel_injected %ld\n",
		       (kfi_used[0] > 0 ? kfi_used[0] : 0) +
		       (kfi_used[1] > 0 ? kfi_used[1] : 0));
	ksft_finished();
	return 0;
}
