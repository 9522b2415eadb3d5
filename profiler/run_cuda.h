/*
 * The CUDA runs of one layer (DESIGN section 4 on the GPU): every entry of
 * the CUDA table (kernels/cuda/formats.h: the format kernels, the sparse
 * tensor-core 2:4 kernel, the cuBLAS and cuSPARSE baselines) on the W and X
 * the CPU runs used, each verified against the CPU's dense result before
 * its time counts, timed with CUDA events after warm-up. The GPU is one
 * more device table: the runs are struct spp_run entries with backend
 * "cuda", appended to the layer's runs, their speedup against the cuBLAS
 * fp32 GEMM run (the GPU's dense baseline; a reduced-precision kernel also
 * against the cuBLAS run of its own precision, said in its reason-free
 * figures: precision names it).
 *
 * Built in every configuration: without HAVE_CUDA, or with no device,
 * spp_run_cuda() appends nothing and returns SPP_E_DEVICE with the reason.
 */
#ifndef SPP_PROFILER_RUN_CUDA_H
#define SPP_PROFILER_RUN_CUDA_H

#include <stdint.h>

#include "profiler/run.h"

/*
 * Append the CUDA runs of w (m x k fp32, host, borrowed) times x (k x n
 * host) to out (runs reallocated; out->nruns grows). yd is the CPU's
 * verified dense result (m x n) and bound the element-wise scale
 * (|W|.|X|) the check uses: |y - yd| <= rtol * bound with rtol
 * o->verify_rtol for fp32 and a bound stated in the run's reason for
 * reduced precision. nnz and theoretical_speedup are the static figures
 * of w. A kernel that fails, or fails the check, is a run with status
 * failed and the reason, not an error. Returns 0; SPP_E_NOMEM (out left
 * as it was); SPP_E_DEVICE with the reason when there is no usable device
 * (nothing appended).
 */
int spp_run_cuda(const struct spp_matrix *w, const float *x, int64_t n, const float *yd,
		 const float *bound, uint64_t nnz, double theoretical_speedup,
		 const struct spp_run_opts *o, struct spp_layer_runs *out,
		 struct spp_error *err);

#endif
