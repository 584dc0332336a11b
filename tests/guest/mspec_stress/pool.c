// SPDX-License-Identifier: GPL-2.0
/*
 * mspec_stress: the pool of mappings that all the hammer threads of a
 * worker touch at once while one of them replaces a mapping (see main.c).
 */
#include "stress.h"

/* A pool word: what it held (bad_val), write the tag, read it (child). */
static void acc_race(void *arg)
{
	struct access *a = arg;

	a->bad_val = peek64(a->page);
	poke64(a->page, a->tag);
	a->child = peek64(a->page);
}

int pool_map(struct rng *r, struct pool_slot *ps)
{
	int dev = pick_dev(r);
	int fd = open(dev_file[dev], O_RDWR | O_CLOEXEC);
	void *p;

	if (fd < 0)
		return -1;
	p = mmap(ps->addr, POOL_PAGES * psz, PROT_READ | PROT_WRITE,
		 MAP_SHARED | MAP_FIXED, fd, 0);
	close(fd);
	if (p != ps->addr)
		return -1;
	__atomic_store_n(&ps->dev, dev, __ATOMIC_RELAXED);
	return 0;
}

#define ANY_OURS	(~1UL)	/* pool_epoch: the word holds 0 or any tag of ours */

void op_race_touch(struct hammer *h)
{
	unsigned int k = below(&h->rng, NPOOL), p = below(&h->rng, POOL_PAGES);
	struct pool_slot *ps = &pool[k];
	unsigned long g1, g2, epoch;
	uint64_t *w, v0, v1, fresh, tag = new_tag(h);
	struct access a = { .tag = tag };
	int sig, dev;

	g1 = __atomic_load_n(&ps->gen, __ATOMIC_ACQUIRE);
	if (g1 & 1)
		return;
	dev = __atomic_load_n(&ps->dev, __ATOMIC_RELAXED);
	epoch = __atomic_load_n(&ps->epoch, __ATOMIC_RELAXED);
	if (dev < 0)
		return;
	w = (uint64_t *)(ps->addr + p * psz) + h->idx;
	fresh = fresh_word(dev, h->idx * sizeof(*w));
	a.page = (char *)w;
	sig = guarded(acc_race, &a);
	v0 = a.bad_val;
	v1 = a.child;
	if (forced(sig)) {
		/* Whether the write happened is unknown: any tag of ours. */
		h->pool_epoch[k][p] = ANY_OURS;
		return;
	}
	__atomic_thread_fence(__ATOMIC_SEQ_CST);
	g2 = __atomic_load_n(&ps->gen, __ATOMIC_ACQUIRE);
	if (g1 != g2) {
		/* A replacement overlapped: anything may have happened. */
		atomic_add_ul(&sh->race_windows, 1);
		h->pool_epoch[k][p] = ~0UL;
		h->pool_tag[k][p] = sig ? h->pool_tag[k][p] : tag;
		return;
	}
	if (sig == SIGBUS && dev != D_NOPFN &&
	    (guard_info.si_addr == fault_addr(w) || info_lost())) {
		atomic_add_ul(&sh->mspec_sigbus, 1);
		return;
	}
	if (sig == SIGBUS && dev == D_NOPFN && sh->kinject &&
	    (guard_info.si_addr == fault_addr(w) || info_lost())) {
		atomic_add_ul(&sh->nopfn_kinject_sigbus, 1);
		return;
	}
	if (sig) {
		fail("pool %s page %u: signal %d code %d with no replacement",
		     dev_file[dev], p, sig, guard_info.si_code);
		return;
	}
	if (h->pool_epoch[k][p] == ANY_OURS) {
		if (v0 != fresh && (v0 >> 56 != w_index + 1 ||
				    ((v0 >> 40) & 0xff) != h->idx))
			fail("pool %s page %u: word %#llx is neither fresh nor one of ours",
			     dev_file[dev], p, (unsigned long long)v0);
	} else if (h->pool_epoch[k][p] == ~0UL) {
		if (v0 != fresh && v0 != h->pool_tag[k][p])
			fail("pool %s page %u: word %#llx is neither fresh nor ours",
			     dev_file[dev], p, (unsigned long long)v0);
	} else if (v0 != (h->pool_epoch[k][p] == epoch ?
			  h->pool_tag[k][p] : fresh)) {
		fail("pool %s page %u: lost write: %#llx, want %#llx",
		     dev_file[dev], p, (unsigned long long)v0,
		     (unsigned long long)(h->pool_epoch[k][p] == epoch ?
					  h->pool_tag[k][p] : fresh));
	}
	if (v1 != tag)
		fail("pool %s page %u: wrote %#llx, read %#llx", dev_file[dev],
		     p, (unsigned long long)tag, (unsigned long long)v1);
	h->pool_tag[k][p] = tag;
	h->pool_epoch[k][p] = epoch;
}

void op_race_replace(struct hammer *h)
{
	struct pool_slot *ps = &pool[below(&h->rng, NPOOL)];
	unsigned long g = __atomic_load_n(&ps->gen, __ATOMIC_ACQUIRE);
	int how = below(&h->rng, 3);

	if ((g & 1) || !__atomic_compare_exchange_n(&ps->gen, &g, g + 1, false,
						    __ATOMIC_SEQ_CST,
						    __ATOMIC_RELAXED))
		return;
	if (how == 2 && ps->dev >= 0) {
		/* mprotect() away and back: the contents stay. */
		if (mprotect(ps->addr, POOL_PAGES * psz, PROT_READ) ||
		    (sleep_us(below(&h->rng, 300)),
		     mprotect(ps->addr, POOL_PAGES * psz,
			      PROT_READ | PROT_WRITE))) {
			if (!tolerated(errno))
				fail("pool mprotect: %s", strerror(errno));
			how = 1;	/* start again from a clean slate */
		}
	}
	if (how < 2 || ps->dev < 0) {
		__atomic_store_n(&ps->epoch, ps->epoch + 1, __ATOMIC_RELAXED);
		if (how == 1) {
			if (munmap(ps->addr, POOL_PAGES * psz) &&
			    !tolerated(errno))
				fail("pool munmap: %s", strerror(errno));
			sleep_us(below(&h->rng, 300));
		}
		if (pool_map(&h->rng, ps)) {
			if (errno && !tolerated(errno))
				fail("pool mmap: %s", strerror(errno));
			__atomic_store_n(&ps->dev, -1, __ATOMIC_RELAXED);
			reserve(ps->addr, POOL_PAGES * psz);
		}
	}
	__atomic_store_n(&ps->gen, g + 2, __ATOMIC_SEQ_CST);
}
