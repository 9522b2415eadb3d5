/* spprof report: re-render a saved JSON report. */
#include <stdio.h>
#include <unistd.h>

#include "cmd/cmd.h"
#include "reports/report.h"

struct report_args {
	const char *format, *output;
};

static const struct cmd_option report_options[] = {
	{CMD_OPT_FORMAT(struct report_args, format),
	 .help = "text, json, csv, md or html; default text, or from -o's extension"},
	{CMD_OPT_OUTPUT(struct report_args, output),
	 .help = "write the report to FILE atomically instead of stdout"},
	{0},
};

const struct cmd_help cmd_report_help = {
	.head = "usage: spprof report REPORT.json [--format text|json|csv|md|html] [-o FILE]\n"
		"\n"
		"Load a report written by 'spprof analyze --format json' and render it\n"
		"again: to stdout, or atomically to FILE (format from --format or the\n"
		"extension of FILE).\n",
	.options = report_options,
	.tail = "exit codes: 0 ok, 2 bad usage or a malformed report, 3 cannot write\n",
};

int cmd_report(int argc, char **argv)
{
	struct spp_error err = {0};
	enum spp_report_format fmt = SPP_REPORT_TEXT;
	struct report_args args = {0};
	cJSON *report = NULL;
	int rc, npos;

	if ((rc = cmd_parse_options("report", report_options, &args, argc, argv, &npos)))
		return rc;
	if (npos != 1)
		return cmd_usage_error("report", npos == 0 ? "no REPORT given" : "one REPORT at a time");
	if (cmd_output_format("report", args.format, args.output, &fmt))
		return 2;

	rc = spp_report_load(argv[1], &report, &err);
	if (rc)
		return cmd_fail(&err);
	return cmd_emit_report(report, fmt, args.output, &err);
}
