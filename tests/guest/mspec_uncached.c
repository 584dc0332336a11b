// SPDX-License-Identifier: GPL-2.0
/*
 * mspec: the memory type of the user mappings, read back from the page
 * tables through /sys/kernel/debug/mspec/pte (follow_pte() on the
 * caller's mm), not assumed.
 *
 *  x86_64   mspec_uncached PTE is UC- (or UC) in the PAT, and so is the
 *           kernel's linear-map alias of the page (set_memory_uc());
 *           cached and fetchop PTEs are WB.
 *  arm64    mspec_uncached PTE is Normal-NC; cached and fetchop Normal.
 *  riscv64  with Svpbmt, mspec_uncached PTE has PBMT NC; cached and
 *           fetchop PMA.  Without Svpbmt the driver says "noncached 0"
 *           and the uncached checks are skipped, saying so.
 *  others   skipped, saying so: the generic back end cannot decode PTEs.
 *
 * The type survives what the VM does to a mapping: a split by mprotect()
 * and back, and a fault in a fork()ed child.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/wait.h>
#include <unistd.h>

/* 6.1's harness macros have unused parameters of their own. */
#pragma GCC diagnostic ignored "-Wunused-parameter"
#include "kselftest_harness.h"

/* ------------------------------------------- helpers (in each mspec test) */

#define MSPEC_DEBUGFS	"/sys/kernel/debug/mspec"
#define NTYPES		3

static const char * const dev_path[NTYPES] = {
	"/dev/sgi_fetchop", "/dev/mspec_cached", "/dev/mspec_uncached",
};
static const char * const type_name[NTYPES] = {
	"fetchop", "cached", "uncached",
};

struct counters {
	long in_use, allocated, freed, leaked, faults, failures, races, mappings;
};

static int read_counters(const char *type, struct counters *c)
{
	char path[128], key[64];
	long val;
	FILE *f;

	memset(c, 0, sizeof(*c));
	snprintf(path, sizeof(path), MSPEC_DEBUGFS "/%s/stats", type);
	f = fopen(path, "r");
	if (!f)
		return -1;
	while (fscanf(f, "%63s %ld", key, &val) == 2) {
		if (!strcmp(key, "pages_in_use"))
			c->in_use = val;
		else if (!strcmp(key, "pages_allocated"))
			c->allocated = val;
		else if (!strcmp(key, "pages_freed"))
			c->freed = val;
		else if (!strcmp(key, "pages_leaked"))
			c->leaked = val;
		else if (!strcmp(key, "faults"))
			c->faults = val;
		else if (!strcmp(key, "alloc_failures"))
			c->failures = val;
		else if (!strcmp(key, "alloc_races"))
			c->races = val;
		else if (!strcmp(key, "mappings"))
			c->mappings = val;
	}
	fclose(f);
	return 0;
}

static bool have_mspec(void)
{
	return access(dev_path[2], F_OK) == 0 &&
	       access(MSPEC_DEBUGFS "/uncached/stats", R_OK) == 0;
}

#define REQUIRE_MSPEC() do {						\
	if (!have_mspec())						\
		SKIP(return, "mspec module or debugfs not available");	\
} while (0)

/* mmap() of a device; the file is closed, the mapping keeps it open. */
static void *map_dev(const char *path, size_t len, int prot, int flags,
		     off_t off)
{
	int fd = open(path, O_RDWR);
	void *p;
	int err;

	if (fd < 0)
		return MAP_FAILED;
	p = mmap(NULL, len, prot, flags, fd, off);
	err = errno;
	close(fd);
	errno = err;
	return p;
}

static void *map_rw(const char *path, size_t len)
{
	return map_dev(path, len, PROT_READ | PROT_WRITE, MAP_SHARED, 0);
}

static long psz;

static void __attribute__((constructor)) init_psz(void)
{
	psz = sysconf(_SC_PAGESIZE);
}


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
	char buf[512], line[128], *s, *save;
	ssize_t n;
	int fd, err;

	memset(pi, 0, sizeof(*pi));
	fd = open(MSPEC_DEBUGFS "/pte", O_RDWR);
	if (fd < 0)
		return -errno;
	n = snprintf(line, sizeof(line), "%#lx", (unsigned long)addr);
	if (write(fd, line, n) != n) {
		err = -errno;
		close(fd);
		return err;
	}
	n = pread(fd, buf, sizeof(buf) - 1, 0);
	err = n < 0 ? -errno : 0;
	close(fd);
	if (err)
		return err;
	buf[n] = 0;
	for (s = strtok_r(buf, "\n", &save); s; s = strtok_r(NULL, "\n", &save)) {
		sscanf(s, "pte %llx", &pi->pte);
		sscanf(s, "pfn %lx", &pi->pfn);
		sscanf(s, "memtype %31s", pi->memtype);
		sscanf(s, "noncached %d", &pi->noncached);
		sscanf(s, "alias_memtype %31s", pi->alias);
		sscanf(s, "alias_noncached %d", &pi->alias_noncached);
		sscanf(s, "device %15s", pi->device);
	}
	return 0;
}

/* The "noncached" line of mspec/<type>/info: what the driver claims. */
static int info_noncached(const char *type)
{
	char path[128], line[256];
	int v = -1;
	FILE *f;

	snprintf(path, sizeof(path), MSPEC_DEBUGFS "/%s/info", type);
	f = fopen(path, "r");
	if (!f)
		return -1;
	while (fgets(line, sizeof(line), f))
		if (sscanf(line, "noncached %d", &v) == 1)
			break;
	fclose(f);
	return v;
}

static bool one_of(const char *s, const char *a, const char *b)
{
	return !strcmp(s, a) || (b && !strcmp(s, b));
}

#if defined(__x86_64__) || defined(__i386__)
#define ARCH_CHECKS	1
#define UNCACHED_TYPES	"UC-", "UC"
#define CACHED_TYPES	"WB", NULL
#define ALIAS_CHECKED	1
#elif defined(__aarch64__)
#define ARCH_CHECKS	1
#define UNCACHED_TYPES	"Normal-NC", NULL
#define CACHED_TYPES	"Normal", "Normal-Tagged"
#define ALIAS_CHECKED	0
#elif defined(__riscv)
#define ARCH_CHECKS	1
#define UNCACHED_TYPES	"NC", NULL
#define CACHED_TYPES	"PMA", NULL
#define ALIAS_CHECKED	0
#else
#define ARCH_CHECKS	0
#define UNCACHED_TYPES	"", NULL
#define CACHED_TYPES	"", NULL
#define ALIAS_CHECKED	0
#endif

/* Skip, saying why, where "uncached" cannot be checked on this machine. */
#define REQUIRE_UNCACHED_CHECKABLE() do {				\
	if (!ARCH_CHECKS)						\
		SKIP(return, "no PTE memory-type decoder for this architecture: uncached not checked"); \
	if (info_noncached("uncached") != 1)				\
		SKIP(return, "this machine has no non-cached mapping type (riscv without Svpbmt?): mspec_uncached is cacheable here"); \
} while (0)

static void check_uncached(struct __test_metadata *_metadata, void *addr,
			   const char *what)
{
	struct pte_info pi;

	ASSERT_EQ(0, pte_query(addr, &pi)) TH_LOG("%s", what);
	TH_LOG("%s: pte %#llx pfn %#lx memtype %s alias %s", what, pi.pte,
	       pi.pfn, pi.memtype, pi.alias);
	EXPECT_STREQ("uncached", pi.device);
	EXPECT_TRUE(one_of(pi.memtype, UNCACHED_TYPES))
		TH_LOG("%s: memtype %s", what, pi.memtype);
	EXPECT_EQ(1, pi.noncached);
	if (ALIAS_CHECKED) {
		EXPECT_TRUE(one_of(pi.alias, UNCACHED_TYPES))
			TH_LOG("%s: kernel alias %s", what, pi.alias);
		EXPECT_EQ(1, pi.alias_noncached);
	}
}

/* ------------------------------------------------------------- tests */

TEST(uncached_pte_is_noncached)
{
	struct counters base, c;
	char *p;

	REQUIRE_MSPEC();
	REQUIRE_UNCACHED_CHECKABLE();
	ASSERT_EQ(0, read_counters(type_name[2], &base));
	p = map_rw(dev_path[2], 2 * psz);
	ASSERT_NE(MAP_FAILED, p);
	p[0] = 1;			/* write fault */
	(void)*(volatile char *)(p + psz);	/* read fault */
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
	struct pte_info pi;
	int t;

	REQUIRE_MSPEC();
	if (!ARCH_CHECKS)
		SKIP(return, "no PTE memory-type decoder for this architecture");
	for (t = 0; t < 2; t++) {
		char *p = map_rw(dev_path[t], psz);

		ASSERT_NE(MAP_FAILED, p);
		p[0] = 1;
		ASSERT_EQ(0, pte_query(p, &pi));
		TH_LOG("%s: pte %#llx memtype %s alias %s", type_name[t],
		       pi.pte, pi.memtype, pi.alias);
		EXPECT_STREQ(type_name[t], pi.device);
		EXPECT_TRUE(one_of(pi.memtype, CACHED_TYPES))
			TH_LOG("%s: memtype %s", type_name[t], pi.memtype);
		EXPECT_EQ(0, pi.noncached);
		if (ALIAS_CHECKED)
			EXPECT_TRUE(one_of(pi.alias, CACHED_TYPES));
		munmap(p, psz);
	}
}

TEST(info_claims)
{
	REQUIRE_MSPEC();
	EXPECT_EQ(0, info_noncached("cached"));
	EXPECT_EQ(0, info_noncached("fetchop"));
#if defined(__x86_64__) || defined(__aarch64__)
	EXPECT_EQ(1, info_noncached("uncached"));
#else
	EXPECT_LE(0, info_noncached("uncached"));
#endif
}

TEST(uncached_after_mprotect_and_fork)
{
	pid_t pid;
	int status;
	char *p;

	REQUIRE_MSPEC();
	REQUIRE_UNCACHED_CHECKABLE();
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

/* Parent and child map the same PFN, with the same memory type. */
TEST(child_sees_same_pfn)
{
	struct pte_info parent, child;
	int fds[2], status;
	pid_t pid;
	char *p;

	REQUIRE_MSPEC();
	p = map_rw(dev_path[2], psz);
	ASSERT_NE(MAP_FAILED, p);
	p[0] = 1;
	ASSERT_EQ(0, pte_query(p, &parent));
	ASSERT_EQ(0, pipe(fds));
	pid = fork();
	ASSERT_LE(0, pid);
	if (pid == 0) {
		struct pte_info pi;

		(void)*(volatile char *)p;
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

	REQUIRE_MSPEC();
	p = map_rw(dev_path[2], 2 * psz);
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
