/* spprof analyze: load a model, analyse every layer, report. */
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "cmd/cmd.h"
#include "config.h"
#include "profiler/analyze.h"
#include "reports/report.h"

const char cmd_analyze_usage[] =
	"usage: spprof analyze MODEL [options]\n"
	"\n"
	"Profile every layer of MODEL (a .safetensors file, or the\n"
	"model.safetensors.index.json of a sharded checkpoint): sparsity and its\n"
	"pattern, dense and sparse FLOPs, storage per format (DESIGN section 3).\n"
	"\n"
	"options:\n"
	"  --static            static metrics only (no kernel runs)\n"
	"  --n N               N of each layer's Y = W.X (batch x tokens); default 128\n"
	"  --threads T         threads for the scan; default: all cores\n"
	"  --seed S            seed for synthetic inputs; default 1\n"
	"  --format F          text, json or csv; default text, or from -o's extension\n"
	"  -o, --output FILE   write the report to FILE atomically instead of stdout\n"
	"  --quiet             no progress or warnings on stderr\n"
	"\n"
	"exit codes: 0 ok, 2 bad usage or bad input, 3 runtime failure\n";

enum {
	OPT_STATIC = 1000,
	OPT_N,
	OPT_THREADS,
	OPT_SEED,
	OPT_FORMAT,
	OPT_QUIET,
};

static const struct option analyze_options[] = {
	{"static", no_argument, NULL, OPT_STATIC},
	{"n", required_argument, NULL, OPT_N},
	{"threads", required_argument, NULL, OPT_THREADS},
	{"seed", required_argument, NULL, OPT_SEED},
	{"format", required_argument, NULL, OPT_FORMAT},
	{"output", required_argument, NULL, 'o'},
	{"quiet", no_argument, NULL, OPT_QUIET},
	{NULL, 0, NULL, 0},
};

int cmd_analyze(int argc, char **argv)
{
	struct spp_analyze_opts opts;
	struct spp_analysis *a = NULL;
	struct spp_render_opts ropts = {0};
	struct spp_error err = {0};
	enum spp_report_format fmt = SPP_REPORT_TEXT;
	const char *format_name = NULL, *output = NULL;
	cJSON *report = NULL;
	int quiet = 0, rc, c;
	int64_t v;

	spp_analyze_opts_init(&opts);
	optind = 0;
	opterr = 0;
	while ((c = getopt_long(argc, argv, ":o:", analyze_options, NULL)) != -1) {
		switch (c) {
		case OPT_STATIC:
			opts.static_only = 1;
			break;
		case OPT_N:
			if (cmd_parse_i64(optarg, 1, INT64_C(1) << 31, &v))
				return cmd_usage_error("analyze", "--n wants a positive integer, not '%s'", optarg);
			opts.n = v;
			break;
		case OPT_THREADS:
			if (cmd_parse_i64(optarg, 1, 4096, &v))
				return cmd_usage_error("analyze", "--threads wants 1..4096, not '%s'", optarg);
			opts.threads = (int)v;
			break;
		case OPT_SEED:
			if (cmd_parse_u64(optarg, &opts.seed) || opts.seed > (UINT64_C(1) << 53))
				return cmd_usage_error("analyze", "--seed wants an integer in 0..2^53, not '%s'", optarg);
			break;
		case OPT_FORMAT:
			format_name = optarg;
			break;
		case 'o':
			output = optarg;
			break;
		case OPT_QUIET:
			quiet = 1;
			break;
		case ':':
			return cmd_usage_error("analyze", "option '%s' needs a value", argv[optind - 1]);
		default:
			return cmd_usage_error("analyze", "unknown option '%s'", argv[optind - 1]);
		}
	}
	if (optind != argc - 1)
		return cmd_usage_error("analyze", optind >= argc ? "no MODEL given" : "one MODEL at a time");
	if (format_name && spp_report_format_from_name(format_name, &fmt))
		return cmd_usage_error("analyze", "unknown --format '%s' (text, json, csv)", format_name);
	if (!format_name && output && spp_report_format_from_path(output, &fmt))
		fmt = SPP_REPORT_TEXT;

	rc = spp_analyze_run(argv[optind], &opts, &a, &err);
	if (rc)
		return cmd_fail(&err);
	if (!quiet)
		for (int i = 0; i < a->nwarnings; i++)
			fprintf(stderr, "spprof: warning: %s\n", a->warnings[i]);
	report = spp_report_build(a, SPP_VERSION, &err);
	if (!report) {
		spp_analysis_destroy(a);
		return cmd_fail(&err);
	}
	if (output) {
		ropts.color = 0;
		rc = spp_report_write_file(report, fmt, output, &ropts, &err);
	} else {
		ropts.color = fmt == SPP_REPORT_TEXT && cmd_use_color(STDOUT_FILENO);
		rc = spp_report_render(report, fmt, stdout, &ropts, &err);
	}
	cJSON_Delete(report);
	spp_analysis_destroy(a);
	return rc ? cmd_fail(&err) : 0;
}
