#include "test/profiler/synth_reader.h"

#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "test/harness.h"

int elem_size(enum spp_dtype d)
{
	return spp_dtype_info(d)->bits / 8;
}

/* Read and check the whole layout; any violation fails the test. */
void st_read(const char *path, struct st_file *f)
{
	uint64_t hlen = 0, expect = 0;
	const char *end = NULL;
	cJSON *it;

	memset(f, 0, sizeof(*f));
	f->bytes = harness_slurp(path, &f->len);
	assert_non_null(f->bytes);
	assert_true(f->len >= 8);
	for (int b = 7; b >= 0; b--)
		hlen = hlen << 8 | (unsigned char)f->bytes[b];
	assert_true(hlen % 8 == 0);
	assert_true(8 + hlen <= f->len);
	assert_int_equal(f->bytes[8], '{');
	f->header = cJSON_ParseWithLengthOpts(f->bytes + 8, hlen, &end, 0);
	assert_non_null(f->header);
	for (const char *p = end; p < f->bytes + 8 + hlen; p++)
		assert_int_equal(*p, ' ');
	cJSON_ArrayForEach(it, f->header) {
		struct st_tensor *t;
		cJSON *dt, *shape, *offs, *d;
		uint64_t lo, hi;

		if (strcmp(it->string, "__metadata__") == 0) {
			f->meta = it;
			continue;
		}
		assert_true(f->n < 64);
		t = &f->t[f->n++];
		t->name = it->string;
		dt = cJSON_GetObjectItemCaseSensitive(it, "dtype");
		shape = cJSON_GetObjectItemCaseSensitive(it, "shape");
		offs = cJSON_GetObjectItemCaseSensitive(it, "data_offsets");
		assert_true(cJSON_IsString(dt) && cJSON_IsArray(shape) && cJSON_IsArray(offs));
		assert_int_equal(spp_dtype_from_name(dt->valuestring, &t->dtype), 0);
		t->numel = 1;
		cJSON_ArrayForEach(d, shape) {
			assert_true(t->ndim < 4 && cJSON_IsNumber(d) && d->valuedouble >= 1);
			t->shape[t->ndim++] = (int64_t)d->valuedouble;
			t->numel *= (uint64_t)d->valuedouble;
		}
		assert_int_equal(cJSON_GetArraySize(offs), 2);
		lo = (uint64_t)cJSON_GetArrayItem(offs, 0)->valuedouble;
		hi = (uint64_t)cJSON_GetArrayItem(offs, 1)->valuedouble;
		/* in order, contiguous, no gaps, sized by shape x dtype */
		assert_true(lo == expect);
		assert_true(hi - lo == t->numel * (uint64_t)elem_size(t->dtype));
		expect = hi;
		t->data = (const unsigned char *)f->bytes + 8 + hlen + lo;
	}
	assert_true(8 + hlen + expect == f->len);
}

void st_free(struct st_file *f)
{
	cJSON_Delete(f->header);
	free(f->bytes);
}

const struct st_tensor *st_get(const struct st_file *f, const char *name)
{
	for (int i = 0; i < f->n; i++)
		if (strcmp(f->t[i].name, name) == 0)
			return &f->t[i];
	fail_msg("tensor '%s' not in the file", name);
	return NULL;
}

/* Whether storage element idx is zero: value == 0 for F32/F64, bits else. */
int is_zero(enum spp_dtype d, const unsigned char *data, uint64_t idx)
{
	switch (d) {
	case SPP_DTYPE_F32: {
		float v;
		memcpy(&v, data + idx * 4, 4);
		return v == 0.0f;
	}
	case SPP_DTYPE_F64: {
		double v;
		memcpy(&v, data + idx * 8, 8);
		return v == 0.0;
	}
	case SPP_DTYPE_F16:
	case SPP_DTYPE_BF16: {
		uint16_t v;
		memcpy(&v, data + idx * 2, 2);
		return (v & 0x7fff) == 0;
	}
	case SPP_DTYPE_F8_E4M3:
	case SPP_DTYPE_F8_E5M2:
		return (data[idx] & 0x7f) == 0;
	default: {
		uint64_t v = 0;
		memcpy(&v, data + idx * (uint64_t)elem_size(d), (size_t)elem_size(d));
		return v == 0;
	}
	}
}

/* Storage index of W(i, j), by hand: K = (kh, kw, c) with c fastest. */
static uint64_t w_index(const struct st_tensor *t, int64_t i, int64_t j)
{
	if (t->ndim <= 2)
		return (uint64_t)(i * (t->ndim == 1 ? t->shape[0] : t->shape[1]) + j);
	int64_t c_n = t->shape[1];
	int64_t kh_n = t->shape[2], kw_n = t->ndim == 4 ? t->shape[3] : 1;
	int64_t c = j % c_n, s = j / c_n;
	int64_t kh = s / kw_n, kw = s % kw_n;
	return (uint64_t)(((i * c_n + c) * kh_n + kh) * kw_n + kw);
}

static int64_t w_rows(const struct st_tensor *t)
{
	return t->ndim == 1 ? 1 : t->shape[0];
}

static int64_t w_cols(const struct st_tensor *t)
{
	return (int64_t)t->numel / w_rows(t);
}

static int w_zero(const struct st_tensor *t, int64_t i, int64_t j)
{
	return is_zero(t->dtype, t->data, w_index(t, i, j));
}

uint64_t count_zeros(const struct st_tensor *t)
{
	uint64_t z = 0;
	for (uint64_t k = 0; k < t->numel; k++)
		z += (uint64_t)is_zero(t->dtype, t->data, k);
	return z;
}

/* ---- checks of each pattern on a tensor read back ---- */

static uint64_t expect_zeros(double s, uint64_t items)
{
	return (uint64_t)round(s * (double)items);
}

/* Every group of m along K (ragged last group) holds exactly min(n, len). */
void check_nm(const struct st_tensor *t, int n, int m)
{
	for (int64_t i = 0; i < w_rows(t); i++)
		for (int64_t g = 0; g < w_cols(t); g += m) {
			int64_t len = w_cols(t) - g < m ? w_cols(t) - g : m;
			int64_t nz = 0;
			for (int64_t j = g; j < g + len; j++)
				nz += !w_zero(t, i, j);
			if (nz != (len < n ? len : n))
				fail_msg("'%s' row %lld group at %lld: %lld non-zeros", t->name,
					 (long long)i, (long long)g, (long long)nz);
		}
}

static void check_block(const struct st_tensor *t, int b, double s)
{
	int64_t rows = w_rows(t), cols = w_cols(t);
	uint64_t nblocks = 0, zero_blocks = 0;

	for (int64_t bi = 0; bi < rows; bi += b)
		for (int64_t bj = 0; bj < cols; bj += b) {
			int64_t z = 0, n = 0;
			for (int64_t i = bi; i < bi + b && i < rows; i++)
				for (int64_t j = bj; j < bj + b && j < cols; j++) {
					z += w_zero(t, i, j);
					n++;
				}
			assert_true(z == 0 || z == n);
			nblocks++;
			zero_blocks += z == n;
		}
	assert_int_equal(zero_blocks, expect_zeros(s, nblocks));
}

static void check_channel(const struct st_tensor *t, double s)
{
	int64_t zero_rows = 0;

	for (int64_t i = 0; i < w_rows(t); i++) {
		int64_t z = 0;
		for (int64_t j = 0; j < w_cols(t); j++)
			z += w_zero(t, i, j);
		assert_true(z == 0 || z == w_cols(t));
		zero_rows += z == w_cols(t);
	}
	assert_int_equal(zero_rows, expect_zeros(s, (uint64_t)w_rows(t)));
}

/* Check t against the layer it was written from. */
void check_layer(const struct st_tensor *t, const struct spp_synth_layer *l)
{
	assert_int_equal(t->dtype, l->dtype);
	assert_int_equal(t->ndim, l->ndim);
	for (int d = 0; d < l->ndim; d++)
		assert_int_equal(t->shape[d], l->shape[d]);
	switch (l->pattern) {
	case SPP_SYNTH_DENSE:
		assert_int_equal(count_zeros(t), 0);
		break;
	case SPP_SYNTH_UNSTRUCTURED:
		assert_int_equal(count_zeros(t), expect_zeros(l->sparsity, t->numel));
		break;
	case SPP_SYNTH_NM:
		check_nm(t, l->nm_n, l->nm_m);
		break;
	case SPP_SYNTH_BLOCK:
		check_block(t, l->block, l->sparsity);
		break;
	case SPP_SYNTH_CHANNEL:
		check_channel(t, l->sparsity);
		break;
	}
}

/* ---- helpers ---- */

struct spp_synth_layer parse_ok(const char *spec)
{
	struct spp_synth_layer l;
	struct spp_error err = {0};

	if (spp_synth_parse_layer(spec, &l, &err) != 0)
		fail_msg("'%s' refused: %s", spec, err.msg);
	return l;
}

/* Parse specs, write them to dir/name with seed; returns the path (heap). */
char *write_specs(const char *dir, const char *name, const char *const *specs,
		  int n, uint64_t seed, struct spp_synth_layer *layers)
{
	struct spp_error err = {0};
	char *path = harness_join(dir, name);

	for (int i = 0; i < n; i++)
		layers[i] = parse_ok(specs[i]);
	if (spp_synth_write(path, layers, n, seed, &err) != 0)
		fail_msg("write '%s': %s", path, err.msg);
	return path;
}
