/*
 * `spprof bench`'s report (reports/bench.h): the header, each case's
 * tables or JSON objects as the case runs. The summary at the end is
 * bench_summary.c, the PyTorch peer's lines bench_peer.c.
 */
#include "reports/bench.h"
#include "reports/bench_internal.h"
#include "reports/report.h"
#include "reports/json_values.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "config.h"

/* A time in ns as a short cell: "-", "850ns", "1.25us", ..., "2.00s". */
void spp_bench_fmt_time(double ns, char *b, size_t n)
{
	if (!(ns > 0))
		snprintf(b, n, "-");
	else if (ns < 1e3)
		snprintf(b, n, "%.0fns", ns);
	else if (ns < 1e4)
		snprintf(b, n, "%.2fus", ns / 1e3);
	else if (ns < 1e5)
		snprintf(b, n, "%.1fus", ns / 1e3);
	else if (ns < 1e6)
		snprintf(b, n, "%.0fus", ns / 1e3);
	else if (ns < 1e7)
		snprintf(b, n, "%.2fms", ns / 1e6);
	else if (ns < 1e8)
		snprintf(b, n, "%.1fms", ns / 1e6);
	else if (ns < 1e9)
		snprintf(b, n, "%.0fms", ns / 1e6);
	else
		snprintf(b, n, "%.2fs", ns / 1e9);
}

/* "transformer/magnitude_pruning/0.9/body_decoder_layer_0_ffn_conv1_fully_connected.smtx" -> "tf/0.9/ffn_conv1". */
static void short_name(const char *path, char *b, size_t n)
{
	const char *base = strrchr(path, '/'), *model = path, *level = NULL;
	char name[256];
	size_t len;

	base = base ? base + 1 : path;
	for (const char *p = path; p < base - 1; p++)
		if (*p == '/')
			level = p + 1;
	snprintf(name, sizeof(name), "%s", base);
	len = strlen(name);
	if (len > 5 && strcmp(name + len - 5, ".smtx") == 0)
		name[len -= 5] = '\0';
	if (len > 16 && strcmp(name + len - 16, "_fully_connected") == 0)
		name[len -= 16] = '\0';
	{
		static const char *const drop[] = {"body_decoder_layer_0_", "bottleneck_"};

		for (size_t i = 0; i < sizeof(drop) / sizeof(drop[0]); i++)
			if (strncmp(name, drop[i], strlen(drop[i])) == 0)
				memmove(name, name + strlen(drop[i]), strlen(name) - strlen(drop[i]) + 1);
	}
	snprintf(b, n, "%s/%.*s/%s", strncmp(model, "transformer", 11) == 0 ? "tf" : "rn50",
		 level ? (int)(base - 1 - level) : 0, level ? level : "", name);
	if (strlen(b) > 34)
		b[34] = '\0';
}

/* SPP_E_NOMEM, said of the bench output. */
int spp_bench_fail_nomem(struct spp_error *err)
{
	return spp_error_set(err, SPP_E_NOMEM, "out of memory for the bench output");
}

/* The text header: the machine m, the dense candidates and how the bench measures. */
static void text_header(FILE *f, const struct spp_bench_desc *d, const struct spp_machine *m,
			const char *l2)
{
	fprintf(f, "spprof bench: CPU sparse formats against the fastest dense candidate%s\n\n",
		d->quick ? " (--quick)" : "");
	fprintf(f, "machine   %s, %s, %d logical CPUs%s%s\n", m->cpu[0] ? m->cpu : "unknown CPU",
		spp_isa_name(m->isa), m->logical_cpus, m->hypervisor[0] ? ", hypervisor " : "",
		m->hypervisor);
	fprintf(f, "dense     %s %s, core %s; OPENBLAS_CORETYPE=%s, OPENBLAS_L2_SIZE=%s\n",
		m->blas.name, m->blas.version, m->blas.core,
		!m->blas.coretype_set ? "(unset)" : m->blas.coretype_env[0] ? m->blas.coretype_env
								 : "(set, empty)",
		l2 && *l2 ? l2 : "(unset)");
	for (int i = 0; i < d->rec->dense.n; i++) {
		char what[128];

		spp_dense_describe(&d->rec->dense.c[i], what, sizeof(what));
		fprintf(f, "%s%s: %s\n", i ? "          " : "candidate ", d->rec->dense.c[i].name,
			d->rec->dense.c[i].ok ? what : d->rec->dense.c[i].reason);
	}
	fprintf(f, "          the fastest verified candidate of each shape and thread count is dense\n");
	fprintf(f, "values    DLMC patterns (%d .smtx under %s): non-zeros in row-major order\n"
		   "          from splitmix64 seed %llu, magnitude uniform in [0.05, 1), random sign;\n"
		   "          synthetic W: spprof synth generators, seed %llu; X uniform in [-1, 1]\n",
		d->ndlmc, d->dlmc_dir, (unsigned long long)d->session.seed, (unsigned long long)d->session.seed);
	fprintf(f, "timing    every output checked against dense first; median of >= 3 timed runs\n"
		   "          (1 warm-up) and about %.2f s of timed runs per measured point\n",
		d->session.time_budget_s);
	fprintf(f, "probe     spprof calibrate's, measured at the start of this run (%.2f s a probe):\n"
		   "          read GB/s from L1, L2, LLC, DRAM, and the FMA peak\n", d->probe_s);
	for (int i = 0; i < d->nthreads; i++) {
		const struct spp_calibration *p = &d->probe[i];

		fprintf(f, "          %lld T: %.0f, %.0f, %.1f, %.1f GB/s; %.0f GFLOP/s (%s)\n",
			(long long)d->threads[i], p->level_gbs[SPP_BW_L1], p->level_gbs[SPP_BW_L2],
			p->level_gbs[SPP_BW_LLC], p->level_gbs[SPP_BW_DRAM], p->peak_gflops, p->isa);
	}
	fprintf(f, "caches    %s%s (%s)%s\n",
		d->rec->settings.cold ? "cold: " : "warm: each run follows the last",
		d->rec->settings.cold_method, d->rec->settings.cache_rule,
		d->rec->settings.cold && d->torch ? "; the torch peer times warm" : "");
	if (d->rec->settings.cold)
		fprintf(f, "          the synthetic sweep also warm beside it, with its own dense choice\n");
	fprintf(f, "sweep     %lldx%lld unstructured at 0, 0.1, ..., 0.9, 0.95, 0.98, 0.99, 0.999, then\n"
		   "          up to 5 bisection steps to 0.005; breakeven = the last upward crossing\n"
		   "          of speedup 1 (profiler/sweep.h)\n",
		(long long)d->size, (long long)d->size);
}

/* The JSON report's head (tool, machine, settings) in root; -1 when out of memory. */
static int json_header(cJSON *root, const struct spp_bench_desc *d, const struct spp_machine *m,
		       const char *l2)
{
	cJSON *mach, *blas, *set, *arr;

	cJSON_AddStringToObject(root, "schema", "spprof.bench/1");
	arr = cJSON_AddObjectToObject(root, "tool");
	cJSON_AddStringToObject(arr, "name", "spprof");
	cJSON_AddStringToObject(arr, "version", SPP_VERSION);
	/* the machine block of every report, and the dense candidates of this run */
	mach = spp_report_machine(m);
	if (!mach)
		return -1;
	cJSON_AddItemToObject(root, "machine", mach);
	blas = cJSON_GetObjectItemCaseSensitive(mach, "dense_blas");
	if (blas)
		cJSON_AddItemToObject(blas, "openblas_l2_size", spp_json_str(l2));
	cJSON_AddItemToObject(mach, "dense_candidates", spp_report_dense(&d->rec->dense));
	set = cJSON_AddObjectToObject(root, "settings");
	arr = cJSON_AddArrayToObject(set, "n");
	for (int i = 0; i < d->nn; i++)
		cJSON_AddItemToArray(arr, cJSON_CreateNumber((double)d->ns[i]));
	arr = cJSON_AddArrayToObject(set, "threads");
	for (int i = 0; i < d->nthreads; i++)
		cJSON_AddItemToArray(arr, cJSON_CreateNumber((double)d->threads[i]));
	arr = cJSON_AddArrayToObject(set, "formats");
	for (int i = 0; i < d->nall; i++)
		cJSON_AddItemToArray(arr, cJSON_CreateString(d->all[i]->key));
	cJSON_AddNumberToObject(set, "size", (double)d->size);
	cJSON_AddNumberToObject(set, "time_budget_s", d->session.time_budget_s);
	cJSON_AddNumberToObject(set, "seed", (double)d->session.seed);
	cJSON_AddNumberToObject(set, "probe_s", d->probe_s);
	arr = cJSON_AddArrayToObject(set, "probe");
	for (int i = 0; arr && i < d->nthreads; i++)
		cJSON_AddItemToArray(arr, spp_report_calibration(&d->probe[i]));
	cJSON_AddBoolToObject(set, "quick", d->quick);
	cJSON_AddBoolToObject(set, "cold", d->rec->settings.cold);
	cJSON_AddItemToObject(set, "cold_method", spp_json_str(d->rec->settings.cold_method[0]
								? d->rec->settings.cold_method : NULL));
	cJSON_AddStringToObject(set, "cache", d->rec->settings.cache);
	cJSON_AddStringToObject(set, "cache_rule", d->rec->settings.cache_rule);
	cJSON_AddStringToObject(set, "dlmc", d->dlmc_dir);
	cJSON_AddStringToObject(set, "values",
				"DLMC non-zeros in row-major order from splitmix64(seed): magnitude "
				"uniform in [0.05, 1), random sign");
	return 0;
}

int spp_bench_out_init(struct spp_bench_out *o, const struct spp_bench_desc *d, FILE *f,
		       struct spp_error *err)
{
	struct spp_machine *m = calloc(1, sizeof(*m));
	const char *l2 = getenv("OPENBLAS_L2_SIZE");
	int rc = SPP_OK;

	memset(o, 0, sizeof(*o));
	o->d = *d;
	o->f = f;
	if (!m)
		return spp_bench_fail_nomem(err);
	/* the machine the probes describe; this run's probe, not a cached calibration */
	*m = *d->machine;
	m->cal = d->probe[0];
	m->have_calibration = d->probe[0].threads > 0;
	if (!d->json)
		text_header(f, d, m, l2);
	else if (!(o->root = cJSON_CreateObject()) || json_header(o->root, d, m, l2) ||
		 !(o->cases = cJSON_AddArrayToObject(o->root, "cases")))
		rc = spp_bench_fail_nomem(err);
	free(m);
	return rc;
}

int spp_bench_out_case(struct spp_bench_out *o, const struct spp_bench_threads *t, int64_t n,
		       struct spp_error *err)
{
	o->dlmc_rows = 0;
	if (!o->d.json) {
		fprintf(o->f, "\n== %d thread%s, N = %lld ==\n", t->threads, t->threads == 1 ? "" : "s",
			(long long)n);
		fprintf(o->f, "threads   %s; %d pinned\n", t->policy, t->pinned);
		return SPP_OK;
	}
	o->cur = cJSON_CreateObject();
	if (!o->cur)
		return spp_bench_fail_nomem(err);
	cJSON_AddItemToArray(o->cases, o->cur);
	cJSON_AddNumberToObject(o->cur, "threads", t->threads);
	cJSON_AddNumberToObject(o->cur, "n", (double)n);
	cJSON_AddStringToObject(o->cur, "schedule", t->schedule);
	cJSON_AddNumberToObject(o->cur, "pinned", t->pinned);
	cJSON_AddStringToObject(o->cur, "thread_policy", t->policy);
	if (!cJSON_AddArrayToObject(o->cur, "dlmc"))
		return spp_bench_fail_nomem(err);
	return SPP_OK;
}

/* The header of a runs table: name, shape, sparsity, dense, a column per format. */
static void runs_header(struct spp_bench_out *o, const char *what)
{
	fprintf(o->f, "\n%-34s %-10s %8s %8s", what, "shape", "sparsity", "dense");
	for (int f = 0; f < o->d.nall; f++)
		fprintf(o->f, " %14s", o->d.all[f]->key);
	fprintf(o->f, "\n");
}

static void runs_row(struct spp_bench_out *o, const char *name, int64_t m, int64_t k,
		     double sparsity, const struct spp_layer_runs *runs)
{
	char shape[32], t[16], cell[32];

	snprintf(shape, sizeof(shape), "%lldx%lld", (long long)m, (long long)k);
	spp_bench_fmt_time(runs->runs[0].status == SPP_RUN_OK ? runs->runs[0].time.median : NAN, t, sizeof(t));
	fprintf(o->f, "%-34s %-10s %7.1f%% %8s", name, shape, 100 * sparsity,
		runs->runs[0].status == SPP_RUN_OK ? t : "FAILED");
	for (int r = 1; r < runs->nruns; r++) {
		const struct spp_run *run = &runs->runs[r];

		if (run->status == SPP_RUN_OK && run->time.repeats > 0) {
			spp_bench_fmt_time(run->time.median, t, sizeof(t));
			snprintf(cell, sizeof(cell), "%s %5.2fx", t, run->speedup);
		} else {
			snprintf(cell, sizeof(cell), "%s", run->status == SPP_RUN_NOT_APPLICABLE ? "n/a"
							   : run->status == SPP_RUN_OK ? "not timed" : "FAILED");
		}
		fprintf(o->f, " %14s", cell);
	}
	fprintf(o->f, "\n");
}

static cJSON *runs_json(const char *name, int64_t m, int64_t k, uint64_t nnz,
			const struct spp_layer_runs *runs)
{
	cJSON *o = cJSON_CreateObject(), *arr;

	if (!o)
		return NULL;
	cJSON_AddStringToObject(o, "matrix", name);
	cJSON_AddNumberToObject(o, "m", (double)m);
	cJSON_AddNumberToObject(o, "k", (double)k);
	cJSON_AddNumberToObject(o, "nnz", (double)nnz);
	cJSON_AddNumberToObject(o, "sparsity", 1 - (double)nnz / ((double)m * (double)k));
	arr = cJSON_AddArrayToObject(o, "runs");
	for (int r = 0; arr && r < runs->nruns; r++) {
		const struct spp_run *run = &runs->runs[r];
		cJSON *j = cJSON_CreateObject();

		if (!j)
			break;
		cJSON_AddItemToArray(arr, j);
		cJSON_AddStringToObject(j, "backend", run->backend);
		cJSON_AddStringToObject(j, "format", run->format);
		if (run->library[0])
			cJSON_AddStringToObject(j, "library", run->library);
		cJSON_AddStringToObject(j, "status", spp_run_status_name(run->status));
		cJSON_AddItemToObject(j, "reason", spp_json_str(run->reason));
		cJSON_AddItemToObject(j, "time_ns", spp_report_time(&run->time));
		cJSON_AddItemToObject(j, "speedup", spp_json_num(run->speedup));
	}
	return o;
}

int spp_bench_out_matrix(struct spp_bench_out *o, const char *name, int64_t m, int64_t k,
			 uint64_t nnz, const struct spp_layer_runs *runs, struct spp_error *err)
{
	double sparsity = 1 - (double)nnz / ((double)m * (double)k);
	char sn[64];

	if (!o->d.json) {
		if (o->dlmc_rows++ == 0)
			runs_header(o, "DLMC matrix (time, speedup)");
		short_name(name, sn, sizeof(sn));
		runs_row(o, sn, m, k, sparsity, runs);
		return SPP_OK;
	}
	{
		cJSON *j = runs_json(name, m, k, nnz, runs);

		if (!j)
			return spp_bench_fail_nomem(err);
		cJSON_AddItemToArray(cJSON_GetObjectItem(o->cur, "dlmc"), j);
	}
	return SPP_OK;
}

/* A sweep as the case's JSON member `key`, or its text table titled `state` ("" or ", warm"). */
static int sweep_out(struct spp_bench_out *o, const struct spp_sweep *s, const char *key,
		     const char *state, struct spp_error *err)
{
	char t[16], cell[32];

	if (o->d.json) {
		cJSON *j = spp_sweep_json(s);

		if (!j)
			return spp_bench_fail_nomem(err);
		cJSON_AddItemToObject(o->cur, key, j);
		return SPP_OK;
	}
	fprintf(o->f, "\nsynthetic %lldx%lld unstructured%s (time, speedup)\n%-8s %8s",
		(long long)s->m, (long long)s->k, state, "sparsity", "dense");
	for (int f = 0; f < s->nresults; f++)
		fprintf(o->f, " %14s", s->results[f].format);
	fprintf(o->f, "\n");
	for (int g = 0; g < SPP_BENCH_NGRID; g++) {
		double td = NAN;

		for (int f = 0; f < s->nresults && !isfinite(td); f++) {
			const struct spp_sweep_point *p = spp_bench_point_at(&s->results[f], spp_bench_grid[g]);

			if (p)
				td = p->dense_time_ns;
		}
		spp_bench_fmt_time(td, t, sizeof(t));
		fprintf(o->f, "%-8g %8s", spp_bench_grid[g], t);
		for (int f = 0; f < s->nresults; f++) {
			const struct spp_sweep_point *p = spp_bench_point_at(&s->results[f], spp_bench_grid[g]);

			if (p) {
				spp_bench_fmt_time(p->time_ns, t, sizeof(t));
				snprintf(cell, sizeof(cell), "%s %5.2fx", t, p->speedup);
			} else {
				snprintf(cell, sizeof(cell), "-");
			}
			fprintf(o->f, " %14s", cell);
		}
		fprintf(o->f, "\n");
	}
	fprintf(o->f, "%-8s %8s", "breakeven", "");
	for (int f = 0; f < s->nresults; f++) {
		const struct spp_sweep_result *r = &s->results[f];

		if (isfinite(r->breakeven))
			snprintf(cell, sizeof(cell), "%.3f", r->breakeven);
		else
			snprintf(cell, sizeof(cell), "none");
		fprintf(o->f, " %14s", cell);
	}
	fprintf(o->f, "\n");
	for (int f = 0; f < s->nresults; f++)
		if (s->results[f].reason[0])
			fprintf(o->f, "  %s: %s\n", s->results[f].format, s->results[f].reason);
	return SPP_OK;
}

int spp_bench_out_sweep(struct spp_bench_out *o, const struct spp_sweep *s, struct spp_error *err)
{
	return sweep_out(o, s, "sweep", "", err);
}

int spp_bench_out_sweep_warm(struct spp_bench_out *o, const struct spp_sweep *s,
			     struct spp_error *err)
{
	return sweep_out(o, s, "sweep_warm", ", warm: each run follows the last", err);
}

int spp_bench_out_nm(struct spp_bench_out *o, const char *name, int64_t m, int64_t k, uint64_t nnz,
		     const struct spp_layer_runs *runs, struct spp_error *err)
{
	if (!o->d.json) {
		runs_header(o, "synthetic 2:4 (time, speedup)");
		runs_row(o, name, m, k, 1 - (double)nnz / ((double)m * (double)k), runs);
		return SPP_OK;
	}
	{
		cJSON *j = runs_json(name, m, k, nnz, runs);

		if (!j)
			return spp_bench_fail_nomem(err);
		cJSON_AddItemToObject(o->cur, "nm2_4", j);
	}
	return SPP_OK;
}

void spp_bench_out_fini(struct spp_bench_out *o)
{
	cJSON_Delete(o->root);
	o->root = NULL;
}
