/*
 * The checks every loader harness makes of a model it loaded: each tensor's
 * bytes match shape x dtype, data is NULL exactly when there are none, and
 * every byte is readable (ASan checks where it lives); and every layer's
 * view and bias lie inside their tensors; and what a loader returned.
 */
#ifndef SPP_TEST_FUZZ_TENSORS_H
#define SPP_TEST_FUZZ_TENSORS_H

#include <stdlib.h>

#include "base/safe_text.h"
#include "profiler/layer.h"
#include "profiler/model.h"

static inline void fuzz_check_tensors(const struct spp_model *m)
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

/* Every layer's view and bias lie inside their tensors. */
static inline void fuzz_check_layers(const struct spp_model *m)
{
	struct spp_layer *layers = NULL;
	struct spp_error err = {0};
	int nl = 0;

	if (spp_layers_from_model(m, 16, 0, &layers, &nl, &err))
		return;
	for (int i = 0; i < nl; i++) {
		const struct spp_gemm_view *v = &layers[i].view;

		if (v->m <= 0 || v->k <= 0 ||
		    spp_view_index(v, v->m - 1, v->k - 1) >= layers[i].weight->numel ||
		    spp_view_index(v, 0, 0) >= layers[i].weight->numel)
			abort();
		if (layers[i].bias && layers[i].bias->numel != (uint64_t)v->m)
			abort();
	}
	free(layers);
}

/*
 * A loader's result: a refusal is one clean line with its code and no
 * model; a model has its tensors and layers checked, and is destroyed.
 */
static inline void fuzz_check_loaded(int rc, struct spp_model *m, const struct spp_error *err)
{
	if (rc) {
		if (m || err->code != rc || !err->msg[0] || !spp_safe_clean(err->msg))
			abort();
		return;
	}
	fuzz_check_tensors(m);
	fuzz_check_layers(m);
	spp_model_destroy(m);
}

#endif
