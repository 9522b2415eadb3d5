/*
 * bench's DLMC inputs: the default folder, every .smtx under it, and
 * --quick's two of them.
 */
#include <dirent.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "base/near_exe.h"
#include "cmd/bench.h"

/* From the executable's folder and the folders above it, so that build/cmd/spprof finds it. */
int bench_find_dlmc(char *out, size_t n, char *tried, size_t tn)
{
	static const char *const rel[] = {"../shared/bench/dlmc"};
	char exe[PATH_MAX], cwd[PATH_MAX];

	if (spp_find_near_exe(rel, 1, 1, out, n, exe, cwd))
		return 0;
	snprintf(tried, tn, "looked for ../shared/bench/dlmc from the folders above '%.1000s' "
		 "(up to %d levels) and from the current folder '%.1000s'", exe, SPP_NEAR_EXE_UP + 1, cwd);
	return -1;
}

static int cmp_str(const void *a, const void *b)
{
	return strcmp(*(char *const *)a, *(char *const *)b);
}

int bench_list_dlmc(const char *root, const char *rel, struct bench_cfg *c, int depth)
{
	char path[PATH_MAX];
	DIR *d;
	struct dirent *e;

	snprintf(path, sizeof(path), "%s%s%s", root, rel[0] ? "/" : "", rel);
	d = opendir(path);
	if (!d) {
		if (depth == 0) {
			fprintf(stderr, "spprof bench: cannot open DLMC folder '%s'\n", path);
			return 2;
		}
		return 0;
	}
	while ((e = readdir(d))) {
		char sub[PATH_MAX];
		size_t len = strlen(e->d_name);
		struct stat st;

		if (e->d_name[0] == '.')
			continue;
		if ((size_t)snprintf(sub, sizeof(sub), "%s%s%s", rel, rel[0] ? "/" : "", e->d_name) >= sizeof(sub) ||
		    (size_t)snprintf(path, sizeof(path), "%s/%s", root, sub) >= sizeof(path) ||
		    stat(path, &st) != 0)
			continue;
		if (S_ISDIR(st.st_mode) && depth < 6) {
			int rc = bench_list_dlmc(root, sub, c, depth + 1);

			if (rc) {
				closedir(d);
				return rc;
			}
		} else if (S_ISREG(st.st_mode) && len > 5 && strcmp(e->d_name + len - 5, ".smtx") == 0 &&
			   c->ndlmc < BENCH_MAX_DLMC) {
			c->dlmc[c->ndlmc] = strdup(sub);
			if (!c->dlmc[c->ndlmc]) {
				closedir(d);
				return 3;
			}
			c->ndlmc++;
		}
	}
	closedir(d);
	if (depth == 0)
		qsort(c->dlmc, (size_t)c->ndlmc, sizeof(char *), cmp_str);
	return 0;
}

void bench_pick_quick(struct bench_cfg *c)
{
	int keep[2] = {-1, -1}, k = 0;

	for (int i = 0; i < c->ndlmc && k < 2; i++)
		if (strstr(c->dlmc[i], "/0.9/") &&
		    (k == 0 || strncmp(c->dlmc[i], c->dlmc[keep[0]], 4) != 0))
			keep[k++] = i;
	for (int i = 0; i < c->ndlmc && k < 2; i++)
		if (i != keep[0])
			keep[k++] = i;
	for (int i = 0; i < c->ndlmc; i++)
		if (i != keep[0] && i != keep[1]) {
			free(c->dlmc[i]);
			c->dlmc[i] = NULL;
		}
	for (int i = 0, j = 0; i < c->ndlmc; i++)
		if (c->dlmc[i])
			c->dlmc[j++] = c->dlmc[i];
	c->ndlmc = k < c->ndlmc ? k : c->ndlmc;
}
