/* spprof check: a CI gate over a saved report (docs/CHECK.md). */
#include <stdio.h>
#include <string.h>

#include "cmd/cmd.h"
#include "cmd/cmd_gate.h"
#include "reports/gate.h"
#include "reports/report.h"

struct check_args {
	const char *format, *output, *rules, *baseline, *junit;
};

#define C struct check_args

static const struct cmd_option check_options[] = {
	{CMD_STRING("rules", "FILE", C, rules), .help = "the rules (required)"},
	{CMD_STRING("baseline", "FILE", C, baseline),
	 .help = "the report regression rules compare against"},
	{CMD_OPT_FORMAT(C, format), .help = "text (default), json or md (a pull-request comment)"},
	{CMD_OPT_OUTPUT(C, output), .help = "write the result to FILE atomically instead of stdout"},
	{CMD_STRING("junit", "FILE", C, junit), .flags = CMD_OPT_OUT_FILE,
	 .help = "also write JUnit XML: one testcase per rule and layer"},
	{0},
};

#undef C

const struct cmd_help cmd_check_help = {
	.head = "usage: spprof check REPORT.json --rules RULES.json [--baseline BASE.json]\n"
		"                    [--format text|json|md] [-o FILE] [--junit FILE]\n"
		"\n"
		"Evaluate the rules of RULES.json on a report written by 'spprof analyze\n"
		"--format json': bounds on a figure of the model or of every layer a\n"
		"pattern matches (\"layers[\\\"*.attn.*\\\"].runs[cpu/csr].speedup >= 1.5\"),\n"
		"and regressions against BASE.json (\"max_drop\": 0.10). A timed figure\n"
		"regresses only when the change is outside both runs' p10-p90 spreads.\n"
		"The rule language, with examples: docs/CHECK.md.\n",
	.options = check_options,
	.tail = "exit codes: 0 every rule passed, 1 a rule failed, 2 malformed rules or\n"
		"reports (or bad usage), 3 cannot write\n",
};

int cmd_check(int argc, char **argv)
{
	struct spp_error err = {0};
	struct spp_rules rules = {0};
	enum spp_gate_format fmt = SPP_GATE_TEXT;
	struct check_args args = {0};
	const char *format_name, *output, *rules_path, *baseline_path, *junit, *path;
	cJSON *report = NULL, *baseline = NULL, *result = NULL;
	int rc, npos;
	double failed = 0;

	if ((rc = cmd_parse_options("check", check_options, &args, argc, argv, &npos)))
		return rc;
	if (npos != 1)
		return cmd_usage_error("check", npos == 0 ? "no REPORT given" : "one REPORT at a time");
	format_name = args.format, output = args.output, rules_path = args.rules;
	baseline_path = args.baseline, junit = args.junit, path = argv[1];
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
	if ((rc = spp_report_load(path, &report, &err)) ||
	    (baseline_path && (rc = spp_report_load(baseline_path, &baseline, &err))))
		goto done;
	if ((rc = spp_check_run(&rules, report, path, baseline, baseline_path,
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
