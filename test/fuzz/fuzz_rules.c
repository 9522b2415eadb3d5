/*
 * libFuzzer harness for the rules parser of `spprof check`: rules that
 * parse are evaluated on a fixed report and written in every format; a
 * refusal is one clean line naming the fault.
 */
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>

#include "base/safe_text.h"
#include "reports/gate.h"
#include "reports/report.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static const char report_text[] =
	"{\"schema\": \"" SPP_REPORT_SCHEMA "\", \"model\": {\"path\": \"m\", \"sparsity\": "
	"0.5},\"layers\": [{\"name\": \"fc1\", \"m\": 8, \"k\": 8, \"n\": 4, \"numel\": "
	"64, \"nnz\": 6, \"shape\": [8, 8], \"sparsity\": 0.9, \"pattern\": {\"nm2_4\": "
	"1, \"class\": \"nm\"}, \"flops\": {}, \"storage\": {\"csr\": {\"bytes\": 100}}, "
	"\"runs\": [{\"backend\": \"cpu\", \"format\": \"csr\", \"speedup\": 1.5}]},{\"name\": "
	"\"fc2\", \"m\": 4, \"k\": 4, \"n\": 4, \"numel\": 16, \"nnz\": 12, \"shape\": "
	"[4, 4], \"sparsity\": 0.25, \"pattern\": {}, \"flops\": {}, \"storage\": {}, "
	"\"runs\": []}]}";

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct spp_error err = {0};
	struct spp_rules rules = {0};
	cJSON *report = NULL, *doc, *res = NULL;
	FILE *f;
	int rc;

	if (spp_report_parse(report_text, sizeof(report_text) - 1, "report", &report, &err))
		abort();
	doc = cJSON_ParseWithLength((const char *)data, size);
	rc = doc ? spp_rules_parse(doc, "fuzz", &rules, &err) : SPP_E_FORMAT;
	if (doc && rc && (err.code != rc || !err.msg[0] || !spp_safe_clean(err.msg)))
		abort();
	/* a regression rule without a baseline is a usage error, not a crash */
	if (!rc && spp_check_run(&rules, report, "report", rules.needs_baseline ? report : NULL,
				 "base", &res, &err) == SPP_OK) {
		if (!(f = fopen("/dev/null", "w")))
			abort();
		spp_check_write(res, SPP_GATE_TEXT, f, &err);
		spp_check_write(res, SPP_GATE_JSON, f, &err);
		spp_check_write(res, SPP_GATE_MD, f, &err);
		spp_check_write_junit(res, f, &err);
		fclose(f);
	}
	cJSON_Delete(res);
	if (!rc)
		spp_rules_free(&rules);
	cJSON_Delete(doc);
	cJSON_Delete(report);
	return 0;
}
