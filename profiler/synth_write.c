/*
 * spp_synth_write(): generate the layers and stream them into a safetensors
 * file.
 *
 * Each layer is generated one row of its GEMM view at a time (a chunk of a
 * row when the row is contiguous in storage), so memory stays at a few
 * hundred KB plus one row of a conv layer whatever the model's size. Every
 * random choice comes from two splitmix streams seeded from (seed, layer
 * index): one for the pattern, one for the values, so a layer does not
 * depend on the size of the layers before it and changing only the dtype
 * keeps the pattern.
 *
 * Exact counts with no second pass: unstructured, block and channel pick
 * their zeros by selection sampling (Knuth's algorithm S) over elements,
 * blocks or rows, which takes exactly round(sparsity * items) of them,
 * uniformly among all subsets. An N:M group of len < M elements (the end of a
 * ragged K) holds min(N, len) non-zeros, which keeps it compliant under the
 * zero padding of DESIGN section 3.
 */
#include "profiler/synth.h"
#include "base/atomic_file.h"
#include "profiler/synth_fill.h"

#include <cjson/cJSON.h>
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "profiler/layer.h"
#include "base/rng.h"
#include "profiler/synth_internal.h"

#if defined(__BYTE_ORDER__) && __BYTE_ORDER__ != __ORDER_LITTLE_ENDIAN__
#error "synth writes values in host order, and safetensors is little-endian"
#endif

/* Elements generated per step of a contiguous row. */
#define CHUNK 65536

struct gen {
	const struct spp_synth_layer *l;
	struct spp_gemm_view v;
	struct spp_rng pat, val;
	uint64_t picks_left, items_left; /* selection sampling state */
	int row_zero;                    /* channel: the current row */
	unsigned char *block_zero;       /* block: per block of the block row */
	int64_t *perm;                   /* W(i, j) at row offset perm[j]; NULL: j */
	int64_t chunk;                   /* elements per step */
	unsigned char *nz;               /* non-zero flags of a step, j order */
	unsigned char *buf;              /* values of a step, storage order */
};

/* Algorithm S: whether the next item is picked; exact over a whole run. */
static inline int pick(struct gen *g)
{
	int take = spp_rng_below(&g->pat, g->items_left) < g->picks_left;

	g->picks_left -= (uint64_t)take;
	g->items_left--;
	return take;
}

static uint64_t round_count(double sparsity, uint64_t items)
{
	double z = round(sparsity * (double)items);

	return z >= (double)items ? items : (uint64_t)z;
}

static int gen_init(struct gen *g, const struct spp_synth_layer *l, uint64_t seed,
		    int index, struct spp_error *err)
{
	struct spp_tensor t;
	struct spp_layer view;
	struct spp_rng mix;
	uint64_t numel = 1;
	unsigned char *seen = NULL;

	memset(g, 0, sizeof(*g));
	g->l = l;
	for (int d = 0; d < l->ndim; d++)
		numel *= (uint64_t)l->shape[d];
	if (l->ndim == 1) {
		/* a vector: one row, not a layer of the analysis */
		g->v.m = 1;
		g->v.k = l->shape[0];
		g->v.row_stride = l->shape[0];
		g->v.inner = l->shape[0];
		g->v.inner_stride = 1;
	} else {
		memset(&t, 0, sizeof(t));
		t.name = (char *)l->name;
		t.dtype = l->dtype;
		t.ndim = l->ndim;
		memcpy(t.shape, l->shape, sizeof(l->shape));
		t.numel = numel;
		spp_layer_init(&view, &t, 1);
		g->v = view.view;
	}
	/* rows must be contiguous ranges of storage for row-wise streaming */
	if (g->v.base != 0 || g->v.row_stride != g->v.k ||
	    (uint64_t)g->v.m * (uint64_t)g->v.k != numel)
		return spp_error_set(err, SPP_E_RUNTIME,
				     "layer '%s': GEMM view does not tile the tensor by rows",
				     l->name);
	spp_rng_seed(&mix, seed ^ (0xd1b54a32d192ed03u * (uint64_t)(index + 1)));
	spp_rng_seed(&g->pat, spp_rng_next(&mix));
	spp_rng_seed(&g->val, spp_rng_next(&mix));

	switch (l->pattern) {
	case SPP_SYNTH_UNSTRUCTURED:
		g->items_left = numel;
		break;
	case SPP_SYNTH_BLOCK:
		g->items_left = (uint64_t)((g->v.m + l->block - 1) / l->block) *
				(uint64_t)((g->v.k + l->block - 1) / l->block);
		g->block_zero = malloc((size_t)((g->v.k + l->block - 1) / l->block));
		if (!g->block_zero)
			goto nomem;
		break;
	case SPP_SYNTH_CHANNEL:
		g->items_left = (uint64_t)g->v.m;
		break;
	default:
		break;
	}
	g->picks_left = round_count(l->sparsity, g->items_left);

	if (g->v.inner == g->v.k && g->v.inner_stride == 1) {
		g->chunk = g->v.k < CHUNK ? g->v.k : CHUNK;
		/* N:M groups must not straddle two steps */
		if (l->pattern == SPP_SYNTH_NM && g->chunk < g->v.k)
			g->chunk -= g->chunk % l->nm_m;
	} else {
		/* a permuted row (conv): generated whole, placed through the view */
		g->chunk = g->v.k;
		g->perm = malloc((size_t)g->v.k * sizeof(*g->perm));
		seen = calloc((size_t)g->v.k, 1);
		if (!g->perm || !seen)
			goto nomem;
		for (int64_t j = 0; j < g->v.k; j++) {
			int64_t at = (int64_t)spp_view_index(&g->v, 0, j);

			if (at < 0 || at >= g->v.k || seen[at]) {
				free(seen);
				return spp_error_set(err, SPP_E_RUNTIME,
						     "layer '%s': GEMM view is not a permutation of a row",
						     l->name);
			}
			seen[at] = 1;
			g->perm[j] = at;
		}
		free(seen);
		seen = NULL;
	}
	g->nz = malloc((size_t)g->chunk);
	g->buf = malloc((size_t)g->chunk * 8);
	if (!g->nz || !g->buf)
		goto nomem;
	return SPP_OK;
nomem:
	free(seen);
	return spp_error_set(err, SPP_E_NOMEM, "layer '%s': out of memory for a row of %lld",
			     l->name, (long long)g->v.k);
}

static void gen_release(struct gen *g)
{
	free(g->block_zero);
	free(g->perm);
	free(g->nz);
	free(g->buf);
}

/* Non-zero flags of W(i, j0 .. j0+n-1) into g->nz, in j order. */
static void gen_mask(struct gen *g, int64_t i, int64_t j0, int64_t n)
{
	const struct spp_synth_layer *l = g->l;
	unsigned char *nz = g->nz;

	switch (l->pattern) {
	case SPP_SYNTH_DENSE:
		memset(nz, 1, (size_t)n);
		break;
	case SPP_SYNTH_UNSTRUCTURED:
		for (int64_t j = 0; j < n; j++)
			nz[j] = (unsigned char)!pick(g);
		break;
	case SPP_SYNTH_NM:
		for (int64_t s = 0; s < n; s += l->nm_m) {
			int64_t len = n - s < l->nm_m ? n - s : l->nm_m;
			uint64_t need = (uint64_t)(len < l->nm_n ? len : l->nm_n);

			/* algorithm S again: exactly `need` of `len`, uniform */
			for (int64_t t = 0; t < len; t++) {
				int keep = spp_rng_below(&g->pat, (uint64_t)(len - t)) < need;

				nz[s + t] = (unsigned char)keep;
				need -= (uint64_t)keep;
			}
		}
		break;
	case SPP_SYNTH_BLOCK: {
		int64_t b = l->block;

		if (i % b == 0 && j0 == 0)
			for (int64_t bj = 0; bj < (g->v.k + b - 1) / b; bj++)
				g->block_zero[bj] = (unsigned char)pick(g);
		for (int64_t j = j0; j < j0 + n;) {
			int64_t bj = j / b;
			int64_t end = (bj + 1) * b < j0 + n ? (bj + 1) * b : j0 + n;

			memset(nz + (j - j0), !g->block_zero[bj], (size_t)(end - j));
			j = end;
		}
		break;
	}
	case SPP_SYNTH_CHANNEL:
		if (j0 == 0)
			g->row_zero = pick(g);
		memset(nz, !g->row_zero, (size_t)n);
		break;
	}
}

/* Magnitude in [0.05, 1], random sign, from 64 random bits. */
static inline float value_f32(uint64_t u)
{
	float mag = 0.05f + 0.95f * ((float)(u >> 40) * 0x1p-24f);

	return (u & 1) ? -mag : mag;
}

static inline double value_f64(uint64_t u)
{
	double mag = 0.05 + 0.95 * ((double)(u >> 11) * 0x1p-53);

	return (u & 1) ? -mag : mag;
}

/*
 * FP8 codes with exponents 2^-4 .. 2^-1 and any mantissa: magnitudes in
 * [0.0625, 0.9375], never zero, NaN or Inf.
 */
static inline uint8_t value_e4m3(uint64_t u)
{
	return (uint8_t)(((u & 1) << 7) | ((3 + ((u >> 8) & 3)) << 3) | ((u >> 16) & 7));
}

static inline uint8_t value_e5m2(uint64_t u)
{
	return (uint8_t)(((u & 1) << 7) | ((11 + ((u >> 8) & 3)) << 2) | ((u >> 16) & 3));
}

/* Non-zero integer: magnitude in [1, max], negative when signed and u is odd. */
static inline uint64_t value_int(uint64_t u, struct spp_rng *r, uint64_t max,
				 int is_signed)
{
	uint64_t mag = 1 + spp_rng_below(r, max);

	return is_signed && (u & 1) ? (uint64_t)0 - mag : mag;
}

#define FILL(T, EXPR)                                                          \
	do {                                                                   \
		T *d = (T *)g->buf;                                            \
		for (int64_t j = 0; j < n; j++) {                              \
			T x = 0;                                               \
			if (nz[j]) {                                           \
				uint64_t u = spp_rng_next(&g->val);            \
				x = (T)(EXPR);                                 \
			}                                                      \
			d[perm ? perm[j] : j] = x;                             \
		}                                                              \
	} while (0)

/* Values of the step's non-zeros into g->buf, in storage order. */
static void gen_values(struct gen *g, int64_t n)
{
	const unsigned char *nz = g->nz;
	const int64_t *perm = g->perm;

	switch (g->l->dtype) {
	case SPP_DTYPE_F32:
		FILL(float, value_f32(u));
		break;
	case SPP_DTYPE_F64:
		FILL(double, value_f64(u));
		break;
	case SPP_DTYPE_F16:
		FILL(uint16_t, spp_f32_to_f16(value_f32(u)));
		break;
	case SPP_DTYPE_BF16:
		FILL(uint16_t, spp_f32_to_bf16(value_f32(u)));
		break;
	case SPP_DTYPE_F8_E4M3:
		FILL(uint8_t, value_e4m3(u));
		break;
	case SPP_DTYPE_F8_E5M2:
		FILL(uint8_t, value_e5m2(u));
		break;
	case SPP_DTYPE_I8:
		FILL(uint8_t, value_int(u, &g->val, INT8_MAX, 1));
		break;
	case SPP_DTYPE_U8:
		FILL(uint8_t, value_int(u, &g->val, UINT8_MAX, 0));
		break;
	case SPP_DTYPE_I16:
		FILL(uint16_t, value_int(u, &g->val, INT16_MAX, 1));
		break;
	case SPP_DTYPE_U16:
		FILL(uint16_t, value_int(u, &g->val, UINT16_MAX, 0));
		break;
	case SPP_DTYPE_I32:
		FILL(uint32_t, value_int(u, &g->val, INT32_MAX, 1));
		break;
	case SPP_DTYPE_U32:
		FILL(uint32_t, value_int(u, &g->val, UINT32_MAX, 0));
		break;
	case SPP_DTYPE_I64:
		FILL(uint64_t, value_int(u, &g->val, INT64_MAX, 1));
		break;
	case SPP_DTYPE_U64:
		FILL(uint64_t, value_int(u, &g->val, UINT64_MAX, 0));
		break;
	default:
		/* refused by spp_synth_check_layer() */
		break;
	}
}

/* Generate layer `index` and append it to f; 1 (errno set) on a write error. */
static int write_layer(FILE *f, const struct spp_synth_layer *l, uint64_t seed,
		       int index, struct spp_error *err)
{
	struct gen g;
	size_t esize = (size_t)spp_dtype_info(l->dtype)->bits / 8;
	int rc = gen_init(&g, l, seed, index, err);

	if (rc)
		goto out;
	for (int64_t i = 0; i < g.v.m; i++) {
		for (int64_t j0 = 0; j0 < g.v.k; j0 += g.chunk) {
			int64_t n = g.v.k - j0 < g.chunk ? g.v.k - j0 : g.chunk;

			gen_mask(&g, i, j0, n);
			gen_values(&g, n);
			if (fwrite(g.buf, esize, (size_t)n, f) != (size_t)n) {
				rc = 1;
				goto out;
			}
		}
	}
out:
	gen_release(&g);
	return rc;
}

int spp_synth_fill_f32(const struct spp_synth_layer *l, uint64_t seed, float *out,
		       struct spp_error *err)
{
	struct spp_synth_layer f32 = *l;
	struct gen g;
	char what[300];
	int rc;

	/* the pattern stream does not depend on the dtype, so only values change */
	f32.dtype = SPP_DTYPE_F32;
	snprintf(what, sizeof(what), "layer '%.256s'", l->name);
	rc = spp_synth_check_layer(&f32, what, err);
	if (rc)
		return rc;
	rc = gen_init(&g, &f32, seed, 0, err);
	if (rc)
		goto out;
	for (int64_t i = 0; i < g.v.m; i++) {
		for (int64_t j0 = 0; j0 < g.v.k; j0 += g.chunk) {
			int64_t n = g.v.k - j0 < g.chunk ? g.v.k - j0 : g.chunk;

			gen_mask(&g, i, j0, n);
			gen_values(&g, n);
			/* rows tile storage (gen_init checked), chunks stay in order */
			memcpy(out + i * g.v.k + j0, g.buf, (size_t)n * sizeof(float));
		}
	}
out:
	gen_release(&g);
	return rc;
}

/* An integer JSON number printed exactly (cJSON prints doubles). */
static cJSON *json_u64(uint64_t v)
{
	char s[24];

	snprintf(s, sizeof(s), "%" PRIu64, v);
	return cJSON_CreateRaw(s);
}

/* The header, padded with spaces to a multiple of 8 bytes; heap string. */
static char *build_header(const struct spp_synth_layer *layers, int nlayers,
			  uint64_t seed, size_t *len)
{
	cJSON *root = cJSON_CreateObject();
	cJSON *meta = cJSON_AddObjectToObject(root, "__metadata__");
	char s[400], *text = NULL, *padded = NULL;
	uint64_t offset = 0;
	size_t n;

	if (!meta || !cJSON_AddStringToObject(meta, "generator", "spprof synth"))
		goto out;
	snprintf(s, sizeof(s), "%" PRIu64, seed);
	if (!cJSON_AddStringToObject(meta, "seed", s))
		goto out;
	for (int i = 0; i < nlayers; i++) {
		const struct spp_synth_layer *l = &layers[i];
		char key[300];

		snprintf(key, sizeof(key), "spec.%s", l->name);
		spp_synth_format_spec(l, s, sizeof(s));
		if (!cJSON_AddStringToObject(meta, key, s))
			goto out;
	}
	for (int i = 0; i < nlayers; i++) {
		const struct spp_synth_layer *l = &layers[i];
		uint64_t bytes = spp_synth_layer_bytes(l);
		cJSON *t = cJSON_AddObjectToObject(root, l->name);
		cJSON *shape = cJSON_CreateArray(), *offs = cJSON_CreateArray();

		if (!t || !shape || !offs) {
			cJSON_Delete(shape);
			cJSON_Delete(offs);
			goto out;
		}
		cJSON_AddStringToObject(t, "dtype", spp_dtype_name(l->dtype));
		cJSON_AddItemToObject(t, "shape", shape);
		cJSON_AddItemToObject(t, "data_offsets", offs);
		for (int d = 0; d < l->ndim; d++)
			cJSON_AddItemToArray(shape, json_u64((uint64_t)l->shape[d]));
		cJSON_AddItemToArray(offs, json_u64(offset));
		cJSON_AddItemToArray(offs, json_u64(offset + bytes));
		offset += bytes;
	}
	text = cJSON_PrintUnformatted(root);
	if (!text)
		goto out;
	n = strlen(text);
	*len = (n + 7) / 8 * 8;
	padded = malloc(*len + 1);
	if (padded) {
		memcpy(padded, text, n);
		memset(padded + n, ' ', *len - n);
		padded[*len] = '\0';
	}
out:
	cJSON_free(text);
	cJSON_Delete(root);
	return padded;
}

static int check_layers(const struct spp_synth_layer *layers, int nlayers,
			struct spp_error *err)
{
	uint64_t total = 0;

	if (nlayers < 1 || !layers)
		return spp_error_set(err, SPP_E_USAGE, "no layers to write");
	for (int i = 0; i < nlayers; i++) {
		char what[300];
		int rc;

		snprintf(what, sizeof(what), "layer '%.256s'", layers[i].name);
		rc = spp_synth_check_layer(&layers[i], what, err);
		if (rc)
			return rc;
		for (int k = 0; k < i; k++)
			if (strcmp(layers[k].name, layers[i].name) == 0)
				return spp_error_set(err, SPP_E_USAGE,
						     "layer '%s' is given twice", layers[i].name);
		if (spp_synth_layer_bytes(&layers[i]) > (uint64_t)INT64_MAX - total)
			return spp_error_set(err, SPP_E_USAGE,
					     "layers hold more than 2^63 bytes together");
		total += spp_synth_layer_bytes(&layers[i]);
	}
	return SPP_OK;
}

int spp_synth_write(const char *path, const struct spp_synth_layer *layers,
		    int nlayers, uint64_t seed, struct spp_error *err)
{
	struct spp_atomic_file af = {0};
	unsigned char len_le[8];
	size_t header_len = 0;
	char *header = NULL;
	int rc;

	rc = check_layers(layers, nlayers, err);
	if (rc)
		return rc;
	header = build_header(layers, nlayers, seed, &header_len);
	if (!header)
		return spp_error_set(err, SPP_E_NOMEM, "'%s': out of memory for the header", path);
	rc = spp_atomic_open(&af, path, err);
	if (rc)
		goto out;
	for (int b = 0; b < 8; b++)
		len_le[b] = (unsigned char)((uint64_t)header_len >> (8 * b));
	if (fwrite(len_le, 1, 8, af.f) != 8 ||
	    fwrite(header, 1, header_len, af.f) != header_len) {
		rc = spp_error_set(err, SPP_E_OUTPUT, "cannot write '%s': %s", path,
				   strerror(errno ? errno : EIO));
		goto out;
	}
	for (int i = 0; i < nlayers; i++) {
		rc = write_layer(af.f, &layers[i], seed, i, err);
		if (rc == 1)
			rc = spp_error_set(err, SPP_E_OUTPUT, "cannot write '%s': %s", path,
					   strerror(errno ? errno : EIO));
		if (rc)
			goto out;
	}
	rc = spp_atomic_commit(&af, err);
out:
	spp_atomic_abort(&af);
	free(header);
	return rc;
}
