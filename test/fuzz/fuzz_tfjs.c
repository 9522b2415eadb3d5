/*
 * libFuzzer harness for the TF.js loader (load_tfjs.c): each input is
 * written as model.json beside two fixed weight shards, s1.bin and s2.bin
 * (96 bytes each, floats with zeros among them), and opened as a model.
 * A refusal is one clean line with its code; a loaded model's tensors match
 * shape x dtype with every byte readable, and every layer's view and bias
 * lie inside their tensors.
 */
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "profiler/loaders.h"
#include "test/fuzz/fuzz_tensors.h"
#include "test/fuzz/fuzz_tmp.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static char json_path[160];

static void setup(void)
{
	float v[24];
	char path[160];

	for (int s = 0; s < 2; s++) {
		for (int i = 0; i < 24; i++)
			v[i] = (i + s) % 3 ? (float)(i - 5) * 0.5f : 0.0f;
		fuzz_tmp_write(s ? "s2.bin" : "s1.bin", v, sizeof(v), path);
	}
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct spp_model *m = NULL;
	struct spp_error err = {0};
	int rc;

	if (!json_path[0])
		setup();
	(void)spp_tfjs_sniff(data, size, size);
	fuzz_tmp_write("model.json", data, size, json_path);
	rc = spp_load_tfjs(json_path, &m, &err);
	fuzz_check_loaded(rc, m, &err);
	return 0;
}
