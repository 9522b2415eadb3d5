/* The CUDA runs of a layer (profiler/run_cuda.h). Being written: no runs yet. */
#include "profiler/run_cuda.h"

#include "config.h"

int spp_run_cuda(const struct spp_matrix *w, const float *x, int64_t n, const float *yd,
		 const float *bound, uint64_t nnz, double theoretical_speedup,
		 const struct spp_run_opts *o, struct spp_layer_runs *out,
		 struct spp_error *err)
{
	(void)w, (void)x, (void)n, (void)yd, (void)bound, (void)nnz;
	(void)theoretical_speedup, (void)o, (void)out;
	return spp_error_set(err, SPP_E_DEVICE, "analyze does not run the CUDA kernels yet");
}
