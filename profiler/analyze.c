#include "profiler/analyze.h"
#include "profiler/session.h"
#include "profiler/loaders.h"
#include "kernels/peers.h"
#include "profiler/dedupe.h"

#include "base/budget.h"

#include "counters/sim.h"
#include "profiler/activations.h"
#include "base/atomic_file.h"
#include "base/budget.h"
#include "profiler/breakeven.h"
#include "profiler/plausible.h"
#include "kernels/dense/lowp_dense.h"
#include "kernels/lowp/lowp.h"

#include <math.h>
#include <omp.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/*
 * A layer whose dtype has no zero test (ggml K-quants, IQ types, ...): it is
 * listed with its shape, every figure unknown, and no kernel runs.
 */
static void layer_unsupported(struct spp_layer_static *s, const struct spp_layer *l)
{
	memset(s, 0, sizeof(*s));
	s->unsupported = 1;
	s->counts.m = l->view.m;
	s->counts.k = l->view.k;
	s->numel = (uint64_t)l->view.m * (uint64_t)l->view.k;
	snprintf(s->reason, sizeof(s->reason), "%s weights have no zero test",
		 spp_dtype_name(l->weight->dtype));
}

static int model_totals(struct spp_analysis *a, struct spp_error *err)
{
	const struct spp_model *m = a->model;
	struct spp_model_totals *t = &a->totals;
	int *whole = NULL; /* per tensor: a layer whose view covers all of it, or -1 */
	uint64_t blind = 0; /* weights of tensors with no zero test */
	int nblind = 0, rc = SPP_OK;

	/* a pruning mask and the "_orig" it masks count once, as the effective weight */
	t->tensors = 0;
	for (int i = 0; i < m->ntensors; i++)
		t->tensors += !m->tensors[i].folded && !m->tensors[i].derived;
	t->bytes = m->bytes;
	if (m->ntensors > 0) {
		whole = malloc((size_t)m->ntensors * sizeof(*whole));
		if (!whole)
			return spp_error_set(err, SPP_E_NOMEM, "out of memory");
	}
	for (int i = 0; i < m->ntensors; i++)
		whole[i] = -1;
	for (int li = 0; li < a->nlayers; li++) {
		int ti = (int)(a->layers[li].weight - m->tensors);
		if (!a->stats[li].unsupported && a->stats[li].numel == m->tensors[ti].numel)
			whole[ti] = li;
	}
	for (int i = 0; i < m->ntensors; i++) {
		uint64_t nnz = 0;

		/* a weight folded from constants: they count, not it */
		if (m->tensors[i].folded || m->tensors[i].derived)
			continue;
		/* a layer's count already covers its whole tensor: reuse it
		 * rather than read the weights a second time */
		if (whole[i] >= 0) {
			nnz = a->stats[whole[i]].counts.nnz;
		} else {
			rc = spp_static_tensor_nnz(&m->tensors[i], &nnz, err);
			if (rc == SPP_E_UNSUPPORTED) {
				/* no zero test: its weights count, as non-zeros */
				nnz = m->tensors[i].numel;
				blind += nnz;
				nblind++;
				rc = SPP_OK;
			}
			if (rc)
				goto out;
		}
		t->params += m->tensors[i].numel;
		t->nnz += nnz;
	}
	t->sparsity = t->params ? 1.0 - (double)t->nnz / (double)t->params : 0.0;
	if (nblind &&
	    (rc = spp_analysis_warn(a, err, SPP_WARN_DTYPE_NO_ZERO_TEST,
			      "model totals count the %llu weights of %d tensor%s whose dtype has no zero test as non-zero",
			      (unsigned long long)blind, nblind, nblind == 1 ? "" : "s")))
		goto out;
	rc = spp_model_hash(m, &t->hash, err);
out:
	free(whole);
	return rc;
}

/*
 * The share of a layer's time budget its replays may take. The cache issue
 * asks for at most a quarter in all; each replay also costs a pilot and a
 * reset, and analyze one speed probe (measured on a BERT-base block at
 * 0.2: 0.27 of the budget in all).
 */
#define SIM_SHARE 0.15

/*
 * The simulator's budget per replay, in line accesses: SIM_SHARE of a
 * layer's time budget at the nominal replay speed (SPP_SIM_NOMINAL_RATE,
 * not this run's: the sample, and so every count, repeats from run to
 * run), shared by the layer's formats (fmts[0..nf-1]) that have a traced
 * kernel. With --repeat (no time budget) or an explicit budget, that one.
 */
static uint64_t sim_budget(const struct spp_analysis *a, const struct spp_format_ops *const *fmts,
			   int nf)
{
	int traced = 0;

	if (a->opts.counters.sim_budget || a->opts.session.repeat > 0)
		return a->opts.counters.sim_budget;
	for (int i = 0; i < nf; i++)
		traced += spp_trace_format_find(fmts[i]->key) != NULL;
	if (traced == 0)
		return 0;
	return (uint64_t)(SIM_SHARE * a->opts.session.time_budget_s * SPP_SIM_NOMINAL_RATE / traced) + 1;
}

/*
 * The counter backend of the runs (--counters, machine probes) and, for
 * the simulator (the backend, or beside a hardware one with --counters
 * A,sim), the geometry it models (--cache-model, else the machine's with
 * the LLC held to a believable size), paced for the layer's formats
 * fmts[0..nf-1]. The choice and its reason go in the warnings, since
 * every run's cache and cache_sim block depend on it.
 */
static int counters_setup(struct spp_analysis *a, struct spp_run_opts *ro,
			  struct spp_sim_geometry *g, const struct spp_format_ops *const *fmts,
			  int nf, struct spp_error *err)
{
	const struct spp_counters_opts *c = &a->opts.counters;
	const struct spp_counter_backend *b = NULL;
	char why[512], note[256] = "", geo[96];
	int rc, beside = 0, hardware;

	rc = spp_counters_resolve(c, a->machine->counters, a->machine->ncounters, &b, &beside,
				  why, sizeof(why), err);
	if (rc)
		return rc;
	ro->counters = b;
	ro->sim_budget = c->sim_budget;
	for (int i = 0; i < a->machine->ncaches; i++)
		if (a->machine->caches[i].level == 1 && a->machine->caches[i].line > 0)
			ro->cache_line = a->machine->caches[i].line;
	if (strcmp(b->name, "none") == 0)
		return spp_analysis_warn(a, err, SPP_WARN_NO_COUNTERS, "cache figures: --counters none, so every run's cache is null");
	hardware = strcmp(b->name, "sim") != 0;
	if (hardware &&
	    (rc = spp_analysis_warn(a, err, SPP_WARN_HW_COUNTERS, "cache figures: %s; the dense baseline runs on its library's own "
				    "threads, which are not counted, so its cache is null", why)))
		return rc;
	if (hardware && !beside)
		return SPP_OK;
	if (c->cache_model[0]) {
		rc = spp_sim_geometry_parse(c->cache_model, g, err);
		if (rc)
			return rc;
	} else {
		spp_sim_geometry_from_machine(a->machine, g, note, sizeof(note));
	}
	ro->sim_geometry = g;
	ro->sim_beside = beside;
	ro->sim_budget = sim_budget(a, fmts, nf);
	spp_sim_geometry_format(g, geo, sizeof(geo));
	if (beside)
		return spp_analysis_warn(a, err, SPP_WARN_SIM_COUNTERS, "cache_sim figures: the simulator replays each run beside %s's "
				   "counts (--counters %s,sim); simulated %s%s%s; the dense baseline (a library) and peers "
				   "have no traced kernel, so their cache_sim is null",
				   b->name, c->want, geo, note[0] ? "; " : "", note);
	return spp_analysis_warn(a, err, SPP_WARN_SIM_COUNTERS, "cache figures: %s; simulated %s%s%s; the dense baseline (a library) "
			   "and peers have no traced kernel, so their cache is null",
			   why, geo, note[0] ? "; " : "", note);
}

/* The measurement session of the runs; each dense candidate that cannot run is a warning. */
/* The bytes of the layers' weights as stored, each tensor once (--cache auto's yardstick). 0: unknown. */
static uint64_t weights_bytes(const struct spp_analysis *a)
{
	const struct spp_model *m = a->model;
	unsigned char *seen = calloc((size_t)(m->ntensors > 0 ? m->ntensors : 1), 1);
	uint64_t bytes = 0;

	if (!seen)
		return 0;
	for (int i = 0; i < a->nlayers; i++) {
		ptrdiff_t t = a->layers[i].weight - m->tensors;

		if (t >= 0 && t < m->ntensors && !seen[t]) {
			const struct spp_layer *l = &a->layers[i];

			seen[t] = 1;
			/* a matrix held as its entries: its dense form, as the baseline reads it */
			bytes += l->weight->nbytes ? l->weight->nbytes
						   : (uint64_t)l->view.m * (uint64_t)l->view.k * 4;
		}
	}
	free(seen);
	return bytes;
}

static int open_session(struct spp_analysis *a, struct spp_session *s, struct spp_error *err)
{
	const struct spp_dense_set *d = &a->record.dense;
	struct spp_session_opts o = a->opts.session;
	int rc;

	o.weights_bytes = weights_bytes(a);
	rc = spp_session_open(s, &o, a->machine, &a->record, err);

	for (int i = 0; i < d->n; i++)
		if (!d->c[i].ok) {
			int r2 = spp_analysis_warn(a, err, SPP_WARN_DENSE_CANDIDATE, "dense baseline %s: not a candidate: %s",
						   d->c[i].name, d->c[i].reason);

			if (r2)
				return r2;
		}
	return rc;
}

/*
 * --precision auto: layer i's precision from its stored dtype: F32 (and
 * what is not below) fp32, BF16 bf16, F16 fp16 where a dense fp16
 * candidate runs here (else bf16, warned with why), I8 and the 8- and
 * 4-bit block formats Q8_0 / Q4_0 int8. 0 or the warning's status.
 */
static int layer_precision(struct spp_analysis *a, int i, struct spp_run_opts *ro,
			   struct spp_error *err)
{
	enum spp_dtype t = a->layers[i].weight->dtype;
	struct spp_dense_lowp c;
	struct spp_error e2 = {0};
	char why[400] = "";
	size_t len = 0;

	ro->precision = t == SPP_DTYPE_BF16 ? SPP_PREC_BF16
			: t == SPP_DTYPE_F16 ? SPP_PREC_FP16
			: t == SPP_DTYPE_I8 || t == SPP_DTYPE_Q8_0 || t == SPP_DTYPE_Q4_0 ? SPP_PREC_INT8
			: SPP_PREC_FP32;
	if (ro->precision != SPP_PREC_FP16)
		return SPP_OK;
	for (int l = 0; spp_dense_lowp_libs[l]; l++) {
		memset(&c, 0, sizeof(c));
		if (!spp_dense_lowp_open(&c, spp_dense_lowp_libs[l]->key, SPP_PREC_FP16, NULL, &e2)) {
			spp_dense_lowp_close(&c);
			return SPP_OK;
		}
		if (len < sizeof(why))
			len += (size_t)snprintf(why + len, sizeof(why) - len, "%s%s", len ? "; " : "", e2.msg);
	}
	ro->precision = SPP_PREC_BF16;
	return spp_analysis_warn(a, err, SPP_WARN_PRECISION_FALLBACK, "'%s': F16 weights run in bf16: "
				 "no dense fp16 baseline here (%s)", a->layers[i].name, why);
}

/* Layer i's runs (with its activations file, if any), and a warning per failed run. */
static int run_layer(struct spp_analysis *a, int i, const struct spp_format_ops *const *fmts,
		     int nf, struct spp_run_opts *ro, struct spp_error *err)
{
	const struct spp_analyze_opts *o = &a->opts;
	int rc;

	if (o->precision == SPP_ANALYZE_PREC_AUTO && (rc = layer_precision(a, i, ro, err)))
		return rc;
	if (o->activations) {
		char path[4096];
		float *x = NULL;

		rc = spp_activations_load(o->activations, &a->layers[i], &x, path, sizeof(path), err);
		if (!rc && !x && !path[0])
			rc = spp_analysis_warn(a, err, SPP_WARN_ACTIVATIONS_MISSING,
					       "'%s': no activations file: the name is too long for a "
					       "file name: %s X", a->layers[i].name,
					       o->act_sparsity > 0 ? "synthetic" : "uniform");
		else if (!rc && !x)
			rc = spp_analysis_warn(a, err, SPP_WARN_ACTIVATIONS_MISSING,
					       "'%s': no activations file '%s': %s X", a->layers[i].name,
					       path, o->act_sparsity > 0 ? "synthetic" : "uniform");
		if (rc) {
			free(x);
			return rc;
		}
		ro->act_x = x;
		ro->act_path = path;
		rc = spp_layer_measure(&a->layers[i], &a->stats[i], fmts, nf, ro, &a->runs[i], err);
		ro->act_x = NULL;
		ro->act_path = NULL;
		free(x);
	} else {
		rc = spp_layer_measure(&a->layers[i], &a->stats[i], fmts, nf, ro, &a->runs[i], err);
	}
	if (rc)
		return rc;
	for (int r = 0; r < a->runs[i].nruns; r++) {
		const struct spp_run *run = &a->runs[i].runs[r];

		if (run->status == SPP_RUN_FAILED &&
		    (rc = spp_analysis_warn(a, err, SPP_WARN_RUN_FAILED, "'%s': %s: %s", a->layers[i].name, run->format,
					    run->reason)))
			return rc;
		if (run->status == SPP_RUN_UNSUPPORTED && r == 0 &&
		    (rc = spp_analysis_warn(a, err, SPP_WARN_NO_KERNEL_RUNS, "'%s': no kernel runs: %s", a->layers[i].name,
					    run->reason)))
			return rc;
	}
	return SPP_OK;
}

/*
 * Every layer's runs within the memory budget, checked before the first
 * one: a layer is densified only for its runs, and a 61-byte matrix file
 * claiming 1 x 2^31 must be refused, not allocated, nor found an hour in.
 */
static int runs_fit(const struct spp_analysis *a, struct spp_error *err)
{
	char what[256];
	int rc;

	for (int i = 0; i < a->nlayers; i++) {
		const struct spp_layer *l = &a->layers[i];

		if (a->stats[i].unsupported)
			continue;
		snprintf(what, sizeof(what), "layer '%s' (its runs' dense %lldx%lld W and |W|, "
			 "X and Y at N = %lld)", l->name, (long long)l->view.m,
			 (long long)l->view.k, (long long)l->n);
		rc = spp_budget_check_bytes(spp_layer_run_bytes(l), a->model->bytes,
					    a->model->path, what, err);
		if (rc)
			return rc;
	}
	return SPP_OK;
}

/*
 * Each layer of this shard: taken back from the journal, copied (--dedupe)
 * or timed, then recorded; a stop request ends the loop, incomplete.
 */
static int time_layers(struct spp_analysis *a, const struct spp_format_ops *const *fmts, int nf,
		       struct spp_run_opts *ro, struct spp_error *err)
{
	const struct spp_analyze_opts *o = &a->opts;
	int rc = SPP_OK;

	for (int i = 0; i < a->nlayers && !rc; i++) {
		if (a->stats[i].unsupported || !spp_analysis_timed(a, i))
			continue; /* no figures to check a kernel against, another shard's, or not chosen (--layers) */
		if (o->stop && *o->stop) {
			a->incomplete = 1;
			if (o->progress) /* the display ends here */
				o->progress(o->progress_ctx, a, a->nlayers);
			break;
		}
		if (o->progress)
			o->progress(o->progress_ctx, a, i);
		if (o->restore && (rc = o->restore(o->journal_ctx, a, i, err)) != 0) {
			rc = rc < 0 ? rc : SPP_OK;
			continue;
		}
		if (a->runs_from && a->runs_from[i] >= 0)
			rc = spp_dedupe_copy(a, i, err);
		else
			rc = run_layer(a, i, fmts, nf, ro, err);
		if (!rc && o->done)
			rc = o->done(o->journal_ctx, a, i, err);
	}
	return rc;
}

static int measure_layers(struct spp_analysis *a, struct spp_session *s, struct spp_error *err)
{
	const struct spp_analyze_opts *o = &a->opts;
	const struct spp_format_ops *fmts[SPP_MAX_FORMATS + SPP_MAX_PEERS];
	struct spp_run_opts ro;
	struct spp_sim_geometry geometry;
	int nf = 0, nswept, rc = SPP_OK;

	nf = spp_analyze_formats(o, fmts, &nswept);
	spp_session_runs(s, o->threads > 0 ? o->threads : omp_get_max_threads(), &ro);
	ro.backends = o->backends;
	ro.cupti = o->cupti;
	ro.act_sparsity = o->act_sparsity;
	ro.epilogue = (enum spp_epilogue)o->epilogue;
	ro.precision = o->precision == SPP_ANALYZE_PREC_AUTO ? 0 : o->precision;
	if ((rc = counters_setup(a, &ro, &geometry, fmts, nf, err)))
		return rc;
	a->runs = calloc((size_t)a->nlayers, sizeof(*a->runs));
	if (!a->runs)
		return spp_error_set(err, SPP_E_NOMEM, "out of memory");
	if ((o->dedupe && (rc = spp_dedupe_plan(a, err))) || (rc = time_layers(a, fmts, nf, &ro, err)) ||
	    a->incomplete)
		return rc;
	/* breakeven is the weights' own: uniform X, weight-only CPU formats (the sweep is CPU-only) */
	ro.act_sparsity = 0;
	ro.epilogue = SPP_EPILOGUE_NONE;
	ro.precision = 0;
	ro.backends = SPP_BACKEND_CPU;
	if (o->breakeven && (rc = spp_breakeven_analysis(a, &ro, fmts, nswept, err)))
		return rc;
	if (o->n_sweep_count && (rc = spp_nsweep_analysis(a, &ro, fmts, nswept, err)))
		return rc;
	if (o->progress)
		o->progress(o->progress_ctx, a, a->nlayers);
	/* the machine's conditions over the runs, which the warnings judge */
	spp_session_conditions(s);
	if ((rc = spp_plausibility_warnings(a, err)))
		return rc;
	if (!(ro.bw.gbs[SPP_BW_DRAM] > 0))
		rc = spp_analysis_warn(a, err, SPP_WARN_NO_CALIBRATION, "bw_util: no calibrated peak bandwidth for %d thread%s (run 'spprof calibrate')",
				 a->record.settings.threads, a->record.settings.threads == 1 ? "" : "s");
	return rc;
}

/* The runs of every layer in one measurement session, whose record the analysis keeps. */
static int run_layers(struct spp_analysis *a, struct spp_error *err)
{
	struct spp_session s = {0};
	int rc = runs_fit(a, err);

	if (!rc && !(rc = open_session(a, &s, err)))
		rc = measure_layers(a, &s, err);
	spp_session_close(&s);
	return rc;
}

/* One warning of code per line of a loader's notes (text: lines joined by '\n'; NULL none). */
static int warn_lines(struct spp_analysis *a, struct spp_error *err, enum spp_warn code, const char *p)
{
	int rc = SPP_OK;

	while (p && *p && !rc) {
		size_t len = strcspn(p, "\n");

		rc = spp_analysis_warn(a, err, code, "%.*s", (int)len, p);
		p += len + (p[len] == '\n');
	}
	return rc;
}

/* One warning per line of what the loader assumed about the graph's inputs
 * (moot under --n, which sets every layer's N). */
static int shape_notes(struct spp_analysis *a, struct spp_error *err)
{
	return a->opts.n_set ? SPP_OK
			     : warn_lines(a, err, SPP_WARN_INPUT_SHAPE_ASSUMED, a->model->shape_notes);
}

/*
 * A graph model's layers whose N its shapes did not give (an If branch, a
 * shape inference that stopped): they run at settings.n, said by name, never
 * silently (issue 46 item 4). Not with --n, which sets every layer's N.
 */
static int n_assumed(struct spp_analysis *a, struct spp_error *err)
{
	char names[400];
	size_t used = 0;
	int k = 0;

	if (a->opts.n_set || a->model->nlayer_descs == 0)
		return SPP_OK;
	names[0] = '\0';
	for (int i = 0; i < a->nlayers; i++) {
		if (!a->layers[i].n_source || strcmp(a->layers[i].n_source, "option") != 0)
			continue;
		if (k++ < 4 && used < sizeof(names))
			used += (size_t)snprintf(names + used, sizeof(names) - used, "%s'%.80s'", k > 1 ? ", " : "",
						 a->layers[i].name ? a->layers[i].name : "?");
	}
	if (k == 0)
		return SPP_OK;
	return spp_analysis_warn(a, err, SPP_WARN_N_ASSUMED,
				 "N not given by the graph's shapes on %d of %d layers, which run at N = %lld "
				 "(--n's default): %s%s; give --n for every layer, or --input-shape where a graph input's shape is unknown",
				 k, a->nlayers, (long long)a->opts.n, names, k > 4 ? ", ..." : "");
}

/* One warning per line of what the loaders left out (a checkpoint's optimizer state). */
static int left_out(struct spp_analysis *a, struct spp_error *err)
{
	return warn_lines(a, err, SPP_WARN_TRAINING_STATE, a->model->left_out);
}

/* One warning per weight input the loader left unresolved (computed at run
 * time, or through an op it does not fold): its weights are in no layer. */
static int weight_notes(struct spp_analysis *a, struct spp_error *err)
{
	return warn_lines(a, err, SPP_WARN_UNRESOLVED_WEIGHT, a->model->weight_notes);
}

int spp_analyze_run(const char *path, const struct spp_analyze_opts *o,
		    struct spp_analysis **out, struct spp_error *err)
{
	struct spp_analysis *a;
	int rc;

	*out = NULL;
	a = calloc(1, sizeof(*a));
	if (!a)
		return spp_error_set(err, SPP_E_NOMEM, "out of memory");
	a->opts = *o;
	if (o->threads > 0)
		omp_set_num_threads(o->threads);

	rc = spp_model_open_with(path, &o->open, &a->model, err);
	if (!rc && o->output)
		rc = spp_outfile_check(o->output, err);
	if (rc)
		goto fail;
	rc = spp_layers_from_model(a->model, o->n, o->n_set, &a->layers, &a->nlayers, err);
	if (!rc && spp_static_share_scans(&a->layers, a->nlayers))
		rc = spp_error_set(err, SPP_E_NOMEM, "out of memory for %d layers", a->nlayers);
	if (!rc)
		rc = shape_notes(a, err);
	if (!rc)
		rc = weight_notes(a, err);
	if (!rc)
		rc = left_out(a, err);
	if (!rc)
		rc = n_assumed(a, err);
	if (rc)
		goto fail;
	if (a->nlayers) {
		a->stats = calloc((size_t)a->nlayers, sizeof(*a->stats));
		if (!a->stats) {
			rc = spp_error_set(err, SPP_E_NOMEM, "out of memory");
			goto fail;
		}
	}
	for (int i = 0; i < a->nlayers; i++) {
		const struct spp_layer *l = &a->layers[i];
		struct spp_static_counts counts;

		rc = spp_static_count(l, &counts, err);
		if (rc == SPP_E_UNSUPPORTED) {
			layer_unsupported(&a->stats[i], l);
			continue;
		}
		if (rc)
			goto fail;
		spp_static_derive(&counts, l->weight->dtype, l->n, &a->stats[i]);
	}
	rc = model_totals(a, err);
	if (rc)
		goto fail;
	if (a->nlayers == 0) {
		rc = spp_analysis_warn(a, err, SPP_WARN_NO_GEMM_LAYERS, "'%s' has no GEMM layers (no tensor of rank 2-4)", path);
		if (rc)
			goto fail;
	}
	a->machine = calloc(1, sizeof(*a->machine));
	if (!a->machine) {
		rc = spp_error_set(err, SPP_E_NOMEM, "out of memory");
		goto fail;
	}
	spp_machine_describe(a->machine, o->threads > 0 ? o->threads : omp_get_max_threads());
	if (!o->static_only && a->nlayers) {
		rc = run_layers(a, err);
		if (rc)
			goto fail;
	}
	rc = spp_analysis_derive(a, err);
	if (rc)
		goto fail;
	*out = a;
	return SPP_OK;
fail:
	spp_analysis_destroy(a);
	return rc;
}

