/*
 * For harnesses whose reader takes a path: one scratch folder per fuzzing
 * process (made on first use, emptied and removed at exit) and the input
 * written into it under a fixed name.
 */
#ifndef SPP_TEST_FUZZ_TMP_H
#define SPP_TEST_FUZZ_TMP_H

#include <dirent.h>
#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>

static char fuzz_dir[64];

static void fuzz_tmp_cleanup(void)
{
	DIR *d = opendir(fuzz_dir);
	struct dirent *e;
	char path[384];

	while (d && (e = readdir(d)))
		if (e->d_name[0] != '.') {
			snprintf(path, sizeof(path), "%s/%s", fuzz_dir, e->d_name);
			unlink(path);
		}
	if (d)
		closedir(d);
	rmdir(fuzz_dir);
}

/* The scratch folder, made on the first call. */
static const char *fuzz_tmp_dir(void)
{
	if (!fuzz_dir[0]) {
		snprintf(fuzz_dir, sizeof(fuzz_dir), "/tmp/spp-fuzz.XXXXXX");
		if (!mkdtemp(fuzz_dir))
			abort();
		atexit(fuzz_tmp_cleanup);
	}
	return fuzz_dir;
}

/* Write p[0, n) as <folder>/name; its path into path (at least 160 bytes). */
static void fuzz_tmp_write(const char *name, const void *p, size_t n, char *path)
{
	FILE *f;

	snprintf(path, 160, "%s/%s", fuzz_tmp_dir(), name);
	if (!(f = fopen(path, "wb")) || (n && fwrite(p, 1, n, f) != n) || fclose(f))
		abort();
}

#endif
