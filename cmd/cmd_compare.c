/* spprof compare: the differences between two saved reports. */
#include <stdio.h>
#include <string.h>

#include "cmd/cmd.h"
#include "cmd/cmd_gate.h"
#include "reports/gate.h"
#include "reports/report.h"

struct compare_args {
	const char *format, *output;
	int all;
};

static const struct cmd_option compare_options[] = {
	{CMD_OPT_FORMAT(struct compare_args, format),
	 .help = "text (default), json, csv or md (Markdown)"},
	{CMD_OPT_OUTPUT(struct compare_args, output),
	 .help = "write to FILE atomically (format from --format or the extension: .json, .csv, .md)"},
	{CMD_FLAG("all", struct compare_args, all), .help = "text and md: list unchanged figures too"},
	{0},
};

const struct cmd_help cmd_compare_help = {
	.head = "usage: spprof compare BASE.json NEW.json [--format text|json|csv|md]\n"
		"                      [-o FILE] [--all]\n"
		"\n"
		"Compare two reports written by 'spprof analyze --format json': the\n"
		"model's figures, then each layer's (matched by name): sparsity, nnz,\n"
		"storage, run times, speedup, efficiency, breakeven and cache figures\n"
		"where the reports have them. Layers only in one report are listed as\n"
		"added or removed. A timed figure whose change stays inside both runs'\n"
		"p10-p90 spreads is marked 'within noise' (docs/CHECK.md).\n",
	.options = compare_options,
	.tail = "exit codes: 0 compared, 2 bad usage or a malformed report, 3 cannot write\n",
};

/* Format from an output path's extension; text when it says nothing known. */
static enum spp_gate_format format_from_path(const char *path)
{
	enum spp_report_format rf;
	size_t n = strlen(path);

	if (n > 3 && !strcmp(path + n - 3, ".md"))
		return SPP_GATE_MD;
	if (spp_report_format_from_path(path, &rf) == 0)
		return rf == SPP_REPORT_JSON ? SPP_GATE_JSON
		       : rf == SPP_REPORT_CSV ? SPP_GATE_CSV : SPP_GATE_TEXT;
	return SPP_GATE_TEXT;
}

int cmd_compare(int argc, char **argv)
{
	struct spp_error err = {0};
	enum spp_gate_format fmt = SPP_GATE_TEXT;
	struct compare_args args = {0};
	const char *format_name, *output;
	cJSON *base = NULL, *next = NULL, *diff = NULL;
	int rc, npos;

	if ((rc = cmd_parse_options("compare", compare_options, &args, argc, argv, &npos)))
		return rc;
	if (npos != 2)
		return cmd_usage_error("compare", "needs BASE.json and NEW.json (got %d report%s)",
				       npos, npos == 1 ? "" : "s");
	format_name = args.format, output = args.output;
	if (format_name && spp_gate_format_from_name(format_name, &fmt))
		return cmd_usage_error("compare", "unknown --format '%s' (text, json, csv, md)",
				       format_name);
	if (!format_name && output)
		fmt = format_from_path(output);
	if ((rc = spp_report_load(argv[1], &base, &err)) ||
	    (rc = spp_report_load(argv[2], &next, &err)))
		goto done;
	diff = spp_compare_build(base, argv[1], next, argv[2], &err);
	if (!diff) {
		rc = err.code;
		goto done;
	}
	if (output)
		rc = spp_gate_write_file(diff, 0, 0, fmt, args.all, output, &err);
	else
		rc = spp_compare_write(diff, fmt, args.all, stdout, &err);
done:
	cJSON_Delete(diff);
	cJSON_Delete(base);
	cJSON_Delete(next);
	return rc ? cmd_fail(&err) : 0;
}
