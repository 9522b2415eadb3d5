/* spprof calibrate: measure peak bandwidth and FLOP rate, cache them. */
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>

#include "cmd/cmd.h"
#include "profiler/machine.h"

const char cmd_calibrate_usage[] =
	"usage: spprof calibrate [--threads T] [--seconds S]\n"
	"\n"
	"Measure, for 1..T threads (default: all logical CPUs), the read bandwidth\n"
	"of each memory level (L1, L2, LLC and DRAM: vectorised sums over a working\n"
	"set just above what the level below holds, plain and prefetching, the\n"
	"faster kept), triad bandwidth (a = b + s*c over three 256 MiB arrays,\n"
	"counting all three), and the fp32 FMA peak of the widest vector ISA;\n"
	"each probe repeats for S seconds (default 0.5) and keeps its best run.\n"
	"The results are cached per machine and thread count in\n"
	"$XDG_CACHE_HOME/spprof/calibration.json (or ~/.cache/spprof), shown by\n"
	"'spprof info' and used for bw_util in reports.\n";

enum { OPT_THREADS = 1000, OPT_SECONDS };

static const struct option calibrate_options[] = {
	{"threads", required_argument, NULL, OPT_THREADS},
	{"seconds", required_argument, NULL, OPT_SECONDS},
	{NULL, 0, NULL, 0},
};

int cmd_calibrate(int argc, char **argv)
{
	struct spp_calibration *cal;
	struct spp_error err = {0};
	double seconds = 0.5;
	int threads = (int)sysconf(_SC_NPROCESSORS_ONLN), c, rc;
	char *end;
	int64_t v;

	optind = 0;
	opterr = 0;
	while ((c = getopt_long(argc, argv, ":", calibrate_options, NULL)) != -1) {
		switch (c) {
		case OPT_THREADS:
			if (cmd_parse_i64(optarg, 1, 4096, &v))
				return cmd_usage_error("calibrate", "--threads wants 1..4096, not '%s'", optarg);
			threads = (int)v;
			break;
		case OPT_SECONDS:
			seconds = strtod(optarg, &end);
			if (*end || !(seconds > 0 && seconds <= 60))
				return cmd_usage_error("calibrate", "--seconds wants a number in (0, 60], not '%s'", optarg);
			break;
		case ':':
			return cmd_usage_error("calibrate", "option '%s' needs a value", argv[optind - 1]);
		default:
			return cmd_usage_error("calibrate", "unknown option '%s'", argv[optind - 1]);
		}
	}
	if (optind != argc)
		return cmd_usage_error("calibrate", "unexpected argument '%s'", argv[optind]);
	if (threads < 1)
		threads = 1;
	cal = calloc((size_t)threads, sizeof(*cal));
	if (!cal) {
		fprintf(stderr, "spprof calibrate: out of memory\n");
		return 3;
	}
	rc = spp_calibrate(threads, seconds, cal, &err);
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
