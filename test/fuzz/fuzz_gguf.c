/*
 * libFuzzer harness for the GGUF validator. Besides "never crash, never
 * leak", it checks what a successful parse promises: every tensor lies
 * inside the buffer, holds shape x dtype bytes and has at most 4 dims.
 */
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>

#include "profiler/gguf.h"
#include "profiler/safetensors.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct spp_tensor *t = NULL;
	struct spp_error err = {0};
	int n = -1;
	int rc = spp_gguf_parse(data, size, "fuzz", &t, &n, &err);

	if (rc) {
		if (t || n != 0 || err.code != rc || err.msg[0] == '\0')
			abort();
		return 0;
	}
	for (int i = 0; i < n; i++) {
		uint64_t need;

		if (t[i].offset > size || t[i].nbytes > size - t[i].offset)
			abort();
		if ((t[i].nbytes == 0) != (t[i].data == NULL))
			abort();
		if (t[i].ndim < 0 || t[i].ndim > SPP_GGUF_MAX_DIMS)
			abort();
		if (spp_dtype_nbytes(t[i].dtype, t[i].numel, &need) || need != t[i].nbytes)
			abort();
	}
	spp_safetensors_tensors_free(t, n);
	return 0;
}
