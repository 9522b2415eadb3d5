/*
 * The whole model beside its GEMM layers (derive.h, struct
 * spp_whole_model): derived once here from what the loader counted of the
 * graph (spp_model.graph), the model's tensors and the analysis's layers,
 * so that every report prints the same figures.
 */
#include "profiler/derive.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "profiler/analysis.h"

/* Why a model has no whole-model figures. */
static void no_graph(const struct spp_model *m, struct spp_whole_model *w)
{
	const char *f = m && m->format ? m->format : NULL;

	if (!m)
		snprintf(w->reason, sizeof(w->reason), "no model file: the work outside the layers "
			 "is not known");
	else if (f && (strcmp(f, "tfjs") == 0 || strcmp(f, "coreml") == 0))
		snprintf(w->reason, sizeof(w->reason), "%s: its graph's ops are not counted (shapes "
			 "not known), so the work outside the layers is not known", f);
	else
		snprintf(w->reason, sizeof(w->reason), "%s has no graph: only its weights are known, "
			 "not the work between them", f ? f : "the model");
}

/* The model's weights and constants, each in its dtype (a folded mask and a derived copy not). */
static double model_bytes(const struct spp_model *m)
{
	double b = 0;

	for (int i = 0; i < m->ntensors; i++) {
		const struct spp_tensor *t = &m->tensors[i];

		if (!t->folded && !t->derived)
			b += ceil((double)t->numel * spp_dtype_info(t->dtype)->bits / 8);
	}
	return b;
}

/*
 * The analysed layers' dense bytes (summary.storage.dense), but a weight
 * that several layers apply (a graph's "w#2") counted at most once: the
 * bytes of a tensor's layers capped at its own. A weight folded from
 * constants (spp_tensor.derived: an LSTM's gates reordered by Slice and
 * Concat) is left out: its sources are what the model's bytes count, and
 * which of them it took is not kept, so it cannot be counted against them.
 */
static int profiled_bytes(const struct spp_analysis *a, double *out)
{
	const struct spp_model *m = a->model;
	double *per = calloc((size_t)m->ntensors + 1, sizeof(*per)), b = 0;

	if (!per)
		return -1;
	for (int i = 0; i < a->nlayers; i++) {
		const struct spp_tensor *t = a->layers[i].weight;
		ptrdiff_t ti = t ? t - m->tensors : -1;
		double own;

		if (a->stats[i].unsupported || ti < 0 || ti >= m->ntensors || t->derived)
			continue;
		own = ceil((double)t->numel * spp_dtype_info(t->dtype)->bits / 8);
		per[ti] = fmin(per[ti] + a->stats[i].storage[SPP_ST_DENSE].bytes, own);
	}
	for (int i = 0; i < m->ntensors; i++)
		b += per[i];
	free(per);
	*out = b;
	return 0;
}

/* The model's bound when layers of FLOP share f run s times as fast: Amdahl's law. */
static double amdahl(double f, double s)
{
	return isfinite(f) && isfinite(s) && s > 0 && f >= 0 && f <= 1 ? 1 / ((1 - f) + f / s) : NAN;
}

int spp_whole_model(struct spp_analysis *a, struct spp_error *err)
{
	struct spp_whole_model *w = &a->summary.whole_model;
	const struct spp_graph_cost *g = a->model ? &a->model->graph : NULL;
	double all = 0, proj = 0, sparse = a->summary.flops_sparse;

	memset(w, 0, sizeof(*w));
	w->flops = w->profiled_flops = w->flops_share = w->bytes = w->profiled_bytes = NAN;
	w->bytes_share = w->theoretical_speedup = NAN;
	w->projected_share = w->deploy_speedup = w->deploy_bound = NAN;
	if (!g || !g->has_graph) {
		no_graph(a->model, w);
		return SPP_OK;
	}
	w->valid = 1;
	w->ops = g->ops;
	w->layer_ops = g->layer_ops;
	w->not_counted = g->not_counted;
	snprintf(w->not_counted_ops, sizeof(w->not_counted_ops), "%s", g->not_counted_ops);
	/* every layer counts in the model, an unsupported one too (its FLOPs are its shape's) */
	for (int i = 0; i < a->nlayers; i++) {
		const struct spp_layer *l = &a->layers[i];
		double f = 2.0 * (double)l->view.m * (double)l->view.k * (double)l->n;

		all += f;
		if (a->derived && a->derived[i].has_rec && !a->stats[i].unsupported)
			proj += f;
	}
	w->flops = all + g->other_flops;
	w->profiled_flops = a->summary.flops_dense;
	w->flops_share = w->flops > 0 ? w->profiled_flops / w->flops : NAN;
	if (w->flops > 0 && sparse >= 0 && w->flops - w->profiled_flops + sparse > 0)
		w->theoretical_speedup = w->flops / (w->flops - w->profiled_flops + sparse);
	w->bytes = model_bytes(a->model);
	if (profiled_bytes(a, &w->profiled_bytes))
		return spp_error_set(err, SPP_E_NOMEM, "out of memory");
	w->bytes_share = w->bytes > 0 ? w->profiled_bytes / w->bytes : NAN;
	if (a->projection.valid && a->projection.nrec > 0 && w->flops > 0) {
		w->projected_share = proj / w->flops;
		w->deploy_speedup = a->projection.speedup;
		w->deploy_bound = amdahl(w->projected_share, w->deploy_speedup);
	}
	return SPP_OK;
}
