/*
 * --dedupe: repeated layers timed once. Two layers are one work unit when
 * their shape (M, K, N), dtype and non-zero pattern are the same: the
 * pattern is an XXH3 hash of each row's non-zero bits (of a matrix held
 * as its non-zeros, of its row and column indices), so the static figures
 * that decide a kernel's work are equal and the later layer's runs (and
 * N sweep) are a copy of the first's. Values may differ; they do not change a kernel's
 * work. Layers with their own activations are never deduplicated.
 */
#ifndef SPP_PROFILER_DEDUPE_H
#define SPP_PROFILER_DEDUPE_H

#include <stdint.h>

#include "base/error.h"
#include "profiler/layer.h"

struct spp_dedupe_key {
	int ok;                  /* 0: no key (no decoding): never deduplicated */
	int64_t m, k, n;
	int dtype;
	uint64_t pattern[2];     /* XXH3-128 of the non-zero pattern */
};

/* The key of layer l. Returns 0 or SPP_E_NOMEM. */
int spp_dedupe_key(const struct spp_layer *l, struct spp_dedupe_key *out, struct spp_error *err);

/* The first of keys[0..i) equal to keys[i], or -1. */
int spp_dedupe_find(const struct spp_dedupe_key *keys, int i);

struct spp_analysis;

/*
 * a->runs_from: each layer's key, then for layer i the first earlier
 * layer of its key (-1: its runs are its own). Returns 0 or SPP_E_NOMEM.
 */
int spp_dedupe_plan(struct spp_analysis *a, struct spp_error *err);

/* Layer i's runs as a copy of layer a->runs_from[i]'s. Returns 0 or SPP_E_NOMEM. */
int spp_dedupe_copy(struct spp_analysis *a, int i, struct spp_error *err);

/* Layer i's N sweep (--n-sweep) as a copy of layer a->runs_from[i]'s. 0 or SPP_E_NOMEM. */
int spp_dedupe_copy_nsweep(struct spp_analysis *a, int i, struct spp_error *err);

#endif
