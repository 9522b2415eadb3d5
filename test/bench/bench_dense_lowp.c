/*
 * Low-precision dense-baseline benchmark (issue 47): for each precision,
 * spprof's dense API (kernels/dense/lowp_dense.h, what analyze will time
 * as the baseline) against oneDNN's matmul called directly in the same
 * process, interleaved round by round. The direct calls hold everything
 * ready outside the clock: the weights reordered once, X already in
 * oneDNN's natural layout, one primitive made before the first round:
 *
 *   onednn      Y^T = X^T W^T, X^T N x K and Y^T N x M row-major (the
 *               orientation spprof uses, without its copies of X^T and Y^T)
 *   onednn/wsrc Y = W X, W the source (row-major, no reorder), X the
 *               weights: bf16 only (int8 per-row scales of W would be
 *               per-row output scales, which 2.6's matmul has not)
 *
 * spprof is timed in both of its layouts: "spprof X^T" (X N x K, Y^T
 * N x M: oneDNN's own, no copies; the baseline analyze is to time, its X
 * being spprof's to make) and "spprof" (X K x N, Y M x N as the sparse
 * kernels take them: X^T and Y^T copied at N > 1, int8 X too).
 *
 * Prints per shape and precision the medians over rounds with p10-p90,
 * GB/s (W's bytes in the precision / time) and GFLOP/s (2 M K N / time),
 * and each spprof time over the fastest direct call; the target (<= 1.10)
 * is judged on "spprof X^T". A precision spprof refuses is printed with
 * its reason.
 *
 *   bench_dense_lowp [--threads T] [ROUNDS] [MxKxN ...]
 *       default 1 thread, 7 rounds, 4096x4096x1 4096x4096x64 768x3072x128
 *
 * Exit 0 when every ratio is within 1.10, 1 when one is not, 2 on error.
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <oneapi/dnnl/dnnl.h>
#include <omp.h>

#include "kernels/dense/lowp_dense.h"
#include "profiler/run.h"

#define TARGET 1.10
#define REPS 9
#define MAX_ROUNDS 64

struct direct {
	const char *name;
	dnnl_primitive_t p;
	dnnl_memory_t src, wei, dst, zp;
	int32_t zp_v;
	int nargs;
};

static dnnl_engine_t eng;
static dnnl_stream_t stream;

static double now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return 1e9 * (double)ts.tv_sec + (double)ts.tv_nsec;
}

static int cmp(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;
	return (x > y) - (x < y);
}

static void stats(double *v, int n, double *med, double *p10, double *p90)
{
	qsort(v, (size_t)n, sizeof(*v), cmp);
	*med = spp_percentile_sorted(v, n, 0.5);
	*p10 = spp_percentile_sorted(v, n, 0.1);
	*p90 = spp_percentile_sorted(v, n, 0.9);
}

#define CHECK(call)                                                                       \
	do {                                                                              \
		dnnl_status_t s_ = (call);                                                \
		if (s_ != dnnl_success) {                                                 \
			fprintf(stderr, "bench_dense_lowp: %s: status %d\n", #call, (int)s_); \
			return 2;                                                         \
		}                                                                         \
	} while (0)

/*
 * A direct matmul src (sd) x weights (wd) -> f32 dst (dd), weights
 * reordered from `wplain` (its layout wtag) into what oneDNN picks when
 * wany; int8: output scales per dst column, u8 source zero point zp.
 */
static int direct_make(struct direct *d, const char *name, const dnnl_dims_t sd, dnnl_data_type_t st,
		       const void *src, const dnnl_dims_t wd, dnnl_data_type_t wt, const void *wplain,
		       dnnl_format_tag_t wtag, int wany, const dnnl_dims_t dd, float *dst,
		       const float *scales, int32_t zp)
{
	dnnl_memory_desc_t smd, wmd, wpl, dmd, zmd;
	dnnl_matmul_desc_t md;
	dnnl_primitive_attr_t attr;
	dnnl_primitive_desc_t pd, rpd;
	dnnl_primitive_t r;
	dnnl_memory_t wsrc;
	dnnl_dims_t one = {1};
	int32_t rz = DNNL_RUNTIME_S32_VAL;

	memset(d, 0, sizeof(*d));
	d->name = name;
	CHECK(dnnl_memory_desc_init_by_tag(&smd, 2, sd, st, dnnl_ab));
	CHECK(dnnl_memory_desc_init_by_tag(&wpl, 2, wd, wt, wtag));
	CHECK(dnnl_memory_desc_init_by_tag(&wmd, 2, wd, wt, wany ? dnnl_format_tag_any : wtag));
	CHECK(dnnl_memory_desc_init_by_tag(&dmd, 2, dd, dnnl_f32, dnnl_ab));
	CHECK(dnnl_matmul_desc_init(&md, &smd, &wmd, NULL, &dmd));
	CHECK(dnnl_primitive_attr_create(&attr));
	if (scales)
		CHECK(dnnl_primitive_attr_set_output_scales(attr, dd[1], 1 << 1, scales));
	if (st == dnnl_u8)
		CHECK(dnnl_primitive_attr_set_zero_points(attr, DNNL_ARG_SRC, 1, 0, &rz));
	CHECK(dnnl_primitive_desc_create(&pd, &md, attr, eng, NULL));
	dnnl_primitive_attr_destroy(attr);
	CHECK(dnnl_primitive_create(&d->p, pd));
	CHECK(dnnl_memory_create(&d->src, &smd, eng, (void *)src));
	CHECK(dnnl_memory_create(&d->dst, &dmd, eng, dst));
	CHECK(dnnl_memory_create(&d->wei, dnnl_primitive_desc_query_md(pd, dnnl_query_weights_md, 0), eng,
				 DNNL_MEMORY_ALLOCATE));
	CHECK(dnnl_memory_create(&wsrc, &wpl, eng, (void *)wplain));
	CHECK(dnnl_reorder_primitive_desc_create(&rpd, &wpl, eng,
						 dnnl_primitive_desc_query_md(pd, dnnl_query_weights_md, 0), eng,
						 NULL));
	CHECK(dnnl_primitive_create(&r, rpd));
	{
		dnnl_exec_arg_t a[2] = {{DNNL_ARG_FROM, wsrc}, {DNNL_ARG_TO, d->wei}};

		CHECK(dnnl_primitive_execute(r, stream, 2, a));
		CHECK(dnnl_stream_wait(stream));
	}
	dnnl_primitive_destroy(r);
	dnnl_primitive_desc_destroy(rpd);
	dnnl_memory_destroy(wsrc);
	dnnl_primitive_desc_destroy(pd);
	d->nargs = 3;
	if (st == dnnl_u8) {
		CHECK(dnnl_memory_desc_init_by_tag(&zmd, 1, one, dnnl_s32, dnnl_a));
		d->zp_v = zp;
		CHECK(dnnl_memory_create(&d->zp, &zmd, eng, &d->zp_v));
		d->nargs = 4;
	}
	return 0;
}

static void direct_run(const struct direct *d)
{
	dnnl_exec_arg_t a[4] = {{DNNL_ARG_SRC, d->src}, {DNNL_ARG_WEIGHTS, d->wei}, {DNNL_ARG_DST, d->dst},
				{DNNL_ARG_ATTR_ZERO_POINTS | DNNL_ARG_SRC, d->zp}};

	dnnl_primitive_execute(d->p, stream, d->nargs, a);
	dnnl_stream_wait(stream);
}

static void direct_free(struct direct *d)
{
	dnnl_primitive_destroy(d->p);
	dnnl_memory_destroy(d->src);
	dnnl_memory_destroy(d->wei);
	dnnl_memory_destroy(d->dst);
	dnnl_memory_destroy(d->zp);
}

/* Median of REPS timed calls after 2 warm-up calls: a direct one (d) or spprof's (c). */
static double time_one(const struct direct *d, struct spp_dense_lowp *c, const struct spp_dense_lowp_x *x,
		       float *y, int threads)
{
	double t[REPS];
	struct spp_error err;

	for (int i = 0; i < 2 + REPS; i++) {
		double t0 = now_ns();

		if (d)
			direct_run(d);
		else if (spp_dense_lowp_run(c, x, y, threads, &err) != SPP_OK)
			return NAN;
		if (i >= 2)
			t[i - 2] = now_ns() - t0;
	}
	qsort(t, REPS, sizeof(*t), cmp);
	return t[REPS / 2];
}

struct bench {
	int64_t m, k, n;
	int threads, rounds;
	float *w, *x, *y, *yt;
	void *xq, *xt;          /* X in the precision, K x N; and transposed, N x K */
};

/* One precision (int8: X signed or not) at b's shape: its row. 0 met, 1 missed, 2 error. */
static int bench_prec(struct bench *b, enum spp_prec p, int is_unsigned)
{
	struct spp_dense_lowp c;
	struct spp_dense_lowp_x xq, xqt;
	struct spp_error err = {0};
	struct spp_matrix wm = {b->m, b->k, b->w};
	struct direct d[2];
	int nd = 0, int8 = p == SPP_PREC_INT8;
	double td[2][MAX_ROUNDS], ts[2][MAX_ROUNDS], ratio[2][MAX_ROUNDS], med[2], p10, p90, dmed[2], best = INFINITY;
	double wbytes = (double)b->m * (double)b->k * (int8 ? 1 : 2) + (int8 ? 4.0 * (double)b->m : 0);
	double flop = 2.0 * (double)b->m * (double)b->k * (double)b->n;
	char label[32];
	float *scales = NULL;
	dnnl_data_type_t dt = p == SPP_PREC_BF16 ? dnnl_bf16 : p == SPP_PREC_FP16 ? dnnl_f16
						 : is_unsigned ? dnnl_u8 : dnnl_s8;

	snprintf(label, sizeof(label), "%s%s", spp_prec_name(p), int8 ? (is_unsigned ? " u8 X" : " s8 X") : "");
	omp_set_num_threads(b->threads);
	if (spp_dense_lowp_open(&c, "onednn", p, &wm, &err) != SPP_OK) {
		printf("  %-10s spprof refuses: %s\n", label, err.msg);
		return err.code == SPP_E_UNSUPPORTED ? 0 : 2;
	}
	if (spp_dense_lowp_quantize_x(p, is_unsigned, 0, b->x, b->k, b->n, b->xq, &xq, &err) ||
	    spp_dense_lowp_quantize_x(p, is_unsigned, 1, b->x, b->k, b->n, b->xt, &xqt, &err) ||
	    spp_dense_lowp_verify(&c, &xq, b->threads, &err) || spp_dense_lowp_verify(&c, &xqt, b->threads, &err)) {
		fprintf(stderr, "bench_dense_lowp: %s\n", err.msg);
		return 2;
	}
	if (int8 && !(scales = malloc(sizeof(float) * (size_t)b->m)))
		return 2;
	for (int64_t i = 0; int8 && i < b->m; i++)
		scales[i] = c.w.scale[i] * xq.scale;
	{
		dnnl_dims_t sd = {b->n, b->k}, wd = {b->k, b->m}, dd = {b->n, b->m};
		const void *wq = int8 ? (const void *)c.w.q : (const void *)c.w.h;

		if (direct_make(&d[nd++], "onednn", sd, dt, b->xt, wd, int8 ? dnnl_s8 : dt, wq, dnnl_ba, 1, dd, b->yt,
				scales, xq.zero_point))
			return 2;
	}
	if (p == SPP_PREC_BF16) {
		dnnl_dims_t sd = {b->m, b->k}, wd = {b->k, b->n}, dd = {b->m, b->n};

		if (direct_make(&d[nd++], "onednn/wsrc", sd, dt, c.w.h, wd, dt, b->xq, dnnl_ab, 0, dd, b->yt, NULL, 0))
			return 2;
	}
	for (int r = 0; r < b->rounds; r++) {
		double rb = INFINITY;

		for (int i = 0; i < nd; i++) {
			td[i][r] = time_one(&d[i], NULL, NULL, NULL, b->threads);
			rb = fmin(rb, td[i][r]);
		}
		ts[0][r] = time_one(NULL, &c, &xqt, b->y, b->threads);
		ts[1][r] = time_one(NULL, &c, &xq, b->y, b->threads);
		ratio[0][r] = ts[0][r] / rb;
		ratio[1][r] = ts[1][r] / rb;
	}
	printf("  %-10s", label);
	for (int i = 0; i < nd; i++) {
		stats(td[i], b->rounds, &dmed[i], &p10, &p90);
		best = fmin(best, dmed[i]);
		printf(" %s %.3f ms (%.3f-%.3f) %.1f GB/s %.0f GF/s;", d[i].name, dmed[i] / 1e6, p10 / 1e6, p90 / 1e6,
		       wbytes / dmed[i], flop / dmed[i]);
	}
	for (int v = 0; v < 2; v++) {
		stats(ts[v], b->rounds, &med[v], &p10, &p90);
		printf("%s%s %.3f ms (%.3f-%.3f) %.1f GB/s %.0f GF/s", v ? "; " : "\n             ",
		       v ? "spprof" : "spprof X^T", med[v] / 1e6, p10 / 1e6, p90 / 1e6, wbytes / med[v], flop / med[v]);
		stats(ratio[v], b->rounds, &dmed[0], &p10, &p90);
		printf(", ratio %.3f (%.3f-%.3f)%s", med[v] / best, p10, p90,
		       v || med[v] / best <= TARGET ? "" : " MISSED");
	}
	printf(" [%s]\n", c.impl);
	for (int i = 0; i < nd; i++)
		direct_free(&d[i]);
	free(scales);
	spp_dense_lowp_close(&c);
	return med[0] / best <= TARGET ? 0 : 1;
}

static int bench_shape(int64_t m, int64_t k, int64_t n, int threads, int rounds)
{
	struct bench b = {m, k, n, threads, rounds, NULL, NULL, NULL, NULL, NULL, NULL};
	int rc = 0;

	b.w = malloc(sizeof(float) * (size_t)(m * k));
	b.x = malloc(sizeof(float) * (size_t)(k * n));
	b.y = malloc(sizeof(float) * (size_t)(m * n));
	b.yt = malloc(sizeof(float) * (size_t)(m * n));
	b.xq = malloc(2 * (size_t)(k * n));
	b.xt = malloc(2 * (size_t)(k * n));
	if (!b.w || !b.x || !b.y || !b.yt || !b.xq || !b.xt) {
		fprintf(stderr, "bench_dense_lowp: out of memory\n");
		rc = 2;
	}
	for (int64_t i = 0; !rc && i < m * k; i++)
		b.w[i] = (float)((i * 7919) % 2001 - 1000) / 1000.0f;
	for (int64_t i = 0; !rc && i < k * n; i++)
		b.x[i] = (float)((i * 104729) % 2001 - 1000) / 1000.0f;
	if (!rc)
		printf("%lldx%lldx%lld\n", (long long)m, (long long)k, (long long)n);
	for (int p = SPP_PREC_BF16; rc < 2 && p < SPP_PREC_COUNT; p++)
		for (int u = 0; u < (p == SPP_PREC_INT8 ? 2 : 1); u++) {
			int r = bench_prec(&b, (enum spp_prec)p, u);

			rc = r > rc ? r : rc;
		}
	free(b.w), free(b.x), free(b.y), free(b.yt), free(b.xq), free(b.xt);
	return rc;
}

int main(int argc, char **argv)
{
	static const int64_t defaults[][3] = {{4096, 4096, 1}, {4096, 4096, 64}, {768, 3072, 128}};
	int64_t shapes[16][3];
	int threads = 1, rounds = 7, nshapes = 0, rc = 0, a = 1;

	if (a + 1 < argc && strcmp(argv[a], "--threads") == 0) {
		threads = atoi(argv[a + 1]);
		a += 2;
	}
	if (a < argc && !strchr(argv[a], 'x'))
		rounds = atoi(argv[a++]);
	for (; a < argc && nshapes < 16; a++)
		if (sscanf(argv[a], "%ldx%ldx%ld", &shapes[nshapes][0], &shapes[nshapes][1], &shapes[nshapes][2]) == 3 &&
		    shapes[nshapes][0] > 0 && shapes[nshapes][1] > 0 && shapes[nshapes][2] > 0)
			nshapes++;
	if (!nshapes) {
		memcpy(shapes, defaults, sizeof(defaults));
		nshapes = 3;
	}
	if (threads < 1 || rounds < 1 || rounds > MAX_ROUNDS) {
		fprintf(stderr, "usage: bench_dense_lowp [--threads T] [ROUNDS (1-%d)] [MxKxN ...]\n", MAX_ROUNDS);
		return 2;
	}
	if (dnnl_engine_create(&eng, dnnl_cpu, 0) != dnnl_success ||
	    dnnl_stream_create(&stream, eng, dnnl_stream_default_flags) != dnnl_success) {
		fprintf(stderr, "bench_dense_lowp: no oneDNN CPU engine\n");
		return 2;
	}
	printf("bench_dense_lowp: %d thread%s, %d rounds of %d timed calls (medians, p10-p90 over rounds); "
	       "oneDNN %d.%d.%d\n", threads, threads == 1 ? "" : "s", rounds, REPS, dnnl_version()->major,
	       dnnl_version()->minor, dnnl_version()->patch);
	for (int s = 0; s < nshapes && rc < 2; s++) {
		int r = bench_shape(shapes[s][0], shapes[s][1], shapes[s][2], threads, rounds);

		rc = r > rc ? r : rc;
	}
	printf("\nratio = spprof's time / the fastest direct oneDNN matmul (medians over the rounds; p10-p90 of "
	       "each round's ratio); target <= %.2f for spprof X^T: %s\n", TARGET, rc == 0 ? "met" : rc == 1 ? "MISSED" : "error");
	dnnl_stream_destroy(stream);
	dnnl_engine_destroy(eng);
	return rc;
}
