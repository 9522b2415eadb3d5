/*
 * Reference peers (kernels/peers.h): every peer built (librsb, xnnpack)
 * against the plain reference product over ragged shapes, sparsities, N and
 * thread counts, and on the matrices a peer refuses (xnnpack: too dense
 * for its sparse path); through the measured runs (checked and timed like
 * a format); `analyze --peers` on the command line. Skips (77) when built
 * without any peer.
 *
 * Error bound (per element of Y), as in test_kernels:
 *   |y - ref| <= 1e-4 * sum_k |w[i][k]| * |x[k][j]| + 1e-6
 */
#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>
#include <cjson/cJSON.h>

#include "config.h"
#include "kernels/kernels.h"
#include "kernels/peers.h"
#include "profiler/run.h"
#include "profiler/synth.h"
#include "test/harness.h"

static uint64_t rng_state = 0x2545f4914f6cdd1dull;

static double uniform(void)
{
	/* xorshift64*: independent of the library's generators */
	rng_state ^= rng_state >> 12;
	rng_state ^= rng_state << 25;
	rng_state ^= rng_state >> 27;
	return (double)((rng_state * 0x2545f4914f6cdd1dull) >> 11) / 9007199254740992.0;
}

static float *make_w(int64_t m, int64_t k, double s)
{
	float *w = malloc((size_t)(m * k + 1) * sizeof(*w));

	assert_non_null(w);
	for (int64_t i = 0; i < m * k; i++) {
		float v = (float)(0.0625 + 0.9375 * uniform());

		w[i] = uniform() < s ? 0.0f : (uniform() < 0.5 ? -v : v);
	}
	return w;
}

/*
 * Whether the peer refuses w, and with what words: XNNPACK runs sparse
 * only when more than 2/3 of the weights are zero (its subgraph rule,
 * kernels/peers/xnnpack.c). NULL: the peer must take w.
 */
static const char *refusal(const struct spp_format_ops *ops, int64_t m, int64_t k, int64_t nnz)
{
	if (strcmp(ops->key, "xnnpack") == 0 && (m * k - nnz) * 3 <= m * k * 2)
		return "xnnpack: W too dense for its sparse path";
	return NULL;
}

struct operands {
	float *x, *y, *ref, *xa, *bound;
};

static void operands_make(struct operands *o, const struct spp_matrix *wm,
			  const struct spp_matrix *wam, int64_t n)
{
	int64_t m = wm->m, k = wm->k;

	o->x = malloc((size_t)(k * n) * sizeof(float));
	o->xa = malloc((size_t)(k * n) * sizeof(float));
	o->y = malloc((size_t)(m * n) * sizeof(float));
	o->ref = malloc((size_t)(m * n) * sizeof(float));
	o->bound = malloc((size_t)(m * n) * sizeof(float));
	assert_true(o->x && o->xa && o->y && o->ref && o->bound);
	for (int64_t i = 0; i < k * n; i++) {
		o->x[i] = (float)(2 * uniform() - 1);
		o->xa[i] = fabsf(o->x[i]);
	}
	spp_reference_gemm(wm, o->x, o->ref, n);
	spp_reference_gemm(wam, o->xa, o->bound, n);
}

static void operands_free(struct operands *o)
{
	free(o->x), free(o->xa), free(o->y), free(o->ref), free(o->bound);
}

/* One product on an encoded w, checked element by element. */
static void check_product(const struct spp_format_ops *ops, const struct spp_encoded *enc,
			  const struct spp_matrix *wm, const struct spp_matrix *wam, int64_t n,
			  double s, int threads)
{
	struct operands o;
	double busy[4] = {-1, -1, -1, -1};
	struct spp_exec ex = {.threads = threads, .isa = spp_isa_detect(), .busy_ns = busy};
	int64_t m = wm->m, k = wm->k;

	operands_make(&o, wm, wam, n);
	for (int64_t i = 0; i < m * n; i++)
		o.y[i] = NAN;  /* an element the peer does not write fails */
	assert_int_equal(ops->spmm(enc, o.x, o.y, n, &ex), 0);
	for (int t = 0; t < threads; t++)
		assert_true(busy[t] == 0);  /* unknown, never a stale figure */
	for (int64_t i = 0; i < m * n; i++)
		if (!(fabs((double)o.y[i] - o.ref[i]) <= 1e-4 * o.bound[i] + 1e-6))
			fail_msg("%s %lldx%lldx%lld s %.2f t %d: y[%lld] = %g, reference %g",
				 ops->key, (long long)m, (long long)k, (long long)n, s, threads,
				 (long long)i, o.y[i], o.ref[i]);
	operands_free(&o);
}

/*
 * One W, encoded once, multiplied by X of every N in turn and then the
 * first again (new N, new pointers: a peer that keeps state per N must
 * notice), or refused when the peer says it cannot run W.
 */
static void check_case(const struct spp_format_ops *ops, int64_t m, int64_t k,
		       const int64_t *ns, size_t nns, double s, int threads)
{
	float *w = make_w(m, k, s), *wa = malloc((size_t)(m * k + 1) * sizeof(float));
	struct spp_matrix wm = {m, k, w}, wam = {m, k, wa};
	struct spp_encoded enc;
	struct spp_error err = {0};
	const char *why;
	int64_t nnz = 0;
	int rc;

	assert_non_null(wa);
	for (int64_t i = 0; i < m * k; i++) {
		wa[i] = fabsf(w[i]);
		nnz += w[i] != 0;
	}
	why = refusal(ops, m, k, nnz);
	rc = ops->encode(&wm, threads, ns[0], &enc, &err);
	if (why) {
		if (rc != SPP_E_UNSUPPORTED || !strstr(err.msg, why))
			fail_msg("%s %lldx%lld s %.2f t %d: encode returned %d '%s', expected "
				 "SPP_E_UNSUPPORTED '%s...'", ops->key, (long long)m, (long long)k,
				 s, threads, rc, err.msg, why);
		assert_null(strchr(err.msg, '\n'));  /* one line */
		ops->release(&enc);  /* a refused encoding is zeroed: release is harmless */
		free(w), free(wa);
		return;
	}
	if (rc)
		fail_msg("%s %lldx%lld s %.2f t %d: encode: %s", ops->key, (long long)m,
			 (long long)k, s, threads, err.msg);
	assert_ptr_equal(enc.ops, ops);
	assert_int_equal(enc.m, m);
	assert_int_equal(enc.k, k);
	assert_int_equal(enc.nnz, nnz);
	for (size_t c = 0; c <= nns; c++)
		check_product(ops, &enc, &wm, &wam, ns[c % nns], s, threads);
	ops->release(&enc);
	ops->release(&enc);  /* a released struct is zeroed */
	ops->release(NULL);
	free(w), free(wa);
}

static void test_peers_reference(void **state)
{
	static const int64_t shapes[][2] = {{1, 1}, {7, 13}, {64, 100}, {33, 257}, {300, 17}};
	/* 0 and 0.5 are too dense for xnnpack; 0.7 sits just above its 2/3 */
	static const double sparsities[] = {0, 0.5, 0.7, 0.9, 0.99, 1.0};
	static const int64_t ns[] = {1, 3, 17, 64};

	(void)state;
	for (int p = 0; spp_cpu_peers[p]; p++)
		for (size_t a = 0; a < sizeof(shapes) / sizeof(shapes[0]); a++)
			for (size_t b = 0; b < sizeof(sparsities) / sizeof(sparsities[0]); b++)
				for (int t = 1; t <= 2; t++)
					check_case(spp_cpu_peers[p], shapes[a][0], shapes[a][1], ns,
						   sizeof(ns) / sizeof(ns[0]), sparsities[b], t);
}

/* XNNPACK's rule at its edge: exactly 2/3 zeros is too dense, one more is not. */
static void test_xnnpack_density_rule(void **state)
{
	const struct spp_format_ops *ops = spp_cpu_peer_find("xnnpack");
	float w[9] = {1, 0, 0, 0, 2, 0, 0, 0, 3};
	struct spp_matrix wm = {3, 3, w};
	struct spp_encoded enc;
	struct spp_error err = {0};

	(void)state;
	if (!ops)
		skip();
	assert_int_equal(ops->encode(&wm, 1, 1, &enc, &err), SPP_E_UNSUPPORTED);
	assert_non_null(strstr(err.msg, "too dense for its sparse path"));
	assert_non_null(strstr(err.msg, "66.7%"));
	w[8] = 0;
	assert_int_equal(ops->encode(&wm, 1, 1, &enc, &err), 0);
	assert_int_equal(enc.nnz, 2);
	assert_true(enc.bytes > 0);
	ops->release(&enc);
}

static void test_registry(void **state)
{
	int n = 0;

	(void)state;
	for (; spp_cpu_peers[n]; n++)
		assert_ptr_equal(spp_cpu_peer_find(spp_cpu_peers[n]->key), spp_cpu_peers[n]);
	assert_int_equal(n, HAVE_LIBRSB + HAVE_XNNPACK);
	assert_true((spp_cpu_peer_find("librsb") != NULL) == HAVE_LIBRSB);
	assert_true((spp_cpu_peer_find("xnnpack") != NULL) == HAVE_XNNPACK);
	assert_null(spp_cpu_peer_find("csr"));
	assert_null(spp_cpu_peer_find(NULL));
	assert_true(spp_cpu_peer_known("librsb"));
	assert_true(spp_cpu_peer_known("xnnpack"));
	assert_false(spp_cpu_peer_known("mkl"));
	assert_false(spp_cpu_peer_known(NULL));
	assert_string_equal(spp_cpu_peer_names(), "librsb, xnnpack");
}

/* A peer is a format to the measured runs: checked, then timed (or refused, with the reason). */
static void measure_peer(const struct spp_format_ops *peer, double s)
{
	const struct spp_format_ops *fm[2] = {spp_cpu_format_find("csr"), peer};
	struct spp_run_opts o;
	struct spp_layer_runs runs = {0};
	struct spp_error err = {0};
	float *w = make_w(96, 80, s);
	struct spp_matrix wm = {96, 80, w};
	const struct spp_run *r;
	const char *why;
	uint64_t nnz = 0;

	for (int i = 0; i < 96 * 80; i++)
		nnz += w[i] != 0;
	why = refusal(peer, 96, 80, (int64_t)nnz);
	spp_run_opts_init(&o);
	o.bench.repeat = 3;
	if (spp_matrix_measure(&wm, 16, nnz, 96.0 * 80 / (double)nnz, "t", fm, 2, &o, &runs, &err))
		fail_msg("%s s %.1f: %s", peer->key, s, err.msg);
	assert_int_equal(runs.nruns, 3);
	r = &runs.runs[2];
	assert_string_equal(r->format, peer->key);
	assert_string_equal(r->backend, "cpu");
	if (why) {
		assert_int_equal(r->status, SPP_RUN_NOT_APPLICABLE);
		if (!strstr(r->reason, why))
			fail_msg("%s: reason '%s'", peer->key, r->reason);
		assert_int_equal(r->time.repeats, 0);
	} else {
		assert_int_equal(r->status, SPP_RUN_OK);
		assert_int_equal(r->time.repeats, 3);
		assert_true(r->max_error <= 1e-4);
		assert_true(r->speedup > 0);
		assert_true(isnan(r->nnz_imbalance));  /* a peer's partition is unknown */
		assert_true(isnan(r->imbalance));
	}
	spp_layer_runs_release(&runs);
	free(w);
}

static void test_measured_runs(void **state)
{
	(void)state;
	for (int p = 0; spp_cpu_peers[p]; p++) {
		measure_peer(spp_cpu_peers[p], 0.8);
		measure_peer(spp_cpu_peers[p], 0.3);  /* xnnpack: not applicable */
	}
}

static void test_cli(void **state)
{
	struct spp_synth_layer l;
	struct spp_error err = {0};
	struct harness_run r;
	char *dir = harness_tmpdir(), *model, peers[64] = "";
	int npeers = 0;

	(void)state;
	for (; spp_cpu_peers[npeers]; npeers++) {
		if (npeers)
			strcat(peers, ",");
		strcat(peers, spp_cpu_peers[npeers]->key);
	}
	assert_non_null(dir);
	model = harness_join(dir, "m.safetensors");
	/* 0.8: sparse enough for every peer (xnnpack needs more than 2/3 zeros) */
	assert_int_equal(spp_synth_parse_layer("fc=48x40:unstructured:0.8", &l, &err), 0);
	assert_int_equal(spp_synth_write(model, &l, 1, 1, &err), 0);
	{
		const char *args[] = {"analyze", model, "--n", "8", "--formats", "csr",
				      "--peers", peers, "--repeat", "2", "--format", "json",
				      "--quiet", NULL};

		assert_int_equal(harness_spprof(&r, args), 0);
		if (r.status != 0)
			fail_msg("exit %d: %s", r.status, r.err);
		{
			cJSON *j = cJSON_Parse(r.out), *runs, *run;
			int found = 0;

			assert_non_null(j);
			runs = cJSON_GetObjectItem(cJSON_GetArrayItem(cJSON_GetObjectItem(j, "layers"), 0),
						   "runs");
			cJSON_ArrayForEach(run, runs) {
				const char *f = cJSON_GetStringValue(cJSON_GetObjectItem(run, "format"));

				if (f && spp_cpu_peer_find(f)) {
					found++;
					assert_string_equal(cJSON_GetStringValue(cJSON_GetObjectItem(run, "status")), "ok");
					assert_string_equal(cJSON_GetStringValue(cJSON_GetObjectItem(run, "backend")), "cpu");
				}
			}
			assert_int_equal(found, npeers);
			cJSON_Delete(j);
		}
		harness_run_free(&r);
	}
	{
		const char *args[] = {"analyze", model, "--peers", "nosuch", NULL};

		assert_int_equal(harness_spprof(&r, args), 0);
		assert_int_equal(r.status, 2);
		assert_non_null(strstr(r.err, "unknown peer 'nosuch'"));
		harness_run_free(&r);
	}
	free(model);
	harness_rmtree(dir);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_registry),
		cmocka_unit_test(test_peers_reference),
		cmocka_unit_test(test_xnnpack_density_rule),
		cmocka_unit_test(test_measured_runs),
		cmocka_unit_test(test_cli),
	};

	if (!spp_cpu_peers[0]) {
		printf("skipped: spprof was built without any peer (meson -Dlibrsb=enabled "
		       "-Dxnnpack=enabled with librsb-dev, libxnnpack-dev and "
		       "libpthreadpool-dev installed)\n");
		return 77;
	}
	return cmocka_run_group_tests(tests, NULL, NULL);
}
