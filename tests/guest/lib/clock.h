/* SPDX-License-Identifier: GPL-2.0 */
/*
 * The monotonic clock of the guest tests, and sleeps that go on after a
 * signal handler ran.
 */
#ifndef GUEST_CLOCK_H
#define GUEST_CLOCK_H

#include <stdint.h>

uint64_t now_ns(void);
double now_ms(void);
void sleep_ms(unsigned int ms);
void sleep_us(unsigned long us);

#endif /* GUEST_CLOCK_H */
