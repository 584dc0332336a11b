// SPDX-License-Identifier: GPL-2.0
/*
 * mspec: fetchop variables of /dev/sgi_fetchop through mspec_fetchop.h.
 *
 *  - the SN2 layout: 64-byte variables, operation offsets; a plain load at
 *    an operation offset reads FETCHOP_NO_AMO and does nothing;
 *  - each operation gives the exact result (load; increment, decrement and
 *    clear return the old value; store, and, or) and touches only its own
 *    variable;
 *  - several processes with several threads each hammering the same
 *    variables (on two pages) lose no update: the final values are exact,
 *    the old values that increment returned are all different (their sum
 *    is 0 + 1 + ... + n - 1), and what clear took away plus what is left is
 *    exactly what was added; the workers start together and go on until
 *    they have interleaved (at least 64 increments preceded by another
 *    worker's), or the exact totals would prove nothing.
 */
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <sched.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>
#include <linux/types.h>

/* 6.1's harness macros have unused parameters of their own. */
#pragma GCC diagnostic ignored "-Wunused-parameter"
#include "kselftest_harness.h"
#include "crash.h"
#include "mspec_fetchop.h"
#include "mspec_test.h"

TEST(layout)
{
	if (!have_mspec())
		SKIP(return, NO_MSPEC);
	ASSERT_EQ(64, FETCHOP_VAR_SIZE);
	ASSERT_EQ(64UL, sizeof(struct fetchop_var));
	ASSERT_EQ(0UL, offsetof(struct fetchop_var, value));
	ASSERT_EQ(0, FETCHOP_LOAD);
	ASSERT_EQ(8, FETCHOP_INCREMENT);
	ASSERT_EQ(16, FETCHOP_DECREMENT);
	ASSERT_EQ(24, FETCHOP_CLEAR);
	ASSERT_EQ(0, FETCHOP_STORE);
	ASSERT_EQ(24, FETCHOP_AND);
	ASSERT_EQ(32, FETCHOP_OR);
	ASSERT_EQ(psz / 64, FETCHOP_VARS_PER_PAGE(psz));
	ASSERT_EQ(0, strcmp(FETCHOP_FULLNAME, dev_path[0]));
}

/*
 * Every word of the mapping other than variable @var's value is as fresh:
 * the other values zero, the words at the SN2 operation offsets
 * FETCHOP_NO_AMO.
 */
static bool others_fresh(const void *map, size_t len, unsigned long var)
{
	const __u64 *w = map;
	size_t i;

	for (i = 0; i < len / sizeof(*w); i++) {
		if (i == var * FETCHOP_VAR_SIZE / sizeof(*w))
			continue;
		if (w[i] != fresh_word(0, i * sizeof(*w)))
			return false;
	}
	return true;
}

TEST(operations)
{
	const unsigned long var = 3;
	struct fetchop_var *v;
	void *map;

	if (!have_mspec())
		SKIP(return, NO_MSPEC);
	map = map_rw(FETCHOP_FULLNAME, psz);
	ASSERT_NE(MAP_FAILED, map);
	v = fetchop_var(map, var);
	ASSERT_EQ((char *)map + 3 * 64, (char *)v);

	ASSERT_EQ(0, fetchop_load(v));		/* first touch: zero */
	fetchop_store(v, 5);
	ASSERT_EQ(5, fetchop_load(v));
	ASSERT_EQ(5, fetchop_increment(v));
	ASSERT_EQ(6, fetchop_load(v));
	ASSERT_EQ(6, fetchop_decrement(v));
	ASSERT_EQ(5, fetchop_decrement(v));
	ASSERT_EQ(4, fetchop_load(v));
	ASSERT_EQ(4, fetchop_clear(v));
	ASSERT_EQ(0, fetchop_load(v));
	ASSERT_EQ(0, fetchop_clear(v));

	fetchop_store(v, 0xf0);
	fetchop_and(v, 0x3c);
	ASSERT_EQ(0x30, fetchop_load(v));
	fetchop_or(v, 0x0f);
	ASSERT_EQ(0x3f, fetchop_load(v));

	/* Signed 64-bit values, wrapping through zero. */
	fetchop_store(v, -1);
	ASSERT_EQ(-1, fetchop_increment(v));
	ASSERT_EQ(0, fetchop_decrement(v));
	ASSERT_EQ(-1, fetchop_load(v));
	fetchop_store(v, INT64_MAX);
	ASSERT_EQ(INT64_MAX, fetchop_load(v));
	fetchop_or(v, INT64_MIN);
	ASSERT_EQ(-1, fetchop_load(v));
	fetchop_and(v, 0x0123456789abcdefLL);
	ASSERT_EQ(0x0123456789abcdefLL, fetchop_load(v));

	/* Nothing but the value word of the variable changed. */
	ASSERT_TRUE(others_fresh(map, psz, var));
	ASSERT_EQ(0x0123456789abcdefLL, v->value);
	munmap(map, psz);
}

#define NPROC		3
#define NTHREAD		2
#define NWORKERS	(NPROC * NTHREAD)
/*
 * Each worker makes at least NITER rounds, and goes on (for up to
 * MAX_SECONDS, at least MIN_SECONDS) until the workers have interleaved
 * MIN_INTERLEAVED times:
 * an increment whose old value is not the worker's previous one plus one
 * had another worker's increment in between. Without interleaving a lost
 * update could not happen, and the exact totals would prove nothing. A
 * bound in time, not in rounds: on one CPU (m68k, mips on Malta, s390x
 * here) workers interleave only where the scheduler preempts one, a few
 * hundred times a second, whatever the rounds cost (m68k: 28 times in a
 * million rounds each, when the bound was a million rounds).
 */
#define NITER		4000
#define MAX_SECONDS	60
#define MIN_INTERLEAVED	64UL
/*
 * And for at least MIN_SECONDS: a lost update needs two workers' load and
 * store to overlap on two CPUs at once, which interleaving alone does not
 * prove. Under TCG on a loaded host the vCPU threads share few moments:
 * a non-atomic increment lost 3 of 8000 rounds in one run and none in the
 * next (x86_64, two vCPUs); a second of rounds is a few hundred thousand.
 */
#define MIN_SECONDS	1

/* Per worker results, in a MAP_SHARED anonymous page. */
struct results {
	__s64 inc_sum[NWORKERS];	/* sum of the old values of increment */
	__s64 cleared[NWORKERS];	/* sum of what clear returned */
	__s64 add_total[NWORKERS];	/* rounds: increments of each variable */
	unsigned int ready;		/* workers at the start line */
	unsigned long interleaved;	/* increments another one preceded */
};

struct worker {
	void *map;
	struct results *res;
	unsigned int id;
	unsigned int nworkers;		/* to wait for at the start line */
};

static bool go_on(struct results *res, unsigned int i,
		  const struct timespec *start)
{
	struct timespec ts;
	long long ms;

	if (i < NITER || i % 1024)
		return true;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	ms = (ts.tv_sec - start->tv_sec) * 1000LL +
	     (ts.tv_nsec - start->tv_nsec) / 1000000;
	if (ms < MIN_SECONDS * 1000LL)
		return true;
	return __atomic_load_n(&res->interleaved, __ATOMIC_RELAXED) <
	       MIN_INTERLEAVED && ms < MAX_SECONDS * 1000LL;
}

/* Variables: two on the first page, two on the second. */
static unsigned long var_index(unsigned int n)
{
	unsigned long per_page = FETCHOP_VARS_PER_PAGE(psz);

	return n < 2 ? n * 5 : per_page + (n - 2) * 7;
}

static void *hammer(void *arg)
{
	struct worker *w = arg;
	struct fetchop_var *inc = fetchop_var(w->map, var_index(0));
	struct fetchop_var *dec = fetchop_var(w->map, var_index(1));
	struct fetchop_var *bits = fetchop_var(w->map, var_index(2));
	struct fetchop_var *acc = fetchop_var(w->map, var_index(3));
	__s64 inc_sum = 0, cleared = 0, added = 0, old, last = 0;
	struct timespec ts;
	unsigned int i;

	report_fatal_signals_on_own_stack();
	/* All start together, so that they really overlap. */
	__atomic_fetch_add(&w->res->ready, 1, __ATOMIC_SEQ_CST);
	while (__atomic_load_n(&w->res->ready, __ATOMIC_SEQ_CST) < w->nworkers)
		sched_yield();
	clock_gettime(CLOCK_MONOTONIC, &ts);
	for (i = 0; go_on(w->res, i, &ts); i++) {
		old = fetchop_increment(inc);
		if (i && old != last + 1)
			__atomic_fetch_add(&w->res->interleaved, 1,
					   __ATOMIC_RELAXED);
		last = old;
		inc_sum += old;
		fetchop_decrement(dec);
		fetchop_increment(acc);
		added++;
		if (i % 97 == w->id)
			cleared += fetchop_clear(acc);
		/* Set this worker's bit of the high half, clear its low one. */
		fetchop_or(bits, 1LL << (32 + w->id));
		fetchop_and(bits, ~(1LL << w->id));
	}
	w->res->inc_sum[w->id] = inc_sum;
	w->res->cleared[w->id] = cleared;
	w->res->add_total[w->id] = added;
	return NULL;
}

static int run_workers(void *map, struct results *res, unsigned int proc,
		       unsigned int nworkers)
{
	struct worker w[NTHREAD];
	pthread_t th[NTHREAD];
	unsigned int i;

	for (i = 0; i < NTHREAD; i++) {
		w[i] = (struct worker){ map, res, proc * NTHREAD + i,
					nworkers };
		errno = pthread_create(&th[i], NULL, hammer, &w[i]);
		if (errno) {
			fprintf(stderr, "# worker %u: pthread_create: %s\n",
				w[i].id, strerror(errno));
			return -1;
		}
	}
	for (i = 0; i < NTHREAD; i++)
		pthread_join(th[i], NULL);
	return 0;
}

/*
 * The device emulates the SN2 operations through the header's functions
 * only: a plain load at an SN2 operation offset, as an SN2 program would
 * do it, reads FETCHOP_NO_AMO (not a plausible old value) and changes
 * nothing.
 */
TEST(sn2_offset_loads_read_no_amo)
{
	static const int ops[] = { FETCHOP_INCREMENT, FETCHOP_DECREMENT,
				   FETCHOP_CLEAR };
	struct fetchop_var *v;
	unsigned int i;
	void *map;

	if (!have_mspec())
		SKIP(return, NO_MSPEC);
	map = map_rw(dev_path[0], psz);
	ASSERT_NE(MAP_FAILED, map);
	v = fetchop_var(map, 3);
	for (i = 0; i < 3; i++) {
		__u64 got = peek64((char *)v + ops[i]);

		EXPECT_EQ(FETCHOP_NO_AMO, got)
			TH_LOG("load at +%d read %#llx", ops[i],
			       (unsigned long long)got);
	}
	EXPECT_EQ(0, fetchop_load(v));
	EXPECT_EQ(0, fetchop_increment(v));
	EXPECT_EQ(FETCHOP_NO_AMO, peek64((char *)v + FETCHOP_INCREMENT));
	EXPECT_EQ(1, fetchop_load(v));
	EXPECT_TRUE(others_fresh(map, psz, 3));
	munmap(map, psz);
}

TEST(processes_hammer_same_variables)
{
	__s64 n = 0, inc_sum = 0, cleared = 0, low_bits;
	struct counters base, c;
	struct results *res;
	pid_t pid[NPROC];
	unsigned int p, k;
	void *map;

	if (!have_mspec())
		SKIP(return, NO_MSPEC);
	report_fatal_signals();
	ASSERT_EQ(0, read_counters(type_name[0], &base));
	map = map_rw(FETCHOP_FULLNAME, 2 * psz);
	ASSERT_NE(MAP_FAILED, map);
	res = mmap(NULL, sizeof(*res), PROT_READ | PROT_WRITE,
		   MAP_SHARED | MAP_ANONYMOUS, -1, 0);
	ASSERT_NE(MAP_FAILED, res);

	low_bits = (1LL << NWORKERS) - 1;
	fetchop_store(fetchop_var(map, var_index(2)), low_bits);

	for (p = 0; p < NPROC; p++) {
		pid[p] = fork();
		ASSERT_LE(0, pid[p]);
		if (pid[p] == 0)
			_exit(run_workers(map, res, p, NWORKERS) ? 1 : 0);
	}
	for (p = 0; p < NPROC; p++) {
		int status;

		ASSERT_EQ(pid[p], waitpid(pid[p], &status, 0));
		ASSERT_TRUE(WIFEXITED(status) && WEXITSTATUS(status) == 0)
			TH_LOG("process %u: %s %d", p,
			       WIFEXITED(status) ? "exit status" : "signal",
			       WIFEXITED(status) ? WEXITSTATUS(status) :
			       WTERMSIG(status));
	}

	for (k = 0; k < NWORKERS; k++) {
		inc_sum += res->inc_sum[k];
		cleared += res->cleared[k];
		n += res->add_total[k];
	}
	EXPECT_LE(MIN_INTERLEAVED, res->interleaved)
		TH_LOG("the workers interleaved %lu times in %lld increments",
		       res->interleaved, (long long)n);
	EXPECT_EQ(n, fetchop_load(fetchop_var(map, var_index(0))));
	/* Every old value 0 .. n - 1 was returned exactly once. */
	EXPECT_EQ(n * (n - 1) / 2, inc_sum);
	EXPECT_EQ(-n, fetchop_load(fetchop_var(map, var_index(1))));
	EXPECT_EQ(low_bits << 32, fetchop_load(fetchop_var(map, var_index(2))));
	EXPECT_EQ(n, cleared + fetchop_load(fetchop_var(map, var_index(3))));

	/* Two pages, shared by all, given back at the end. */
	ASSERT_EQ(0, read_counters(type_name[0], &c));
	EXPECT_EQ(base.in_use + 2, c.in_use);
	munmap(res, sizeof(*res));
	munmap(map, 2 * psz);
	ASSERT_EQ(0, read_counters(type_name[0], &c));
	EXPECT_EQ(base.in_use, c.in_use);
	EXPECT_EQ(base.mappings, c.mappings);
}

/* Threads of one process on one variable. */
TEST(threads_hammer_one_variable)
{
	__s64 n = 0, inc_sum = 0, cleared = 0;
	struct results res;
	unsigned int k;
	void *map;

	if (!have_mspec())
		SKIP(return, NO_MSPEC);
	report_fatal_signals();
	memset(&res, 0, sizeof(res));
	map = map_rw(FETCHOP_FULLNAME, 2 * psz);
	ASSERT_NE(MAP_FAILED, map);
	fetchop_store(fetchop_var(map, var_index(2)), (1LL << NTHREAD) - 1);
	ASSERT_EQ(0, run_workers(map, &res, 0, NTHREAD));
	for (k = 0; k < NTHREAD; k++) {
		inc_sum += res.inc_sum[k];
		cleared += res.cleared[k];
		n += res.add_total[k];
	}
	EXPECT_LE(MIN_INTERLEAVED, res.interleaved)
		TH_LOG("the threads interleaved %lu times in %lld increments",
		       res.interleaved, (long long)n);
	EXPECT_EQ(n, fetchop_load(fetchop_var(map, var_index(0))));
	EXPECT_EQ(n * (n - 1) / 2, inc_sum);
	EXPECT_EQ(-n, fetchop_load(fetchop_var(map, var_index(1))));
	EXPECT_EQ(((1LL << NTHREAD) - 1) << 32,
		  fetchop_load(fetchop_var(map, var_index(2))));
	EXPECT_EQ(n, cleared + fetchop_load(fetchop_var(map, var_index(3))));
	munmap(map, 2 * psz);
}

TEST_HARNESS_MAIN
