/*
 * Sparse formats and SpMM kernels: Y = W * X with W (M x K) encoded in a
 * format, X row-major K x N, Y row-major M x N, fp32 compute.
 *
 * One table of operations per device, indexed by format key (STYLE.md).
 * No kernel times itself, prints, or allocates in spmm(): the measurement
 * code in profiler/ is written once around these operations.
 *
 * Ownership: encode() fills a caller-owned struct spp_encoded whose buffers
 * belong to it until release(); release() accepts NULL and a zeroed struct.
 * An encoded matrix does not borrow the input matrix.
 */
#ifndef SPP_KERNELS_KERNELS_H
#define SPP_KERNELS_KERNELS_H

#include <stddef.h>
#include <stdint.h>

#include "profiler/base/error.h"

/* A dense fp32 matrix, row-major, leading dimension k. Borrowed. */
struct spp_matrix {
	int64_t m, k;
	const float *v;
};

/* Vector code paths; spp_isa_detect() picks the best the CPU has. */
enum spp_isa {
	SPP_ISA_PORTABLE,
	SPP_ISA_AVX2,    /* AVX2 + FMA */
	SPP_ISA_AVX512,  /* AVX-512 F/BW/VL/DQ */
	SPP_ISA_COUNT
};

/* "portable", "avx2", "avx512". */
const char *spp_isa_name(enum spp_isa isa);

/* Best ISA this CPU and OS support (cpuid + xgetbv). */
enum spp_isa spp_isa_detect(void);

/* Settings of one kernel call, and what it reports back. */
struct spp_exec {
	int threads;        /* OpenMP threads (>= 1); must equal the encode()'s */
	enum spp_isa isa;   /* must be <= spp_isa_detect() */
	double *busy_ns;    /* optional out: busy time of each thread, `threads` entries */
};

struct spp_format_ops;

struct spp_encoded {
	const struct spp_format_ops *ops;
	int64_t m, k, nnz;
	uint64_t bytes;        /* encoded bytes the kernel reads: values + indices + offsets */
	int nparts;            /* work partition (one part per thread), by non-zeros */
	int64_t *part_nnz;     /* non-zeros of each part: nnz_imbalance = max / mean */
	void *impl;            /* the format's own buffers */
};

struct spp_format_ops {
	const char *key;       /* "csr", "coo", "bsr4", "bsr8", "bsr16", "bitmask", "nm2_4", ... */
	int block;             /* B of bsrB; N:M: the group size M; else 0 */
	int keep;              /* N of nmN_M; else 0 */
	/*
	 * Encode w for `threads` threads (the partition is part of the
	 * encoding). Returns 0, SPP_E_NOMEM, or SPP_E_UNSUPPORTED with the
	 * reason when the format cannot hold w (an N:M format on a
	 * non-compliant matrix: "12.5% of groups hold more than 2 non-zeros").
	 */
	int (*encode)(const struct spp_matrix *w, int threads,
		      struct spp_encoded *out, struct spp_error *err);
	/* y = w * x; x is K x N, y is M x N, both row-major. Returns 0. */
	int (*spmm)(const struct spp_encoded *w, const float *x, float *y,
		    int64_t n, const struct spp_exec *ex);
	void (*release)(struct spp_encoded *e);
};

/* The CPU formats, in report order; NULL-terminated. */
extern const struct spp_format_ops *const spp_cpu_formats[];

/*
 * The activation-sparsity kernels (kernels/cpu/act.c): csc (weight-only,
 * the pair of csc_act), csr_act and csc_act, which also skip the zeros of
 * X. Run beside spp_cpu_formats when activations have zeros; NULL-terminated.
 */
extern const struct spp_format_ops *const spp_cpu_act_formats[];

/* Look a CPU format up by key, in both tables; NULL when unknown. */
const struct spp_format_ops *spp_cpu_format_find(const char *key);

struct spp_blas_info {
	char name[32];        /* "OpenBLAS" */
	char version[64];     /* from openblas_get_config() */
	char config[256];     /* the whole config string */
	char core[64];        /* openblas_get_corename(): the kernel set in use */
	int max_threads;      /* openblas_get_num_threads() */
	char coretype_env[64];/* OPENBLAS_CORETYPE if set, else "" */
	int coretype_set;     /* OPENBLAS_CORETYPE is set (an empty value changes the core too) */
};

/* Describe the OpenBLAS linked in (the dense candidates: kernels/dense/dense.h). */
void spp_blas_info(struct spp_blas_info *out);

/* Plain reference SpMM on the dense matrix (tests and verification). */
void spp_reference_gemm(const struct spp_matrix *w, const float *x, float *y,
			int64_t n);

#endif
