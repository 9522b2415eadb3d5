/*
 * libFuzzer harness for the .npy and .npz parsers: an input that starts
 * like a zip archive goes to the npz parser, anything else to the npy one.
 * A successful parse must give tensors whose bytes lie in the input or in
 * memory the model owns and match shape x dtype.
 */
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "profiler/npy.h"
#include "test/fuzz/fuzz_tensors.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct spp_model *m = calloc(1, sizeof(*m));
	struct spp_error err = {0};
	int rc;

	if (!m)
		return 0;
	m->path = strdup("fuzz");
	if (size >= 2 && data[0] == 'P' && data[1] == 'K')
		rc = spp_npz_add(m, data, size, 0, "fuzz", &err);
	else
		rc = spp_npy_add(m, data, size, "'fuzz'", "t", 0, 0, &err);
	if (rc && (err.code != rc || err.msg[0] == '\0'))
		abort();
	if (!rc)
		fuzz_check_tensors(m);
	spp_model_destroy(m);
	return 0;
}
