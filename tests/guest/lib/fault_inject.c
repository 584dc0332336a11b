// SPDX-License-Identifier: GPL-2.0
/* Fault injection attributes saved, set and put back: fault_inject.h. */
#include <errno.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "fault_inject.h"
#include "files.h"

/* "probability" first: fi_restore() writes it last. */
static const char * const fi_attr[FI_NR_ATTRS] = {
	"probability", "interval", "times", "space", "verbose", "task-filter",
	"ignore-gfp-wait", "ignore-gfp-highmem", "min-order",
};

static int fi_write(const struct fault_inject *fi, const char *attr,
		    const char *val)
{
	char path[160];

	snprintf(path, sizeof(path), "%s%s", fi->dir, attr);
	return write_file(path, val) ? -errno : 0;
}

int fi_save(struct fault_inject *fi)
{
	char path[160];
	unsigned int i;

	fi->have = false;
	fi->times = 0;
	snprintf(path, sizeof(path), "%sprobability", fi->dir);
	if (access(path, W_OK))
		return -errno;
	/* An attribute the directory lacks (failslab has no min-order) stays "" */
	for (i = 0; i < FI_NR_ATTRS; i++) {
		snprintf(path, sizeof(path), "%s%s", fi->dir, fi_attr[i]);
		if (read_file(path, fi->saved[i], sizeof(fi->saved[i])))
			fi->saved[i][0] = 0;
	}
	fi->have = true;
	return 0;
}

/* Whether @fi->dir has @attr (fi_save() read it). */
static bool fi_has(const struct fault_inject *fi, const char *attr)
{
	unsigned int i;

	for (i = 0; i < FI_NR_ATTRS; i++)
		if (!strcmp(fi_attr[i], attr))
			return fi->saved[i][0] != 0;
	return false;
}

int fi_set(struct fault_inject *fi, unsigned int percent, long long times)
{
	static const char * const set[][2] = {
		{ "probability", "0" }, { "task-filter", "Y" },
		{ "interval", "1" }, { "space", "0" }, { "verbose", "0" },
		{ "ignore-gfp-wait", "N" }, { "ignore-gfp-highmem", "N" },
		{ "min-order", "0" },
	};
	char val[24];
	unsigned int i;
	int ret;

	for (i = 0; i < sizeof(set) / sizeof(set[0]); i++) {
		if (!fi_has(fi, set[i][0]))
			continue;
		ret = fi_write(fi, set[i][0], set[i][1]);
		if (ret)
			return ret;
	}
	snprintf(val, sizeof(val), "%lld", times);
	ret = fi_write(fi, "times", val);
	if (ret)
		return ret;
	fi->times = times;
	snprintf(val, sizeof(val), "%u", percent);
	return fi_write(fi, "probability", val);
}

long long fi_restore(struct fault_inject *fi)
{
	char path[160];
	long long left;
	unsigned int i;

	if (!fi->have)
		return -1;
	fi_write(fi, "probability", "0");
	snprintf(path, sizeof(path), "%stimes", fi->dir);
	left = read_number(path);
	for (i = FI_NR_ATTRS; i-- > 1;)
		if (fi->saved[i][0])
			fi_write(fi, fi_attr[i], fi->saved[i]);
	fi_write(fi, "probability", fi->saved[0][0] ? fi->saved[0] : "0");
	fi->have = false;
	return left < 0 ? left : fi->times - left;
}
