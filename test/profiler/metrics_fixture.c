#include "test/profiler/metrics_fixture.h"

#include <math.h>
#include <omp.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "base/rng.h"
#include "test/harness.h"
#include "test/tensor_fixture.h"

char *metrics_tmp;

void near_(double a, double b, double eps, const char *what, const char *file, int line)
{
	if (!(fabs(a - b) <= eps)) {
		print_error("%s is %.17g, expected %.17g\n", what, a, b);
		_fail(file, line);
	}
}

void tensor_make(struct spp_tensor *t, enum spp_dtype dt, int ndim,
		 const int64_t *shape, const void *data)
{
	tensor_make_named(t, "w", dt, ndim, shape, data);
}

float *mat_from_rows(const char *const *rows, int m, int k)
{
	float *w = calloc((size_t)m * (size_t)k, sizeof(float));

	assert_non_null(w);
	for (int i = 0; i < m; i++) {
		assert_int_equal((int)strlen(rows[i]), k);
		for (int j = 0; j < k; j++) {
			char ch = rows[i][j];
			float v = 0.0f;

			if (ch >= '1' && ch <= '9')
				v = (ch - '0') * ((i + j) % 2 ? -0.25f : 1.5f);
			else if (ch == '-')
				v = -0.0f;
			else if (ch == 'n')
				v = NAN;
			else if (ch == 'i')
				v = INFINITY;
			w[(size_t)i * (size_t)k + (size_t)j] = v;
		}
	}
	return w;
}

void count_layer(const struct spp_tensor *t, struct spp_static_counts *c)
{
	struct spp_layer l;
	struct spp_error err;

	spp_layer_init(&l, t, 128);
	assert_int_equal(spp_static_count(&l, c, &err), 0);
}

void derive_rows(const char *const *rows, int m, int k, int64_t n,
		 struct spp_layer_static *s)
{
	float *w = mat_from_rows(rows, m, k);
	struct spp_tensor t;
	struct spp_static_counts c;
	int64_t shape[2] = {m, k};

	tensor_make(&t, SPP_DTYPE_F32, 2, shape, w);
	count_layer(&t, &c);
	spp_static_derive(&c, SPP_DTYPE_F32, n, s);
	free(w);
}

/* ---- the reference: plain loops over a 0/1 matrix, per definition ---- */

/* The groups along M and the fullest group of each width on both axes. */
static void ref_groups(const uint8_t *nz, int64_t m, int64_t k, struct spp_static_counts *c)
{
	for (int w = 0; w < SPP_NWIDTH; w++) {
		int64_t g = spp_nm_widths[w];

		for (int64_t i = 0; i < m; i++)
			for (int64_t g0 = 0; g0 < k; g0 += g) {
				uint32_t cnt = 0;
				for (int64_t j = g0; j < g0 + g && j < k; j++)
					cnt += nz[i * k + j];
				if (cnt > c->nm_max[SPP_AXIS_K][w])
					c->nm_max[SPP_AXIS_K][w] = cnt;
			}
		for (int64_t j = 0; j < k; j++)
			for (int64_t r0 = 0; r0 < m; r0 += g) {
				uint32_t cnt = 0;
				for (int64_t i = r0; i < r0 + g && i < m; i++)
					cnt += nz[i * k + j];
				if (cnt > c->nm_max[SPP_AXIS_M][w])
					c->nm_max[SPP_AXIS_M][w] = cnt;
				for (int p = 0; p < SPP_NNM; p++)
					if (spp_nm_patterns[p].m == g) {
						c->nm_groups_m[p]++;
						c->nm_ok_m[p] += cnt <= (uint32_t)spp_nm_patterns[p].n;
					}
			}
	}
}

void ref_count(const uint8_t *nz, int64_t m, int64_t k, struct spp_static_counts *c)
{
	memset(c, 0, sizeof(*c));
	c->m = m;
	c->k = k;
	c->row_nnz_min = UINT64_MAX;
	for (int64_t i = 0; i < m; i++) {
		uint64_t r = 0;
		for (int64_t j = 0; j < k; j++)
			r += nz[i * k + j];
		c->nnz += r;
		c->row_nnz_min = r < c->row_nnz_min ? r : c->row_nnz_min;
		c->row_nnz_max = r > c->row_nnz_max ? r : c->row_nnz_max;
		c->row_nnz_sumsq += (double)(r * r);
		c->zero_rows += r == 0;
		for (int p = 0; p < SPP_NNM; p++) {
			int gm = spp_nm_patterns[p].m;
			for (int64_t g0 = 0; g0 < k; g0 += gm) {
				uint64_t cnt = 0;
				for (int64_t j = g0; j < g0 + gm && j < k; j++)
					cnt += nz[i * k + j];
				c->nm_groups[p]++;
				c->nm_ok[p] += cnt <= (uint64_t)spp_nm_patterns[p].n;
			}
		}
	}
	for (int64_t j = 0; j < k; j++) {
		int any = 0;
		for (int64_t i = 0; i < m; i++)
			any |= nz[i * k + j];
		c->zero_cols += !any;
	}
	ref_groups(nz, m, k, c);
	for (int b = 0; b < SPP_NBLOCK; b++) {
		int64_t bs = spp_block_sizes[b];
		for (int64_t bi = 0; bi < m; bi += bs)
			for (int64_t bj = 0; bj < k; bj += bs) {
				int64_t ie = bi + bs < m ? bi + bs : m;
				int64_t je = bj + bs < k ? bj + bs : k;
				int any = 0;
				for (int64_t i = bi; i < ie; i++)
					for (int64_t j = bj; j < je; j++)
						any |= nz[i * k + j];
				c->blocks[b]++;
				if (!any) {
					c->zero_blocks[b]++;
					if (bs == 4)
						c->zeros_in_zero_block4 += (uint64_t)((ie - bi) * (je - bj));
				}
			}
	}
	if (m == 0)
		c->row_nnz_min = 0;
}

/* The reference's 0/1 matrix of an F32 layer, through the view formula. */
uint8_t *nz_of_view(const struct spp_layer *l)
{
	const float *w = (const float *)(const void *)l->weight->data;
	int64_t m = l->view.m, k = l->view.k;
	uint8_t *nz = malloc((size_t)(m * k));

	assert_non_null(nz);
	for (int64_t i = 0; i < m; i++)
		for (int64_t j = 0; j < k; j++)
			nz[i * k + j] = w[spp_view_index(&l->view, i, j)] != 0.0f;
	return nz;
}

void assert_counts_eq(const struct spp_static_counts *a, const struct spp_static_counts *b)
{
	assert_int_equal(a->m, b->m);
	assert_int_equal(a->k, b->k);
	assert_int_equal(a->nnz, b->nnz);
	assert_int_equal(a->row_nnz_min, b->row_nnz_min);
	assert_int_equal(a->row_nnz_max, b->row_nnz_max);
	assert_true(a->row_nnz_sumsq == b->row_nnz_sumsq);
	for (int p = 0; p < SPP_NNM; p++) {
		assert_int_equal(a->nm_groups[p], b->nm_groups[p]);
		assert_int_equal(a->nm_ok[p], b->nm_ok[p]);
		assert_int_equal(a->nm_groups_m[p], b->nm_groups_m[p]);
		assert_int_equal(a->nm_ok_m[p], b->nm_ok_m[p]);
	}
	for (int x = 0; x < SPP_NAXIS; x++)
		for (int w = 0; w < SPP_NWIDTH; w++)
			assert_int_equal(a->nm_max[x][w], b->nm_max[x][w]);
	for (int i = 0; i < SPP_NBLOCK; i++) {
		assert_int_equal(a->blocks[i], b->blocks[i]);
		assert_int_equal(a->zero_blocks[i], b->zero_blocks[i]);
	}
	assert_int_equal(a->zeros_in_zero_block4, b->zeros_in_zero_block4);
	assert_int_equal(a->zero_rows, b->zero_rows);
	assert_int_equal(a->zero_cols, b->zero_cols);
}

void assert_layer_matches_ref(const struct spp_layer *l)
{
	struct spp_static_counts got, want;
	struct spp_error err;
	uint8_t *nz = nz_of_view(l);

	assert_int_equal(spp_static_count(l, &got, &err), 0);
	ref_count(nz, l->view.m, l->view.k, &want);
	assert_counts_eq(&got, &want);
	free(nz);
}

static struct spp_rng rng = {0x9e3779b97f4a7c15ull};

uint64_t rnd(void)
{
	return spp_rng_next(&rng);
}

/* Random weights with zero rows, zero columns, zero 4x4 and 16x16 areas. */
float *random_layer(int m, int k, int zero_pct)
{
	float *w = malloc((size_t)m * (size_t)k * sizeof(float));

	assert_non_null(w);
	for (int i = 0; i < m; i++)
		for (int j = 0; j < k; j++) {
			int zero = (int)(rnd() % 100) < zero_pct || i % 37 == 5 ||
				   j % 53 == 7 || ((i / 4 + j / 4) % 11 == 0) ||
				   ((i / 16) % 5 == 2 && (j / 16) % 3 == 1);
			w[(size_t)i * k + j] = zero ? ((rnd() & 1) ? -0.0f : 0.0f)
					     : (float)((int)(rnd() % 200) - 100) + 0.5f;
		}
	return w;
}

int metrics_setup(void **state)
{
	(void)state;
	metrics_tmp = harness_tmpdir();
	return metrics_tmp ? 0 : -1;
}

int metrics_teardown(void **state)
{
	(void)state;
	harness_rmtree(metrics_tmp);
	return 0;
}
