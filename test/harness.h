/*
 * Test harness shared by the test executables: run the spprof binary
 * (path from $SPPROF) and capture its output, and scratch folders.
 */
#ifndef SPP_TEST_HARNESS_H
#define SPP_TEST_HARNESS_H

#include <stddef.h>

struct harness_run {
	int status;   /* exit code, or 128 + signal */
	char *out;    /* stdout, NUL-terminated */
	char *err;    /* stderr, NUL-terminated */
	size_t out_len, err_len;
};

/*
 * Run $SPPROF with the NULL-terminated args (not including the program
 * name), stdin from /dev/null. Returns 0 when it ran (see r->status).
 */
int harness_spprof(struct harness_run *r, const char *const *args);

/* Same, for any program path. */
int harness_exec(struct harness_run *r, const char *prog, const char *const *args);

void harness_run_free(struct harness_run *r);

/* Number of lines in s (a final line without '\n' counts). */
int harness_count_lines(const char *s);

/* A new scratch folder under $TMPDIR (heap string); NULL on failure. */
char *harness_tmpdir(void);

/* Remove a folder tree (best effort) and free the string. */
void harness_rmtree(char *dir);

/* dir + "/" + name in a heap string. */
char *harness_join(const char *dir, const char *name);

/* Number of entries in folder dir, "." and ".." not counted; -1 when unreadable. */
int harness_count_entries(const char *dir);

/* Whether path exists. */
int harness_exists(const char *path);

/* Read a whole file into a NUL-terminated heap buffer; NULL on failure. */
char *harness_slurp(const char *path, size_t *len);

/* Write len bytes to path; 0 on success. */
int harness_write(const char *path, const void *data, size_t len);

/* Write a little-endian fp32 .npy (version 1.0) of rows x cols, C order; 0 on success. */
int harness_write_npy_f32(const char *path, long rows, long cols, const float *v);

#endif
