/*
 * libFuzzer harness for merge's part reader (reports/merge.c, runs_read.c):
 * the input is one to four report parts joined by "\n\f\n", merged against
 * fuzz_model.h's model as `spprof merge --model` would. A refusal is one
 * clean line and leaves no analysis; a merge builds its report, and each
 * CPU run's speedup in it is its dense run's median over its own (no
 * figure copied from a part).
 */
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "fuzz_model.h"
#include "fuzz_tmp.h"
#include "base/safe_text.h"
#include "profiler/analyze.h"
#include "reports/report.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

#define MAX_PARTS 4

static char model[160];

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	static const char sep[] = "\n\f\n";
	char paths[MAX_PARTS][160], name[16];
	const char *list[MAX_PARTS];
	const uint8_t *p = data, *end = data + size;
	struct spp_merge_opts mo = {.analyze = spp_analyze_run};
	struct spp_merge_machines mm;
	struct spp_analysis *a = NULL;
	struct spp_error err = {0};
	int n = 0, rc;

	if (!model[0]) {
		fuzz_tmp_write("model.safetensors", "", 0, model);
		fuzz_model_write(model);
	}
	while (n < MAX_PARTS) {
		const uint8_t *cut = n + 1 < MAX_PARTS ? memmem(p, (size_t)(end - p), sep, 3) : NULL;
		size_t len = cut ? (size_t)(cut - p) : (size_t)(end - p);

		snprintf(name, sizeof(name), "part%d.json", n);
		fuzz_tmp_write(name, p, len, paths[n]);
		list[n] = paths[n];
		n++;
		if (!cut)
			break;
		p = cut + 3;
	}
	mo.model = model;
	rc = spp_report_merge(list, n, &mo, &a, &mm, &err);
	if (rc) {
		if (a || err.code != rc || !err.msg[0] || !spp_safe_clean(err.msg) || strchr(err.msg, '\n'))
			abort();
		return 0;
	}
	for (int i = 0; a->runs && i < a->nlayers; i++)
		fuzz_check_derived(&a->runs[i]);
	cJSON_Delete(spp_report_build(a, "fuzz", &err));
	spp_merge_machines_free(&mm);
	spp_analysis_destroy(a);
	return 0;
}
