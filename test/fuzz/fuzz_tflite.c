/*
 * libFuzzer harness for the TensorFlow Lite loader (load_tflite.c, its
 * FlatBuffer reader flatbuf.c and sparse decoder tflite_sparse.c): each
 * input is written to a file and opened as a model. A refusal is one clean
 * line with its code; a loaded model's tensors match shape x dtype with
 * every byte readable, and every layer's view and bias lie inside their
 * tensors.
 */
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>

#include "profiler/layer.h"
#include "profiler/loaders.h"
#include "test/fuzz/fuzz_tensors.h"
#include "test/fuzz/fuzz_tmp.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct spp_model *m = NULL;
	struct spp_error err = {0};
	char path[160];
	int rc;

	(void)spp_tflite_sniff(data, size, size);
	fuzz_tmp_write("m.tflite", data, size, path);
	rc = spp_load_tflite(path, &m, &err);
	fuzz_check_loaded(rc, m, &err);
	return 0;
}
