/*
 * Dense baselines: the GEMM libraries every sparse format is measured
 * against (DESIGN section 4). The baseline of a shape is the fastest
 * candidate, timed by profiler/run.c; this module loads the candidates,
 * says what each detected, and runs Y = W * X on one.
 *
 * A library is one row of spp_dense_libs (OpenBLAS, oneDNN, BLIS); a
 * candidate is a library loaded one way: as the process loaded it, or,
 * where its CPU detection (or the user's choice of kernels) fell short of
 * this CPU's ISA, a second copy loaded (dlmopen, its own link namespace)
 * with the library's own variable set to the best kernel set its build has
 * (OPENBLAS_CORETYPE, BLIS_ARCH_TYPE): both libraries read that variable
 * once, when they load. The user's choice stays a candidate of its own.
 * Every candidate first runs a small checked GEMM in a child process, so
 * that a kernel set this CPU cannot run (SIGILL) or a build that aborts is
 * reported, never trusted.
 *
 * Ownership: a struct spp_dense_set is the caller's; spp_dense_set_open
 * fills it and spp_dense_set_close releases what it loaded.
 */
#ifndef SPP_KERNELS_DENSE_DENSE_H
#define SPP_KERNELS_DENSE_DENSE_H

#include <stddef.h>
#include <stdint.h>

#include "kernels/kernels.h"
#include "base/error.h"

#define SPP_DENSE_MAX 12

/*
 * Up to this N a candidate is also timed as N GEMVs (by_columns). Measured
 * here (4096 x 4096, 1 thread): the fastest GEMM took 13.8 ms at N = 2
 * against 4.1 ms for one GEMV, 15.1 ms at N = 4, 12.3 ms at N = 8; by N =
 * 16 N GEMVs (N reads of W) cannot come near a GEMM that reads it once.
 */
#define SPP_DENSE_COLS_MAX_N 8

struct spp_dense_cand;

struct spp_dense_lib {
	const char *key;        /* "openblas", "onednn", "blis": the --dense names */
	const char *name;       /* "OpenBLAS", "oneDNN", "BLIS" */
	/* the variable that picks its kernels when it loads; NULL: none to set */
	const char *tune_env;
	/*
	 * Load the library into c: as the process has it (variant NULL) or a
	 * copy with tune_env set to variant. Fills version, kernel, config,
	 * pool and the entry points. 0, or SPP_E_UNSUPPORTED with the reason
	 * (not installed, not built in, the build ignored the variant).
	 */
	int (*open)(struct spp_dense_cand *c, const char *variant, struct spp_error *err);
	/*
	 * The variants to load beside the library as loaded, when c (as
	 * loaded, by its own detection or the user's tune_env) runs kernels
	 * for a lesser ISA than isa, best first: the nth (0, 1, ...) one's
	 * tune_env value into buf, with the kernel set's name in kname. The
	 * first whose probe passes is loaded (a build may lack a kernel set).
	 * 0 when there is no nth. NULL: never.
	 */
	int (*better)(const struct spp_dense_cand *c, enum spp_isa isa, int nth, char *buf, size_t n,
		      char *kname, size_t kn);
	/* y = w * x (x K x N, y M x N, row-major) on `threads` threads; N = 1 as a GEMV */
	void (*gemm)(const struct spp_dense_cand *c, const struct spp_matrix *w, const float *x,
		     float *y, int64_t n, int threads);
	/*
	 * The same product as n GEMVs, one per column of X (strided x and y):
	 * at small N a library's GEMM can be slower than N times its GEMV
	 * (packing W costs more than it saves), so each candidate with one is
	 * also timed this way (spp_dense_cand.by_columns). NULL: none.
	 */
	void (*gemv_cols)(const struct spp_dense_cand *c, const struct spp_matrix *w, const float *x,
			  float *y, int64_t n, int threads);
	void (*close)(struct spp_dense_cand *c);  /* NULL: nothing to release */
	/* the largest N it is timed at (profiler/run_dense.c); 0: every N */
	int64_t max_n;
};

/* The libraries spprof knows, in report order; NULL-terminated. */
extern const struct spp_dense_lib *const spp_dense_libs[];

/* A library by key; NULL when unknown. */
const struct spp_dense_lib *spp_dense_lib_find(const char *key);

/* The known keys, comma-separated ("openblas,onednn,blis"), for messages. */
const char *spp_dense_lib_names(void);

/*
 * Thread pools of the timing harness (profiler/measure.h): the caller's
 * OpenMP runtime, OpenBLAS's own pthreads, and the runtimes of a copy
 * loaded in a namespace of its own.
 */
enum spp_dense_pool {
	SPP_POOL_OMP,           /* libgomp of the process: the sparse kernels, oneDNN, BLIS */
	SPP_POOL_OPENBLAS,      /* OpenBLAS's pthreads */
	SPP_POOL_OWN_OPENBLAS,  /* a second OpenBLAS's pthreads */
	SPP_POOL_OWN_OMP,       /* a second libgomp (a BLIS copy) */
	SPP_POOL_COUNT
};

struct spp_dense_cand {
	const struct spp_dense_lib *lib;
	char name[48];          /* "openblas", "openblas:Haswell", "onednn", "blis", "blis:skx" */
	char version[32];       /* "0.3.21" */
	char kernel[48];        /* kernel set in use: OpenBLAS core, oneDNN ISA, BLIS configuration */
	char origin[200];       /* how it was loaded and why ("as loaded; OPENBLAS_CORETYPE unset") */
	char env[96];           /* "OPENBLAS_CORETYPE=Haswell" set for this copy; "" as loaded */
	char config[200];       /* the library's own build description; "" */
	int ok;                 /* loaded and passed the probe: may be timed */
	/*
	 * 1: the companion of the candidate before it ("openblas/gemv"), the
	 * same library run as one GEMV per column of X (lib->gemv_cols); timed
	 * only at 2 <= N <= SPP_DENSE_COLS_MAX_N (profiler/run_dense.c)
	 */
	int by_columns;
	char reason[256];       /* why not ok */
	enum spp_dense_pool pool;
	void *handle;           /* dlopen/dlmopen handle; NULL when linked in */
	void (*fn[8])(void);    /* the library's entry points (each library's own order) */
};

struct spp_dense_set {
	struct spp_dense_cand c[SPP_DENSE_MAX];
	int n;
};

/*
 * What to load: keys of spp_dense_libs and explicit variants "lib:VALUE"
 * (VALUE a tune_env value, e.g. "openblas:Haswell"). NULL or empty: every
 * library, each as loaded plus its better variant where there is one.
 */
struct spp_dense_want {
	const char *names[SPP_DENSE_MAX];
	int n;
};

/*
 * Parse a --dense list ("openblas,onednn,blis", "openblas:Haswell") into
 * want. Returns 0 or SPP_E_USAGE naming the unknown entry.
 */
int spp_dense_parse(const char *list, struct spp_dense_want *want, char *storage, size_t n,
		    struct spp_error *err);

/*
 * Load the wanted candidates for this CPU's isa and probe each in a child
 * process (a small GEMM and GEMV checked against the reference on 1 and 2
 * threads). Candidates that cannot load or fail the probe stay in the set
 * with ok 0 and the reason, so reports can say why. Returns 0, or
 * SPP_E_RUNTIME when no candidate is usable (err says why each failed).
 */
int spp_dense_set_open(struct spp_dense_set *s, const struct spp_dense_want *want,
		       enum spp_isa isa, struct spp_error *err);

/* Release the set; accepts NULL and a zeroed set. */
void spp_dense_set_close(struct spp_dense_set *s);

/* Index of the first usable candidate; -1 when none. */
int spp_dense_set_first(const struct spp_dense_set *s);

/* y = w * x on candidate c (which must be ok). */
void spp_dense_run(const struct spp_dense_cand *c, const struct spp_matrix *w, const float *x,
		   float *y, int64_t n, int threads);

/* "OpenBLAS 0.3.21 (Haswell)": library, version and kernel set of c. */
void spp_dense_describe(const struct spp_dense_cand *c, char *buf, size_t n);

#endif
