/*
 * libFuzzer harness for the JSON report reader (report, compare, check) and
 * every writer behind it: a report that loads renders in text, JSON, CSV,
 * Markdown and HTML, compares against itself and against a fixed rule set,
 * and gives each layer's runs back as merge and --resume read them
 * (spp_report_layer_runs: a refusal is one clean line too); a refusal is
 * one clean line (no raw control or bidi code point).
 */
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>

#include "base/safe_text.h"
#include "reports/gate.h"
#include "reports/report.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static const char rules_text[] =
	"{\"rules\": [{\"name\": \"sparse\", \"expr\": \"layers[*].sparsity >= 0.5\"},"
	"{\"name\": \"speed\", \"expr\": \"layers[*].runs[cpu/csr].speedup >= 1\"},"
	"{\"name\": \"model\", \"expr\": \"model.sparsity > 0.1\"}]}";

static void gate(const cJSON *r, FILE *f)
{
	struct spp_error err = {0};
	struct spp_rules rules = {0};
	cJSON *doc = cJSON_Parse(rules_text), *res = NULL, *diff;

	if (!doc || spp_rules_parse(doc, "rules", &rules, &err))
		abort();
	if (spp_check_run(&rules, r, "fuzz", NULL, NULL, &res, &err) == SPP_OK) {
		spp_check_write(res, SPP_GATE_TEXT, f, &err);
		spp_check_write(res, SPP_GATE_MD, f, &err);
		spp_check_write_junit(res, f, &err);
	}
	diff = spp_compare_build(r, "a", r, "b", &err);
	for (int fmt = SPP_GATE_TEXT; diff && fmt <= SPP_GATE_MD; fmt++)
		spp_compare_write(diff, (enum spp_gate_format)fmt, 1, f, &err);
	cJSON_Delete(diff);
	cJSON_Delete(res);
	cJSON_Delete(doc);
	spp_rules_free(&rules);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	static const enum spp_report_format fmts[] = {SPP_REPORT_TEXT, SPP_REPORT_JSON,
		SPP_REPORT_CSV, SPP_REPORT_MD, SPP_REPORT_HTML};
	struct spp_render_opts o = {0};
	struct spp_error err = {0};
	cJSON *r = NULL;
	const cJSON *l;
	FILE *f;
	int rc = spp_report_parse((const char *)data, size, "fuzz", &r, &err);

	if (rc) {
		if (r || err.code != rc || !err.msg[0] || !spp_safe_clean(err.msg))
			abort();
		return 0;
	}
	if (!(f = fopen("/dev/null", "w")))
		abort();
	for (size_t i = 0; i < sizeof(fmts) / sizeof(fmts[0]); i++)
		spp_report_render(r, fmts[i], f, &o, &err);
	gate(r, f);
	cJSON_ArrayForEach(l, cJSON_GetObjectItemCaseSensitive(r, "layers")) {
		struct spp_layer_runs runs;
		struct spp_error e2 = {0};
		int rr = spp_report_layer_runs(l, "fuzz", &runs, &e2);

		if (rr && (runs.runs || runs.nruns || !e2.msg[0] || !spp_safe_clean(e2.msg)))
			abort();
		spp_layer_runs_release(&runs);
	}
	fclose(f);
	cJSON_Delete(r);
	return 0;
}
