/* spprof check: a CI gate over a saved report (docs/CHECK.md). */
#include <getopt.h>
#include <stdio.h>
#include <string.h>

#include "cmd/cmd.h"
#include "cmd/cmd_gate.h"
#include "reports/gate.h"
#include "reports/report.h"

const char cmd_check_usage[] =
	"usage: spprof check REPORT.json --rules RULES.json [--baseline BASE.json]\n"
	"                    [--format text|json|md] [-o FILE] [--junit FILE]\n"
	"\n"
	"Evaluate the rules of RULES.json on a report written by 'spprof analyze\n"
	"--format json': bounds on a figure of the model or of every layer a\n"
	"pattern matches (\"layers[\\\"*.attn.*\\\"].runs[cpu/csr].speedup >= 1.5\"),\n"
	"and regressions against BASE.json (\"max_drop\": 0.10). A timed figure\n"
	"regresses only when the change is outside both runs' p10-p90 spreads.\n"
	"The rule language, with examples: docs/CHECK.md.\n"
	"\n"
	"options:\n"
	"  --rules FILE     the rules (required)\n"
	"  --baseline FILE  the report regression rules compare against\n"
	"  --format F       text (default), json or md (a pull-request comment)\n"
	"  -o, --output F   write the result to F atomically instead of stdout\n"
	"  --junit FILE     also write JUnit XML: one testcase per rule and layer\n"
	"\n"
	"exit codes: 0 every rule passed, 1 a rule failed, 2 malformed rules or\n"
	"reports (or bad usage), 3 cannot write\n";

enum { OPT_FORMAT = 1000, OPT_RULES, OPT_BASELINE, OPT_JUNIT };

static const struct option check_options[] = {
	{"format", required_argument, NULL, OPT_FORMAT},
	{"output", required_argument, NULL, 'o'},
	{"rules", required_argument, NULL, OPT_RULES},
	{"baseline", required_argument, NULL, OPT_BASELINE},
	{"junit", required_argument, NULL, OPT_JUNIT},
	{NULL, 0, NULL, 0},
};

int cmd_check(int argc, char **argv)
{
	struct spp_error err = {0};
	struct spp_rules rules = {0};
	enum spp_gate_format fmt = SPP_GATE_TEXT;
	const char *format_name = NULL, *output = NULL, *rules_path = NULL;
	const char *baseline_path = NULL, *junit = NULL;
	cJSON *report = NULL, *baseline = NULL, *result = NULL;
	int rc, c;
	double failed = 0;

	optind = 0;
	opterr = 0;
	while ((c = getopt_long(argc, argv, ":o:", check_options, NULL)) != -1) {
		switch (c) {
		case OPT_FORMAT:
			format_name = optarg;
			break;
		case 'o':
			output = optarg;
			break;
		case OPT_RULES:
			rules_path = optarg;
			break;
		case OPT_BASELINE:
			baseline_path = optarg;
			break;
		case OPT_JUNIT:
			junit = optarg;
			break;
		case ':':
			return cmd_usage_error("check", "option '%s' needs a value", argv[optind - 1]);
		default:
			return cmd_usage_error("check", "unknown option '%s'", argv[optind - 1]);
		}
	}
	if (optind != argc - 1)
		return cmd_usage_error("check", optind >= argc ? "no REPORT given"
							       : "one REPORT at a time");
	if (!rules_path)
		return cmd_usage_error("check", "no --rules FILE given");
	if (format_name && (spp_gate_format_from_name(format_name, &fmt) || fmt == SPP_GATE_CSV))
		return cmd_usage_error("check", "unknown --format '%s' (text, json, md)", format_name);
	if (!format_name && output) {
		size_t n = strlen(output);

		if (n > 5 && !strcmp(output + n - 5, ".json"))
			fmt = SPP_GATE_JSON;
		else if (n > 3 && !strcmp(output + n - 3, ".md"))
			fmt = SPP_GATE_MD;
	}
	if ((rc = spp_rules_load(rules_path, &rules, &err)))
		goto done;
	if (rules.needs_baseline && !baseline_path) {
		rc = spp_error_set(&err, SPP_E_USAGE,
				   "'%s' has regression rules: give the report they compare "
				   "against with --baseline", rules_path);
		goto done;
	}
	if ((rc = spp_report_load(argv[optind], &report, &err)) ||
	    (baseline_path && (rc = spp_report_load(baseline_path, &baseline, &err))))
		goto done;
	if ((rc = spp_check_run(&rules, report, argv[optind], baseline, baseline_path,
				&result, &err)))
		goto done;
	if (junit && (rc = spp_gate_write_file(result, 1, 1, fmt, 0, junit, &err)))
		goto done;
	if (output)
		rc = spp_gate_write_file(result, 1, 0, fmt, 0, output, &err);
	else
		rc = spp_check_write(result, fmt, stdout, &err);
	if (!rc) {
		const cJSON *fl = cJSON_GetObjectItemCaseSensitive(result, "failed");

		if (cJSON_IsNumber(fl))
			failed = fl->valuedouble;
	}
done:
	cJSON_Delete(result);
	cJSON_Delete(report);
	cJSON_Delete(baseline);
	spp_rules_free(&rules);
	if (rc)
		return cmd_fail(&err);
	return failed > 0 ? 1 : 0;
}
