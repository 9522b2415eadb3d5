/*
 * libFuzzer harness for the safetensors header validator. Besides "never
 * crash, never leak", it checks what a successful parse promises: every
 * tensor lies inside the buffer and the tensors tile the data buffer in
 * order, so a validator bug that lets a bad file through aborts here.
 */
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>

#include "profiler/safetensors.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct spp_tensor *t = NULL;
	struct spp_error err = {0};
	int n = -1;
	int rc = spp_safetensors_parse(data, size, "fuzz", &t, &n, &err);

	if (rc) {
		if (t || n != 0 || err.code != rc || err.msg[0] == '\0')
			abort();
		return 0;
	}
	for (int i = 0; i < n; i++) {
		if (t[i].offset > size || t[i].nbytes > size - t[i].offset)
			abort();
		if ((t[i].nbytes == 0) != (t[i].data == NULL))
			abort();
		if (t[i].data && t[i].data != data + t[i].offset)
			abort();
		if (i > 0 && t[i].offset != t[i - 1].offset + t[i - 1].nbytes)
			abort();
		if (t[i].ndim < 0 || t[i].ndim > SPP_MAX_DIMS)
			abort();
	}
	if (n > 0 && t[n - 1].offset + t[n - 1].nbytes != size)
		abort();
	spp_safetensors_tensors_free(t, n);
	return 0;
}
