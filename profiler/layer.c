#include "profiler/layer.h"

#include <ctype.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "base/budget.h"
#include "profiler/static.h"

const char *spp_op_name(enum spp_op op)
{
	switch (op) {
	case SPP_OP_LINEAR:
		return "linear";
	case SPP_OP_CONV1D:
		return "conv1d";
	case SPP_OP_CONV2D:
		return "conv2d";
	case SPP_OP_CONV3D:
		return "conv3d";
	case SPP_OP_GEMM:
		return "gemm";
	case SPP_OP_MATMUL:
		return "matmul";
	case SPP_OP_CONV_TRANSPOSE:
		return "conv_transpose";
	case SPP_OP_LSTM:
		return "lstm";
	case SPP_OP_GRU:
		return "gru";
	case SPP_OP_RNN:
		return "rnn";
	}
	return "?";
}

/* Case-insensitive substring test, for "embed" in names. */
static int name_has(const char *name, const char *word)
{
	size_t n = strlen(word);
	for (const char *p = name; *p; p++) {
		size_t i = 0;
		while (i < n && p[i] && tolower((unsigned char)p[i]) == word[i])
			i++;
		if (i == n)
			return 1;
	}
	return 0;
}

/* Whether one dot-separated part of name is word ("model.shared.weight"). */
static int name_part(const char *name, const char *word)
{
	size_t n = strlen(word);

	for (const char *p = name; p; p = strchr(p, '.') ? strchr(p, '.') + 1 : NULL)
		if (strncmp(p, word, n) == 0 && (p[n] == '.' || p[n] == '\0'))
			return 1;
	return 0;
}

/*
 * The names of embedding tables, which count in the totals but are no
 * GEMM: within a name (embed_tokens, word_embeddings, llama.cpp's
 * token_embd), or as a whole part of it (GPT-2's wte and wpe, T5's
 * shared, which an MoE's shared_expert is not).
 */
static const char *const embed_within[] = {"embed", "embd"};
static const char *const embed_part[] = {"wte", "wpe", "shared"};

int spp_tensor_is_layer(const struct spp_tensor *t)
{
	if (t->ndim < 2 || t->ndim > 4 || t->numel == 0 || t->nnz_only || t->folded)
		return 0;
	for (size_t i = 0; i < sizeof(embed_within) / sizeof(embed_within[0]); i++)
		if (name_has(t->name, embed_within[i]))
			return 0;
	for (size_t i = 0; i < sizeof(embed_part) / sizeof(embed_part[0]); i++)
		if (name_part(t->name, embed_part[i]))
			return 0;
	return 1;
}

void spp_layer_init(struct spp_layer *l, const struct spp_tensor *t, int64_t n)
{
	struct spp_gemm_view *v = &l->view;
	int64_t o = t->shape[0], c = t->shape[1];
	int64_t spatial = 1;

	for (int d = 2; d < t->ndim; d++)
		spatial *= t->shape[d];
	memset(l, 0, sizeof(*l));
	l->name = t->name;
	l->weight = t;
	l->n = n;
	l->n_source = "option";
	v->m = o;
	v->k = c * spatial;
	v->base = 0;
	v->row_stride = c * spatial;
	if (t->ndim == 2) {
		l->op = SPP_OP_LINEAR;
		v->inner = v->k;
		v->inner_stride = 1;
		v->outer_stride = 0;
	} else {
		/* OIHW / OIL stored, K ordered (spatial, c) with c fastest */
		l->op = t->ndim == 3 ? SPP_OP_CONV1D : SPP_OP_CONV2D;
		v->inner = c;
		v->inner_stride = spatial;
		v->outer_stride = 1;
	}
}

/* t when it can be a bias of m rows: m values, one dimension. */
static const struct spp_tensor *bias_fits(const struct spp_tensor *t, int64_t m)
{
	return t && t->ndim == 1 && t->shape[0] == m && t->data && !t->nnz_only ? t : NULL;
}

/* The tensor "<stem>.bias" of a weight "<stem>.weight"; NULL when none. */
static const struct spp_tensor *bias_beside(const struct spp_model *m, const char *weight)
{
	size_t len = strlen(weight), stem = len - 6;
	int i;

	if (len < 7 || strcmp(weight + stem, "weight") != 0 || weight[stem - 1] != '.')
		return NULL;
	i = spp_model_find(m, m->ntensors, weight, stem, "bias");
	return i >= 0 ? &m->tensors[i] : NULL;
}

/* A layer and its index, sorted by what its scan reads. */
struct scan_key {
	const struct spp_layer *l;
	int i;
};

/* 0 when a's and b's scans read the same: the weight's bytes, type and
 * shape, the op (a conv's kernels) and the view. */
static int scan_cmp(const struct spp_layer *a, const struct spp_layer *b)
{
	const struct spp_tensor *x = a->weight, *y = b->weight;

#define CMP(u, v) if ((u) != (v)) return (u) < (v) ? -1 : 1
	CMP((uintptr_t)x->data, (uintptr_t)y->data);
	CMP((uintptr_t)x->coo, (uintptr_t)y->coo);
	CMP(x->nbytes, y->nbytes);
	CMP((int)x->dtype, (int)y->dtype);
	CMP(x->ndim, y->ndim);
	CMP((int)a->op, (int)b->op);
	for (int d = 0; d < x->ndim; d++)
		CMP(x->shape[d], y->shape[d]);
	CMP(a->view.m, b->view.m);
	CMP(a->view.k, b->view.k);
	CMP(a->view.base, b->view.base);
	CMP(a->view.row_stride, b->view.row_stride);
	CMP(a->view.inner, b->view.inner);
	CMP(a->view.inner_stride, b->view.inner_stride);
	CMP(a->view.outer_stride, b->view.outer_stride);
#undef CMP
	return 0;
}

static int by_scan(const void *pa, const void *pb)
{
	const struct scan_key *a = pa, *b = pb;
	int c = scan_cmp(a->l, b->l);

	return c ? c : (a->i > b->i) - (a->i < b->i);
}

/*
 * Give the layers of one weight and view one scan memo, placed after the n
 * layers in their block (grown here), so that free(*layers) frees both: a
 * graph that applies one weight 49,000 times scans it once. 0 or -1.
 */
static int share_scans(struct spp_layer **layers, int n)
{
	struct scan_key *k = malloc((size_t)(n > 0 ? n : 1) * sizeof(*k));
	size_t head = ((size_t)n * sizeof(**layers) + 63) / 64 * 64;
	struct spp_scan_memo *memo;
	struct spp_layer *grown;
	int groups = 0;

	if (!k)
		return -1;
	for (int i = 0; i < n; i++)
		k[i] = (struct scan_key){&(*layers)[i], i};
	qsort(k, (size_t)n, sizeof(*k), by_scan);
	for (int i = 1; i < n; i++) /* a group of two or more starts here */
		groups += !scan_cmp(k[i - 1].l, k[i].l) && (i == 1 || scan_cmp(k[i - 2].l, k[i - 1].l));
	if (!groups)
		return free(k), 0;
	if (!(grown = realloc(*layers, head + (size_t)groups * sizeof(*memo))))
		return free(k), -1;
	*layers = grown;
	memo = (struct spp_scan_memo *)((char *)grown + head);
	memset(memo, 0, (size_t)groups * sizeof(*memo));
	groups = 0;
	for (int i = 1; i < n; i++) { /* k[].l point into the block before it grew */
		if (scan_cmp(&grown[k[i - 1].i], &grown[k[i].i]))
			continue;
		if (i == 1 || scan_cmp(&grown[k[i - 2].i], &grown[k[i - 1].i]))
			grown[k[i - 1].i].memo = &memo[groups++];
		grown[k[i].i].memo = grown[k[i - 1].i].memo;
	}
	free(k);
	return 0;
}

static int layers_from_descs(const struct spp_model *m, int64_t n, int n_forced,
			     struct spp_layer **out, int *count,
			     struct spp_error *err)
{
	struct spp_layer *layers = calloc((size_t)m->nlayer_descs, sizeof(*layers));

	if (!layers)
		return spp_error_set(err, SPP_E_NOMEM, "out of memory for %d layers",
				     m->nlayer_descs);
	for (int i = 0; i < m->nlayer_descs; i++) {
		const struct spp_layer_desc *d = &m->layer_descs[i];
		struct spp_layer *l = &layers[i];

		l->name = d->name ? d->name : m->tensors[d->tensor].name;
		l->node_name = d->node_name;
		l->op_type = d->op_type;
		l->op = (enum spp_op)d->op;
		l->weight = &m->tensors[d->tensor];
		l->view = (struct spp_gemm_view){
			.m = d->m, .k = d->k, .base = d->base,
			.row_stride = d->row_stride, .inner = d->inner,
			.inner_stride = d->inner_stride, .outer_stride = d->outer_stride,
		};
		l->n = d->n > 0 && !n_forced ? d->n : n;
		l->n_source = d->n > 0 && !n_forced ? "model" : "option";
		l->bias = bias_fits(d->bias > 0 ? &m->tensors[d->bias - 1] : NULL, l->view.m);
	}
	if (share_scans(&layers, m->nlayer_descs)) {
		free(layers);
		return spp_error_set(err, SPP_E_NOMEM, "out of memory for %d layers",
				     m->nlayer_descs);
	}
	*out = layers;
	*count = m->nlayer_descs;
	return SPP_OK;
}

int spp_layers_from_model(const struct spp_model *m, int64_t n, int n_forced,
			  struct spp_layer **out, int *count,
			  struct spp_error *err)
{
	struct spp_layer *layers = NULL;
	int nl = 0, rc;

	*out = NULL;
	*count = 0;
	/* every loader's layers count against the budget (--max-layers) */
	if (m->nlayer_descs > 0)
		return (rc = spp_budget_check_layers((uint64_t)m->nlayer_descs, m->bytes, m->path,
						     "the model", err))
			       ? rc
			       : layers_from_descs(m, n, n_forced, out, count, err);
	for (int i = 0; i < m->ntensors; i++)
		nl += spp_tensor_is_layer(&m->tensors[i]);
	if (nl == 0)
		return SPP_OK;
	if ((rc = spp_budget_check_layers((uint64_t)nl, m->bytes, m->path, "the model", err)))
		return rc;
	layers = calloc((size_t)nl, sizeof(*layers));
	if (!layers)
		return spp_error_set(err, SPP_E_NOMEM, "out of memory for %d layers", nl);
	nl = 0;
	for (int i = 0; i < m->ntensors; i++) {
		const struct spp_tensor *t = &m->tensors[i];

		if (!spp_tensor_is_layer(t))
			continue;
		struct spp_layer *l = &layers[nl++];
		spp_layer_init(l, t, n);
		l->bias = bias_fits(bias_beside(m, t->name), l->view.m);
	}
	if (share_scans(&layers, nl)) {
		free(layers);
		return spp_error_set(err, SPP_E_NOMEM, "out of memory for %d layers", nl);
	}
	*out = layers;
	*count = nl;
	return SPP_OK;
}

int spp_layer_view_is_stored(const struct spp_layer *l)
{
	const struct spp_gemm_view *v = &l->view;

	return l->weight->ndim == 2 && v->m == l->weight->shape[0] &&
	       v->k == l->weight->shape[1] && !v->base && v->row_stride == v->k &&
	       v->inner >= v->k && (v->k <= 1 || v->inner_stride == 1);
}
