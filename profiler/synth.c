#include "profiler/synth.h"
int spp_synth_parse_layer(const char *spec, struct spp_synth_layer *out, struct spp_error *err)
{ (void)out; return spp_error_set(err, SPP_E_USAGE, "synth not written yet: '%s'", spec); }
int spp_synth_write(const char *path, const struct spp_synth_layer *layers, int nlayers, uint64_t seed, struct spp_error *err)
{ (void)layers; (void)nlayers; (void)seed; return spp_error_set(err, SPP_E_OUTPUT, "synth not written yet: '%s'", path); }
