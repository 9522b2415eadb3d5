/* spprof report: re-render a saved JSON report. */
#include <getopt.h>
#include <stdio.h>
#include <unistd.h>

#include "cmd/cmd.h"
#include "reports/report.h"

const char cmd_report_usage[] =
	"usage: spprof report REPORT.json [--format text|json|csv|md|html] [-o FILE]\n"
	"\n"
	"Load a report written by 'spprof analyze --format json' and render it\n"
	"again: to stdout, or atomically to FILE (format from --format or the\n"
	"extension of FILE).\n"
	"\n"
	"exit codes: 0 ok, 2 bad usage or a malformed report, 3 cannot write\n";

enum { OPT_FORMAT = 1000 };

static const struct option report_options[] = {
	{"format", required_argument, NULL, OPT_FORMAT},
	{"output", required_argument, NULL, 'o'},
	{NULL, 0, NULL, 0},
};

int cmd_report(int argc, char **argv)
{
	struct spp_render_opts ropts = {0};
	struct spp_error err = {0};
	enum spp_report_format fmt = SPP_REPORT_TEXT;
	const char *format_name = NULL, *output = NULL;
	cJSON *report = NULL;
	int rc, c;

	optind = 0;
	opterr = 0;
	while ((c = getopt_long(argc, argv, ":o:", report_options, NULL)) != -1) {
		switch (c) {
		case OPT_FORMAT:
			format_name = optarg;
			break;
		case 'o':
			output = optarg;
			break;
		case ':':
			return cmd_usage_error("report", "option '%s' needs a value", argv[optind - 1]);
		default:
			return cmd_usage_error("report", "unknown option '%s'", argv[optind - 1]);
		}
	}
	if (optind != argc - 1)
		return cmd_usage_error("report", optind >= argc ? "no REPORT given" : "one REPORT at a time");
	if (cmd_output_format("report", format_name, output, &fmt))
		return 2;

	rc = spp_report_load(argv[optind], &report, &err);
	if (rc)
		return cmd_fail(&err);
	if (output) {
		rc = spp_report_write_file(report, fmt, output, &ropts, &err);
	} else {
		ropts.color = fmt == SPP_REPORT_TEXT && cmd_use_color(STDOUT_FILENO);
		rc = spp_report_render(report, fmt, stdout, &ropts, &err);
	}
	cJSON_Delete(report);
	return rc ? cmd_fail(&err) : 0;
}
