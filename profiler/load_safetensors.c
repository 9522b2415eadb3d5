#include "profiler/model.h"
int spp_load_safetensors(const char *path, struct spp_model **out, struct spp_error *err)
{ *out = 0; return spp_error_set(err, SPP_E_UNSUPPORTED, "'%s': safetensors loader not written yet", path); }
int spp_load_safetensors_index(const char *path, struct spp_model **out, struct spp_error *err)
{ *out = 0; return spp_error_set(err, SPP_E_UNSUPPORTED, "'%s': index loader not written yet", path); }
