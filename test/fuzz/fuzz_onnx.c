/*
 * libFuzzer harness for the ONNX loader (wire check, protobuf-c decoding,
 * tensors, graph walk, layers) on a buffer; external data is unavailable
 * there. Besides "never crash, never leak", it checks what a successful
 * parse promises: every tensor's bytes and every layer's view lie inside
 * their tensor, so a loader bug that lets a bad file through aborts here.
 */
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "profiler/layer.h"
#include "profiler/loaders.h"
#include "profiler/onnx/onnx.h"
#include "profiler/static.h"
#include "test/fuzz/fuzz_tensors.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct spp_model *m = calloc(1, sizeof(*m));
	struct spp_error err = {0};
	int rc;

	if (!m || !(m->path = strdup("fuzz")))
		abort();
	(void)spp_onnx_sniff(data, size < 64 ? size : 64, size);
	rc = spp_onnx_parse(data, size, "fuzz", NULL, NULL, m, &err);
	if (rc) {
		if (err.code != rc || strncmp(err.msg, "'fuzz': ", 8) != 0)
			abort();
		spp_model_destroy(m);
		return 0;
	}
	for (int i = 0; i < m->ntensors; i++) {
		const struct spp_tensor *t = &m->tensors[i];
		uint64_t nnz;
		if (t->ndim < 0 || t->ndim > SPP_MAX_DIMS || (t->nbytes && !t->data))
			abort();
		/* reads every byte: a bad pointer or size shows under ASan */
		if (spp_static_tensor_nnz(t, &nnz, &err) == 0 && nnz > t->numel)
			abort();
	}
	fuzz_check_layers(m);
	spp_model_destroy(m);
	return 0;
}
