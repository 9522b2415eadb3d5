#include "profiler/layer.h"

#include <ctype.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "base/budget.h"

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

/*
 * The conv layouts: lead and trail dimensions around the spatial ones, and
 * the input channels' dimension counted from the front (>= 0) or the back
 * (< 0, -1 the last), or ONE_A_GROUP.
 */
#define ONE_A_GROUP 100
static const struct {
	int lead, trail, channel;
} layouts[] = {
	[SPP_LAYOUT_OIHW] = {2, 0, 1},
	[SPP_LAYOUT_OHWI] = {1, 1, -1},
	[SPP_LAYOUT_1HWO] = {1, 1, ONE_A_GROUP},
	[SPP_LAYOUT_HWIO] = {0, 2, -2},
	[SPP_LAYOUT_HWIM] = {0, 2, ONE_A_GROUP},
};

int spp_conv_axes(enum spp_layout layout, int ndim, struct spp_conv_axes *out)
{
	int count, ch;

	if ((unsigned)layout >= sizeof(layouts) / sizeof(layouts[0]))
		return 0;
	count = ndim - layouts[layout].lead - layouts[layout].trail;
	if (count < 1 || count > 3)
		return 0;
	ch = layouts[layout].channel;
	out->first = layouts[layout].lead;
	out->count = count;
	out->channel = ch == ONE_A_GROUP ? -1 : ch < 0 ? ndim + ch : ch;
	return 1;
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
	if (t->ndim < 2 || t->ndim > 4 || t->numel == 0 || t->nnz_only || t->folded || t->derived)
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
		l->layout = (enum spp_layout)d->layout;
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
