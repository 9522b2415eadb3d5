/* spprof compare: the differences between two saved reports. */
#include <getopt.h>
#include <stdio.h>
#include <string.h>

#include "cmd/cmd.h"
#include "cmd/cmd_gate.h"
#include "reports/gate.h"
#include "reports/report.h"

const char cmd_compare_usage[] =
	"usage: spprof compare BASE.json NEW.json [--format text|json|csv|md]\n"
	"                      [-o FILE] [--all]\n"
	"\n"
	"Compare two reports written by 'spprof analyze --format json': the\n"
	"model's figures, then each layer's (matched by name): sparsity, nnz,\n"
	"storage, run times, speedup, efficiency, breakeven and cache figures\n"
	"where the reports have them. Layers only in one report are listed as\n"
	"added or removed. A timed figure whose change stays inside both runs'\n"
	"p10-p90 spreads is marked 'within noise' (docs/CHECK.md).\n"
	"\n"
	"options:\n"
	"  --format F      text (default), json, csv or md (Markdown)\n"
	"  -o, --output F  write to F atomically (format from --format or the\n"
	"                  extension: .json, .csv, .md)\n"
	"  --all           text and md: list unchanged figures too\n"
	"\n"
	"exit codes: 0 compared, 2 bad usage or a malformed report, 3 cannot write\n";

enum { OPT_FORMAT = 1000, OPT_ALL };

static const struct option compare_options[] = {
	{"format", required_argument, NULL, OPT_FORMAT},
	{"output", required_argument, NULL, 'o'},
	{"all", no_argument, NULL, OPT_ALL},
	{NULL, 0, NULL, 0},
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
	const char *format_name = NULL, *output = NULL;
	cJSON *base = NULL, *next = NULL, *diff = NULL;
	int rc, c, all = 0;

	optind = 0;
	opterr = 0;
	while ((c = getopt_long(argc, argv, ":o:", compare_options, NULL)) != -1) {
		switch (c) {
		case OPT_FORMAT:
			format_name = optarg;
			break;
		case 'o':
			output = optarg;
			break;
		case OPT_ALL:
			all = 1;
			break;
		case ':':
			return cmd_usage_error("compare", "option '%s' needs a value", argv[optind - 1]);
		default:
			return cmd_usage_error("compare", "unknown option '%s'", argv[optind - 1]);
		}
	}
	if (argc - optind != 2)
		return cmd_usage_error("compare", "needs BASE.json and NEW.json (got %d report%s)",
				       argc - optind, argc - optind == 1 ? "" : "s");
	if (format_name && spp_gate_format_from_name(format_name, &fmt))
		return cmd_usage_error("compare", "unknown --format '%s' (text, json, csv, md)",
				       format_name);
	if (!format_name && output)
		fmt = format_from_path(output);
	if ((rc = spp_report_load(argv[optind], &base, &err)) ||
	    (rc = spp_report_load(argv[optind + 1], &next, &err)))
		goto done;
	diff = spp_compare_build(base, argv[optind], next, argv[optind + 1], &err);
	if (!diff) {
		rc = err.code;
		goto done;
	}
	if (output)
		rc = spp_gate_write_file(diff, 0, 0, fmt, all, output, &err);
	else
		rc = spp_compare_write(diff, fmt, all, stdout, &err);
done:
	cJSON_Delete(diff);
	cJSON_Delete(base);
	cJSON_Delete(next);
	return rc ? cmd_fail(&err) : 0;
}
