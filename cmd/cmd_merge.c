/* spprof merge: the reports of a sharded profile into one. */
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "cmd/cmd.h"
#include "base/atomic_file.h"
#include "profiler/analyze.h"
#include "reports/report.h"

struct merge_args {
	const char *format, *output, *model;
};

static const struct cmd_option merge_options[] = {
	{CMD_OPT_FORMAT(struct merge_args, format),
	 .help = "text, json, csv, md or html; default text, or from -o's extension"},
	{CMD_OPT_OUTPUT(struct merge_args, output),
	 .help = "write the merged report to FILE atomically instead of stdout"},
	{CMD_STRING("model", "PATH", struct merge_args, model),
	 .help = "the model the parts profiled, where it is not at their model.path any more "
		 "(its hash must be theirs)"},
	{0},
};

const struct cmd_help cmd_merge_help = {
	.head = "usage: spprof merge PART.json... [-o FILE] [--format F] [--model PATH]\n"
		"\n"
		"Merge the JSON reports of 'spprof analyze --shard I/N' for I = 0..N-1\n"
		"into the report one run would have written. The parts must come from\n"
		"the same model (hash) and settings, one per shard; the model is scanned\n"
		"again, each layer takes its runs from its shard's part, and the totals,\n"
		"summary and projection are derived as in a single run, breakeven and N\n"
		"sweeps included.\n",
	.options = merge_options,
	.tail = "exit codes: 0 merged, 2 bad usage, a malformed part, parts that do not fit\n"
		"together (naming the shard doubled or missing) or a model that is not theirs,\n"
		"3 cannot write\n",
};

int cmd_merge(int argc, char **argv)
{
	struct spp_error err = {0};
	enum spp_report_format fmt = SPP_REPORT_TEXT;
	struct merge_args args = {0};
	struct spp_analysis *a = NULL;
	struct spp_merge_machines mm;
	cJSON *report;
	int rc, npos;

	if ((rc = cmd_parse_options("merge", merge_options, &args, argc, argv, &npos)))
		return rc;
	if (npos < 1)
		return cmd_usage_error("merge", "no PART given");
	if (cmd_output_format("merge", args.format, args.output, &fmt))
		return 2;
	if (args.output && (rc = spp_outfile_check(args.output, &err)))
		return cmd_fail(&err);
	rc = spp_report_merge((const char *const *)argv + 1, npos,
			      &(struct spp_merge_opts){.model = args.model, .analyze = spp_analyze_run}, &a, &mm, &err);
	if (rc)
		return cmd_fail(&err);
	report = spp_report_merged(a, &mm, (const char *const *)argv + 1, npos, &err);
	spp_analysis_destroy(a);
	return report ? cmd_emit_report(report, fmt, args.output, &err) : cmd_fail(&err);
}
