/* Paths beside the executable (near_exe.h). */
#include "base/near_exe.h"

#include <limits.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

int spp_path_at(const char *dir, const char *rel, int want_dir, char *out, size_t n)
{
	struct stat st;

	if ((size_t)snprintf(out, n, "%s/%s", dir, rel) >= n || stat(out, &st) != 0)
		return 0;
	return want_dir ? S_ISDIR(st.st_mode) : S_ISREG(st.st_mode) && access(out, R_OK) == 0;
}

static int any_at(const char *dir, const char *const *rel, int nrel, int want_dir, char *out,
		  size_t n)
{
	for (int i = 0; i < nrel; i++)
		if (spp_path_at(dir, rel[i], want_dir, out, n))
			return 1;
	return 0;
}

int spp_find_near_exe(const char *const *rel, int nrel, int want_dir, char *out, size_t n,
		      char *exe, char *cwd)
{
	ssize_t len = readlink("/proc/self/exe", exe, PATH_MAX - 1);
	char dir[PATH_MAX];

	snprintf(cwd, PATH_MAX, "?");
	if (len > 0) {
		exe[len] = '\0';
		snprintf(dir, sizeof(dir), "%s", exe);
		for (int up = 0; up <= SPP_NEAR_EXE_UP; up++) {
			char *slash = strrchr(dir, '/');

			if (!slash || slash == dir)
				break;
			*slash = '\0';
			if (any_at(dir, rel, nrel, want_dir, out, n))
				return 1;
		}
	} else {
		snprintf(exe, PATH_MAX, "?");
	}
	if (getcwd(cwd, PATH_MAX) && any_at(cwd, rel, nrel, want_dir, out, n))
		return 1;
	if (n)
		out[0] = '\0';
	return 0;
}
