/*
 * XNNPACK's sparse inference path (TensorFlow Lite's, Debian libxnnpack-dev
 * 0.0~git20220216.ae108ef) as a reference peer, key "xnnpack". Y = W X is
 * a 1x1 NCHW convolution, batch 1, height 1, width N: X (K x N row-major)
 * is the CHW input with K channels, Y (M x N) the CHW output with M
 * channels, and the OIHW kernel M x K x 1 x 1 is W itself, bias zero, no
 * clamping (-inf, +inf).
 *
 * Which path it takes (XNNPACK at ae108ef):
 * - src/operators/convolution-nchw.c:178 picks its SpMM microkernel
 *   (xnn_ukernel_type_spmm) for every 1x1 kernel with stride 1, no padding,
 *   one group and CHW input, whatever the density: the operator API has no
 *   dense fallback and does not say which kernel it chose.
 * - The density rule lives one level up, in the subgraph rewrite that
 *   decides whether a model runs sparse (src/subgraph.c:557,
 *   xnn_subgraph_rewrite_for_nchw): it stays dense (NHWC GEMM) unless its
 *   1x1 convolutions hold more than 2/3 zero weights (zeros * 3 > params * 2).
 *   encode() applies that rule, so that a matrix XNNPACK would never run
 *   sparse is SPP_E_UNSUPPORTED rather than timed under this peer's name.
 *
 * ISA: on x86 this version has one f32 SpMM microkernel,
 * xnn_f32_spmm_minmax_ukernel_32x1__sse (src/init.c:4456): SSE only, no
 * AVX/FMA, 32 columns of X per tile, one output row at a time (the 2- and
 * 4-row block kernels exist only on ARM and scalar builds). With AVX
 * present (src/init.c:4452) XNNPACK's own graph API would not even choose
 * sparse inference (no XNN_INIT_FLAG_CHW_OPT); the operator API used here
 * runs the SSE kernel regardless (the Debian build's hot loop, under
 * perf, is legacy-SSE mulps/addps). Reports should read "xnnpack: SSE".
 *
 * Storage (what `bytes` counts: what the kernel reads, from the packing in
 * convolution-nchw.c:241-401, output blocks of one row on x86): nnz + M
 * fp32 values (each row's bias, then its non-zeros), nnz int32 input
 * increments, M uint32 non-zero counts: bytes = 8 * nnz + 8 * M. The
 * packed buffer also holds nnz int32 channel differences that only
 * setup reads (to scale the increments by N). The kernel streams the
 * weights once per 32-column tile of X (and once per remainder piece of
 * 16, 8, 4, 2, 1 columns); bytes counts them once, as the formats do.
 *
 * Threads: a pthreadpool of `threads` threads (none at 1), made in
 * encode() with its workers pinned as spprof pins its own (pin_workers);
 * spmm() must get the encode()'s thread count. XNNPACK's threads split
 * the N columns only, in tiles of a multiple of 32 columns (about 5 per
 * thread when N allows), so N <= 32 (and GEMV, N = 1) runs on one thread
 * whatever the pool.
 * The library is initialised once per process (pthread_once) and never
 * deinitialised. An encoded matrix holds its operator, set up for one
 * (N, X, Y) at a time: spmm() sets it up again (O(nnz)) only when those
 * change, so calls on one encoded matrix from several threads at once are
 * not supported. XNNPACK packs W at create time: nothing is borrowed.
 * It reports no per-thread busy time nor its partition: busy_ns is zeroed
 * (unknown) and nparts is 0.
 */
#include <math.h>
#include <pthread.h>
#include <pthreadpool.h>
#include <sched.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include <xnnpack.h>

#include "kernels/kernels.h"

extern const struct spp_format_ops spp_peer_xnnpack;

struct xnn_peer {
	xnn_operator_t op;
	pthreadpool_t pool;   /* NULL at one thread */
	int threads;
	int64_t n;            /* what the operator is set up for; 0: not yet */
	const float *x;
	float *y;
};

static pthread_once_t init_once = PTHREAD_ONCE_INIT;
static enum xnn_status init_status;

static void init_library(void)
{
	init_status = xnn_initialize(NULL);
}

static const char *status_name(enum xnn_status s)
{
	switch (s) {
	case xnn_status_success: return "success";
	case xnn_status_uninitialized: return "not initialised";
	case xnn_status_invalid_parameter: return "invalid parameter";
	case xnn_status_invalid_state: return "invalid state";
	case xnn_status_unsupported_parameter: return "unsupported parameter";
	case xnn_status_unsupported_hardware: return "unsupported hardware";
	case xnn_status_out_of_memory: return "out of memory";
	}
	return "error";
}

static int status_code(enum xnn_status s)
{
	switch (s) {
	case xnn_status_success: return SPP_OK;
	case xnn_status_out_of_memory: return SPP_E_NOMEM;
	case xnn_status_unsupported_parameter:
	case xnn_status_unsupported_hardware: return SPP_E_UNSUPPORTED;
	default: return SPP_E_RUNTIME;
	}
}

static int xnn_fail(struct spp_error *err, const char *what, enum xnn_status s)
{
	return spp_error_set(err, status_code(s), "xnnpack: %s: %s", what, status_name(s));
}

/*
 * Pinning the pool's workers. spprof pins its own threads before it
 * encodes (spp_pin_threads: OpenMP thread t on core t % ncpu, the caller
 * on core 0), and a new thread inherits its creator's mask, so every
 * worker would start on the caller's core, and one left floating lands
 * there now and then (whole scheduler ticks, 4-8 ms, per product). So
 * each worker is pinned like spprof's threads: the cores 0 .. threads-1
 * but the caller's. pthreadpool cannot address a worker, so one item per
 * thread is run, each waiting until all have started (no thread can take
 * two), and each worker pins itself.
 */
struct pin_ctx {
	pthread_t caller;
	int *cpus;            /* the workers' cores, threads - 1 of them */
	int threads;
	atomic_int arrived, next;
	struct timespec deadline;
};

static int past(const struct timespec *d)
{
	struct timespec t;

	clock_gettime(CLOCK_MONOTONIC, &t);
	return t.tv_sec > d->tv_sec || (t.tv_sec == d->tv_sec && t.tv_nsec >= d->tv_nsec);
}

static void pin_self(void *arg, size_t item)
{
	struct pin_ctx *c = arg;
	cpu_set_t set;
	int slot;

	(void)item;
	atomic_fetch_add(&c->arrived, 1);
	while (atomic_load(&c->arrived) < c->threads && !past(&c->deadline))
		sched_yield();
	if (pthread_equal(pthread_self(), c->caller))
		return;  /* the caller's mask is the caller's */
	slot = atomic_fetch_add(&c->next, 1);
	if (slot >= c->threads - 1)
		return;
	CPU_ZERO(&set);
	CPU_SET(c->cpus[slot], &set);
	pthread_setaffinity_np(pthread_self(), sizeof(set), &set);
}

static void pin_workers(pthreadpool_t pool, int threads)
{
	long ncpu = sysconf(_SC_NPROCESSORS_ONLN);
	struct pin_ctx c = {.caller = pthread_self(), .threads = threads};
	int mine = -1, n = 0;
	cpu_set_t set;

	if (ncpu < 1 || !(c.cpus = malloc((size_t)threads * sizeof(*c.cpus))))
		return;  /* unpinned: slower at worst, still right */
	if (pthread_getaffinity_np(c.caller, sizeof(set), &set) == 0 && CPU_COUNT(&set) == 1)
		for (int i = 0; i < CPU_SETSIZE && mine < 0; i++)
			if (CPU_ISSET(i, &set))
				mine = i;
	if (mine < 0)
		mine = 0;  /* the caller is spprof's thread 0 */
	for (int t = 0; t < threads && n < threads - 1; t++) {
		int cpu = (int)(t % ncpu);

		if (cpu == mine)
			mine = -1;  /* skip the caller's core once */
		else
			c.cpus[n++] = cpu;
	}
	for (; n < threads - 1; n++)
		c.cpus[n] = (int)(n % ncpu);
	atomic_init(&c.arrived, 0);
	atomic_init(&c.next, 0);
	clock_gettime(CLOCK_MONOTONIC, &c.deadline);
	c.deadline.tv_sec += 1;  /* a worker that never comes: leave the rest as they are */
	pthreadpool_parallelize_1d(pool, pin_self, &c, (size_t)threads, 0);
	free(c.cpus);
}

static pthreadpool_t make_pool(int threads)
{
	pthreadpool_t pool = pthreadpool_create((size_t)threads);

	if (pool)
		pin_workers(pool, threads);
	return pool;
}

static void release(struct spp_encoded *e)
{
	struct xnn_peer *p;

	if (!e)
		return;
	p = e->impl;
	if (p) {
		if (p->op)
			xnn_delete_operator(p->op);
		if (p->pool)
			pthreadpool_destroy(p->pool);
		free(p);
	}
	free(e->part_nnz);
	memset(e, 0, sizeof(*e));
}

/*
 * What XNNPACK can run sparse: a size its packing and setup take (channel
 * counts as size_t, input-channel steps scaled by 4 bytes in int32), and
 * the subgraph rule above on the density.
 */
static int check_matrix(const struct spp_matrix *w, int64_t nnz, struct spp_error *err)
{
	int64_t params = w->m * w->k, zeros = params - nnz;

	if (w->m < 1 || w->k < 1)
		return spp_error_set(err, SPP_E_UNSUPPORTED,
				     "xnnpack: a %lldx%lld matrix has no channels",
				     (long long)w->m, (long long)w->k);
	if (w->k >= INT32_MAX / 4)
		return spp_error_set(err, SPP_E_UNSUPPORTED,
				     "xnnpack: K = %lld is too large (its input steps are int32 bytes)",
				     (long long)w->k);
	if (zeros * 3 <= params * 2)
		return spp_error_set(err, SPP_E_UNSUPPORTED,
				     "xnnpack: W too dense for its sparse path (needs more than 2/3 "
				     "zero weights, W has %.1f%%)", 100.0 * (double)zeros / (double)params);
	return SPP_OK;
}

static int encode(const struct spp_matrix *w, int threads, int64_t n, struct spp_encoded *out,
		  struct spp_error *err)
{
	int64_t m = w->m, k = w->k, nnz = 0;
	struct xnn_peer *p = NULL;
	float *bias = NULL;
	enum xnn_status s;
	int rc;

	(void)n; /* the library's own layout */
	memset(out, 0, sizeof(*out));
	pthread_once(&init_once, init_library);
	if (init_status != xnn_status_success)
		return xnn_fail(err, "xnn_initialize", init_status);
	for (int64_t i = 0; i < m * k; i++)
		nnz += w->v[i] != 0;
	if ((rc = check_matrix(w, nnz, err)))
		return rc;
	p = calloc(1, sizeof(*p));
	bias = calloc((size_t)m, sizeof(*bias));
	if (!p || !bias) {
		rc = spp_error_set(err, SPP_E_NOMEM, "xnnpack: out of memory for %lld channels",
				   (long long)m);
		goto out;
	}
	p->threads = threads > 0 ? threads : 1;
	if (p->threads > 1 && !(p->pool = make_pool(p->threads))) {
		rc = spp_error_set(err, SPP_E_RUNTIME, "xnnpack: cannot make a pool of %d threads",
				   p->threads);
		goto out;
	}
	/* padding 0, 1x1 kernel, stride 1, dilation 1, one group of K -> M channels */
	s = xnn_create_convolution2d_nchw_f32(0, 0, 0, 0, 1, 1, 1, 1, 1, 1, 1, (size_t)k, (size_t)m,
					      (size_t)k, (size_t)m, w->v, bias, -INFINITY, INFINITY,
					      0, &p->op);
	if (s != xnn_status_success) {
		p->op = NULL;
		rc = xnn_fail(err, "xnn_create_convolution2d_nchw_f32", s);
		goto out;
	}
	out->ops = &spp_peer_xnnpack;
	out->m = m;
	out->k = k;
	out->nnz = nnz;
	out->bytes = 8 * (uint64_t)nnz + 8 * (uint64_t)m;
	out->impl = p;
	p = NULL;
out:
	if (p) {
		struct spp_encoded e = {.impl = p};

		release(&e);
	}
	free(bias);
	return rc;
}

static int spmm(const struct spp_encoded *w, const float *x, float *y, int64_t n,
		const struct spp_exec *ex)
{
	struct xnn_peer *p = w->impl;

	if (!p)
		return SPP_E_UNSUPPORTED;
	if (ex->busy_ns)
		memset(ex->busy_ns, 0, (size_t)ex->threads * sizeof(*ex->busy_ns));
	if (n <= 0)
		return SPP_OK;
	if (ex->threads != p->threads)
		return SPP_E_UNSUPPORTED;  /* the pool is part of the encoding */
	if (n != p->n || x != p->x || y != p->y) {
		/* setup scales the input steps by N in int32: K * 4 * N must fit */
		if (w->k * 4 > INT32_MAX / n ||
		    xnn_setup_convolution2d_nchw_f32(p->op, 1, 1, (size_t)n, x, y, p->pool) !=
			    xnn_status_success) {
			p->n = 0;
			return SPP_E_UNSUPPORTED;
		}
		p->n = n;
		p->x = x;
		p->y = y;
	}
	if (xnn_run_operator(p->op, p->pool) != xnn_status_success)
		return SPP_E_RUNTIME;
	/*
	 * Its operator takes a bias and a clamp, but fixed when it is created
	 * (encode); an epilogue of the call is a pass of its own, as librsb's.
	 */
	spp_epilogue_apply(&ex->epi, y, w->m, n, ex->threads, ex->isa);
	return SPP_OK;
}

const struct spp_format_ops spp_peer_xnnpack = {
	.key = "xnnpack",
	.block = 0,
	.keep = 0,
	.encode = encode,
	.spmm = spmm,
	.release = release,
};
