/* SPDX-License-Identifier: GPL-2.0 */
/*
 * The pseudo-random generators of the guest tests: a given seed gives the
 * same numbers on every target, so that a run can be replayed.
 *
 * splitmix64() alone (mmap_fuzz's sequences), and xoshiro256** seeded
 * from it (mspec_stress): two sequences, each program keeps its own.
 */
#ifndef GUEST_RAND_H
#define GUEST_RAND_H

#include <stdint.h>

/* The next number of the splitmix64 sequence whose state is *@x. */
uint64_t splitmix64(uint64_t *x);

/* xoshiro256**: the state */
struct rng {
	uint64_t s[4];
};

void rng_seed(struct rng *r, uint64_t seed);
uint64_t rnd(struct rng *r);
/* rnd() modulo @n, 0 for an @n of 0 */
unsigned int below(struct rng *r, unsigned int n);

#endif /* GUEST_RAND_H */
