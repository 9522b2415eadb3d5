/*
 * libFuzzer harness for the sharded safetensors index reader
 * (model.safetensors.index.json): each input is written as the index
 * beside two fixed shards and loaded; a model that loads has every tensor
 * inside one of its files, and a refusal is one clean line.
 */
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/safe_text.h"
#include "profiler/loaders.h"
#include "test/fuzz/fuzz_tmp.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static char index_path[160];

/* two shards: a.weight [4, 4] in the first, b.weight [2, 8] in the second */
static void setup(void)
{
	static const char *const heads[] = {
		"{\"a.weight\":{\"dtype\":\"F32\",\"shape\":[4,4],\"data_offsets\":[0,64]}}",
		"{\"b.weight\":{\"dtype\":\"F32\",\"shape\":[2,8],\"data_offsets\":[0,64]}}",
	};
	unsigned char buf[256] = {0};
	char path[160];

	for (int s = 0; s < 2; s++) {
		size_t hl = strlen(heads[s]);
		char name[64];

		for (int i = 0; i < 8; i++)
			buf[i] = (unsigned char)((uint64_t)hl >> (8 * i));
		memcpy(buf + 8, heads[s], hl);
		float v[16];

		for (int i = 0; i < 16; i++)
			v[i] = (float)(i % 3);
		memcpy(buf + 8 + hl, v, sizeof(v));
		snprintf(name, sizeof(name), "model-0000%d-of-00002.safetensors", s + 1);
		fuzz_tmp_write(name, buf, 8 + hl + 64, path);
	}
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct spp_model *m = NULL;
	struct spp_error err = {0};
	int rc;

	if (!index_path[0])
		setup();
	fuzz_tmp_write("model.safetensors.index.json", data, size, index_path);
	rc = spp_load_safetensors_index(index_path, &m, &err);
	if (rc) {
		if (m || err.code != rc || !err.msg[0] || !spp_safe_clean(err.msg))
			abort();
		return 0;
	}
	for (int i = 0; i < m->ntensors; i++) {
		const struct spp_tensor *t = &m->tensors[i];

		if (t->file < 0 || t->file >= m->nfiles ||
		    (t->nbytes && t->offset + t->nbytes > m->files[t->file].size))
			abort();
	}
	spp_model_destroy(m);
	return 0;
}
