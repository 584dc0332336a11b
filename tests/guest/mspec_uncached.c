// SPDX-License-Identifier: GPL-2.0
/*
 * mspec: the memory type of the user mappings, read back from the page
 * tables through /sys/kernel/debug/mspec/pte (follow_pte() on the
 * caller's mm), not assumed.
 *
 *  x86_64, i686  mspec_uncached PTE is UC- (or UC) in the PAT, and so is
 *           the kernel's linear-map alias of the page (set_memory_uc());
 *           cached and fetchop PTEs are WB.
 *  aarch64  mspec_uncached PTE is Normal-NC; cached and fetchop Normal.
 *  armv7l   mspec_uncached PTE is Normal-NC (L_PTE_MT_BUFFERABLE);
 *           cached and fetchop WB or WBWA.
 *  riscv64  with Svpbmt, mspec_uncached PTE has PBMT NC; cached and
 *           fetchop PMA.  Without Svpbmt (not in the isa line of
 *           /proc/cpuinfo, and the driver says "noncached 0") the device
 *           must refuse mmap() with ENODEV; with it the checks must pass.
 *  ppc64le  mspec_uncached PTE is caching-inhibited and guarded; cached
 *           and fetchop cacheable.
 *  mips, mips64  mspec_uncached PTE has CCA 2 (UC), cached and fetchop a
 *           cacheable CCA; where the CPU has an L2 the driver cannot
 *           flush, mspec_uncached must refuse mmap() with ENODEV.
 *  s390x    no memory types: mspec_uncached must refuse mmap() with
 *           ENODEV; cached and fetchop are cacheable.
 *  others   the generic back end: mspec_uncached must refuse mmap() with
 *           ENODEV; the PTE checks are skipped, saying so.
 *
 * Where the uncached device refuses, uncached_refused asserts it and the
 * checks of uncached PTEs skip, naming that test.
 *
 * The machine is told by uname(), at run time.
 *
 * The type survives what the VM does to a mapping: a split by mprotect()
 * and back, and a fault in a fork()ed child. On x86 a freed uncached page
 * goes back to the allocator with a write-back kernel alias.
 */
#include <errno.h>
#include <sched.h>
#include <fcntl.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/utsname.h>
#include <sys/wait.h>
#include <unistd.h>
#include <linux/types.h>

/* 6.1's harness macros have unused parameters of their own. */
#pragma GCC diagnostic ignored "-Wunused-parameter"
#include "kselftest_harness.h"
#include "mspec_test.h"

#define NFREED		8	/* pages of freed_uncached_alias_is_write_back */

struct pte_info {
	unsigned long long pte;
	unsigned long pfn;
	char memtype[32];
	int noncached;
	char alias[32];
	int alias_noncached;
	char device[16];
};

/* 0, or -errno of the debugfs pte file. */
static int pte_query(const void *addr, struct pte_info *pi)
{
	char buf[512], *s, *save;
	int parsed = 0;

	memset(pi, 0, sizeof(*pi));
	if (pte_ask(addr, buf, sizeof(buf)) < 0)
		return -errno;
	for (s = strtok_r(buf, "\n", &save); s; s = strtok_r(NULL, "\n", &save)) {
		if (sscanf(s, "pte %llx", &pi->pte) == 1 ||
		    sscanf(s, "pfn %lx", &pi->pfn) == 1 ||
		    sscanf(s, "memtype %31s", pi->memtype) == 1 ||
		    sscanf(s, "noncached %d", &pi->noncached) == 1 ||
		    sscanf(s, "alias_memtype %31s", pi->alias) == 1 ||
		    sscanf(s, "alias_noncached %d", &pi->alias_noncached) == 1 ||
		    sscanf(s, "device %15s", pi->device) == 1)
			parsed++;
	}
	return parsed >= 7 ? 0 : -EPROTO;
}

/* What the page tables must say, by machine (uname -m). */
struct expect {
	const char *machine;
	const char *uncached[2];	/* acceptable mspec_uncached types */
	const char *cached[2];		/* acceptable cached/fetchop types */
	bool always;			/* uncached whatever the CPU options */
	bool alias;			/* the kernel alias is checked too */
	bool refused;			/* mspec_uncached always refuses here */
};

static const struct expect expects[] = {
	{ "x86_64", { "UC-", "UC" }, { "WB", NULL }, true, true, false },
	{ "i686", { "UC-", "UC" }, { "WB", NULL }, true, true, false },
	{ "aarch64", { "Normal-NC", NULL }, { "Normal", "Normal-Tagged" },
	  true, false, false },
	{ "armv7l", { "Normal-NC", NULL }, { "WB", "WBWA" }, true, false,
	  false },
	{ "riscv64", { "NC", NULL }, { "PMA", NULL }, false, false, false },
	{ "ppc64le", { "CI-guarded", NULL }, { "cacheable", NULL }, true,
	  false, false },
	{ "ppc64", { "CI-guarded", NULL }, { "cacheable", NULL }, true,
	  false, false },
	{ "mips", { "UC", NULL }, { "WB", "CWB" }, false, false, false },
	{ "mips64", { "UC", NULL }, { "WB", "CWB" }, false, false, false },
	{ "s390x", { NULL, NULL }, { "cacheable", NULL }, false, false, true },
};

static const struct expect *expected(void)
{
	struct utsname u;
	unsigned int i;

	if (uname(&u))
		return NULL;
	for (i = 0; i < ARRAY_SIZE(expects); i++)
		if (!strcmp(u.machine, expects[i].machine))
			return &expects[i];
	return NULL;
}

/* Whether an "isa" line of /proc/cpuinfo names extension @ext. */
static bool isa_has(const char *ext)
{
	char line[1024];
	bool found = false;
	FILE *f;

	f = fopen("/proc/cpuinfo", "r");
	if (!f)
		return false;
	while (!found && fgets(line, sizeof(line), f))
		found = !strncmp(line, "isa", 3) && strstr(line, ext);
	fclose(f);
	return found;
}

/*
 * Why "uncached" PTEs cannot be checked here, or NULL: no mspec, or not
 * on this machine.  A riscv64 hart that lists Svpbmt must give
 * non-cached mappings: the driver saying otherwise there is a failure,
 * not a skip.  Where the device refuses to map, uncached_refused asserts
 * that it does.
 */
static const char *uncached_unchecked(void)
{
	const struct expect *e = expected();

	if (!have_mspec())
		return NO_MSPEC;
	if (!e)
		return "no PTE memory-type decoder for this machine";
	if (e->refused ||
	    (!e->always && mspec_info_noncached("uncached") == 0 &&
	     !isa_has("svpbmt")))
		return "mspec_uncached refuses mmap() here (asserted by uncached_refused)";
	return NULL;
}

static bool one_of(const char *s, const char * const set[2])
{
	return (set[0] && !strcmp(s, set[0])) || (set[1] && !strcmp(s, set[1]));
}

static void check_uncached(struct __test_metadata *_metadata, void *addr,
			   const char *what)
{
	const struct expect *e = expected();
	struct pte_info pi;

	ASSERT_NE(NULL, e);
	ASSERT_EQ(0, pte_query(addr, &pi)) TH_LOG("%s", what);
	TH_LOG("%s: pte %#llx pfn %#lx memtype %s alias %s", what, pi.pte,
	       pi.pfn, pi.memtype, pi.alias);
	EXPECT_STREQ("uncached", pi.device);
	EXPECT_TRUE(one_of(pi.memtype, e->uncached))
		TH_LOG("%s: memtype %s", what, pi.memtype);
	EXPECT_EQ(1, pi.noncached);
	if (e->alias) {
		EXPECT_TRUE(one_of(pi.alias, e->uncached))
			TH_LOG("%s: kernel alias %s", what, pi.alias);
		EXPECT_EQ(1, pi.alias_noncached);
	}
}

/* ------------------------------------------------------------- tests */

TEST(uncached_pte_is_noncached)
{
	struct counters base, c;
	const char *why;
	char *p;

	why = uncached_unchecked();
	if (why)
		SKIP(return, "%s", why);
	ASSERT_EQ(0, read_counters(type_name[2], &base));
	p = map_rw(dev_path[2], 2 * psz);
	ASSERT_NE(MAP_FAILED, p);
	p[0] = 1;			/* write fault */
	(void)peek8(p + psz);	/* read fault */
	check_uncached(_metadata, p, "write-faulted page");
	check_uncached(_metadata, p + psz, "read-faulted page");
	munmap(p, 2 * psz);
	/* Given back, and on x86 with the linear map WB again. */
	ASSERT_EQ(0, read_counters(type_name[2], &c));
	EXPECT_EQ(base.in_use, c.in_use);
	EXPECT_EQ(base.leaked, c.leaked);
}

TEST(cached_and_fetchop_ptes_are_cacheable)
{
	const struct expect *e = expected();
	struct pte_info pi;
	int t;

	if (!have_mspec())
		SKIP(return, NO_MSPEC);
	if (!e)
		SKIP(return, "no PTE memory-type decoder for this machine");
	for (t = 0; t < 2; t++) {
		char *p = map_rw(dev_path[t], psz);

		ASSERT_NE(MAP_FAILED, p);
		p[0] = 1;
		ASSERT_EQ(0, pte_query(p, &pi));
		TH_LOG("%s: pte %#llx memtype %s alias %s", type_name[t],
		       pi.pte, pi.memtype, pi.alias);
		EXPECT_STREQ(type_name[t], pi.device);
		EXPECT_TRUE(one_of(pi.memtype, e->cached))
			TH_LOG("%s: memtype %s", type_name[t], pi.memtype);
		EXPECT_EQ(0, pi.noncached);
		if (e->alias)
			EXPECT_TRUE(one_of(pi.alias, e->cached));
		munmap(p, psz);
	}
}

/*
 * Where the back end makes the kernel's alias of an uncached page UC-
 * (x86), freeing the page must make it write-back again (set_memory_wb())
 * first: a page back in general use with a UC- alias is the aliasing the
 * back end exists to prevent, the other way round, and costs every later
 * user of the page. The pages mspec_cached allocates next on this CPU come
 * from the per-CPU free list the freed ones went to: at least one of them
 * must be a freed one, and each must have a write-back alias.
 */
TEST(freed_uncached_alias_is_write_back)
{
	const struct expect *e = expected();
	unsigned long freed[NFREED];
	struct pte_info pi;
	const char *why;
	cpu_set_t one;
	int i, j, reused = 0;
	char *p;

	why = uncached_unchecked();
	if (why)
		SKIP(return, "%s", why);
	if (!e->alias)
		SKIP(return, "the back end leaves the kernel alias as it is here");
	CPU_ZERO(&one);
	CPU_SET(sched_getcpu(), &one);
	ASSERT_EQ(0, sched_setaffinity(0, sizeof(one), &one));
	p = map_rw(dev_path[2], NFREED * psz);
	ASSERT_NE(MAP_FAILED, p);
	for (i = 0; i < NFREED; i++) {
		p[i * psz] = 1;
		ASSERT_EQ(0, pte_query(p + i * psz, &pi));
		ASSERT_EQ(1, pi.alias_noncached);
		freed[i] = pi.pfn;
	}
	ASSERT_EQ(0, munmap(p, NFREED * psz));
	p = map_rw(dev_path[1], NFREED * psz);
	ASSERT_NE(MAP_FAILED, p);
	for (i = 0; i < NFREED; i++) {
		p[i * psz] = 1;
		ASSERT_EQ(0, pte_query(p + i * psz, &pi));
		for (j = 0; j < NFREED; j++)
			reused += pi.pfn == freed[j];
		EXPECT_TRUE(one_of(pi.alias, e->cached))
			TH_LOG("cached page pfn %#lx: kernel alias %s", pi.pfn,
			       pi.alias);
	}
	ASSERT_EQ(0, munmap(p, NFREED * psz));
	EXPECT_LT(0, reused)
		TH_LOG("none of %d cached pages reused a freed uncached one: nothing was checked",
		       NFREED);
	TH_LOG("%d of %d cached pages were freed uncached ones", reused,
	       NFREED);
}

/*
 * MIPS: whether the boot log says the CPU has a secondary or tertiary
 * cache (c-r4k.c: "Unified secondary cache 1024kB ...", "MIPS secondary
 * cache ..."), which mspec-mips.c cannot flush: 1 or 0; -1 if the log no
 * longer shows the primary cache lines either (it wrapped), so that it
 * cannot tell.
 */
static int mips_outer_cache(void)
{
	char rec[1024];
	bool primary = false, outer = false;
	ssize_t n;
	int fd;

	fd = open("/dev/kmsg", O_RDONLY | O_NONBLOCK);
	if (fd < 0)
		return -1;
	for (;;) {
		n = read(fd, rec, sizeof(rec) - 1);
		if (n < 0 && errno == EPIPE)
			continue;	/* a record overwritten meanwhile */
		if (n <= 0)
			break;
		rec[n] = 0;
		if (strstr(rec, "Primary data cache"))
			primary = true;
		/* the size tells c-r4k.c's line from mspec's own */
		if ((strstr(rec, "secondary cache ") ||
		     strstr(rec, "tertiary cache ")) && strstr(rec, "kB"))
			outer = true;
	}
	close(fd);
	if (outer)
		return 1;
	return primary ? 0 : -1;
}

/* The back end's name, from the "arch" line of a device's info, or "". */
static void mspec_info_arch(char *name, size_t size)
{
	char line[256], fmt[32];
	FILE *f;

	name[0] = 0;
	f = fopen(MSPEC_DEBUGFS "/uncached/info", "r");
	if (!f)
		return;
	snprintf(fmt, sizeof(fmt), "arch %%%zus", size - 1);
	while (fgets(line, sizeof(line), f))
		if (sscanf(line, fmt, name) == 1)
			break;
	fclose(f);
}

/*
 * The "noncached" line of each device's info must be what the back end's
 * rule gives for this machine: never for cached and fetchop; for
 * uncached, always where the architecture has the memory type, never on
 * s390x, with Svpbmt on riscv64, without an outer cache on mips, and
 * never from the generic back end (an architecture without its own file,
 * e.g. m68k), which refuses uncached mappings.
 */
TEST(info_claims)
{
	const struct expect *e = expected();
	int uncached = mspec_info_noncached("uncached");
	struct utsname u;
	char arch[32];
	int want, outer;

	if (!have_mspec())
		SKIP(return, NO_MSPEC);
	EXPECT_EQ(0, mspec_info_noncached("cached"));
	EXPECT_EQ(0, mspec_info_noncached("fetchop"));
	ASSERT_EQ(0, uname(&u));
	mspec_info_arch(arch, sizeof(arch));
	ASSERT_NE(0, arch[0]) TH_LOG("no back end named in the info");
	if (!strcmp(arch, "generic")) {
		EXPECT_EQ(0, uncached) TH_LOG("%s, generic back end: mspec_uncached says noncached %d",
					      u.machine, uncached);
		return;
	}
	ASSERT_NE(NULL, e) TH_LOG("no expectation for this machine");
	if (e->always) {
		want = 1;
	} else if (e->refused) {
		want = 0;
	} else if (!strcmp(u.machine, "riscv64")) {
		want = isa_has("svpbmt");
	} else if (!strncmp(u.machine, "mips", 4)) {
		outer = mips_outer_cache();
		if (outer < 0)
			SKIP(return, "the boot log no longer says which caches this CPU has");
		want = !outer;
	} else {
		ASSERT_TRUE(false) TH_LOG("%s: no rule for mspec_uncached", u.machine);
	}
	EXPECT_EQ(want, uncached) TH_LOG("%s: mspec_uncached says noncached %d",
					 u.machine, uncached);
}

/*
 * Where the driver says mspec_uncached is not non-cached here, mmap()
 * must fail with ENODEV (not hand out a cacheable page); where it says it
 * is, mmap() must work.  s390x always refuses.
 */
TEST(uncached_refused)
{
	const struct expect *e = expected();
	int noncached = mspec_info_noncached("uncached");
	char *p;

	if (!have_mspec())
		SKIP(return, NO_MSPEC);
	ASSERT_LE(0, noncached);
	if (e && e->refused)
		ASSERT_EQ(0, noncached);
	p = map_rw(dev_path[2], psz);
	if (noncached) {
		ASSERT_NE(MAP_FAILED, p) TH_LOG("mmap: %s", strerror(errno));
		munmap(p, psz);
		return;
	}
	EXPECT_EQ(MAP_FAILED, p);
	EXPECT_EQ(ENODEV, errno);
	if (p != MAP_FAILED)
		munmap(p, psz);
}

TEST(uncached_after_mprotect_and_fork)
{
	const char *why;
	int status;
	pid_t pid;
	char *p;

	why = uncached_unchecked();
	if (why)
		SKIP(return, "%s", why);
	p = map_rw(dev_path[2], 4 * psz);
	ASSERT_NE(MAP_FAILED, p);
	ASSERT_EQ(0, mprotect(p + 2 * psz, 2 * psz, PROT_READ));
	ASSERT_EQ(0, mprotect(p + 2 * psz, 2 * psz, PROT_READ | PROT_WRITE));
	p[3 * psz] = 3;
	check_uncached(_metadata, p + 3 * psz, "page faulted after mprotect");

	pid = fork();
	ASSERT_LE(0, pid);
	if (pid == 0) {
		p[psz] = 1;	/* first touch in the child */
		_exit(0);
	}
	ASSERT_EQ(pid, waitpid(pid, &status, 0));
	ASSERT_TRUE(WIFEXITED(status) && WEXITSTATUS(status) == 0);
	ASSERT_EQ(1, p[psz]);
	check_uncached(_metadata, p + psz, "page a child faulted first");
	munmap(p, 4 * psz);
}

/*
 * The device for the tests of the PTE file itself: mspec_uncached, or
 * mspec_cached where mspec_uncached refuses to map.
 */
static int pte_dev(void)
{
	return mspec_info_noncached("uncached") == 1 ? 2 : 1;
}

/* Parent and child map the same PFN, with the same memory type. */
TEST(child_sees_same_pfn)
{
	struct pte_info parent, child;
	int fds[2], status;
	pid_t pid;
	char *p;

	if (!have_mspec())
		SKIP(return, NO_MSPEC);
	p = map_rw(dev_path[pte_dev()], psz);
	ASSERT_NE(MAP_FAILED, p);
	p[0] = 1;
	ASSERT_EQ(0, pte_query(p, &parent));
	ASSERT_EQ(0, pipe(fds));
	pid = fork();
	ASSERT_LE(0, pid);
	if (pid == 0) {
		struct pte_info pi;

		(void)peek8(p);
		if (pte_query(p, &pi) ||
		    write(fds[1], &pi, sizeof(pi)) != sizeof(pi))
			_exit(1);
		_exit(0);
	}
	ASSERT_EQ((ssize_t)sizeof(child), read(fds[0], &child, sizeof(child)));
	ASSERT_EQ(pid, waitpid(pid, &status, 0));
	EXPECT_EQ(parent.pfn, child.pfn);
	EXPECT_STREQ(parent.memtype, child.memtype);
	close(fds[0]);
	close(fds[1]);
	munmap(p, psz);
}

TEST(pte_query_errors)
{
	struct pte_info pi;
	int stack_var = 0;
	char *p;
	int fd;

	if (!have_mspec())
		SKIP(return, NO_MSPEC);
	p = map_rw(dev_path[pte_dev()], 2 * psz);
	ASSERT_NE(MAP_FAILED, p);
	/* Not touched yet: no PTE. */
	EXPECT_EQ(-ENXIO, pte_query(p + psz, &pi));
	/* Not a VM_IO/VM_PFNMAP mapping. */
	EXPECT_EQ(-EINVAL, pte_query(&stack_var, &pi));
	munmap(p, 2 * psz);
	/* Nothing mapped. */
	EXPECT_EQ(-ENOENT, pte_query(p, &pi));

	fd = open(MSPEC_DEBUGFS "/pte", O_RDWR);
	ASSERT_LE(0, fd);
	EXPECT_EQ(-1, write(fd, "banana", 6));
	EXPECT_EQ(EINVAL, errno);
	close(fd);
}

TEST_HARNESS_MAIN
