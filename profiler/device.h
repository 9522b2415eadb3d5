/*
 * The device interface of the measurement (DESIGN section 4): what the one
 * harness (profiler/measure.h) needs of a device to time a table entry on
 * one layer, whatever the device is. A case is one entry opened on one
 * layer; a device implements five operations on it:
 *
 *   open    allocate and upload: W as the entry holds it, X, Y's buffer
 *   run     one launch (the warm-up's, and a timed run's on the host clock)
 *   result  one launch, synchronised, Y copied to the host: the checked run
 *   time    one launch timed by the device itself (CUDA events); NULL: the
 *           harness reads the host clock around run
 *   close   free what open took
 *
 * and sync, which waits for everything queued on the device. Warm-up,
 * interleaving, the budget, verification and the figures are written once,
 * here and in profiler/measure.c, for every device: the CPU's
 * (profiler/device_cpu.c: the formats of kernels/kernels.h and the dense
 * candidates of kernels/dense/dense.h) and CUDA's (profiler/device_cuda.c:
 * the CUDA table of kernels/cuda/formats.h).
 */
#ifndef SPP_PROFILER_DEVICE_H
#define SPP_PROFILER_DEVICE_H

#include <stddef.h>
#include <stdint.h>

#include "kernels/kernels.h"
#include "kernels/lowp/lowp.h"
#include "base/error.h"
#include "profiler/measure.h"

struct spp_run;
struct spp_bw_model;
struct spp_device_case;

/* The layer every case of a device is opened on. */
struct spp_device_layer {
	const struct spp_matrix *w;  /* m x k fp32, host */
	const float *x;              /* k x n row-major, host */
	int64_t n;
	uint64_t nnz;                /* static figures of w */
	double theoretical_speedup;
};

struct spp_device_ops {
	const char *backend;         /* the runs' backend: "cpu", "cuda" */
	/*
	 * Open entry on L into c (c->impl and the figures below). Returns 0;
	 * SPP_E_UNSUPPORTED when the entry cannot hold W (not applicable,
	 * err says why); SPP_E_NOMEM; any other status: the open failed.
	 */
	int (*open)(void *dev, const void *entry, const struct spp_device_layer *L,
		    struct spp_device_case *c, struct spp_error *err);
	/* One launch; busy_ns[0..c->nthreads-1] each thread's busy time when c->nthreads > 0. */
	int (*run)(struct spp_device_case *c, double *busy_ns, struct spp_error *err);
	/* One launch into Y, poisoned first (NaN), synchronised and copied to y (m x n, host). */
	int (*result)(struct spp_device_case *c, float *y, struct spp_error *err);
	/* One launch timed by the device: *ns. NULL: the host clock around run. */
	int (*time)(struct spp_device_case *c, double *ns, struct spp_error *err);
	void (*sync)(void *dev);
	/* Free the case; accepts one whose open failed. */
	void (*close)(struct spp_device_case *c);
};

struct spp_device {
	const struct spp_device_ops *ops;
	void *ctx;                   /* the device's own state (CPU: threads, ISA, Y's buffer) */
};

/* One entry opened on one layer. */
struct spp_device_case {
	const struct spp_device *dev;
	void *impl;                  /* the device's case; NULL: not open */
	double w_bytes;              /* W as the entry holds it (the bytes its kernel reads) */
	double x_bytes;              /* the rows of X its kernel reads, N columns of fp32; NAN: all of X */
	double nnz_imbalance;        /* W's nonzeros over the entry's parts: max / mean; NAN unknown */
	double copy_ns[3];           /* W and X to the device, Y back; NAN where nothing is copied */
	int nthreads;                /* busy_ns entries run fills; 0: none */
	int pool;                    /* thread pool it runs on (struct spp_bench_item) */
	struct spp_error e;          /* why its last call failed */
};

/* What a checked run is compared with. */
struct spp_device_check {
	const float *ref;            /* the reference output, m x n */
	const float *bound;          /* the element-wise error scale |W|.|X|, m x n */
	double rtol;                 /* |y - ref| <= rtol * bound */
	const char *against;         /* in the failure's reason: "dense", "the CPU reference" */
	float *y;                    /* host scratch, m x n */
};

/* c zeroed, then d's open: its status. */
int spp_device_open(const struct spp_device *d, const void *entry,
		    const struct spp_device_layer *L, struct spp_device_case *c, struct spp_error *err);

/*
 * Open entry on L, run it once and check its output (chk); r's status,
 * reason, max_error, nnz_imbalance and copy_ns say how it went: an entry
 * that cannot hold W is not applicable, one whose open (out of memory
 * included) or launch fails, or whose output fails the check, failed.
 * chk NULL: there is no verified result to check against (failed).
 * Returns 1 when c is open and verified, 0 when not (c closed).
 */
int spp_device_open_checked(const struct spp_device *d, const void *entry,
			    const struct spp_device_layer *L, const struct spp_device_check *chk,
			    struct spp_device_case *c, struct spp_run *r);

/* Close c when open; accepts a zeroed case. */
void spp_device_close(struct spp_device_case *c);

/* The harness's item of case c: run, time, threads and pool from the device. */
struct spp_bench_item spp_device_item(struct spp_device_case *c);

/*
 * Time the n open cases in the one harness with options bo, then wait for
 * the devices (sync). out[i] is case i's result. Returns what
 * spp_bench_run returns.
 */
int spp_device_time(struct spp_device_case *const *c, int n, const struct spp_bench_opts *bo,
		    struct spp_bench_result *out, struct spp_error *err);

/* The work a run does, for its rate and its ideal speedup. */
enum spp_device_work {
	SPP_WORK_SPARSE,             /* the sparse FLOPs 2 * nnz * N; ideal: the static one */
	SPP_WORK_DENSE,              /* a baseline: all the dense FLOPs; ideal 1 */
	SPP_WORK_GIVEN,              /* flops and ideal as given (an activation-skipping kernel's combined FLOPs) */
};

/*
 * The measured figures of a timed case (DESIGN section 4) into r, whose
 * time is set: its median against the baseline's t_dense_ns, the bytes W
 * takes on the device, bw the level yardstick (NULL: bw_util unknown).
 */
void spp_device_figures(const struct spp_device_layer *L, const struct spp_device_case *c,
			const struct spp_bw_model *bw, double t_dense_ns, enum spp_device_work work,
			double flops, double ideal, struct spp_run *r);

/*
 * The CPU: spp_device_cpu_formats opens a struct spp_format_ops (encodes
 * W), spp_device_cpu_dense a struct spp_dense_cand (W as it is). Every
 * case writes the one Y buffer of the device; ctx is a struct
 * spp_device_cpu.
 */
struct spp_device_cpu {
	int threads;                 /* OpenMP and BLAS threads */
	enum spp_isa isa;            /* the kernels' vector path */
	float *y;                    /* m x n: the timed runs' output */
};

extern const struct spp_device_ops spp_device_cpu_formats;

/* An entry of spp_device_cpu_epilogue: a format run with an epilogue (--epilogue). */
struct spp_device_cpu_variant {
	const struct spp_format_ops *f;
	struct spp_epi epi;
	int unfused;                 /* 1: the plain kernel, then spp_epilogue_apply; 0: fused */
};

extern const struct spp_device_ops spp_device_cpu_epilogue;
extern const struct spp_device_ops spp_device_cpu_dense;

/* The encoding a CPU format case holds; NULL for a dense case or one not open. */
const struct spp_encoded *spp_device_cpu_encoded(const struct spp_device_case *c);

/*
 * The CPU in a deployed precision (profiler/device_lowp.c, issue 47): an
 * entry is a kernels/lowp format or, with dense_key, a low-precision
 * dense candidate ("onednn", "openblas"). X is the caller's, quantized in
 * both layouts; every case writes the one buffer y (M x N; a dense case
 * Y^T, N x M). ctx is a struct spp_device_lowp.
 */
struct spp_dense_lowp_x;

struct spp_device_lowp {
	enum spp_prec prec;
	int threads;
	float *y;                          /* m x n */
	const struct spp_lowp_x *sx;       /* the sparse kernels' X */
	const struct spp_dense_lowp_x *dx; /* the dense candidates' X^T (nk) */
};

struct spp_device_lowp_entry {
	const char *dense_key;             /* NULL: the format below */
	enum spp_lowp_format format;
};

extern const struct spp_device_ops spp_device_lowp;

/* A dense case's library and kernel ("oneDNN matmul 2.6.3 bf16 (brg:...)"); "" for a format. */
void spp_device_lowp_describe(const struct spp_device_case *c, char *buf, size_t n);

/*
 * CUDA (built with HAVE_CUDA only): a case is an entry of the CUDA table
 * (struct spp_cuda_format) opened on the current device: W encoded and
 * copied, X copied and prepared, Y's device buffer; CUDA events time each
 * launch alone. ctx: none.
 */
extern const struct spp_device_ops spp_device_cuda;

struct spp_cuda_case;

/* The CUDA case of c (CUPTI profiles its launch); NULL when not open. */
struct spp_cuda_case *spp_device_cuda_case(const struct spp_device_case *c);

#endif
