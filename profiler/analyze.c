#include "profiler/analyze.h"

#include <omp.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

void spp_analyze_opts_init(struct spp_analyze_opts *o)
{
	memset(o, 0, sizeof(*o));
	o->n = 128;
	o->seed = 1;
}

__attribute__((format(printf, 3, 4)))
static int add_warning(struct spp_analysis *a, struct spp_error *err,
		       const char *fmt, ...)
{
	char buf[512];
	char **grown;
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(buf, sizeof(buf), fmt, ap);
	va_end(ap);
	grown = realloc(a->warnings, (size_t)(a->nwarnings + 1) * sizeof(*grown));
	if (!grown)
		return spp_error_set(err, SPP_E_NOMEM, "out of memory");
	a->warnings = grown;
	a->warnings[a->nwarnings] = strdup(buf);
	if (!a->warnings[a->nwarnings])
		return spp_error_set(err, SPP_E_NOMEM, "out of memory");
	a->nwarnings++;
	return SPP_OK;
}

static int model_totals(struct spp_analysis *a, struct spp_error *err)
{
	const struct spp_model *m = a->model;
	struct spp_model_totals *t = &a->totals;
	int rc;

	t->tensors = (uint64_t)m->ntensors;
	t->bytes = m->bytes;
	for (int i = 0; i < m->ntensors; i++) {
		uint64_t nnz = 0;
		rc = spp_static_tensor_nnz(&m->tensors[i], &nnz, err);
		if (rc)
			return rc;
		t->params += m->tensors[i].numel;
		t->nnz += nnz;
	}
	t->sparsity = t->params ? 1.0 - (double)t->nnz / (double)t->params : 0.0;
	return spp_model_hash(m, &t->hash, err);
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

	rc = spp_model_open(path, &a->model, err);
	if (rc)
		goto fail;
	rc = spp_layers_from_model(a->model, o->n, &a->layers, &a->nlayers, err);
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
		if (rc)
			goto fail;
		spp_static_derive(&counts, l->weight->dtype, l->n, &a->stats[i]);
	}
	rc = model_totals(a, err);
	if (rc)
		goto fail;
	if (a->nlayers == 0) {
		rc = add_warning(a, err, "'%s' has no GEMM layers (no tensor of rank 2-4)", path);
		if (rc)
			goto fail;
	}
	if (!o->static_only) {
		rc = add_warning(a, err, "kernel runs are not built yet: static metrics only");
		if (rc)
			goto fail;
	}
	*out = a;
	return SPP_OK;
fail:
	spp_analysis_destroy(a);
	return rc;
}

void spp_analysis_destroy(struct spp_analysis *a)
{
	if (!a)
		return;
	for (int i = 0; i < a->nwarnings; i++)
		free(a->warnings[i]);
	free(a->warnings);
	free(a->stats);
	free(a->layers);
	spp_model_destroy(a->model);
	free(a);
}
