/* Shared modules loaded at run time (module.h). */
#include "base/module.h"

#include <dlfcn.h>
#include <limits.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "config.h"
#include "base/near_exe.h"

/*
 * The first of: beside the executable, the folder above it, SPP_MODULE_DIR;
 * into out. exe (PATH_MAX) gets the executable's path, "?" when unknown.
 */
static int find(const char *file, char *out, size_t n, char *exe)
{
	ssize_t len = readlink("/proc/self/exe", exe, PATH_MAX - 1);
	char dir[PATH_MAX], *slash;

	if (len > 0) {
		exe[len] = '\0';
		snprintf(dir, sizeof(dir), "%s", exe);
		for (int up = 0; up < 2 && (slash = strrchr(dir, '/')) && slash != dir; up++) {
			*slash = '\0';
			if (spp_path_at(dir, file, 0, out, n))
				return 1;
		}
	} else {
		snprintf(exe, PATH_MAX, "?");
	}
	return spp_path_at(SPP_MODULE_DIR, file, 0, out, n);
}

const void *spp_module_table(const char *file, const char *symbol, char *why, size_t n)
{
	char path[PATH_MAX], exe[PATH_MAX];
	const void *(*get)(void);
	const void *table;
	void *h, *sym;

	why[0] = '\0';
	if (!find(file, path, sizeof(path), exe)) {
		snprintf(why, n, "'%s' not found beside '%s', above it or in '%s'", file, exe,
			 SPP_MODULE_DIR);
		return NULL;
	}
	h = dlopen(path, RTLD_NOW | RTLD_LOCAL);
	if (!h) {
		snprintf(why, n, "cannot load '%s': %s", path, dlerror());
		return NULL;
	}
	sym = dlsym(h, symbol);
	if (!sym) {
		snprintf(why, n, "'%s': %s", path, dlerror());
		dlclose(h);
		return NULL;
	}
	/* POSIX: a function's address comes back as a void * */
	memcpy(&get, &sym, sizeof(get));
	table = get();
	if (!table) {
		snprintf(why, n, "'%s': %s returned nothing", path, symbol);
		dlclose(h);
	}
	return table;
}
