/*
 * spprof bench: the CPU kernels against the dense baseline on real pruned
 * patterns (a DLMC subset, values from a fixed seed) and on synthetic
 * layers (the breakeven sweep of profiler/sweep.h, and 2:4 at exactly
 * 50 %), for each N and thread count asked. Every run goes through
 * spp_matrix_measure: checked against dense, then timed by the harness
 * with analyze's thread policy. Each case's figures are selected by
 * profiler/bench_result.h as its runs finish; reports/bench.h writes the
 * report.
 */
#include <limits.h>
#include <math.h>
#include <omp.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "cmd/cmd.h"
#include "cmd/bench.h"
#include "config.h"
#include "base/buffer.h"
#include "kernels/peers.h"
#include "base/atomic_file.h"
#include "base/infile.h"
#include "base/near_exe.h"
#include "base/rng.h"
#include "base/safe_text.h"
#include "profiler/bench_result.h"
#include "profiler/machine.h"
#include "profiler/peer_torch.h"
#include "profiler/run.h"
#include "profiler/smtx.h"
#include "profiler/sweep.h"
#include "profiler/synth_fill.h"
#include "reports/bench.h"

/* every (threads, N) case has its summary */
_Static_assert(BENCH_MAX_LIST * BENCH_MAX_LIST <= SPP_BENCH_MAX_CASES, "bench: too many cases");

/* What the cases leave: the report as it is written, and each case's figures. */
struct bench_out {
	struct spp_bench_out out;
	struct spp_bench_sums sums;
};

/* The figures of the case running now. */
static struct spp_bench_sum *cur_sum(struct bench_out *bo)
{
	return &bo->sums.sum[bo->sums.nsums - 1];
}

/* What the options fill: the run's configuration and what is settled after parsing. */
struct bench_args {
	struct bench_cfg c;
	const char *format, *dlmc;
	int size_set;
};

#define B struct bench_args

/* The session's options as bench starts them, and help states them. */
static const struct spp_session_opts bench_session = {
	.time_budget_s = 0.25,
	.seed = 1,
	/*
	 * points are many and each is timed against its own dense run; 6
	 * rounds at least, the fewest that give a figure its distribution-free
	 * 95 % interval (profiler/stats.c), so that two runs' targets can be
	 * compared by their intervals (at 3, the 4096^2 N = 64 points had none)
	 */
	.warmup = 1,
	.min_repeats = 6,
};

static int opt_peers(const char *cmd, const struct cmd_option *o, const char *arg, void *args);

static const struct cmd_option bench_options[] = {
	{CMD_STRING("dlmc", "DIR", B, dlmc),
	 .help = "DLMC folder; default ../shared/bench/dlmc from the repository of this "
		 "spprof, or from the current folder"},
	{CMD_INT_LIST("n", "LIST", B, c.ns, c.nn, BENCH_MAX_LIST, 1, INT64_C(1) << 20),
	 .want = "1..2^20", .help = "N values; default 1,64"},
	{CMD_OPT_THREAD_LIST(B, c.threads, c.nthreads, BENCH_MAX_LIST),
	 .help = "thread counts; default 1,2"},
	{CMD_OPT_FORMATS(B, c.formats, c.nformats, BENCH_MAX_FORMATS),
	 .help = "formats; default all CPU formats"},
	{CMD_CALLBACK("peers", "P,...", opt_peers),
	 .help = "reference libraries beside them: librsb and xnnpack as formats (when built "
		 "with them), torch (PyTorch's torch.sparse.mm on CSR and torch.mm, through "
		 "scripts/peers/torch_spmm.py) on the synthetic layers"},
	{CMD_INT("size", "S", B, c.size, 1, 32768), CMD_SEEN(B, size_set),
	 .help = "synthetic layers S x S; default 4096 (1024 with --quick)"},
	{CMD_OPT_SESSION(B, c.session, &bench_session)},
	{CMD_FLAG("quick", B, c.quick), .help = "smoke run: 1024 x 1024 and two DLMC matrices"},
	{CMD_OPT_FORMAT(B, format), .help = "text or json; default text, or from -o's extension"},
	{CMD_OPT_OUTPUT(B, c.output), .help = "write to FILE atomically instead of stdout"},
	{CMD_OPT_QUIET(B, c.quiet), .help = "no progress on stderr"},
	{0},
};

#undef B

const struct cmd_help cmd_bench_help = {
	.head = "usage: spprof bench [options]\n"
		"\n"
		"Benchmark the CPU sparse formats against the dense baseline (the fastest\n"
		"dense candidate per shape, GEMV at N = 1): on the DLMC patterns (real\n"
		"pruned Transformer and ResNet-50 layers; non-zeros filled from a fixed\n"
		"seed) each format at the matrix's own sparsity, and on synthetic S x S\n"
		"layers the breakeven sweep over unstructured sparsity plus 2:4 at\n"
		"exactly 50%. Each output is checked against dense before it is timed.\n"
		"spprof calibrate's read-bandwidth and FMA probes are measured at the start\n"
		"(768 MiB of probe arrays, a few seconds; the calibration cache is left\n"
		"alone) and are what each run's bandwidth is compared with. The targets\n"
		"at the end are the kernel issue's (docs/PERFORMANCE.md); under each\n"
		"speedup target, what bounds it: the run's bytes per second against the\n"
		"probe of the level they fit, its useful GFLOP/s against the dense\n"
		"baseline's, and both as the target needs them.\n",
	.options = bench_options,
	.tail = "exit codes: 0 ok, 2 bad usage or input (a missing DLMC folder), 3 runtime failure\n",
};

static void progress(const struct bench_cfg *c, const char *fmt, const char *what)
{
	if (c->quiet)
		return;
	fprintf(stderr, "\r\033[Kspprof bench: ");
	fprintf(stderr, fmt, what);
	fflush(stderr);
}

/* Run options for thread count i (c->threads[i]) with analyze's policy; the pool prepared. */
static void run_opts(struct bench_cfg *c, int i, struct spp_run_opts *ro,
		     struct spp_bench_threads *bt)
{
	const struct spp_run_settings *rs = &c->sess.rec->settings;

	/* bw_util against this run's probe */
	c->machine->cal = c->probe[i];
	c->machine->have_calibration = 1;
	spp_session_runs(&c->sess, (int)c->threads[i], ro);
	snprintf(bt->schedule, sizeof(bt->schedule), "%s", rs->schedule);
	snprintf(bt->policy, sizeof(bt->policy), "%s", rs->thread_policy);
	bt->threads = rs->threads;
	bt->pinned = rs->pinned;
}

/*
 * The matrices are the run's inputs: each is opened once now (a FIFO among
 * them is refused before any work), so that -o naming one is refused
 * before the first run, not when the report is written at the end.
 */
static int inputs_apart(const struct bench_cfg *c, struct spp_error *err)
{
	char path[4096];

	for (int i = 0; i < c->ndlmc; i++) {
		int fd;

		if ((size_t)snprintf(path, sizeof(path), "%s/%s", c->dlmc_dir, c->dlmc[i]) >= sizeof(path))
			continue; /* run_dlmc says so */
		fd = spp_infile_open(path, NULL, err);
		if (fd < 0)
			return cmd_fail(err);
		close(fd);
	}
	return c->output && spp_outfile_check(c->output, err) ? cmd_fail(err) : 0;
}

static int run_dlmc(struct bench_cfg *c, const struct spp_run_opts *ro, int64_t n,
		    struct bench_out *bo, struct spp_error *err)
{
	for (int i = 0; i < c->ndlmc; i++) {
		char path[PATH_MAX];
		struct spp_smtx s;
		struct spp_layer_runs runs = {0};
		struct spp_matrix w;
		float *buf;
		int rc;

		if ((size_t)snprintf(path, sizeof(path), "%s/%s", c->dlmc_dir, c->dlmc[i]) >= sizeof(path))
			return spp_error_set(err, SPP_E_USAGE, "'%s/%s': path too long", c->dlmc_dir, c->dlmc[i]);
		progress(c, "DLMC %s", c->dlmc[i]);
		rc = spp_smtx_load(path, &s, err);
		if (rc)
			return rc;
		/* huge-page backed like run.c's operands: dense reads W from it */
		buf = spp_buffer_alloc((size_t)(s.m * s.k) * sizeof(float));
		if (!buf) {
			spp_smtx_release(&s);
			return spp_error_set(err, SPP_E_NOMEM, "out of memory for '%s'", path);
		}
		spp_smtx_fill_dense(&s, c->session.seed, buf);
		w = (struct spp_matrix){s.m, s.k, buf};
		rc = spp_matrix_measure(&w, n, (uint64_t)s.nnz,
					s.nnz ? (double)(s.m * s.k) / (double)s.nnz : 0, c->dlmc[i],
					c->all, c->nall, ro, &runs, err);
		if (!rc) {
			spp_bench_sum_dlmc(cur_sum(bo), &runs);
			rc = spp_bench_out_matrix(&bo->out, c->dlmc[i], s.m, s.k, (uint64_t)s.nnz,
						  &runs, err);
		}
		spp_layer_runs_release(&runs);
		spp_smtx_release(&s);
		spp_buffer_free(buf);
		if (rc)
			return rc;
	}
	return SPP_OK;
}

/* --peers: "torch" sets c.torch, the rest are format peers (cmd_parse_peers). 0 or 2. */
static int opt_peers(const char *cmd, const struct cmd_option *o, const char *arg, void *args)
{
	struct bench_cfg *c = &((struct bench_args *)args)->c;
	char list[256], *save = NULL, tmp[256];
	struct spp_buf buf;

	(void)o;
	spp_buf_init(&buf, list, sizeof(list));
	if (snprintf(tmp, sizeof(tmp), "%s", arg) >= (int)sizeof(tmp))
		return cmd_usage_error(cmd, "--peers list too long");
	for (char *t = strtok_r(tmp, ",", &save); t; t = strtok_r(NULL, ",", &save)) {
		if (strcmp(t, "torch") == 0)
			c->torch = 1;
		else
			spp_buf_add(&buf, "%s%s", buf.len ? "," : "", t);
	}
	c->npeers = 0;
	if (!buf.len && c->torch)
		return 0;
	return cmd_parse_peers(cmd, list, c->peers, BENCH_MAX_PEERS, &c->npeers);
}

/*
 * The PyTorch peer on W (size x size) at n columns of X uniform in [-1, 1]
 * from the seed, against dense_ns; torch absent: one note, and c->torch off.
 */
static int run_torch(struct bench_cfg *c, const struct spp_run_opts *ro, const float *wv,
		     int64_t n, const char *name, double dense_ns, struct bench_out *bo,
		     struct spp_error *err)
{
	struct spp_matrix w = {c->size, c->size, wv};
	struct spp_peer_torch t;
	struct spp_error e2 = {0};
	struct spp_rng rng;
	float *x = malloc(sizeof(float) * (size_t)(c->size * n));
	int rc;

	if (!x)
		return spp_error_set(err, SPP_E_NOMEM, "out of memory for the torch peer's X");
	spp_rng_seed(&rng, c->session.seed);
	for (int64_t i = 0; i < c->size * n; i++)
		x[i] = (float)(2 * spp_rng_uniform(&rng) - 1);
	progress(c, "%s: torch", name);
	rc = spp_peer_torch_run(&w, x, n, ro->threads, c->session.time_budget_s, &t, &e2);
	free(x);
	if (rc == SPP_E_NOMEM)
		return spp_error_set(err, rc, "%s", e2.msg);
	if (rc) {
		/* a peer that cannot run is a note, not the benchmark's failure */
		c->torch = rc != SPP_E_UNSUPPORTED;
		return spp_bench_out_note(&bo->out, "peer torch: not run", e2.msg, err);
	}
	return spp_bench_out_torch(&bo->out, name, &t, dense_ns, err);
}

/* The torch peer on an unstructured W at 90 %, against the case's dense median. */
static int torch_at_90(struct bench_cfg *c, const struct spp_run_opts *ro, int64_t n,
		       struct bench_out *bo, struct spp_error *err)
{
	struct spp_synth_layer l = {0};
	float *w = spp_buffer_alloc((size_t)(c->size * c->size) * sizeof(float));
	char name[64];
	int rc;

	if (!w)
		return spp_error_set(err, SPP_E_NOMEM, "out of memory for the torch peer's W");
	snprintf(l.name, sizeof(l.name), "u90");
	l.ndim = 2;
	l.shape[0] = l.shape[1] = c->size;
	l.pattern = SPP_SYNTH_UNSTRUCTURED;
	l.sparsity = 0.9;
	l.dtype = SPP_DTYPE_F32;
	snprintf(name, sizeof(name), "%lldx%lld unstructured 90%%", (long long)c->size, (long long)c->size);
	rc = spp_synth_fill_f32(&l, c->session.seed, w, err);
	if (!rc)
		rc = run_torch(c, ro, w, n, name, cur_sum(bo)->dense_ns, bo, err);
	spp_buffer_free(w);
	return rc;
}

/*
 * A cold run's synthetic sweep again warm (issue 45: the N = 1 dense
 * baseline depends on the cache state, so bench shows both), the dense
 * candidates timed afresh in that state (a memo of its own). Output only:
 * the summary stays the run's cache state.
 */
static int warm_sweep(struct bench_cfg *c, const struct spp_run_opts *ro,
		      const struct spp_sweep_opts *so, const struct spp_format_ops *const *fm, int nf,
		      struct bench_out *bo, struct spp_error *err)
{
	struct spp_run_opts warm = *ro;
	struct spp_dense_memo memo = {0};
	struct spp_sweep_measure sm = {0};
	struct spp_sweep_timer timer;
	struct spp_sweep sw = {0};
	int rc;

	warm.cold = 0;
	warm.flusher = NULL;
	warm.dense_memo = &memo;
	sm.sweep = so;
	sm.run = &warm;
	sm.seed = c->session.seed;
	spp_sweep_measure_timer(&sm, &timer);
	progress(c, "%s", "the same sweep warm");
	rc = spp_sweep_run(so, fm, nf, &timer, &sw, err);
	if (!rc)
		rc = spp_bench_out_sweep_warm(&bo->out, &sw, err);
	spp_sweep_release(&sw);
	spp_sweep_measure_fini(&sm);
	spp_dense_memo_free(&memo);
	return rc;
}

static int run_synthetic(struct bench_cfg *c, const struct spp_run_opts *ro, int64_t n,
			 struct bench_out *bo, struct spp_error *err)
{
	const struct spp_format_ops *fm[BENCH_MAX_FORMATS + BENCH_MAX_PEERS];
	struct spp_sweep_opts so;
	struct spp_sweep_measure sm = {0};
	struct spp_sweep_timer timer;
	struct spp_sweep sw = {0};
	struct spp_synth_layer l;
	struct spp_layer_runs runs = {0};
	struct spp_matrix w;
	char name[64];
	uint64_t nnz = 0;
	int nf = 0, rc;

	/* N:M formats cannot hold unstructured W: left out of the sweep */
	for (int f = 0; f < c->nall; f++)
		if (c->all[f]->keep == 0)
			fm[nf++] = c->all[f];
	spp_sweep_opts_init(&so);
	so.m = so.k = c->size;
	so.n = n;
	so.threads = ro->threads;
	sm.sweep = &so;
	sm.run = ro;
	sm.seed = c->session.seed;
	/* the runs of the targets' point, for their bounds */
	sm.keep = 1;
	sm.keep_at = 0.9;
	spp_sweep_measure_timer(&sm, &timer);
	snprintf(name, sizeof(name), "%lldx%lld unstructured sweep", (long long)c->size,
		 (long long)c->size);
	progress(c, "%s", name);
	rc = spp_sweep_run(&so, fm, nf, &timer, &sw, err);
	if (!rc) {
		spp_bench_sum_sweep(cur_sum(bo), &sw, &sm.kept);
		rc = spp_bench_out_sweep(&bo->out, &sw, err);
	}
	spp_sweep_release(&sw);
	if (!rc && ro->cold)
		rc = warm_sweep(c, ro, &so, fm, nf, bo, err);
	if (!rc && c->torch)
		rc = torch_at_90(c, ro, n, bo, err);
	if (rc)
		goto out;

	/* 2:4 at exactly 50%: W from the same buffer */
	memset(&l, 0, sizeof(l));
	snprintf(l.name, sizeof(l.name), "nm2_4");
	l.ndim = 2;
	l.shape[0] = l.shape[1] = c->size;
	l.pattern = SPP_SYNTH_NM;
	l.nm_n = 2;
	l.nm_m = 4;
	l.sparsity = 0.5;
	l.dtype = SPP_DTYPE_F32;
	if (!sm.w && !(sm.w = spp_buffer_alloc((size_t)(c->size * c->size) * sizeof(float)))) {
		rc = spp_error_set(err, SPP_E_NOMEM, "out of memory for the 2:4 layer");
		goto out;
	}
	rc = spp_synth_fill_f32(&l, c->session.seed, sm.w, err);
	if (rc)
		goto out;
	for (int64_t i = 0; i < c->size * c->size; i++)
		nnz += sm.w[i] != 0;
	w = (struct spp_matrix){c->size, c->size, sm.w};
	snprintf(name, sizeof(name), "%lldx%lld nm2_4 (50%%)", (long long)c->size,
		 (long long)c->size);
	progress(c, "%s", name);
	rc = spp_matrix_measure(&w, n, nnz, nnz ? (double)(c->size * c->size) / (double)nnz : 0,
				name, c->all, c->nall, ro, &runs, err);
	if (!rc) {
		spp_bench_sum_nm(cur_sum(bo), &runs);
		rc = spp_bench_out_nm(&bo->out, name, c->size, c->size, nnz, &runs, err);
	}
	if (!rc && c->torch)
		rc = run_torch(c, ro, sm.w, n, name, runs.runs[0].time.median, bo, err);
	spp_layer_runs_release(&runs);
out:
	spp_sweep_measure_fini(&sm);
	return rc;
}

static int run_all(struct bench_cfg *c, struct bench_out *bo, struct spp_error *err)
{
	int rc = SPP_OK;

	for (int t = 0; t < c->nthreads && !rc; t++) {
		struct spp_run_opts ro;
		struct spp_bench_threads bt;

		run_opts(c, t, &ro, &bt);
		for (int i = 0; i < c->nn && !rc; i++) {
			rc = spp_bench_sums_add(&bo->sums, bt.threads, c->ns[i], err)
				     ? spp_bench_out_case(&bo->out, &bt, c->ns[i], err)
				     : err->code;
			if (!rc)
				rc = run_dlmc(c, &ro, c->ns[i], bo, err);
			if (!rc)
				rc = run_synthetic(c, &ro, c->ns[i], bo, err);
		}
	}
	if (!c->quiet)
		fprintf(stderr, "\r\033[K");
	return rc;
}

/*
 * spprof calibrate's probes for each thread count of the run, measured now
 * (the host's bandwidth moves over a day), stored nowhere. 0 or an exit code.
 */
static int measure_probe(struct bench_cfg *c, struct spp_error *err)
{
	int threads[BENCH_MAX_LIST];

	c->machine = calloc(1, sizeof(*c->machine));
	if (!c->machine) {
		spp_error_set(err, SPP_E_NOMEM, "out of memory for the machine description");
		return cmd_fail(err);
	}
	spp_machine_describe(c->machine, (int)c->threads[0]);
	for (int i = 0; i < c->nthreads; i++)
		threads[i] = (int)c->threads[i];
	c->probe_s = c->session.time_budget_s < 0.5 ? c->session.time_budget_s : 0.5;
	progress(c, "%s", "the read-bandwidth and FMA probes");
	if (spp_calibrate_measure(c->machine, threads, c->nthreads, c->probe_s, c->probe, err))
		return cmd_fail(err);
	return 0;
}

/* The report's description of the run (the session open, the probes measured). */
static void describe(const struct bench_cfg *c, struct spp_bench_desc *d)
{
	*d = (struct spp_bench_desc){
		.ns = c->ns, .nn = c->nn, .threads = c->threads, .nthreads = c->nthreads,
		.all = c->all, .nall = c->nall, .size = c->size, .quick = c->quick, .json = c->json,
		.torch = c->torch, .dlmc_dir = c->dlmc_dir, .ndlmc = c->ndlmc, .session = c->session,
		.rec = c->sess.rec, .probe = c->probe, .probe_s = c->probe_s, .machine = c->machine,
	};
}

static void cfg_free(struct bench_cfg *c)
{
	for (int i = 0; i < c->ndlmc; i++)
		free(c->dlmc[i]);
	spp_session_close(&c->sess);
	free(c->machine);
}

/* The settings parsing leaves to be worked out; 0, or 2 after the usage error. */
static int settle(struct bench_args *a)
{
	struct bench_cfg *c = &a->c;

	if (a->format && strcmp(a->format, "text") && strcmp(a->format, "json"))
		return cmd_usage_error("bench", "unknown --format '%s' (text, json)", a->format);
	c->json = a->format ? strcmp(a->format, "json") == 0
			    : c->output && strlen(c->output) > 5 &&
				      strcmp(c->output + strlen(c->output) - 5, ".json") == 0;
	if (c->quick && !a->size_set)
		c->size = 1024;
	c->quiet |= !isatty(STDERR_FILENO);
	if (!c->nformats)
		for (; spp_cpu_formats[c->nformats] && c->nformats < BENCH_MAX_FORMATS; c->nformats++)
			c->formats[c->nformats] = spp_cpu_formats[c->nformats];
	for (int i = 0; i < c->nformats; i++)
		c->all[c->nall++] = c->formats[i];
	for (int i = 0; i < c->npeers; i++)
		c->all[c->nall++] = c->peers[i];
	return 0;
}

int cmd_bench(int argc, char **argv)
{
	struct bench_args args;
	struct bench_cfg *c = &args.c;
	struct bench_out bo;
	struct spp_bench_desc desc;
	struct spp_error err = {0};
	struct spp_atomic_file af = {0};
	char tried[PATH_MAX * 2 + 64];
	int rc, npos;
	FILE *out = stdout;

	memset(&args, 0, sizeof(args));
	c->ns[0] = 1, c->ns[1] = 64, c->nn = 2;
	c->threads[0] = 1, c->threads[1] = 2, c->nthreads = 2;
	c->size = 4096;
	c->session = bench_session;
	if ((rc = cmd_parse_options("bench", bench_options, &args, argc, argv, &npos)))
		return rc;
	if (npos)
		return cmd_usage_error("bench", "unexpected argument '%s'", argv[1]);
	if ((rc = settle(&args)))
		return rc;
	/* --cache auto: the synthetic layers' W, the largest the cases time */
	c->session.weights_bytes = (uint64_t)c->size * (uint64_t)c->size * 4;

	if (args.dlmc) {
		snprintf(c->dlmc_dir, sizeof(c->dlmc_dir), "%s", args.dlmc);
	} else if (bench_find_dlmc(c->dlmc_dir, sizeof(c->dlmc_dir), tried, sizeof(tried))) {
		fprintf(stderr, "spprof bench: no DLMC folder found: %s; give --dlmc DIR\n", tried);
		return 2;
	}
	rc = bench_list_dlmc(c->dlmc_dir, "", c, 0);
	if (rc)
		goto done;
	if (c->ndlmc == 0) {
		fprintf(stderr, "spprof bench: no .smtx file under '%s'\n", c->dlmc_dir);
		rc = 2;
		goto done;
	}
	if (c->quick)
		bench_pick_quick(c);
	if ((rc = inputs_apart(c, &err)))
		goto done;
	/* the machine the probe describes sizes the session's flusher */
	if ((rc = measure_probe(c, &err)) ||
	    (rc = cmd_session_open("bench", &c->session, c->machine, c->quiet, &c->sess)))
		goto done;

	if (c->output) {
		if (spp_atomic_open(&af, c->output, &err)) {
			rc = cmd_fail(&err);
			goto done;
		}
		out = af.f;
	}
	describe(c, &desc);
	bo.sums.nsums = 0;
	rc = spp_bench_out_init(&bo.out, &desc, out, &err);
	if (!rc)
		rc = run_all(c, &bo, &err);
	if (!rc)
		rc = spp_bench_out_finish(&bo.out, &bo.sums, &err);
	spp_bench_out_fini(&bo.out);
	if (!rc && c->output)
		rc = spp_atomic_commit(&af, &err);
	spp_atomic_abort(&af);
	rc = rc ? cmd_fail(&err) : 0;
done:
	cfg_free(c);
	return rc;
}
