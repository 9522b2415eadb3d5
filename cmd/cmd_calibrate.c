/* spprof calibrate: measure peak bandwidth and FLOP rate, cache them. */
#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>

#include "cmd/cmd.h"
#include "profiler/machine.h"

struct calibrate_args {
	int threads;
	double seconds;
};

static const struct cmd_option calibrate_options[] = {
	{CMD_OPT_THREADS(struct calibrate_args, threads),
	 .help = "measure for 1..T threads; default: all logical CPUs"},
	{CMD_DOUBLE("seconds", "S", struct calibrate_args, seconds, 0, 60, CMD_OPT_MIN_OPEN),
	 .help = "seconds each probe repeats for, keeping its best run; default 0.5"},
	{0},
};

const struct cmd_help cmd_calibrate_help = {
	.head = "usage: spprof calibrate [--threads T] [--seconds S]\n"
		"\n"
		"Measure, for 1..T threads (default: all logical CPUs), the read bandwidth\n"
		"of each memory level (L1, L2, LLC and DRAM: vectorised sums over a working\n"
		"set just above what the level below holds, plain and prefetching, the\n"
		"faster kept), triad bandwidth (a = b + s*c over three 256 MiB arrays,\n"
		"counting all three), and the fp32 FMA peak of the widest vector ISA;\n"
		"each probe repeats for S seconds (default 0.5) and keeps its best run.\n"
		"The results are cached per machine and thread count in\n"
		"$XDG_CACHE_HOME/spprof/calibration.json (or ~/.cache/spprof), shown by\n"
		"'spprof info' and used for bw_util in reports.\n",
	.options = calibrate_options,
};

int cmd_calibrate(int argc, char **argv)
{
	struct calibrate_args args = {(int)sysconf(_SC_NPROCESSORS_ONLN), 0.5};
	struct spp_calibration *cal;
	struct spp_error err = {0};
	int threads, rc, npos;

	if ((rc = cmd_parse_options("calibrate", calibrate_options, &args, argc, argv, &npos)))
		return rc;
	if (npos)
		return cmd_usage_error("calibrate", "unexpected argument '%s'", argv[1]);
	threads = args.threads;
	if (threads < 1)
		threads = 1;
	cal = calloc((size_t)threads, sizeof(*cal));
	if (!cal) {
		fprintf(stderr, "spprof calibrate: out of memory\n");
		return 3;
	}
	rc = spp_calibrate(threads, args.seconds, cal, &err);
	if (rc == 0) {
		printf("threads  read GB/s  triad GB/s  peak GFLOP/s  isa     L1 GB/s  L2 GB/s  LLC GB/s\n");
		for (int t = 0; t < threads; t++)
			printf("%7d  %9.1f  %10.1f  %12.1f  %-6s  %7.1f  %7.1f  %8.1f\n", cal[t].threads,
			       cal[t].read_gbs, cal[t].triad_gbs, cal[t].peak_gflops,
			       cal[t].isa, cal[t].level_gbs[SPP_BW_L1], cal[t].level_gbs[SPP_BW_L2],
			       cal[t].level_gbs[SPP_BW_LLC]);
	}
	free(cal);
	return rc ? cmd_fail(&err) : 0;
}
