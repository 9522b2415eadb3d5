/*
 * The metrics tests' shared pieces: tensors and layers built in memory, the
 * plain per-element reference counter the fast scan is checked against, a
 * seeded random source, and the scratch folder of the run.
 */
#ifndef SPP_TEST_METRICS_FIXTURE_H
#define SPP_TEST_METRICS_FIXTURE_H

#include <stdint.h>

#include "profiler/layer.h"
#include "profiler/static.h"

#define EPS 1e-12

/* cmocka 1.1 has no double assertion; this one prints both values. */
#define assert_near(a, b, eps) near_((a), (b), (eps), #a, __FILE__, __LINE__)
void near_(double a, double b, double eps, const char *what, const char *file, int line);

/* A tensor named "w" of dtype dt and shape over data (borrowed). */
void tensor_make(struct spp_tensor *t, enum spp_dtype dt, int ndim,
		 const int64_t *shape, const void *data);

/*
 * F32 rows written as text: '1'..'9' a non-zero value, '0' +0.0, '-' -0.0,
 * 'n' NaN, 'i' infinity. A heap m x k matrix.
 */
float *mat_from_rows(const char *const *rows, int m, int k);

/* spp_static_count() of t seen as a layer (N 128); the test fails on an error. */
void count_layer(const struct spp_tensor *t, struct spp_static_counts *c);

/* Count and derive the metrics of F32 rows (as mat_from_rows) at N = n. */
void derive_rows(const char *const *rows, int m, int k, int64_t n,
		 struct spp_layer_static *s);

/* The reference: plain loops over an m x k 0/1 matrix, per definition. */
void ref_count(const uint8_t *nz, int64_t m, int64_t k, struct spp_static_counts *c);

/* The reference's 0/1 matrix of an F32 layer, through the view formula (heap). */
uint8_t *nz_of_view(const struct spp_layer *l);

void assert_counts_eq(const struct spp_static_counts *a, const struct spp_static_counts *b);

/* The layer's scan equals the reference on its view. */
void assert_layer_matches_ref(const struct spp_layer *l);

/* xorshift64, one sequence for the whole run. */
uint64_t rnd(void);

/* Random m x k weights with zero rows, zero columns, zero 4x4 and 16x16 areas. */
float *random_layer(int m, int k, int zero_pct);

/* The scratch folder of the run, made and removed by the group fixtures. */
extern char *metrics_tmp;
int metrics_setup(void **state);
int metrics_teardown(void **state);

/* Tests in test_metrics_scan.c. */
void test_dtype_zero_tests(void **state);
void test_packed_views(void **state);
void test_conv_k_order(void **state);
void test_conv_random(void **state);
void test_transposed_view(void **state);
void test_thread_invariance(void **state);
void test_tensor_nnz_ranks(void **state);
void test_scan_mapped_file(void **state);
void test_pages_drop(void **state);
void test_coo_counts(void **state);

/* Tests in test_metrics_kernels.c. */
void test_conv_kernel_pruned(void **state);
void test_conv_pattern_pruned(void **state);
void test_conv_random_zeros(void **state);
void test_conv_no_kernels(void **state);
void test_conv_layouts(void **state);

/* Tests in test_metrics_hash.c. */
void test_hash_bytes(void **state);
void test_hash_large_file(void **state);

#endif
