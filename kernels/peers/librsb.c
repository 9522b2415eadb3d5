/*
 * librsb (Martone's Recursive Sparse Blocks, Debian librsb-dev) as a
 * reference peer, key "librsb": W is handed over as CSR and assembled in
 * librsb's own format (RSB_FLAG_DEFAULT_RSB_MATRIX_FLAGS: quad-tree
 * partitioned leaves in CSR or COO with 16-bit indices where they fit),
 * and Y = W X is rsb_spmm with row-major X and Y (RSB_FLAG_WANT_ROW_MAJOR_ORDER).
 *
 * The library is initialised once per process (pthread_once) in encode();
 * it is never finalised, since matrices may be released at any time after.
 * librsb keeps its thread count in library-global state
 * (RSB_IO_WANT_EXECUTING_THREADS), so encode() and spmm() set it to the
 * call's threads; calls from several threads at once are not supported.
 * librsb does not report per-thread busy time nor its work partition:
 * busy_ns is zeroed (unknown) and nparts is 0.
 */
#include <pthread.h>
#include <rsb.h>
#include <stdlib.h>
#include <string.h>

#include "kernels/kernels.h"

extern const struct spp_format_ops spp_peer_librsb;

static pthread_once_t init_once = PTHREAD_ONCE_INIT;
static rsb_err_t init_status;

static void init_library(void)
{
	init_status = rsb_lib_init(RSB_NULL_INIT_OPTIONS);
}

static int rsb_fail(struct spp_error *err, int code, const char *what, rsb_err_t e)
{
	char msg[160] = "";

	rsb_strerror_r(e, msg, sizeof(msg));
	return spp_error_set(err, code, "librsb: %s: %s", what, msg[0] ? msg : "error");
}

static int set_threads(int threads)
{
	rsb_int_t nt = threads > 0 ? threads : 1;

	return rsb_lib_set_opt(RSB_IO_WANT_EXECUTING_THREADS, &nt) == RSB_ERR_NO_ERROR ? 0 : -1;
}

static void release(struct spp_encoded *e)
{
	if (!e)
		return;
	if (e->impl)
		rsb_mtx_free(e->impl);
	free(e->part_nnz);
	memset(e, 0, sizeof(*e));
}

static int encode(const struct spp_matrix *w, int threads, int64_t n, struct spp_encoded *out,
		  struct spp_error *err)
{
	int64_t m = w->m, k = w->k, nnz = 0;
	rsb_coo_idx_t *rp = NULL, *ja = NULL;
	float *va = NULL;
	struct rsb_mtx_t *mtx = NULL;
	rsb_err_t e = RSB_ERR_NO_ERROR;
	size_t bytes = 0;
	int rc = SPP_OK;

	(void)n; /* the library's own layout */
	memset(out, 0, sizeof(*out));
	pthread_once(&init_once, init_library);
	if (init_status != RSB_ERR_NO_ERROR)
		return rsb_fail(err, SPP_E_RUNTIME, "rsb_lib_init", init_status);
	for (int64_t i = 0; i < m * k; i++)
		nnz += w->v[i] != 0;
	/* rsb_coo_idx_t and rsb_nnz_idx_t are int */
	if (m >= INT32_MAX || k >= INT32_MAX || nnz >= INT32_MAX)
		return spp_error_set(err, SPP_E_UNSUPPORTED,
				     "librsb indexes with int: %lldx%lld with %lld non-zeros is too large",
				     (long long)m, (long long)k, (long long)nnz);
	rp = malloc((size_t)(m + 1) * sizeof(*rp));
	ja = malloc((size_t)(nnz ? nnz : 1) * sizeof(*ja));
	va = malloc((size_t)(nnz ? nnz : 1) * sizeof(*va));
	if (!rp || !ja || !va) {
		rc = spp_error_set(err, SPP_E_NOMEM, "librsb: out of memory for %lld non-zeros",
				   (long long)nnz);
		goto out;
	}
	rp[0] = 0;
	for (int64_t i = 0, e2 = 0; i < m; i++) {
		for (int64_t j = 0; j < k; j++)
			if (w->v[i * k + j] != 0) {
				ja[e2] = (rsb_coo_idx_t)j;
				va[e2++] = w->v[i * k + j];
			}
		rp[i + 1] = (rsb_coo_idx_t)e2;
	}
	if (set_threads(threads)) {
		rc = spp_error_set(err, SPP_E_RUNTIME, "librsb: cannot use %d threads", threads);
		goto out;
	}
	mtx = rsb_mtx_alloc_from_csr_const(va, rp, ja, (rsb_nnz_idx_t)nnz,
					   RSB_NUMERICAL_TYPE_FLOAT, (rsb_coo_idx_t)m,
					   (rsb_coo_idx_t)k, 1, 1,
					   RSB_FLAG_DEFAULT_RSB_MATRIX_FLAGS, &e);
	if (!mtx || e != RSB_ERR_NO_ERROR) {
		if (mtx)
			rsb_mtx_free(mtx);
		rc = rsb_fail(err, e == RSB_ERR_ENOMEM ? SPP_E_NOMEM : SPP_E_RUNTIME,
			      "rsb_mtx_alloc_from_csr_const", e);
		goto out;
	}
	if (rsb_mtx_get_info(mtx, RSB_MIF_TOTAL_SIZE__TO__SIZE_T, &bytes) != RSB_ERR_NO_ERROR)
		bytes = 0;
	out->ops = &spp_peer_librsb;
	out->m = m;
	out->k = k;
	out->nnz = nnz;
	out->bytes = bytes;
	out->impl = mtx;
out:
	free(rp);
	free(ja);
	free(va);
	return rc;
}

static int spmm(const struct spp_encoded *w, const float *x, float *y, int64_t n,
		const struct spp_exec *ex)
{
	const float one = 1, zero = 0;

	if (n >= INT32_MAX || !w->impl)
		return SPP_E_UNSUPPORTED;
	if (ex->busy_ns)
		memset(ex->busy_ns, 0, (size_t)ex->threads * sizeof(*ex->busy_ns));
	if (set_threads(ex->threads))
		return SPP_E_RUNTIME;
	/* beta 0: librsb overwrites Y (NaN in Y does not leak through) */
	if (rsb_spmm(RSB_TRANSPOSITION_N, &one, w->impl, (rsb_coo_idx_t)n,
		     RSB_FLAG_WANT_ROW_MAJOR_ORDER, x, (rsb_nnz_idx_t)n, &zero, y,
		     (rsb_nnz_idx_t)n) != RSB_ERR_NO_ERROR)
		return SPP_E_RUNTIME;
	/* librsb has no epilogue: a pass of its own, as a user of it would write */
	spp_epilogue_apply(&ex->epi, y, w->m, n, ex->threads, ex->isa);
	return SPP_OK;
}

const struct spp_format_ops spp_peer_librsb = {
	.key = "librsb",
	.block = 0,
	.keep = 0,
	.encode = encode,
	.spmm = spmm,
	.release = release,
};
