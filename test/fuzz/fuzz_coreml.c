/*
 * libFuzzer harness for the Core ML loader (coreml/: the Model protobuf,
 * neural network layers, ML program values, weight blobs, constexpr
 * decoding): an input is a little-endian u32 n, then n bytes written as
 * m.mlmodel and the rest as weights/weight.bin beside it (what the
 * program's "@model_path/weights/weight.bin" names); an input too short
 * for its n is the .mlmodel alone. A refusal is one clean line with its
 * code; a loaded model's tensors match shape x dtype with every byte
 * readable, and every layer's view and bias lie inside their tensors.
 */
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/stat.h>
#include <unistd.h>

#include "profiler/loaders.h"
#include "test/fuzz/fuzz_tensors.h"
#include "test/fuzz/fuzz_tmp.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static char weights[200], blob[260];

/* weights/ is not the scratch folder's own: removed before it (atexit runs backwards) */
static void remove_weights(void)
{
	unlink(blob);
	rmdir(weights);
}

static void write_blob(const uint8_t *p, size_t n)
{
	FILE *f;

	if (!weights[0]) {
		snprintf(weights, sizeof(weights), "%s/weights", fuzz_tmp_dir());
		snprintf(blob, sizeof(blob), "%s/weight.bin", weights);
		if (mkdir(weights, 0700))
			abort();
		atexit(remove_weights);
	}
	if (!(f = fopen(blob, "wb")) || (n && fwrite(p, 1, n, f) != n) || fclose(f))
		abort();
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct spp_model *m = NULL;
	struct spp_error err = {0};
	uint32_t n = size >= 4 ? (uint32_t)(data[0] | data[1] << 8 | data[2] << 16 |
					    (uint32_t)data[3] << 24) : UINT32_MAX;
	char path[160];
	int rc;

	if (n <= size - 4 && size >= 4) {
		write_blob(data + 4 + n, size - 4 - n);
		data += 4, size = n;
	} else {
		write_blob(NULL, 0);
	}
	(void)spp_coreml_sniff(data, size, size);
	fuzz_tmp_write("m.mlmodel", data, size, path);
	rc = spp_load_coreml(path, &m, &err);
	fuzz_check_loaded(rc, m, &err);
	return 0;
}
