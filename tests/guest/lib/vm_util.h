/* SPDX-License-Identifier: GPL-2.0 */
/*
 * The page size, device mappings, the colour of shared mappings where the
 * data cache has aliases, and the exit of a child.
 */
#ifndef GUEST_VM_UTIL_H
#define GUEST_VM_UTIL_H

#include <sys/mman.h>
#include <sys/types.h>

/* What the C library of an older toolchain may not have. */
#ifndef MREMAP_DONTUNMAP
#define MREMAP_DONTUNMAP	4
#endif
#ifndef MAP_FIXED_NOREPLACE
#define MAP_FIXED_NOREPLACE	0x100000
#endif
#ifndef MAP_SHARED_VALIDATE
#define MAP_SHARED_VALIDATE	0x03
#endif
#ifndef MADV_COLD
#define MADV_COLD		20
#endif
#ifndef MADV_PAGEOUT
#define MADV_PAGEOUT		21
#endif
#ifndef MADV_POPULATE_READ
#define MADV_POPULATE_READ	22
#endif
#ifndef MADV_POPULATE_WRITE
#define MADV_POPULATE_WRITE	23
#endif

/* The page size, set before main() runs. */
extern long psz;

/* mmap() of a device; the file is closed, the mapping keeps it open. */
void *map_dev(const char *path, size_t len, int prot, int flags, off_t off);

/* A shared read-write mapping of @len bytes of a device, at offset 0. */
void *map_rw(const char *path, size_t len);

/*
 * Where the data cache has aliases (MIPS with cpu_has_dc_aliases,
 * PA-RISC, SPARC64, ...), a shared file mapping must start at the colour
 * of its offset, (addr - pgoff * PAGE_SIZE) % span == 0: MAP_FIXED (and
 * mremap(MREMAP_FIXED)) elsewhere is EINVAL, and a hint is moved up to
 * that colour (arch_get_unmapped_area() of those architectures). The
 * span of a colour of @fd's shared mappings (a page where there are no
 * colours): the smallest step from an address aligned to 16 MiB at which
 * MAP_FIXED of offset 0 is accepted. 0 with errno set on failure
 * (ENOSPC: no colour below 16 MiB).
 */
unsigned long colour_span(int fd);

/* Wait for @pid: its exit code, 128 + signal if killed, -1 on error. */
int wait_for(pid_t pid);

#endif /* GUEST_VM_UTIL_H */
