/*
 * A tensor described in memory for tests that fill layers by hand (the
 * metrics and reports tests): no file, data borrowed from the caller.
 */
#ifndef SPP_TEST_TENSOR_FIXTURE_H
#define SPP_TEST_TENSOR_FIXTURE_H

#include <stdint.h>

#include "profiler/model.h"

/*
 * Fill t: name (borrowed), dtype dt, shape[0..ndim), numel, nbytes as the
 * dtype packs numel elements, data (borrowed). The test fails when the
 * size overflows.
 */
void tensor_make_named(struct spp_tensor *t, const char *name, enum spp_dtype dt,
		       int ndim, const int64_t *shape, const void *data);

#endif
