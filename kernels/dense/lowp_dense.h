/*
 * Low-precision dense baselines (issue 47): Y = W * X with W stored in the
 * precision a layer will be deployed in (bf16, fp16, int8), X given in it,
 * Y fp32, so that a sparse format in that precision is measured against
 * the dense GEMM of the same precision, never against fp32.
 *
 * A candidate is one row of spp_dense_lowp_libs: oneDNN's matmul primitive
 * (every precision oneDNN runs on this CPU) and OpenBLAS's cblas_sbgemm
 * (bf16, where the installed build has it). spp_dense_lowp_open quantizes
 * W, loads the candidate, prepares W in the library's own layout once, and
 * checks a small product against the double-precision reference of the
 * same quantized values before it returns; a precision the CPU or library
 * cannot run is SPP_E_UNSUPPORTED with the reason, never faked.
 *
 * Values: bf16 and fp16 are the IEEE bit patterns (uint16_t), rounded to
 * nearest even from fp32 (base/dtype.h's conversions). int8: W is s8 with one scale per row,
 * w[i][k] = wscale[i] * q[i][k] (symmetric, scale max|w[i]| / 127); X is
 * s8 (zero point 0) or u8 with a zero point, x = xscale * (q - zp), one
 * scale for the tensor.
 *
 * Layouts: X K x N and Y M x N, row-major, as the fp32 baselines (dense.h)
 * and the sparse kernels; or (nk) X^T N x K and Y^T N x M, row-major, the
 * batch-major layout of inference, oneDNN's own: no copies at all, the
 * baseline to time where X is spprof's to make. oneDNN computes
 * Y^T = X^T * W^T: W's rows are the matmul's N columns, so
 * that W is oneDNN's weights (reordered once into each blocked layout it
 * picks: N = 64's at open, another where a run's N wants one) and the
 * per-row int8 scales are its per-column output scales (mask 1 << 1, the
 * one per-channel case 2.6 has; fixed in a primitive per X scale, as
 * 2.6's brgemm kernels take no run-time scales). X^T is read in place
 * where the kernel takes a transposed source (bf16) or transposed into a
 * buffer (int8, where a transposed source falls to gemm:jit); at N > 1 Y^T
 * is written into a buffer and transposed into Y (a strided destination
 * falls to the reference kernel). At N = 1 and with nk neither copy is made.
 *
 * Ownership: struct spp_dense_lowp is the caller's; open fills it and owns
 * what it allocates until spp_dense_lowp_close. Not thread-safe: one run
 * at a time per candidate (each run may create a primitive for its N and
 * thread count, kept for the next).
 *
 * The precisions are kernels/lowp/lowp.h's table (enum spp_prec); fp32 is
 * dense.h's, refused here.
 */
#ifndef SPP_KERNELS_DENSE_LOWP_DENSE_H
#define SPP_KERNELS_DENSE_LOWP_DENSE_H

#include <stddef.h>
#include <stdint.h>

#include "base/error.h"
#include "kernels/kernels.h"
#include "kernels/lowp/lowp.h"

/* X in the precision: K x N (nk: N x K), row-major. Borrowed. */
struct spp_dense_lowp_x {
	enum spp_prec prec;
	int64_t k, n;
	const void *v;          /* uint16_t (bf16, fp16), int8_t or uint8_t (int8) */
	int is_unsigned;        /* int8: 1 u8 with zero_point, 0 s8 (zero_point 0) */
	float scale;            /* int8: x = scale * (q - zero_point) */
	int32_t zero_point;
	int nk;                 /* 1: v is X^T, N x K, and Y is written as Y^T, N x M */
};

/*
 * Quantize fp32 x (k x n, row-major) into out, whose v must hold k * n
 * elements of the precision (2 bytes, or 1 for int8), transposed to N x K
 * when nk: bf16/fp16 rounded; int8 with
 * the scale from max |x| (s8: max / 127; u8: (max - min) / 255 with the
 * zero point that maps 0 exactly). Fills everything but v. 0, or
 * SPP_E_USAGE for a bad size or precision.
 */
int spp_dense_lowp_quantize_x(enum spp_prec p, int is_unsigned, int nk, const float *x, int64_t k,
			      int64_t n, void *v, struct spp_dense_lowp_x *out, struct spp_error *err);

/* W in the precision, row-major M x K, as spp_dense_lowp_open made it. */
struct spp_dense_lowp_w {
	enum spp_prec prec;
	int64_t m, k;
	uint16_t *h;            /* bf16, fp16: the values */
	int8_t *q;              /* int8: the values */
	float *scale;           /* int8: per row */
};

struct spp_dense_lowp;

struct spp_dense_lowp_lib {
	const char *key;        /* "onednn", "openblas" */
	const char *name;       /* "oneDNN matmul", "OpenBLAS sbgemm" */
	/*
	 * Load the library for c->prec: fill c->version, c->isa, c->priv.
	 * 0, or SPP_E_UNSUPPORTED with why.
	 */
	int (*open)(struct spp_dense_lowp *c, struct spp_error *err);
	/* W (c->w, already quantized) into the library's layout. 0 or status. */
	int (*prepare)(struct spp_dense_lowp *c, struct spp_error *err);
	/* y = w * x on `threads` threads. 0 or status. */
	int (*run)(struct spp_dense_lowp *c, const struct spp_dense_lowp_x *x, float *y, int threads,
		   struct spp_error *err);
	void (*close)(struct spp_dense_lowp *c);  /* accepts a half-opened c */
};

/* The candidates in report order; NULL-terminated. */
extern const struct spp_dense_lowp_lib *const spp_dense_lowp_libs[];

/* A candidate by key; NULL when unknown. */
const struct spp_dense_lowp_lib *spp_dense_lowp_lib_find(const char *key);

struct spp_dense_lowp {
	const struct spp_dense_lowp_lib *lib;
	enum spp_prec prec;
	struct spp_dense_lowp_w w;
	char version[32];       /* "2.6.3" */
	char isa[48];           /* the ISA the library dispatches: "avx512_core_amx" */
	/*
	 * its kernel: "brg:avx512_core_amx_bf16" (oneDNN's impl_info_str) of
	 * the last primitive made, at the probe, at N = 64 on open, then at
	 * each run's N (oneDNN picks by shape: small ones run avx512_core_bf16
	 * or vnni kernels on an AMX CPU)
	 */
	char impl[64];
	void *priv;             /* the library's own state */
};

/*
 * Open candidate `key` for precision p with W (fp32 M x K; may be NULL to
 * only ask whether it runs here, as spprof info does): load, probe a small
 * product against the reference, quantize and prepare W. 0; SPP_E_USAGE
 * for an unknown key or precision; SPP_E_UNSUPPORTED when this CPU or the
 * library cannot run p (err says why); SPP_E_VERIFY when the probe
 * computed wrong; SPP_E_NOMEM. On failure c holds nothing to close (close
 * is harmless).
 */
int spp_dense_lowp_open(struct spp_dense_lowp *c, const char *key, enum spp_prec p,
			const struct spp_matrix *w, struct spp_error *err);

/*
 * y (M x N fp32; x->nk: y^T, N x M) = W * x on `threads` threads; x->prec must be c's and
 * x->k W's K. 0, SPP_E_USAGE on a mismatch, or the library's failure.
 */
int spp_dense_lowp_run(struct spp_dense_lowp *c, const struct spp_dense_lowp_x *x, float *y,
		       int threads, struct spp_error *err);

/* y = W * x in double over the same quantized values, rounded to fp32 (x->nk: y^T). */
void spp_dense_lowp_reference(const struct spp_dense_lowp_w *w, const struct spp_dense_lowp_x *x,
			      float *y);

/*
 * Run c on x and compare against the reference: 0, or SPP_E_VERIFY naming
 * the worst element, SPP_E_NOMEM, or the run's failure. Tolerance: fp32
 * accumulation, (1e-5 + K * 2^-23) of sum |w x| for bf16 and fp16, 1e-6
 * for int8 (exact s32 sums, one float scaling).
 */
int spp_dense_lowp_verify(struct spp_dense_lowp *c, const struct spp_dense_lowp_x *x, int threads,
			  struct spp_error *err);

/* Release what open made; accepts NULL and a zeroed or failed c. */
void spp_dense_lowp_close(struct spp_dense_lowp *c);

/* "oneDNN matmul 2.6.3 bf16 (brg:avx512_core_amx_bf16)". */
void spp_dense_lowp_describe(const struct spp_dense_lowp *c, char *buf, size_t n);

#endif
