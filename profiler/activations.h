/*
 * Real activations for a layer's kernel runs (`analyze --activations DIR`):
 * one .npy per layer, named after the layer with every character outside
 * [A-Za-z0-9._-] replaced by '_' (layer "fc1.weight" reads
 * DIR/fc1.weight.npy). The array is X of the layer's GEMM view, K x N or
 * N x K (transposed on load; a square K x K array is read as K x N), in any
 * dtype the weights decode from (f32, f16, bf16, f64, integers, ...); a
 * 1-D array of K elements is N = 1. N must be the layer's N (--n, or the
 * model's).
 */
#ifndef SPP_PROFILER_ACTIVATIONS_H
#define SPP_PROFILER_ACTIVATIONS_H

#include <stddef.h>

#include "base/error.h"
#include "profiler/layer.h"

/* The file of layer l under dir into path (path_n bytes). */
void spp_activations_path(const char *dir, const struct spp_layer *l, char *path, size_t path_n);

/*
 * Load l's activations from dir as fp32 K x N row-major into *x (malloc'd,
 * the caller frees) and their file into path. Returns 0, with *x NULL when
 * the layer has no file (its runs use synthetic X), path "" when none can
 * have its name (longer than NAME_MAX with .npy, or than path_n); SPP_E_FORMAT
 * or SPP_E_IO naming the file for a bad one (wrong shape, not a .npy, an
 * undecodable dtype); SPP_E_NOMEM.
 */
int spp_activations_load(const char *dir, const struct spp_layer *l, float **x,
			 char *path, size_t path_n, struct spp_error *err);

#endif
