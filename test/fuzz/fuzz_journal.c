/*
 * libFuzzer harness for the journal of a resumable analyze as --resume
 * reads it (reports/journal.c): the input is the journal's layer lines,
 * after the header line of the harness's own analysis (a static scan of
 * fuzz_model.h's model) so that they are read; an input starting with 'H'
 * is the whole journal, its header included. Each layer is restored as
 * analyze would (spp_journal_restore: runs read back, figures derived
 * again, the shape's dense choice); a refusal is one clean line and leaves
 * no runs, and a restored layer's figures are the ones its times give.
 */
#include <math.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "fuzz_model.h"
#include "fuzz_tmp.h"
#include "base/safe_text.h"
#include "profiler/analyze.h"
#include "reports/journal.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static struct spp_analysis *analysis;
static char *header; /* the journal's first line for analysis */
static char output[160];

static void setup(void)
{
	struct spp_analyze_opts o;
	struct spp_error err = {0};
	char model[160];
	cJSON *h = cJSON_CreateObject();

	fuzz_tmp_write("model.safetensors", "", 0, model);
	fuzz_model_write(model);
	spp_analyze_opts_init(&o);
	o.static_only = 1;
	o.threads = 1;
	if (spp_analyze_run(model, &o, &analysis, &err) || !h)
		abort();
	analysis->runs = calloc((size_t)analysis->nlayers, sizeof(*analysis->runs));
	cJSON_AddStringToObject(h, "schema", "spprof.journal/1");
	cJSON_AddStringToObject(h, "model_hash", analysis->totals.hash.hex);
	cJSON_AddItemToObject(h, "settings", spp_report_settings(analysis));
	if (!analysis->runs || !(header = cJSON_PrintUnformatted(h)))
		abort();
	cJSON_Delete(h);
	snprintf(output, sizeof(output), "%s/r.json", fuzz_tmp_dir());
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct spp_journal j;
	struct spp_error err = {0};
	char path[sizeof(output) + 8];
	FILE *f;

	if (!analysis)
		setup();
	snprintf(path, sizeof(path), "%s.journal", output);
	if (!(f = fopen(path, "wb")))
		abort();
	if (size > 0 && data[0] == 'H')
		data++, size--;
	else
		fprintf(f, "%s\n", header);
	if ((size && fwrite(data, 1, size, f) != size) || fclose(f))
		abort();
	if (spp_journal_init(&j, output, 1, &err))
		abort();
	for (int i = 0; i < analysis->nlayers; i++) {
		struct spp_layer_runs *r = &analysis->runs[i];
		int rc = spp_journal_restore(&j, analysis, i, &err);

		if (rc < 0 && (r->runs || r->nruns || !err.msg[0] || !spp_safe_clean(err.msg) ||
			       strchr(err.msg, '\n')))
			abort();
		if (rc == 1)
			fuzz_check_derived(r);
		spp_layer_runs_release(r);
		memset(r, 0, sizeof(*r));
		if (rc < 0)
			break;
	}
	spp_journal_close(&j, 1);
	analysis->record.dense_memo.n = 0;
	return 0;
}
