/* spprof analyze: load a model, analyse every layer, report. */
#include <getopt.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "counters/sim.h"
#include "cmd/cmd.h"
#include "cmd/progress.h"
#include "config.h"
#include "kernels/cuda/device.h"
#include "kernels/peers.h"
#include "profiler/analyze.h"
#include "reports/report.h"

const char cmd_analyze_usage[] =
	"usage: spprof analyze MODEL [options]\n"
	"\n"
	"Profile every layer of MODEL, recognised by content: safetensors (or the\n"
	"model.safetensors.index.json of a sharded checkpoint), ONNX, GGUF, NumPy\n"
	".npy/.npz, a DLMC .smtx or a Matrix Market .mtx matrix: sparsity and its\n"
	"pattern, dense and sparse FLOPs, storage per format (DESIGN section 3),\n"
	"then run the dense baseline (the fastest of the dense candidates, timed\n"
	"once per shape) and every sparse format on each layer: each output is\n"
	"checked against dense, then timed with dense and sparse runs interleaved\n"
	"(DESIGN section 4). Runs faster than the FLOP ideal and baselines far\n"
	"under the calibrated roofline are warned about.\n"
	"\n"
	"options:\n"
	"  --static            static metrics only (no kernel runs)\n"
	"  --n N               N of each layer's Y = W.X (batch x tokens); default 128\n"
	"  --threads T         threads for the scan and the runs; default: all cores\n"
	"  --formats F,...     formats to run (csr, coo, bsr4, bsr8, bsr16, bitmask,\n"
	"                      nm1_4, nm2_4, nm4_8, and the activation kernels csc,\n"
	"                      csr_act, csc_act); default all but the activation\n"
	"                      kernels, which join when X has zeros; dense always runs\n"
	"  --backends B,...    backends to run: cpu, cuda; default cpu. cuda is skipped\n"
	"                      with a warning next to cpu, and alone exits 3, where\n"
	"                      there is no device\n"
	"  --act-sparsity A    zero each entry of X with probability A (0 <= A < 1,\n"
	"                      i.i.d., ReLU-like) and run the activation kernels\n"
	"  --activations DIR   real X: DIR/<layer name>.npy per layer, K x N or N x K\n"
	"                      (characters outside [A-Za-z0-9._-] of the name as _);\n"
	"                      a layer without a file gets synthetic X\n"
	"  --dense L,...       dense candidates, the fastest is the baseline: openblas,\n"
	"                      onednn, blis, or a variant such as openblas:Haswell;\n"
	"                      default all (OpenBLAS also on its best core when its\n"
	"                      detection fell short and OPENBLAS_CORETYPE is unset)\n"
	"  --peers P,...       reference libraries run beside the formats, checked and\n"
	"                      timed the same way (librsb, when built with it)\n"
	"  --repeat R          timed runs per format (after 2 warm-up runs); default:\n"
	"                      until the time budget is used, 5 to 1000 runs\n"
	"  --time-budget S     seconds of timed runs per layer; default 0.2\n"
	"  --cold              evict the caches before every timed run\n"
	"  --breakeven         also sweep each distinct (shape, N, pattern) on\n"
	"                      synthetic W for each format's breakeven sparsity\n"
	"                      (repeated blocks share one sweep), within the time\n"
	"                      budget of a layer; ignored with --static\n"
	"  --counters C        cache figures from auto, papi, perf, sim or none;\n"
	"                      auto: hardware counters where they count cache\n"
	"                      events here, else sim ('spprof info' says which work)\n"
	"  --cache-model G     the simulator's hierarchy, such as\n"
	"                      l1=48K/12,l2=1M/16,llc=32M/16,line=64; default: this\n"
	"                      machine's, the LLC held to a believable size\n"
	"  --seed S            seed of the activations X (uniform in [-1, 1]); default 1\n"
	"  --format F          text, json, csv, md or html; default text, or from -o's\n"
	"                      extension\n"
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
	OPT_FORMATS,
	OPT_BACKENDS,
	OPT_REPEAT,
	OPT_BUDGET,
	OPT_COLD,
	OPT_PEERS,
	OPT_COUNTERS,
	OPT_CACHE_MODEL,
	OPT_BREAKEVEN,
	OPT_ACT_SPARSITY,
	OPT_ACTIVATIONS,
	OPT_DENSE,
};

static const struct option analyze_options[] = {
	{"static", no_argument, NULL, OPT_STATIC},
	{"n", required_argument, NULL, OPT_N},
	{"threads", required_argument, NULL, OPT_THREADS},
	{"seed", required_argument, NULL, OPT_SEED},
	{"format", required_argument, NULL, OPT_FORMAT},
	{"output", required_argument, NULL, 'o'},
	{"quiet", no_argument, NULL, OPT_QUIET},
	{"formats", required_argument, NULL, OPT_FORMATS},
	{"backends", required_argument, NULL, OPT_BACKENDS},
	{"repeat", required_argument, NULL, OPT_REPEAT},
	{"time-budget", required_argument, NULL, OPT_BUDGET},
	{"cold", no_argument, NULL, OPT_COLD},
	{"peers", required_argument, NULL, OPT_PEERS},
	{"dense", required_argument, NULL, OPT_DENSE},
	{"counters", required_argument, NULL, OPT_COUNTERS},
	{"cache-model", required_argument, NULL, OPT_CACHE_MODEL},
	{"breakeven", no_argument, NULL, OPT_BREAKEVEN},
	{"act-sparsity", required_argument, NULL, OPT_ACT_SPARSITY},
	{"activations", required_argument, NULL, OPT_ACTIVATIONS},
	{NULL, 0, NULL, 0},
};

/*
 * Whether the cuda backend can run here: 0 with *run set when it can, 0
 * and a warning to print when it is skipped, 3 with the message printed
 * when it cannot run.
 */
static int cuda_backend(int alone, int *run, char *warn, size_t len)
{
	struct spp_cuda_probe p;

	spp_cuda_probe(&p);
	*run = 0;
	if (!p.built) {
		/* asking for a backend this binary lacks is an error even next to cpu */
		fprintf(stderr, "spprof: no CUDA backend in this build\n");
		return 3;
	}
	if (p.ndevices) {
		*run = 1;
		return 0;
	}
	if (alone) {
		fprintf(stderr, "spprof: no CUDA backend to run on: %s\n", p.why);
		return 3;
	}
	snprintf(warn, len, "skipping backend cuda: %s", p.why);
	return 0;
}

/* Into o->backends. 0 ok, 2 usage, 3 a backend this build lacks or cannot run. */
static int parse_backends(const char *list, struct spp_analyze_opts *o, char *warn, size_t len)
{
	int cuda, cpu, run = 0, rc;

	warn[0] = '\0';
	if ((rc = cmd_parse_backends("analyze", list, &cpu, &cuda)))
		return rc;
	rc = cuda ? cuda_backend(cpu == 0, &run, warn, len) : 0;
	o->backends = (cpu ? SPP_BACKEND_CPU : 0u) | (run ? SPP_BACKEND_CUDA : 0u);
	o->cupti = run;
	return rc;
}

/* The progress line's state, built on the first callback once the layers are known. */
struct progress_state {
	struct cmd_progress line;
	double *work;   /* dense FLOPs per layer: the estimate's weights */
	double start;   /* now_s() when the run began */
};

static double now_s(void)
{
	struct timespec t;

	clock_gettime(CLOCK_MONOTONIC, &t);
	return (double)t.tv_sec + 1e-9 * (double)t.tv_nsec;
}

static void progress(void *ctx, const struct spp_analysis *a, int done)
{
	struct progress_state *ps = ctx;

	if (!ps->work) {
		ps->work = calloc((size_t)a->nlayers + 1, sizeof(*ps->work));
		for (int i = 0; ps->work && i < a->nlayers; i++)
			ps->work[i] = a->stats[i].flops_dense;
		cmd_progress_init(&ps->line, stderr, 1, ps->work, a->nlayers);
	}
	if (done >= a->nlayers)
		cmd_progress_clear(&ps->line);
	else
		cmd_progress_update(&ps->line, done, a->layers[done].name, now_s() - ps->start);
}

int cmd_analyze(int argc, char **argv)
{
	struct spp_analyze_opts opts;
	struct spp_analysis *a = NULL;
	struct spp_render_opts ropts = {0};
	struct spp_error err = {0};
	enum spp_report_format fmt = SPP_REPORT_TEXT;
	const char *format_name = NULL, *output = NULL;
	cJSON *report = NULL;
	struct progress_state ps = {0};
	int quiet = 0, rc, c;
	char backend_warning[256] = "";
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
		case OPT_FORMATS:
			if ((rc = cmd_parse_formats("analyze", optarg, opts.formats, SPP_MAX_FORMATS,
						     &opts.nformats, 1)))
				return rc;
			/* "dense" alone is an empty list, not the default of all */
			opts.formats_set = 1;
			break;
		case OPT_BACKENDS:
			if ((rc = parse_backends(optarg, &opts, backend_warning, sizeof(backend_warning))))
				return rc;
			break;
		case OPT_REPEAT:
			if (cmd_parse_i64(optarg, 1, 1000000, &v))
				return cmd_usage_error("analyze", "--repeat wants 1..1000000, not '%s'", optarg);
			opts.repeat = (int)v;
			break;
		case OPT_BUDGET:
			if (cmd_parse_time_budget("analyze", optarg, &opts.time_budget_s))
				return 2;
			break;
		case OPT_COLD:
			opts.cold = 1;
			break;
		case OPT_BREAKEVEN:
			opts.breakeven = 1;
			break;
		case OPT_ACT_SPARSITY: {
			char *end = NULL;
			double d = strtod(optarg, &end);

			if (!*optarg || *end || !(d >= 0 && d < 1))
				return cmd_usage_error("analyze", "--act-sparsity wants a fraction in [0, 1), not '%s'",
						       optarg);
			opts.act_sparsity = d;
			break;
		}
		case OPT_ACTIVATIONS: {
			struct stat st;

			if (stat(optarg, &st) != 0 || !S_ISDIR(st.st_mode))
				return cmd_usage_error("analyze", "--activations: '%s' is not a folder", optarg);
			opts.activations = optarg;
			break;
		}
		case OPT_PEERS:
			if ((rc = cmd_parse_peers("analyze", optarg, opts.peers, SPP_MAX_PEERS, &opts.npeers)))
				return rc;
			break;
		case OPT_DENSE:
			if (cmd_dense_check("analyze", optarg))
				return 2;
			opts.dense = optarg;
			break;
		case OPT_COUNTERS:
			if (strcmp(optarg, "auto") && strcmp(optarg, "papi") && strcmp(optarg, "perf") &&
			    strcmp(optarg, "sim") && strcmp(optarg, "none"))
				return cmd_usage_error("analyze", "unknown --counters '%s' (auto, papi, perf, sim, none)",
						       optarg);
			snprintf(opts.counters.want, sizeof(opts.counters.want), "%s", optarg);
			break;
		case OPT_CACHE_MODEL: {
			struct spp_sim_geometry g;
			struct spp_error e;

			if (strlen(optarg) >= sizeof(opts.counters.cache_model) ||
			    spp_sim_geometry_parse(optarg, &g, &e))
				return cmd_usage_error("analyze", "%s", strlen(optarg) >= sizeof(opts.counters.cache_model)
									? "--cache-model is too long" : e.msg);
			snprintf(opts.counters.cache_model, sizeof(opts.counters.cache_model), "%s", optarg);
			break;
		}
		case ':':
			return cmd_usage_error("analyze", "option '%s' needs a value", argv[optind - 1]);
		default:
			return cmd_usage_error("analyze", "unknown option '%s'", argv[optind - 1]);
		}
	}
	if (optind != argc - 1)
		return cmd_usage_error("analyze", optind >= argc ? "no MODEL given" : "one MODEL at a time");
	if (cmd_output_format("analyze", format_name, output, &fmt))
		return 2;

	if (!quiet && !opts.static_only && isatty(STDERR_FILENO)) {
		ps.start = now_s();
		opts.progress = progress;
		opts.progress_ctx = &ps;
	}
	if (!quiet && backend_warning[0])
		fprintf(stderr, "spprof: warning: %s\n", backend_warning);
	rc = spp_analyze_run(argv[optind], &opts, &a, &err);
	free(ps.work);
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
