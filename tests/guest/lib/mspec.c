// SPDX-License-Identifier: GPL-2.0
/*
 * mspec's debugfs: the stats of each type, its info, the knobs
 * (mspec_test.h).
 */
#include <stddef.h>
#include <stdio.h>

#include "files.h"
#include "mspec_test.h"

int read_counters(const char *type, struct counters *c)
{
	static const struct {
		const char *key;
		size_t off;
	} keys[] = {
		{ "pages_in_use", offsetof(struct counters, in_use) },
		{ "pages_allocated", offsetof(struct counters, allocated) },
		{ "pages_freed", offsetof(struct counters, freed) },
		{ "pages_leaked", offsetof(struct counters, leaked) },
		{ "faults", offsetof(struct counters, faults) },
		{ "alloc_failures", offsetof(struct counters, failures) },
		{ "alloc_races", offsetof(struct counters, races) },
		{ "mappings", offsetof(struct counters, mappings) },
	};
	char path[128], key[64];
	unsigned int i;
	long val;
	FILE *f;

	memset(c, 0, sizeof(*c));
	snprintf(path, sizeof(path), MSPEC_DEBUGFS "/%s/stats", type);
	f = fopen(path, "r");
	if (!f)
		return -1;
	while (fscanf(f, "%63s %ld", key, &val) == 2)
		for (i = 0; i < sizeof(keys) / sizeof(keys[0]); i++)
			if (!strcmp(key, keys[i].key))
				*(long *)((char *)c + keys[i].off) = val;
	fclose(f);
	return 0;
}

bool have_mspec(void)
{
	return access(dev_path[2], F_OK) == 0 &&
	       access(MSPEC_DEBUGFS "/uncached/stats", R_OK) == 0;
}

int mspec_info_noncached(const char *type)
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

int nmappable = NTYPES;

static void __attribute__((constructor)) init_nmappable(void)
{
	if (mspec_info_noncached("uncached") == 0)
		nmappable = NTYPES - 1;
}

long mspec_knob(const char *name)
{
	char path[128];

	snprintf(path, sizeof(path), MSPEC_DEBUGFS "/%s", name);
	return read_number(path);
}

int mspec_set_knob(const char *name, long val)
{
	char path[128], buf[32];

	snprintf(path, sizeof(path), MSPEC_DEBUGFS "/%s", name);
	snprintf(buf, sizeof(buf), "%ld", val);
	return write_file(path, buf);
}
