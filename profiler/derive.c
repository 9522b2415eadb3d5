/* The derived figures of an analysis; see derive.h. */
#include "profiler/derive.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "profiler/analysis.h"

static const struct spp_sweep *layer_sweep(const struct spp_analysis *a, int i)
{
	if (!a->sweeps || !a->sweep_of || a->sweep_of[i] < 0)
		return NULL;
	return &a->sweeps[a->sweep_of[i]];
}

/* The lowest breakeven of layer i's formats; NAN when none has one. */
static double best_breakeven(const struct spp_analysis *a, int i)
{
	const struct spp_sweep *sw = layer_sweep(a, i);
	double best = NAN;

	for (int r = 0; sw && r < sw->nresults; r++)
		if (!isnan(sw->results[r].breakeven) &&
		    (isnan(best) || sw->results[r].breakeven < best))
			best = sw->results[r].breakeven;
	return best;
}

/* Storage bytes of format key in layer s; NAN when it cannot hold s. */
static double format_bytes(const struct spp_layer_static *s, const char *key)
{
	int f = spp_storage_find(key);

	return f >= 0 && s->storage[f].applicable ? s->storage[f].bytes : NAN;
}

/*
 * The best storage of ratio[] (NAN: the format does not hold the layers):
 * the largest ratio, the earlier row on a tie, so dense (row 0) when no
 * format shrinks the layers; -1 when no format holds them.
 */
static int best_storage(const double *ratio)
{
	int best = -1;

	for (int f = 0; f < SPP_ST_COUNT; f++)
		if (!isnan(ratio[f]) && (best < 0 || ratio[f] > ratio[best]))
			best = f;
	return best;
}

/* The ok sparse run of r with the largest speedup; -1 when none. */
static int fastest_run(const struct spp_layer_runs *r)
{
	int best = -1;

	for (int k = 0; r && k < r->nruns; k++) {
		const struct spp_run *x = &r->runs[k];

		if (x->status == SPP_RUN_OK && strcmp(x->format, "dense") != 0 && !isnan(x->speedup) &&
		    (best < 0 || x->speedup > r->runs[best].speedup))
			best = k;
	}
	return best;
}

static int derive_layer(const struct spp_analysis *a, int i, struct spp_layer_derived *d)
{
	const struct spp_sweep *sw = layer_sweep(a, i);
	const struct spp_layer_static *s = &a->stats[i];
	struct spp_diagnosis diag;
	size_t len = 0;

	d->best_breakeven = best_breakeven(a, i);
	d->expected_combined = d->expected_combined_speedup = NAN;
	if (!a->runs && a->opts.act_sparsity > 0) {
		d->expected_combined = s->flops_sparse * (1 - a->opts.act_sparsity);
		if (d->expected_combined > 0)
			d->expected_combined_speedup = s->flops_dense / d->expected_combined;
	}
	if (sw && sw->nresults) {
		d->margin = malloc((size_t)sw->nresults * sizeof(*d->margin));
		if (!d->margin)
			return -1;
		for (int r = 0; r < sw->nresults; r++)
			d->margin[r] = s->sparsity - sw->results[r].breakeven;
	}
	d->has_rec = a->runs && !s->unsupported && spp_recommend_layer(&a->runs[i], &d->rec) == 0;
	{
		double ratio[SPP_ST_COUNT];

		for (int f = 0; f < SPP_ST_COUNT; f++)
			ratio[f] = !s->unsupported && s->storage[f].applicable && s->storage[f].bytes > 0
					   ? s->storage[f].ratio : NAN;
		d->best_storage = best_storage(ratio);
	}
	d->fastest = a->runs ? fastest_run(&a->runs[i]) : -1;
	spp_diagnose_layer(s, a->runs ? &a->runs[i] : NULL, &diag);
	/* one string, so that the CSV keeps one scalar cell per name; whole
	 * sentences, never cut */
	for (int k = 0; k < diag.n; k++)
		len += strlen(diag.line[k]) + 2;
	if (!(d->diagnosis = malloc(len + 1)))
		return -1;
	d->diagnosis[0] = '\0';
	for (int k = 0, at = 0; k < diag.n; k++)
		at += snprintf(d->diagnosis + at, len + 1 - (size_t)at, "%s%s", k ? "; " : "",
			       diag.line[k]);
	return 0;
}

static void structure(const struct spp_analysis *a, struct spp_model_structure *st)
{
	memset(st, 0, sizeof(*st));
	st->low_share = NAN;
	for (int i = 0; i < a->nlayers; i++) {
		const struct spp_layer_static *s = &a->stats[i];

		if (s->unsupported)
			continue;
		st->layers[s->prov]++;
		st->zero_layers += s->layer_zero == SPP_LAYER_ZERO;
		st->nearly_zero_layers += s->layer_zero == SPP_LAYER_NEARLY_ZERO;
		if (s->prov_pooled) {
			st->survivors += s->counts.prov.survivors;
			st->in_band += s->counts.prov.in_band;
		}
	}
	if (st->survivors > 0)
		st->low_share = (double)st->in_band / (double)st->survivors;
	if (st->layers[SPP_PROV_MAGNITUDE] + st->layers[SPP_PROV_RANDOM] + st->layers[SPP_PROV_UNCLEAR] == 0 &&
	    st->layers[SPP_PROV_STRUCTURED] > 0) {
		st->verdict = SPP_PROV_STRUCTURED;
		snprintf(st->reason, sizeof(st->reason), "every judged layer's zeros lie in whole rows, "
			 "columns, kernels or channels (%d layer%s)", st->layers[SPP_PROV_STRUCTURED],
			 st->layers[SPP_PROV_STRUCTURED] == 1 ? "" : "s");
	} else if (st->layers[SPP_PROV_MAGNITUDE] + st->layers[SPP_PROV_RANDOM] + st->layers[SPP_PROV_UNCLEAR] == 0)
		snprintf(st->reason, sizeof(st->reason), "no layer judged");
	else
		st->verdict = spp_provenance_judge(st->survivors, st->in_band, st->reason,
						   sizeof(st->reason));
}

static void summarize(const struct spp_analysis *a, struct spp_model_summary *m)
{
	double params = 0, nnz = 0, fd = 0, fs = 0;

	m->n_min = m->n_max = 0;
	m->n_from_model = 0;
	for (int i = 0; i < a->nlayers; i++) {
		const struct spp_layer *l = &a->layers[i];

		if (m->n_min == 0 || l->n < m->n_min)
			m->n_min = l->n;
		if (l->n > m->n_max)
			m->n_max = l->n;
		m->n_from_model += l->n_source && strcmp(l->n_source, "model") == 0;
	}
	for (int i = 0; i < a->nlayers; i++) {
		if (a->stats[i].unsupported)
			continue; /* unknown nnz: the sums cover the analysed layers */
		params += (double)a->stats[i].numel;
		nnz += (double)a->stats[i].counts.nnz;
		fd += a->stats[i].flops_dense;
		fs += a->stats[i].flops_sparse;
	}
	m->gemm_params = params;
	m->gemm_nnz = nnz;
	m->gemm_sparsity = params > 0 ? 1.0 - nnz / params : NAN;
	for (int f = 0; f < SPP_ST_COUNT; f++) {
		struct spp_summary_storage *st = &m->storage[f];
		double bytes = 0, dense = 0;
		int nappl = 0;

		for (int i = 0; i < a->nlayers; i++) {
			const struct spp_layer_static *ls = &a->stats[i];

			if (!ls->storage[f].applicable)
				continue;
			bytes += ls->storage[f].bytes;
			dense += ls->storage[SPP_ST_DENSE].bytes;
			nappl++;
		}
		st->bytes = nappl > 0 ? bytes : NAN;
		st->ratio = nappl > 0 && bytes > 0 ? dense / bytes : NAN;
		st->applicable_layers = nappl;
	}
	{
		double ratio[SPP_ST_COUNT];

		for (int f = 0; f < SPP_ST_COUNT; f++)
			ratio[f] = m->storage[f].applicable_layers ==
						   m->storage[SPP_ST_DENSE].applicable_layers
					   ? m->storage[f].ratio : NAN;
		m->best_storage = best_storage(ratio);
	}
	m->flops_dense = fd;
	m->flops_sparse = fs;
	m->theoretical_speedup = fs > 0 ? fd / fs : NAN;
	spp_hold_back(a, m);
	structure(a, &m->structure);
}

static int by_share(const void *x, const void *y)
{
	const struct spp_prune_next *p = x, *q = y;

	if (p->time_share != q->time_share)
		return p->time_share < q->time_share ? 1 : -1;
	return p->layer - q->layer;
}

/* Count layer d's recommendation in p->deploy; by_layers orders them after. */
static void count_deploy(struct spp_projection *p, const struct spp_recommendation *r)
{
	int j = 0;

	while (j < p->ndeploy && (strcmp(p->deploy[j].backend, r->backend) != 0 ||
				  strcmp(p->deploy[j].format, r->format) != 0))
		j++;
	if (j == p->ndeploy) {
		if (j == SPP_DEPLOY_MAX)
			return;
		p->deploy[j].backend = r->backend;
		snprintf(p->deploy[j].format, sizeof(p->deploy[j].format), "%s", r->format);
		p->ndeploy++;
	}
	p->deploy[j].layers++;
}

/* Most layers first; dense after the formats at equal counts, then first seen (stable by index). */
static void order_deploy(struct spp_projection *p)
{
	for (int i = 1; i < p->ndeploy; i++)
		for (int j = i; j > 0; j--) {
			struct spp_deploy *x = &p->deploy[j - 1], *y = &p->deploy[j], t;
			int dx = strcmp(x->format, "dense") == 0, dy = strcmp(y->format, "dense") == 0;

			if (y->layers < x->layers || (y->layers == x->layers && (dy || !dx)))
				break;
			t = *x;
			*x = *y;
			*y = t;
		}
}

/*
 * The model under each layer's recommendation against all dense, and the
 * layers below their breakeven that take the most time (cand: room for
 * nlayers).
 */
static void project(const struct spp_analysis *a, struct spp_prune_next *cand,
		    struct spp_projection *p)
{
	double td = 0, tr = 0, bd = 0, br = 0;
	int ncand = 0;

	memset(p, 0, sizeof(*p));
	if (!a->runs)
		return;
	p->valid = 1;
	for (int i = 0; i < a->nlayers; i++) {
		const struct spp_layer_static *s = &a->stats[i];
		const struct spp_layer_derived *d = &a->derived[i];
		double be = d->best_breakeven;

		if (s->unsupported || !d->has_rec)
			continue;
		p->nrec++;
		count_deploy(p, &d->rec);
		/* the recommended run against the dense baseline of its own backend */
		td += d->rec.dense_ns;
		tr += d->rec.time_ns;
		bd += s->storage[SPP_ST_DENSE].bytes;
		br += format_bytes(s, d->rec.format);
		/* below its breakeven: more pruning would make a format pay */
		if (!isnan(be) && s->sparsity < be)
			cand[ncand++] = (struct spp_prune_next){i, a->runs[i].runs[0].time.median,
								s->sparsity, be};
	}
	p->dense_time_ns = p->nrec ? td : NAN;
	p->recommended_time_ns = p->nrec ? tr : NAN;
	p->speedup = p->nrec && tr > 0 ? td / tr : NAN;
	p->dense_bytes = p->nrec ? bd : NAN;
	p->recommended_bytes = p->nrec ? br : NAN;
	p->ratio = p->nrec && br > 0 ? bd / br : NAN;
	order_deploy(p);
	qsort(cand, (size_t)ncand, sizeof(*cand), by_share);
	for (int c = 0; c < ncand && c < SPP_PRUNE_NEXT_MAX; c++) {
		p->prune_next[c] = cand[c];
		p->prune_next[c].time_share = td > 0 ? cand[c].time_share / td : NAN;
	}
	p->nprune_next = ncand < SPP_PRUNE_NEXT_MAX ? ncand : SPP_PRUNE_NEXT_MAX;
}

int spp_analysis_derive(struct spp_analysis *a, struct spp_error *err)
{
	struct spp_prune_next *cand;

	spp_analysis_derived_free(a);
	memset(&a->projection, 0, sizeof(a->projection));
	summarize(a, &a->summary);
	if (a->nlayers <= 0)
		return spp_whole_model(a, err);
	a->derived = calloc((size_t)a->nlayers, sizeof(*a->derived));
	cand = calloc((size_t)a->nlayers, sizeof(*cand));
	if (!a->derived || !cand)
		goto oom;
	for (int i = 0; i < a->nlayers; i++)
		if (!a->stats[i].unsupported && derive_layer(a, i, &a->derived[i]))
			goto oom;
	project(a, cand, &a->projection);
	free(cand);
	return spp_whole_model(a, err);
oom:
	free(cand);
	spp_analysis_derived_free(a);
	return spp_error_set(err, SPP_E_NOMEM, "out of memory");
}

void spp_analysis_derived_free(struct spp_analysis *a)
{
	for (int i = 0; a->derived && i < a->nlayers; i++) {
		free(a->derived[i].margin);
		free(a->derived[i].diagnosis);
	}
	free(a->derived);
	a->derived = NULL;
}

