/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Small files of debugfs, sysfs and procfs: knobs, module parameters,
 * fault injection attributes.
 */
#ifndef GUEST_FILES_H
#define GUEST_FILES_H

#include <stddef.h>

/* Write @val to @path: 0, or -1 with errno set. */
int write_file(const char *path, const char *val);

/*
 * What @path holds, at most @size - 1 bytes, without the newlines and
 * spaces at its end: 0, or -1 with errno set.
 */
int read_file(const char *path, char *buf, size_t size);

/*
 * The number @path holds (C syntax: 0x... and 0... too), 1 for a "Y" and
 * 0 for an "N" (a bool); -1 if it cannot be read or is empty.
 */
long long read_number(const char *path);

#endif /* GUEST_FILES_H */
