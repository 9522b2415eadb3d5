/*
 * The check every loader harness makes of a model it loaded: each tensor's
 * bytes match shape x dtype, data is NULL exactly when there are none, and
 * every byte is readable (ASan checks where it lives).
 */
#ifndef SPP_TEST_FUZZ_TENSORS_H
#define SPP_TEST_FUZZ_TENSORS_H

#include <stdlib.h>

#include "profiler/model.h"

static void fuzz_check_tensors(const struct spp_model *m)
{
	for (int i = 0; i < m->ntensors; i++) {
		const struct spp_tensor *t = &m->tensors[i];
		uint64_t need;
		volatile unsigned char sink = 0;

		if (spp_dtype_nbytes(t->dtype, t->numel, &need) || need != t->nbytes)
			abort();
		if ((t->nbytes == 0) != (t->data == NULL))
			abort();
		for (uint64_t b = 0; b < t->nbytes; b++)
			sink ^= t->data[b];
		(void)sink;
	}
}

#endif
