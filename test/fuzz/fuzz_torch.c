/*
 * libFuzzer harness for the PyTorch loader: an input that starts like a zip
 * archive or a legacy torch.save stream is written to a file and opened as
 * a model (load_torch.c, then the mask fold); anything else goes to the
 * restricted unpickler alone (pickle.c). A refusal is one clean line with its code; a loaded model's
 * tensors match shape x dtype and every byte is readable.
 */
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "base/safe_text.h"
#include "profiler/loaders.h"
#include "profiler/pickle.h"
#include "test/fuzz/fuzz_tensors.h"
#include "test/fuzz/fuzz_tmp.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct spp_error err = {0};
	int rc;

	if ((size >= 2 && data[0] == 'P' && data[1] == 'K') ||
	    spp_torch_legacy_sniff(data, size, size)) {
		struct spp_model *m = NULL;
		char path[160];

		fuzz_tmp_write("m.pt", data, size, path);
		rc = spp_model_open(path, &m, &err);
		fuzz_check_loaded(rc, m, &err);
		return 0;
	}
	{
		struct spp_pickle pk;

		rc = spp_pickle_load(data, size, "'fuzz'", &pk, NULL, &err);
		if (rc && (err.code != rc || !err.msg[0] || !spp_safe_clean(err.msg)))
			abort();
		if (!rc && pk.root >= pk.nv)
			abort();
		spp_pickle_free(&pk);
	}
	return 0;
}
