#include "profiler/static.h"
int spp_static_count(const struct spp_layer *l, struct spp_static_counts *out, struct spp_error *err)
{ (void)l; (void)out; return spp_error_set(err, SPP_E_UNSUPPORTED, "scan not written yet"); }
int spp_static_tensor_nnz(const struct spp_tensor *t, uint64_t *nnz, struct spp_error *err)
{ (void)t; *nnz = 0; return spp_error_set(err, SPP_E_UNSUPPORTED, "scan not written yet"); }
