/*
 * The CUDA device table: one more table of format operations, the same
 * shape as the CPU's spp_format_ops (kernels.h) but with W, x and y in
 * device memory. The vendor baselines (cuBLAS GEMM, cuSPARSE SpMM) are
 * entries of the same table, so that one loop measures them all.
 *
 * Only with HAVE_CUDA. encode() copies the host matrix to the device;
 * spmm() launches and returns without waiting (the caller times it with
 * CUDA events and synchronizes); release() accepts a zeroed struct.
 */
#ifndef SPP_KERNELS_CUDA_FORMATS_H
#define SPP_KERNELS_CUDA_FORMATS_H

#include <stdint.h>

#include "kernels/kernels.h"
#include "base/error.h"

struct spp_cuda_format;

struct spp_cuda_encoded {
	const struct spp_cuda_format *ops;
	int64_t m, k, nnz;
	uint64_t bytes;        /* device bytes of W the kernel reads */
	void *impl;            /* the format's device buffers and handles */
};

/* part_rows of an entry whose thread blocks take equal runs of non-zeros */
#define SPP_CUDA_PART_NNZ (-1)

struct spp_cuda_format {
	const char *key;       /* "csr", "csr_balanced", "bsr4", ..., "nm2_4", "cublas_dense" */
	int block;             /* B of bsrB; else 0 */
	int baseline;          /* 1 for a vendor library the kernels are compared with */
	/*
	 * Encode w and copy it to the current device; sets out->ops. 0, SPP_E_NOMEM (host),
	 * SPP_E_UNSUPPORTED (more than 2^31-1 rows, columns or non-zeros; a W the
	 * entry cannot hold, the reason in err; a device too old for it) or
	 * SPP_E_DEVICE with cudart's message.
	 */
	int (*encode)(const struct spp_matrix *w, struct spp_cuda_encoded *out,
		      struct spp_error *err);
	/*
	 * y = w * x on the default stream; x K x N, y M x N, row-major, on the
	 * device. An entry with prepare reads the x it prepared, not x.
	 */
	int (*spmm)(const struct spp_cuda_encoded *w, const float *x, float *y, int64_t n,
		    struct spp_error *err);
	void (*release)(struct spp_cuda_encoded *e);
	/* inputs as the kernel multiplies them: "fp32", "tf32", "fp16", "bf16" (accumulation fp32) */
	const char *precision;
	/*
	 * How the kernel splits W over thread blocks, for the static load
	 * balance: > 0 rows per block, SPP_CUDA_PART_NNZ equal runs of
	 * part_nnz non-zeros, 0 unknown (vendor libraries).
	 */
	int part_rows;
	int part_nnz;
	/*
	 * Optional: convert x (device, K x N fp32) once into the entry's own
	 * input (fp16, transposed, ...) kept in w, before the checked and timed
	 * runs, as a network would hold its activations already in that form.
	 * NULL: spmm reads x as it is.
	 */
	int (*prepare)(struct spp_cuda_encoded *w, const float *x, int64_t n,
		       struct spp_error *err);
};

/*
 * Every CUDA format and baseline, kernels first; NULL-terminated. The rows
 * live in libspprof-cuda.so (module.h): in the binary the table is the
 * loader's, empty when the module cannot be loaded, and lives as long as
 * the process. spp_cuda_formats reads as the array it was.
 */
const struct spp_cuda_format *const *spp_cuda_format_table(void);
#define spp_cuda_formats (spp_cuda_format_table())

/* Look an entry up by key; NULL when unknown (or the module not loaded). */
const struct spp_cuda_format *spp_cuda_format_find(const char *key);

#endif
