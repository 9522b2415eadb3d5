/*
 * Test harness shared by the test executables: run the spprof binary
 * (path from $SPPROF) and capture its output, and scratch folders.
 */
#ifndef SPP_TEST_HARNESS_H
#define SPP_TEST_HARNESS_H

#include <stddef.h>
#include <stdint.h>

struct harness_run {
	int status;   /* exit code, or 128 + signal */
	char *out;    /* stdout, NUL-terminated */
	char *err;    /* stderr, NUL-terminated */
	size_t out_len, err_len;
	long maxrss_kb; /* the child's peak resident set (wait4's ru_maxrss) */
};

/*
 * Run $SPPROF with the NULL-terminated args (not including the program
 * name), stdin from /dev/null. Returns 0 when it ran (see r->status).
 */
int harness_spprof(struct harness_run *r, const char *const *args);

/*
 * Same, under a CPU-time limit of cpu_s seconds (RLIMIT_CPU: a hang or a
 * runaway loop ends in SIGXCPU, status 128 + 24, not a stuck test). The
 * peak memory is in r->maxrss_kb, to hold a bound on after the run.
 */
int harness_spprof_limited(struct harness_run *r, const char *const *args, int cpu_s);

/* Same, for any program path. */
int harness_exec(struct harness_run *r, const char *prog, const char *const *args);

/*
 * A pseudo-terminal: 0 with its master and slave open, or -1 with why filled
 * (no /dev/ptmx, no devpts mounted, as in many containers and chroots).
 */
int harness_open_pty(int *master, int *slave, char *why, size_t n);

/*
 * Run $SPPROF with stderr on a pseudo-terminal: r->err is what the terminal
 * showed. -1 with why filled when no terminal can be had or it cannot run.
 */
int harness_spprof_tty(struct harness_run *r, const char *const *args, char *why, size_t n);

void harness_run_free(struct harness_run *r);

/* Number of lines in s (a final line without '\n' counts). */
int harness_count_lines(const char *s);

/* A new scratch folder under $TMPDIR (heap string); NULL on failure. */
/*
 * A test's own random draws, independent of the library's generators
 * (xorshift64* over *state): the next 64 bits, a uniform in [0, 1), and a
 * non-zero value in [-1, -1/16] or [1/16, 1].
 */
uint64_t harness_rand_u64(uint64_t *state);
double harness_rand_uniform(uint64_t *state);
float harness_rand_nz(uint64_t *state);

char *harness_tmpdir(void);

/* Remove a folder tree (best effort) and free the string. */
void harness_rmtree(char *dir);

/*
 * The DLMC subset beside the repository, <root>/../shared/bench/dlmc, from
 * $SPP_SAMPLE_MODELS = <root>/sample_models (heap string); NULL without it.
 */
char *harness_dlmc_dir(void);

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
