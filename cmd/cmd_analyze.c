/* spprof analyze: load a model, analyse every layer, report. */
#include <math.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "counters/sim.h"
#include "cmd/cmd.h"
#include "kernels/lowp/lowp.h"
#include "cmd/progress.h"
#include "config.h"
#include "kernels/cuda/device.h"
#include "kernels/peers.h"
#include "profiler/analyze.h"
#include "base/budget.h"
#include "base/safe_text.h"
#include "cmd/cmd_mpi.h"
#include "reports/journal.h"
#include "reports/report.h"

/* What the options fill: the library's options and the report's output. */
struct analyze_args {
	struct spp_analyze_opts opts;
	const char *format, *output;
	int quiet;
	int64_t max_layers;
	uint64_t max_memory;
	const char *shard;         /* --shard, parsed once --shard-count is known */
	int64_t shard_count;
	int resume;
	char backend_warning[256]; /* cuda skipped next to cpu: printed unless quiet */
	/* --input-shape, repeatable: opts.open points at these */
	struct spp_input_shape shapes[SPP_MAX_INPUT_SHAPES];
	char shape_names[SPP_MAX_INPUT_SHAPES][128];
};

static int opt_backends(const char *cmd, const struct cmd_option *o, const char *arg, void *args);
static int opt_epilogue(const char *cmd, const struct cmd_option *o, const char *arg, void *args);
static int opt_precision(const char *cmd, const struct cmd_option *o, const char *arg, void *args);
static int opt_activations(const char *cmd, const struct cmd_option *o, const char *arg,
			   void *args);
static int opt_counters(const char *cmd, const struct cmd_option *o, const char *arg, void *args);
static int opt_max_memory(const char *cmd, const struct cmd_option *o, const char *arg, void *args);
static int opt_input_shape(const char *cmd, const struct cmd_option *o, const char *arg,
			   void *args);
static int opt_cache_model(const char *cmd, const struct cmd_option *o, const char *arg,
			   void *args);
static int opt_layers(const char *cmd, const struct cmd_option *o, const char *arg, void *args);

#define A struct analyze_args

/* The session's options as analyze starts them, and help states them. */
static const struct spp_session_opts analyze_session = {
	.time_budget_s = SPP_ANALYZE_TIME_BUDGET_S,
	.seed = 1,
};

static const struct cmd_option analyze_options[] = {
	{CMD_FLAG("static", A, opts.static_only), .help = "static metrics only (no kernel runs)"},
	{CMD_INT("n", "N", A, opts.n, 1, INT64_C(1) << 31), .want = "a positive integer",
	 CMD_SEEN(A, opts.n_set),
	 .help = "N of each layer's Y = W.X (batch x tokens), every layer's when given; "
		 "default: the graph's N where its shapes give one (ONNX, TFLite, Core ML), else 128"},
	{CMD_CALLBACK("input-shape", "NAME=DIMS", opt_input_shape),
	 .help = "the shape of graph input NAME, such as input=1x3x224x224 (repeatable): "
		 "what the graph's shapes start from; default the file's, a symbolic batch "
		 "taken as 1 with a warning"},
	{CMD_OPT_THREADS(A, opts.threads),
	 .help = "threads for the scan and the runs; default: all cores"},
	{CMD_OPT_FORMATS(A, opts.formats, opts.nformats, SPP_MAX_FORMATS),
	 .flags = CMD_FORMATS_DENSE_ALONE, CMD_SEEN(A, opts.formats_set),
	 .help = "formats to run (csr, coo, bsr4, bsr8, bsr16, bitmask, nm1_4, nm2_4, nm4_8, "
		 "and the activation kernels csc, csr_act, csc_act); default all but the "
		 "activation kernels, which join when X has zeros; dense always runs"},
	{CMD_CALLBACK("backends", "B,...", opt_backends),
	 .help = "backends to run: cpu, cuda; default cpu. cuda is skipped with a warning "
		 "next to cpu, and alone exits 3, where there is no device"},
	{CMD_DOUBLE("act-sparsity", "A", A, opts.act_sparsity, 0, 1, CMD_OPT_MAX_OPEN),
	 .want = "a fraction in [0, 1)",
	 .help = "zero each entry of X with probability A (0 <= A < 1, i.i.d., ReLU-like) "
		 "and run the activation kernels"},
	{CMD_DOUBLE("target-sparsity", "S", A, opts.target_sparsity, 0, 1, CMD_OPT_MAX_OPEN),
	 CMD_SEEN(A, opts.has_target), .want = "a fraction in [0, 1)",
	 .help = "the model sparsity to reach: the report ranks the layers that hold the model "
		 "back from it (their non-zeros above it, in FLOPs) and the sparsity each would "
		 "need alone; default the model's own GEMM sparsity"},
	{CMD_CALLBACK("epilogue", "E", opt_epilogue),
	 .help = "none, bias or bias_relu: also time each CPU format with the epilogue fused "
		 "(applied while Y is in registers) and unfused (the kernel, then a pass over "
		 "Y), the layer's bias from the model (<name>.bias), else zeros; default none, "
		 "and the speedups stay those of the plain kernels"},
	{CMD_CALLBACK("precision", "P", opt_precision),
	 .help = "fp32, bf16, fp16, int8 or auto (each layer's from its stored dtype: BF16 bf16, "
		 "F16 fp16 where a dense fp16 runs here else bf16, I8, Q8_0 and Q4_0 int8, else fp32): "
		 "W and X in that precision on the CPU, the formats "
		 "with a kernel in it (csr, nm2_4, nm4_8, bitmask; bsr1x4 for the bsr formats) "
		 "against the dense GEMM of the same precision; one no dense library runs here "
		 "is refused in the runs with the reason; default fp32"},
	{CMD_CALLBACK("activations", "DIR", opt_activations),
	 .help = "real X: DIR/<layer name>.npy per layer, K x N or N x K (characters "
		 "outside [A-Za-z0-9._-] of the name as _); a layer without a file gets "
		 "synthetic X"},
	{CMD_OPT_SESSION(A, opts.session, &analyze_session)},
	{CMD_OPT_PEERS(A, opts.peers, opts.npeers, SPP_MAX_PEERS),
	 .help = "reference libraries run beside the formats, checked and timed the same "
		 "way (librsb, when built with it)"},
	{CMD_INT("repeat", "R", A, opts.session.repeat, 1, 1000000),
	 .help = "timed runs per format (after 2 warm-up runs); default: until the time "
		 "budget is used, 5 to 1000 runs"},
	{CMD_STRING("shard", "I/N", A, shard),
	 .help = "time only the layers of shard I of N (0 <= I < N), each work unit (shape, N, "
		 "dtype, pattern class) on one shard by a stable hash; auto: from SLURM_ARRAY_TASK_ID, "
		 "JOB_COMPLETION_INDEX, OMPI_COMM_WORLD_RANK or PMI_RANK"},
	{CMD_INT("shard-count", "N", A, shard_count, 1, 65536),
	 .help = "the count for --shard auto where the engine gives none (JOB_COMPLETION_INDEX)"},
	{CMD_CALLBACK("layers", "GLOB", opt_layers),
	 .help = "time only the layers whose name matches GLOB (shell pattern: *, ?, [..]; "
		 "repeatable); the others are still scanned, and marked not timed"},
	{CMD_CALLBACK("skip-layers", "GLOB", opt_layers),
	 .help = "do not time the layers whose name matches GLOB (repeatable; after --layers)"},
	{CMD_FLAG("resume", A, resume),
	 .help = "go on from the journal of finished layers beside -o FILE (FILE.journal, kept "
		 "after a kill or Ctrl-C, whose report is marked incomplete) instead of timing them again"},
	{CMD_FLAG("dedupe", A, opts.dedupe),
	 .help = "time one layer of each repeated (shape, N, dtype, non-zero pattern); the "
		 "others copy its runs and name it (runs_copied_from)"},
	{CMD_FLAG("breakeven", A, opts.breakeven),
	 .help = "also sweep each distinct (shape, N, pattern) on synthetic W for each "
		 "format's breakeven sparsity (repeated blocks share one sweep), within the "
		 "time budget of a layer; ignored with --static"},
	{CMD_INT_LIST("n-sweep", "LIST", A, opts.n_sweep, opts.n_sweep_count, SPP_NSWEEP_MAX_N, 1,
		      INT64_C(1) << 20),
	 .help = "also time each layer's own W at each N of the ascending LIST (e.g. "
		 "1,8,64,256): the N where each format wins and the crossover N, within "
		 "the time budget of a layer (JSON: layers[].n_sweep); ignored with --static"},
	{CMD_CALLBACK("counters", "C", opt_counters),
	 .help = "cache figures from auto, papi, perf, sim or none; auto: hardware counters "
		 "where they count cache events here, else sim ('spprof info' says which work); "
		 "papi,sim (perf,sim, auto,sim): the simulator also replays each run beside the "
		 "hardware's figures (JSON: runs[].cache_sim)"},
	{CMD_CALLBACK("cache-model", "G", opt_cache_model),
	 .help = "the simulator's hierarchy, such as l1=48K/12,l2=1M/16,llc=32M/16,line=64; "
		 "default: this machine's, the LLC held to a believable size"},
	{CMD_INT("max-layers", "L", A, max_layers, 1, INT32_MAX),
	 .help = "refuse a model that makes more than L layers; default 4096 plus one per 256 "
		 "bytes of model, so that a tiny hostile file cannot make millions"},
	{CMD_CALLBACK("max-memory", "BYTES", opt_max_memory),
	 .help = "refuse a matrix whose dense form, or a model whose decoded copies together, "
		 "need more than BYTES (such as 512M, 8G); default 256 MiB plus 128 bytes per "
		 "byte of model, at most 80% of the machine's memory"},
	{CMD_OPT_FORMAT(A, format),
	 .help = "text, json, csv, md or html; default text, or from -o's extension"},
	{CMD_OPT_OUTPUT(A, output),
	 .help = "write the report to FILE atomically instead of stdout"},
	{CMD_OPT_QUIET(A, quiet), .help = "no progress or warnings on stderr"},
	{0},
};

#undef A

const struct cmd_help cmd_analyze_help = {
	.head = "usage: spprof analyze MODEL [options]\n"
		"\n"
		"Profile every layer of MODEL, recognised by content: safetensors (or the\n"
		"model.safetensors.index.json of a sharded checkpoint), ONNX, GGUF,\n"
		"PyTorch (torch.save, or pytorch_model.bin.index.json), TensorFlow Lite,\n"
		"TF.js (model.json or its folder), Core ML (.mlmodel, .mlpackage), NumPy\n"
		".npy/.npz, a DLMC .smtx or a Matrix Market .mtx matrix: sparsity and its\n"
		"pattern, dense and sparse FLOPs, storage per format (docs/METRICS.md),\n"
		"then run the dense baseline (the fastest of the dense candidates, timed\n"
		"once per shape) and every sparse format on each layer: each output is\n"
		"checked against dense, then timed with dense and sparse runs interleaved\n"
		"in shuffled rounds (docs/PERFORMANCE.md). Runs faster than the FLOP\n"
		"ideal and baselines far under the calibrated roofline are warned about.\n",
	.options = analyze_options,
	.tail = "exit codes: 0 ok, 2 bad usage or bad input, 3 runtime failure\n",
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

/* Into opts.epilogue. 0 ok, 2 usage. */
static int opt_epilogue(const char *cmd, const struct cmd_option *o, const char *arg, void *args)
{
	struct analyze_args *a = args;
	int e = spp_epilogue_parse(arg);

	(void)o;
	if (e < 0)
		return cmd_usage_error(cmd, "unknown --epilogue '%s' (known: none, bias, bias_relu)", arg);
	a->opts.epilogue = e;
	return 0;
}

/* Into opts.precision, a name of the precision table (kernels/lowp/lowp.h). 0 ok, 2 usage. */
static int opt_precision(const char *cmd, const struct cmd_option *o, const char *arg, void *args)
{
	struct analyze_args *a = args;
	int p = spp_prec_parse(arg);
	char known[64] = "";
	size_t len = 0;

	(void)o;
	if (p >= 0 || strcmp(arg, "auto") == 0) {
		a->opts.precision = p >= 0 ? p : SPP_ANALYZE_PREC_AUTO;
		return 0;
	}
	for (int i = 0; i < SPP_PREC_COUNT && len < sizeof(known); i++)
		len += (size_t)snprintf(known + len, sizeof(known) - len, "%s%s", i ? ", " : "",
					spp_prec_name((enum spp_prec)i));
	return cmd_usage_error(cmd, "unknown --precision '%s' (known: %s, auto)", arg, known);
}

/* Into opts.backends. 0 ok, 2 usage, 3 a backend this build lacks or cannot run. */
static int opt_backends(const char *cmd, const struct cmd_option *o, const char *arg, void *args)
{
	struct analyze_args *a = args;
	int cuda, cpu, run = 0, rc;

	(void)o;
	a->backend_warning[0] = '\0';
	if ((rc = cmd_parse_backends(cmd, arg, &cpu, &cuda)))
		return rc;
	if (cuda)
		rc = cuda_backend(cpu == 0, &run, a->backend_warning, sizeof(a->backend_warning));
	a->opts.backends = (cpu ? SPP_BACKEND_CPU : 0u) | (run ? SPP_BACKEND_CUDA : 0u);
	a->opts.cupti = run;
	return rc;
}

static int opt_activations(const char *cmd, const struct cmd_option *o, const char *arg,
			   void *args)
{
	struct stat st;

	(void)o;
	if (stat(arg, &st) != 0 || !S_ISDIR(st.st_mode))
		return cmd_usage_error(cmd, "--activations: '%s' is not a folder", arg);
	((struct analyze_args *)args)->opts.activations = arg;
	return 0;
}

static int opt_max_memory(const char *cmd, const struct cmd_option *o, const char *arg, void *args)
{
	static const char units[] = "KMGTP";
	uint64_t v = 0, scale = 1;
	const char *p = arg, *u;

	(void)o;
	while (*p >= '0' && *p <= '9' && v <= UINT64_MAX / 10)
		v = v * 10 + (uint64_t)(*p++ - '0');
	if (*p && (u = strchr(units, *p)) && *u) {
		scale = UINT64_C(1) << (10 * (u - units + 1));
		p++;
		p += !strcmp(p, "iB") ? 2 : !strcmp(p, "B") ? 1 : 0;
	}
	if (p == arg || *p || v == 0 || v > UINT64_MAX / scale)
		return cmd_usage_error(cmd, "--max-memory '%s': want a byte count such as 512M or 8G",
				       arg);
	((struct analyze_args *)args)->max_memory = v * scale;
	return 0;
}

/* --layers / --skip-layers GLOB, repeatable: the globs point into argv. */
static int opt_layers(const char *cmd, const struct cmd_option *o, const char *arg, void *args)
{
	struct spp_analyze_opts *opts = &((struct analyze_args *)args)->opts;
	int skip = strcmp(o->name, "skip-layers") == 0;
	int *n = skip ? &opts->nskip_globs : &opts->ntime_globs;

	if (!*arg)
		return cmd_usage_error(cmd, "--%s takes a non-empty pattern", o->name);
	if (*n >= SPP_MAX_LAYER_GLOBS)
		return cmd_usage_error(cmd, "--%s given more than %d times", o->name, SPP_MAX_LAYER_GLOBS);
	(skip ? opts->skip_globs : opts->time_globs)[(*n)++] = arg;
	return 0;
}

static int opt_input_shape(const char *cmd, const struct cmd_option *o, const char *arg,
			   void *args)
{
	struct analyze_args *a = args;
	struct spp_input_shape *in = &a->shapes[a->opts.open.ninput_shapes];
	const char *eq = strrchr(arg, '='), *p;

	(void)o;
	if (!eq || eq == arg || (size_t)(eq - arg) >= sizeof(a->shape_names[0]))
		return cmd_usage_error(cmd, "--input-shape '%s': want NAME=DIMS such as "
				       "input=1x3x224x224", arg);
	if (a->opts.open.ninput_shapes == SPP_MAX_INPUT_SHAPES)
		return cmd_usage_error(cmd, "--input-shape: at most %d inputs", SPP_MAX_INPUT_SHAPES);
	in->rank = 0;
	for (p = eq + 1; in->rank < SPP_MAX_DIMS; p++) {
		char *end;
		long long d = *p >= '0' && *p <= '9' ? strtoll(p, &end, 10) : 0;

		if (d <= 0 || d > (INT64_C(1) << 40))
			break;
		in->dims[in->rank++] = d;
		p = end;
		if (*p != 'x')
			break;
	}
	if (in->rank == 0 || *p)
		return cmd_usage_error(cmd, "--input-shape '%s': want dimensions of 1 to 2^40 "
				       "joined by x (at most %d), such as 1x3x224x224", arg,
				       SPP_MAX_DIMS);
	memcpy(a->shape_names[a->opts.open.ninput_shapes], arg, (size_t)(eq - arg));
	a->shape_names[a->opts.open.ninput_shapes][eq - arg] = 0;
	in->name = a->shape_names[a->opts.open.ninput_shapes];
	a->opts.open.input_shapes = a->shapes;
	a->opts.open.ninput_shapes++;
	return 0;
}

static int opt_counters(const char *cmd, const struct cmd_option *o, const char *arg, void *args)
{
	struct spp_counters_opts *c = &((struct analyze_args *)args)->opts.counters;
	struct spp_error e;

	(void)o;
	if (spp_counters_parse(arg, c, &e))
		return cmd_usage_error(cmd, "--counters '%s': %s", arg, e.msg);
	return 0;
}

static int opt_cache_model(const char *cmd, const struct cmd_option *o, const char *arg,
			   void *args)
{
	struct spp_counters_opts *c = &((struct analyze_args *)args)->opts.counters;
	struct spp_sim_geometry g;
	struct spp_error e;

	(void)o;
	if (strlen(arg) >= sizeof(c->cache_model))
		return cmd_usage_error(cmd, "--cache-model is too long");
	if (spp_sim_geometry_parse(arg, &g, &e))
		return cmd_usage_error(cmd, "%s", e.msg);
	snprintf(c->cache_model, sizeof(c->cache_model), "%s", arg);
	return 0;
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

/* The combinations of options no table row can check. 0 or the usage error's status. */
static int check_args(struct analyze_args *args)
{
	struct spp_analyze_opts *opts = &args->opts;

	for (int i = 1; i < opts->n_sweep_count; i++)
		if (opts->n_sweep[i] <= opts->n_sweep[i - 1])
			return cmd_usage_error("analyze", "--n-sweep wants ascending, distinct N (%lld after %lld)",
					       (long long)opts->n_sweep[i], (long long)opts->n_sweep[i - 1]);
	if (args->shard_count && !(args->shard && strcmp(args->shard, "auto") == 0))
		return cmd_usage_error("analyze", "--shard-count is the count of --shard auto");
	if (args->shard) {
		struct spp_error e = {0};

		if (spp_shard_parse(args->shard, (int)args->shard_count, &opts->shard, &e))
			return cmd_usage_error("analyze", "%s", e.msg);
	}
	if (opts->dedupe && opts->activations)
		return cmd_usage_error("analyze", "--dedupe with --activations: each layer's X is its "
				       "own, so no layer's runs can stand for another's");
	if (args->resume && !args->output)
		return cmd_usage_error("analyze", "--resume continues the journal beside -o FILE: give -o");
	/* what the low-precision runs (profiler/run_lowp.c) do not do yet: refused, never ignored */
	if (opts->precision != SPP_PREC_FP32 && (opts->epilogue != SPP_EPILOGUE_NONE ||
						 (opts->backends & SPP_BACKEND_CUDA)))
		return cmd_usage_error("analyze", "--precision %s: %s runs in fp32 only for now (give "
				       "--precision fp32)", opts->precision == SPP_ANALYZE_PREC_AUTO ? "auto"
				       : spp_prec_name((enum spp_prec)opts->precision),
				       opts->epilogue != SPP_EPILOGUE_NONE ? "--epilogue" : "the CUDA backend");
	return 0;
}

/* Ctrl-C or SIGTERM: no later layer is timed; a second one ends the process. */
static volatile sig_atomic_t stop_requested;

static void on_stop(int sig)
{
	(void)sig;
	stop_requested = 1;
}

static void catch_stop(void)
{
	struct sigaction sa;

	memset(&sa, 0, sizeof(sa));
	sa.sa_handler = on_stop;
	sa.sa_flags = (int)SA_RESETHAND;
	sigemptyset(&sa.sa_mask);
	sigaction(SIGINT, &sa, NULL);
	sigaction(SIGTERM, &sa, NULL);
}

/* One warning on stderr; warnings quote names from the model: shown escaped. */
static void warn_line(const char *msg)
{
	fputs("spprof: warning: ", stderr);
	spp_safe_fputs(stderr, msg ? msg : "", (size_t)-1);
	fputc('\n', stderr);
}

/* The analysis's report to -o or stdout, with the warnings on stderr first. 0 or the failure's status. */
static int write_out(const struct analyze_args *args, struct spp_analysis *a, enum spp_report_format fmt,
		     struct spp_error *err)
{
	cJSON *report;
	int rc;

	for (int i = 0; !args->quiet && i < a->nwarnings; i++)
		warn_line(a->warnings[i].message);
	/* printed before the run; the report keeps it with the others */
	if (args->backend_warning[0] &&
	    (rc = spp_analysis_warn(a, err, SPP_WARN_NO_DEVICE, "%s", args->backend_warning)))
		return cmd_fail(err);
	report = spp_report_build(a, SPP_VERSION, err);
	return report ? cmd_emit_report(report, fmt, args->output, err) : cmd_fail(err);
}

/* Under mpirun: this rank's shard, and at rank 0 the merged report of every rank's. */
static int analyze_mpi(struct analyze_args *args, const char *model, enum spp_report_format fmt)
{
	struct spp_error err = {0};
	cJSON *report = NULL;
	const cJSON *w, *warnings;
	int rc = cmd_mpi_analyze(model, &args->opts, &report, &err);

	warnings = report && !args->quiet ? cJSON_GetObjectItemCaseSensitive(report, "warnings") : NULL;
	cJSON_ArrayForEach(w, warnings)
		warn_line(cJSON_GetStringValue(cJSON_GetObjectItemCaseSensitive(w, "message")));
	if (rc)
		rc = cmd_fail(&err);
	else if (report) /* rank 0 */
		rc = cmd_emit_report(report, fmt, args->output, &err), report = NULL;
	cJSON_Delete(report);
	cmd_mpi_end();
	return rc;
}

int cmd_analyze(int argc, char **argv)
{
	struct analyze_args args = {0};
	struct spp_analyze_opts *opts = &args.opts;
	struct spp_analysis *a = NULL;
	struct spp_error err = {0};
	struct spp_journal journal = {0};
	enum spp_report_format fmt = SPP_REPORT_TEXT;
	struct progress_state ps = {0};
	int rc, npos;

	spp_analyze_opts_init(opts);
	opts->session = analyze_session;
	if ((rc = cmd_parse_options("analyze", analyze_options, &args, argc, argv, &npos)))
		return rc;
	if (npos != 1)
		return cmd_usage_error("analyze", npos == 0 ? "no MODEL given" : "one MODEL at a time");
	if (cmd_output_format("analyze", args.format, args.output, &fmt) || (rc = check_args(&args)))
		return rc ? rc : 2;
	opts->output = args.output;
	if (!args.quiet && !opts->static_only && isatty(STDERR_FILENO)) {
		ps.start = now_s();
		opts->progress = progress;
		opts->progress_ctx = &ps;
	}
	if (cmd_mpi_launched() && !args.shard && !opts->static_only)
		return analyze_mpi(&args, argv[1], fmt);
	/* a journal of the finished layers beside -o, so that --resume can go on after a kill */
	if (args.output && !opts->static_only) {
		if (spp_journal_init(&journal, args.output, args.resume, &err))
			return cmd_fail(&err);
		opts->restore = spp_journal_restore;
		opts->done = spp_journal_done;
		opts->journal_ctx = &journal;
	}
	opts->stop = &stop_requested;
	catch_stop();
	if (!args.quiet && args.backend_warning[0])
		fprintf(stderr, "spprof: warning: %s\n", args.backend_warning);
	spp_budget_set((uint64_t)args.max_layers, args.max_memory);
	rc = spp_analyze_run(argv[1], opts, &a, &err);
	free(ps.work);
	if (rc) {
		spp_journal_close(&journal, 0);
		return cmd_fail(&err);
	}
	rc = write_out(&args, a, fmt, &err);
	/* the journal goes once the whole report is written; an interrupted run keeps it */
	spp_journal_close(&journal, !rc && !a->incomplete);
	if (!rc && a->incomplete) {
		fprintf(stderr, "spprof analyze: interrupted: the report holds the layers done so far%s\n",
			args.output ? "; --resume goes on from them" : "");
		rc = 130;
	}
	spp_analysis_destroy(a);
	return rc;
}
