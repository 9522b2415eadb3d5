/*
 * libFuzzer harness for the activations reader (analyze --activations DIR):
 * the first two bytes pick the layer's K and N (1 to 16 each), the rest is
 * written as DIR/w.npy and loaded for that layer. A load gives a K x N
 * buffer of exactly that file's path; a refusal is one clean line, naming
 * the file, with no buffer.
 */
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "profiler/activations.h"
#include "base/safe_text.h"
#include "profiler/model.h"
#include "test/fuzz/fuzz_tmp.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	static float wdata[3 * 16];
	struct spp_tensor t = {.name = "w", .dtype = SPP_DTYPE_F32, .ndim = 2};
	struct spp_error err = {0};
	struct spp_layer l;
	char file[160], path[4096];
	volatile float sum = 0;
	float *x = NULL;
	int64_t k, n;
	int rc;

	if (size < 2)
		return 0;
	k = 1 + data[0] % 16;
	n = 1 + data[1] % 16;
	t.shape[0] = 3;
	t.shape[1] = k;
	t.numel = (uint64_t)(3 * k);
	t.data = (const unsigned char *)wdata;
	t.nbytes = t.numel * sizeof(float);
	spp_layer_init(&l, &t, n);
	fuzz_tmp_write("w.npy", data + 2, size - 2, file);
	rc = spp_activations_load(fuzz_tmp_dir(), &l, &x, path, sizeof(path), &err);
	if (rc) {
		if (x || err.code != rc || !err.msg[0] || !spp_safe_clean(err.msg) ||
		    (rc != SPP_E_NOMEM && !strstr(err.msg, "w.npy")))
			abort();
		return 0;
	}
	if (!x || strcmp(path, file) != 0)
		abort();
	for (int64_t i = 0; i < k * n; i++)
		sum += x[i]; /* every element is there (ASan) */
	free(x);
	return 0;
}
