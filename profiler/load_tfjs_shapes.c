/*
 * Static shapes through a TF.js graph model's nodes (load_tfjs.h), so that
 * each conv and matmul layer gets its N from the graph: the Placeholder's
 * stored shape (a batch of -1 taken as 1, said in the model's shape notes;
 * another -1 left unknown), carried through the ops of the table below with
 * TF's rules (NHWC unless data_format says NCHW; SAME, VALID and EXPLICIT
 * padding). A Const's shape is its weight's. A dimension that is not known
 * is -1 and stays so through the ops that keep it (a GlobalAveragePool's
 * Mean over H and W gives [b, 1, 1, C] whatever they are); a node whose op
 * is not in the table, or whose inputs are not known, has no shape, and a
 * layer without a complete shape takes --n. Nodes may come in any order:
 * passes over them repeat until no shape changes.
 */
#include "profiler/load_tfjs.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define UNK INT64_C(-1)
#define MAX_DIM (INT64_C(1) << 40)
#define MAX_PASSES 64

static const char *str_of(const cJSON *o, const char *key)
{
	return cJSON_GetStringValue(cJSON_GetObjectItemCaseSensitive(o, key));
}

const cJSON *tfjs_attr(const cJSON *node, const char *name)
{
	return cJSON_GetObjectItemCaseSensitive(cJSON_GetObjectItemCaseSensitive(node, "attr"), name);
}

/* A JSON integer, as a number or a decimal string ("-1"); 0 when neither. */
static int json_int(const cJSON *j, int64_t *v)
{
	char *end;

	if (cJSON_IsNumber(j) && j->valuedouble >= -9e15 && j->valuedouble <= 9e15) {
		*v = (int64_t)j->valuedouble;
		return 1;
	}
	if (!cJSON_IsString(j) || !*j->valuestring)
		return 0;
	*v = strtoll(j->valuestring, &end, 10);
	return !*end;
}

/* attr.list.i of node: 1 and count values, or 0 when absent or longer than max. */
int tfjs_attr_ints(const cJSON *node, const char *name, int64_t *v, int max, int *count)
{
	const cJSON *i = cJSON_GetObjectItemCaseSensitive(
		cJSON_GetObjectItemCaseSensitive(tfjs_attr(node, name), "list"), "i"), *e;
	int k = 0;

	if (!cJSON_IsArray(i) || cJSON_GetArraySize(i) > max)
		return 0;
	cJSON_ArrayForEach(e, i) {
		if (!json_int(e, &v[k++]))
			return 0;
	}
	*count = k;
	return 1;
}

/* Whether attr.s (base64 in TF.js's JSON) is text's encoding. */
int tfjs_attr_s(const cJSON *node, const char *name, const char *b64)
{
	const char *s = str_of(tfjs_attr(node, name), "s");

	return s && strcmp(s, b64) == 0;
}

#define B64_NCHW "TkNIVw=="

/*
 * The node of input ("x", "x:0"; "^x" none) and which of its outputs, -1
 * when none.
 */
static int node_index(const struct tfjs_shapes *sh, const char *input, long *out)
{
	char base[512], *colon, *end;
	size_t len;
	int lo = 0, hi = sh->count - 1;

	*out = 0;
	if (!input || input[0] == '^' || (len = strlen(input)) >= sizeof(base))
		return -1;
	memcpy(base, input, len + 1);
	if ((colon = strrchr(base, ':'))) {
		*out = strtol(colon + 1, &end, 10);
		if (*end || *out < 0)
			return -1;
		*colon = 0;
	}
	while (lo <= hi) {
		int mid = lo + (hi - lo) / 2;
		int c = strcmp(str_of(sh->node[sh->sorted[mid]], "name"), base);
		if (!c)
			return sh->sorted[mid];
		if (c < 0)
			lo = mid + 1;
		else
			hi = mid - 1;
	}
	return -1;
}

const struct tfjs_shape *tfjs_shape_of(const struct tfjs_shapes *sh, const char *input)
{
	long k;
	int i = node_index(sh, input, &k);
	const char *op = i >= 0 ? str_of(sh->node[i], "op") : NULL;

	/* an output past the first is known where all are alike (Unpack's, Split's) */
	if (i < 0 || sh->shape[i].rank < 0 ||
	    (k && strcmp(op, "Unpack") != 0 && strcmp(op, "Split") != 0))
		return NULL;
	return &sh->shape[i];
}

/* Input k of node: its shape, or a manifest weight's (a Const); 1, or 0 when unknown. */
int tfjs_input_shape(struct tfjs *t, const struct tfjs_shapes *sh, const cJSON *node, int k,
		       struct tfjs_shape *out)
{
	const char *name = cJSON_GetStringValue(
		cJSON_GetArrayItem(cJSON_GetObjectItemCaseSensitive(node, "input"), k));
	const struct tfjs_shape *s = tfjs_shape_of(sh, name);
	int w;

	if (s) {
		*out = *s;
		return 1;
	}
	if ((w = tfjs_find(t, name)) < 0 || t->m->tensors[w].ndim > SPP_MAX_DIMS)
		return 0;
	out->rank = t->m->tensors[w].ndim;
	memcpy(out->d, t->m->tensors[w].shape, sizeof(out->d));
	return 1;
}

/* Input k's values, a small int32 weight (a Reshape's shape, a Pad's paddings); 1 or 0. */
int tfjs_input_ints(struct tfjs *t, const cJSON *node, int k, int64_t *v, int max, int *count)
{
	const char *name = cJSON_GetStringValue(
		cJSON_GetArrayItem(cJSON_GetObjectItemCaseSensitive(node, "input"), k));
	int w = tfjs_find(t, name);
	const struct spp_tensor *x = w >= 0 ? &t->m->tensors[w] : NULL;

	if (!x || x->dtype != SPP_DTYPE_I32 || x->numel > (uint64_t)max || !x->data ||
	    x->nbytes < x->numel * 4)
		return 0;
	for (uint64_t i = 0; i < x->numel; i++) {
		const unsigned char *p = x->data + i * 4;

		v[i] = (int32_t)((uint32_t)p[0] | (uint32_t)p[1] << 8 | (uint32_t)p[2] << 16 |
				 (uint32_t)p[3] << 24);
	}
	*count = (int)x->numel;
	return 1;
}

/* The Placeholder's stored shape: a batch of -1 as 1, noted; another -1 unknown. */
static int placeholder(struct tfjs *t, const cJSON *node, struct tfjs_shape *out, char *notes,
		       size_t room)
{
	const cJSON *dims = cJSON_GetObjectItemCaseSensitive(
		cJSON_GetObjectItemCaseSensitive(tfjs_attr(node, "shape"), "shape"), "dim"), *e;
	const char *name = str_of(node, "name");
	int batch = 0, sym = -1;
	size_t used = strlen(notes);

	(void)t;
	if (!cJSON_IsArray(dims) || cJSON_GetArraySize(dims) > SPP_MAX_DIMS)
		return 0;
	out->rank = 0;
	cJSON_ArrayForEach(e, dims) {
		int64_t v;

		if (!json_int(cJSON_GetObjectItemCaseSensitive(e, "size"), &v))
			v = -1;
		if (v <= 0 && out->rank == 0 && cJSON_GetArraySize(dims) > 1) {
			v = 1;
			batch = 1;
		} else if (v <= 0 || v > MAX_DIM) {
			v = UNK;
			sym = sym < 0 ? out->rank : sym;
		}
		out->d[out->rank++] = v;
	}
	if (batch && used < room)
		used += (size_t)snprintf(notes + used, room - used, "%sgraph input '%.80s': its "
					 "batch of -1 is taken as 1", used ? "\n" : "", name ? name : "");
	if (sym >= 0 && used < room)
		snprintf(notes + used, room - used, "%sgraph input '%.80s': dimension %d is -1, so "
			 "the layers whose N depends on it take --n", used ? "\n" : "", name ? name : "",
			 sym);
	return 1;
}

static const cJSON *const *sort_nodes;

static int by_name(const void *a, const void *b)
{
	return strcmp(str_of(sort_nodes[*(const int *)a], "name"),
		      str_of(sort_nodes[*(const int *)b], "name"));
}

/* Each node's shape, in passes until none changes. */
static int passes(struct tfjs *t, struct tfjs_shapes *sh)
{
	char notes[1024] = "";
	int changed = 1;

	for (int i = 0; i < sh->count; i++)
		if (strcmp(str_of(sh->node[i], "op"), "Placeholder") == 0 &&
		    !placeholder(t, sh->node[i], &sh->shape[i], notes, sizeof(notes)))
			sh->shape[i].rank = -1;
	for (int pass = 0; changed && pass < MAX_PASSES; pass++) {
		changed = 0;
		for (int i = 0; i < sh->count; i++) {
			struct tfjs_shape s = {.rank = -1};

			if (sh->shape[i].rank >= 0 && pass > 0)
				continue;
			if (strcmp(str_of(sh->node[i], "op"), "Placeholder") == 0 ||
			    !tfjs_shapes_node(t, sh, sh->node[i], &s))
				continue;
			for (int k = 0; k < s.rank; k++)
				if (s.d[k] != UNK && (s.d[k] <= 0 || s.d[k] > MAX_DIM))
					s.rank = -1;
			if (s.rank >= 0 && (sh->shape[i].rank < 0 ||
					    memcmp(&s, &sh->shape[i], sizeof(s)) != 0)) {
				sh->shape[i] = s;
				changed = 1;
			}
		}
	}
	if (notes[0] && !t->m->shape_notes && !(t->m->shape_notes = strdup(notes)))
		return tfjs_nomem(t);
	return SPP_OK;
}

int tfjs_shapes_infer(struct tfjs *t, const cJSON *nodes, struct tfjs_shapes *sh)
{
	const cJSON *n;
	int k = 0;

	memset(sh, 0, sizeof(*sh));
	sh->count = cJSON_GetArraySize(nodes);
	if (sh->count <= 0)
		return SPP_OK;
	sh->node = calloc((size_t)sh->count, sizeof(*sh->node));
	sh->shape = calloc((size_t)sh->count, sizeof(*sh->shape));
	sh->sorted = calloc((size_t)sh->count, sizeof(*sh->sorted));
	if (!sh->node || !sh->shape || !sh->sorted) {
		tfjs_shapes_free(sh);
		return tfjs_nomem(t);
	}
	cJSON_ArrayForEach(n, nodes) {
		if (k >= sh->count)
			break;
		if (!str_of(n, "name") || !str_of(n, "op"))
			continue; /* no name, no op: no shape, never found */
		sh->shape[k].rank = -1;
		sh->sorted[k] = k;
		sh->node[k++] = n;
	}
	sh->count = k;
	sort_nodes = sh->node;
	qsort(sh->sorted, (size_t)k, sizeof(int), by_name);
	return passes(t, sh);
}

void tfjs_shapes_free(struct tfjs_shapes *sh)
{
	free(sh->node);
	free(sh->shape);
	free(sh->sorted);
	memset(sh, 0, sizeof(*sh));
}

int64_t tfjs_layer_n(const struct tfjs_shapes *sh, const cJSON *node, int weight_is_a)
{
	const char *op = str_of(node, "op");
	const struct tfjs_shape *s;
	int64_t numel = 1;
	int c;

	if (!op)
		return 0;
	if (strcmp(op, "Conv2DBackpropInput") == 0)
		s = tfjs_shape_of(sh, cJSON_GetStringValue(cJSON_GetArrayItem(
					      cJSON_GetObjectItemCaseSensitive(node, "input"), 2)));
	else
		s = tfjs_shape_of(sh, str_of(node, "name"));
	if (!s || s->rank < 1)
		return 0;
	for (int i = 0; i < s->rank; i++) {
		if (s->d[i] == UNK || numel > INT64_MAX / s->d[i])
			return 0;
		numel *= s->d[i];
	}
	/* N: the output's rows (NHWC: batch * OH * OW), or for a constant A its columns */
	c = s->rank - 1;
	if (strstr(op, "Conv") && s->rank == 4 && tfjs_attr_s(node, "data_format", B64_NCHW))
		c = 1;
	if (weight_is_a)
		return s->d[s->rank - 1];
	return numel / s->d[c];
}
