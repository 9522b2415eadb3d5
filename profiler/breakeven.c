#include "profiler/breakeven.h"
#include "profiler/analyze.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/buffer.h"
#include "profiler/decode.h"
#include "profiler/dedupe.h"

void spp_breakeven_pattern(const struct spp_layer_static *s, struct spp_sweep_opts *o)
{
	o->pattern = SPP_SYNTH_UNSTRUCTURED;
	switch (s->cls) {
	case SPP_CLASS_NM: {
		/*
		 * The sparsest pattern it complies with: W generated at 1:4 is
		 * 2:4 and 4:8 compliant too, so every N:M format the layer can
		 * use can hold the synthetic W.
		 */
		int best = -1;

		for (int i = 0; i < SPP_NNM; i++)
			if (s->nm[i] >= 1.0 &&
			    (best < 0 || (double)spp_nm_patterns[i].n / spp_nm_patterns[i].m <
						 (double)spp_nm_patterns[best].n / spp_nm_patterns[best].m))
				best = i;
		if (best >= 0) {
			o->pattern = SPP_SYNTH_NM;
			o->nm_n = spp_nm_patterns[best].n;
			o->nm_m = spp_nm_patterns[best].m;
		}
		break;
	}
	case SPP_CLASS_BLOCK:
		o->pattern = SPP_SYNTH_BLOCK;
		o->block = 4;
		break;
	case SPP_CLASS_CHANNEL:
		o->pattern = SPP_SYNTH_CHANNEL;
		break;
	default:
		break; /* dense, kernel, pattern and unstructured: unstructured W */
	}
}

/* The layer's sweep among a->sweeps[0..nsweeps); -1 when there is none yet. */
static int find_sweep(const struct spp_analysis *a, const struct spp_sweep_opts *o)
{
	char p[32];

	spp_sweep_pattern_name(o, p, sizeof(p));
	for (int i = 0; i < a->nsweeps; i++)
		if (a->sweeps[i].m == o->m && a->sweeps[i].k == o->k && a->sweeps[i].n == o->n &&
		    strcmp(a->sweeps[i].pattern, p) == 0)
			return i;
	return -1;
}

int spp_breakeven_analysis(struct spp_analysis *a, const struct spp_run_opts *ro,
			   const struct spp_format_ops *const *fmts, int nf,
			   struct spp_error *err)
{
	const struct spp_format_ops *use[SPP_MAX_FORMATS];
	struct spp_run_opts sro = *ro;
	int rc = SPP_OK;

	a->sweep_of = malloc((size_t)(a->nlayers > 0 ? a->nlayers : 1) * sizeof(*a->sweep_of));
	a->sweeps = calloc((size_t)(a->nlayers > 0 ? a->nlayers : 1), sizeof(*a->sweeps));
	if (!a->sweep_of || !a->sweeps)
		return spp_error_set(err, SPP_E_NOMEM, "out of memory for the breakeven sweeps");
	/* synthetic W: the counters and the cache figures are not reported */
	sro.counters = NULL;
	sro.sim_geometry = NULL;
	for (int i = 0; i < a->nlayers; i++) {
		const struct spp_layer_static *s = &a->stats[i];
		struct spp_sweep_opts so;
		struct spp_sweep_measure sm = {0};
		struct spp_sweep_timer timer;
		int nuse = 0, points;

		a->sweep_of[i] = -1;
		if (s->unsupported || !spp_analysis_timed(a, i))
			continue;
		spp_sweep_opts_init(&so);
		so.m = a->layers[i].view.m;
		so.k = a->layers[i].view.k;
		so.n = a->layers[i].n;
		so.threads = ro->threads;
		spp_breakeven_pattern(s, &so);
		a->sweep_of[i] = find_sweep(a, &so);
		if (a->sweep_of[i] >= 0)
			continue; /* a repeated block: the same sweep */
		for (int f = 0; f < nf && nuse < SPP_MAX_FORMATS; f++) {
			int st = spp_storage_find(fmts[f]->key);

			/* the formats that can hold this layer; peers have no storage row */
			if (st >= 0 && s->storage[st].applicable)
				use[nuse++] = fmts[f];
		}
		if (!nuse)
			continue;
		/* the layer's budget spread over the grid and the refinement */
		points = (so.pattern == SPP_SYNTH_NM ? 1 : 14) + so.refine_steps * nuse;
		sro.bench.budget_ns = a->opts.session.time_budget_s * 1e9 / points / (nuse + 1);
		sm.sweep = &so;
		sm.run = &sro;
		sm.seed = a->opts.session.seed;
		spp_sweep_measure_timer(&sm, &timer);
		rc = spp_sweep_run(&so, use, nuse, &timer, &a->sweeps[a->nsweeps], err);
		spp_sweep_measure_fini(&sm);
		if (rc)
			return rc;
		a->sweep_of[i] = a->nsweeps++;
	}
	return rc;
}

/* The real timer on one layer's own W: N varies, the sparsity is W's. */
struct layer_timer {
	const struct spp_matrix *w;
	uint64_t nnz;
	const char *name;
	const struct spp_run_opts *ro;
};

static int layer_time(void *p, double sparsity, int64_t n, const struct spp_format_ops *const *formats,
		      int nformats, double *t_ns, double *t_dense_ns, double (*ci)[2],
		      char (*reasons)[256], struct spp_error *err)
{
	const struct layer_timer *c = p;

	(void)sparsity;
	return spp_sweep_time_matrix(c->w, n, c->nnz, c->name, formats, nformats, c->ro, t_ns,
				     t_dense_ns, ci, reasons, NULL, err);
}

/* Layer i's speedup against N into a->nsweeps_n[i], on its decoded W. */
static int nsweep_layer(struct spp_analysis *a, int i, const struct spp_run_opts *ro,
			const struct spp_format_ops *const *use, int nuse, struct spp_error *err)
{
	const struct spp_layer *l = &a->layers[i];
	const struct spp_layer_static *s = &a->stats[i];
	struct spp_matrix w = {l->view.m, l->view.k, NULL};
	struct layer_timer lt = {&w, s->counts.nnz, l->name, ro};
	struct spp_sweep_timer timer = {layer_time, &lt};
	struct spp_sweep_opts so;
	size_t bytes = (size_t)(w.m * w.k > 0 ? w.m * w.k : 1) * sizeof(float);
	float *buf;
	int rc;

	if ((uint64_t)w.m * (uint64_t)w.k > SIZE_MAX / sizeof(float) || !(buf = spp_buffer_alloc(bytes)))
		return spp_error_set(err, SPP_E_NOMEM, "tensor '%s': out of memory for its weights", l->name);
	rc = spp_layer_decode(l, buf, err);
	w.v = buf;
	spp_sweep_opts_init(&so);
	so.m = w.m;
	so.k = w.k;
	so.threads = ro->threads;
	if (!rc)
		rc = spp_nsweep_run(&so, s->sparsity < 1 ? s->sparsity : 0, a->opts.n_sweep,
				    a->opts.n_sweep_count, use, nuse, &timer, &a->nsweeps_n[i], err);
	spp_buffer_free(buf);
	return rc;
}

int spp_nsweep_analysis(struct spp_analysis *a, const struct spp_run_opts *ro,
			const struct spp_format_ops *const *fmts, int nf, struct spp_error *err)
{
	struct spp_run_opts sro = *ro;

	a->nsweeps_n = calloc((size_t)(a->nlayers > 0 ? a->nlayers : 1), sizeof(*a->nsweeps_n));
	if (!a->nsweeps_n)
		return spp_error_set(err, SPP_E_NOMEM, "out of memory for the N sweeps");
	/* the sweep's points are times only: no counters, no cache figures */
	sro.counters = NULL;
	sro.sim_geometry = NULL;
	/* the layer's budget spread over its points and runs */
	sro.bench.budget_ns = a->opts.session.time_budget_s * 1e9 / a->opts.n_sweep_count / (nf + 1);
	for (int i = 0; i < a->nlayers; i++) {
		int rc;

		if (a->stats[i].unsupported || !nf || !spp_decode_supported(a->layers[i].weight->dtype) ||
		    !spp_analysis_timed(a, i))
			continue;
		if (a->runs_from && a->runs_from[i] >= 0)
			rc = spp_dedupe_copy_nsweep(a, i, err);
		else
			rc = nsweep_layer(a, i, &sro, fmts, nf, err);
		if (rc)
			return rc;
	}
	return SPP_OK;
}

