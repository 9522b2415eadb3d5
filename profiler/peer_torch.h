/*
 * PyTorch as a reference peer: torch.sparse.mm on a CSR tensor and dense
 * torch.mm, run in a Python interpreter by scripts/peers/torch_spmm.py, so
 * that a report can show what a user of pruned models would compare
 * against. Nothing of Python is linked: one call writes W and X as .npy
 * into a private temporary folder (mkdtemp under $TMPDIR, else /tmp), runs
 * the script with posix_spawn (no shell), reads its result.json and the two
 * Y it wrote, checks each Y against spp_reference_gemm, and removes the
 * folder in every case.
 *
 * The interpreter: $SPPROF_PYTHON when set and not empty, else
 * /usr/bin/python3 when it exists (Debian's python3-torch lives there),
 * else python3 on PATH. The script: scripts/peers/torch_spmm.py of the
 * repository this binary was built from (the executable's folder and up to
 * three above it, then the current folder, then the source root the build
 * was configured from), or share/spprof/peers/torch_spmm.py of an
 * installed prefix.
 *
 * The caller owns every struct; nothing here keeps a pointer to its
 * arguments past the call.
 */
#ifndef SPP_PROFILER_PEER_TORCH_H
#define SPP_PROFILER_PEER_TORCH_H

#include <stddef.h>
#include <stdint.h>

#include "kernels/kernels.h"
#include "base/error.h"

enum {
	SPP_PEER_TORCH_CSR,    /* "torch_csr": torch.sparse.mm(W.to_sparse_csr(), X) */
	SPP_PEER_TORCH_DENSE,  /* "torch_dense": torch.mm(W, X) */
	SPP_PEER_TORCH_NOPS
};

/* One op's figures: times of single calls, as the script measured them. */
struct spp_peer_torch_op {
	char name[32];         /* "torch_csr", "torch_dense" */
	char call[32];         /* the Python call timed: "torch.sparse.mm", "torch.mm" */
	double median_ns, p10_ns, p90_ns;
	int runs;              /* timed calls (at least 5) */
	/*
	 * 1 when Y holds |y - ref| <= 1e-4 * (|W|.|X|) + 1e-6 on every checked
	 * element (the kernel tests' bound); checked: every row, min(N, 8)
	 * columns spread over N, first and last included (ref: the double
	 * precision spp_reference_gemm on those columns).
	 */
	int verified;
	/* worst |y - ref| / (|W|.|X|) over the checked elements (0 where both
	 * are 0, INFINITY for a NaN or an error where |W|.|X| is 0) */
	double max_error;
};

struct spp_peer_torch {
	char torch_version[64];  /* torch.__version__: "1.13.0a0" for Debian's 1.13.1 */
	int threads;             /* torch.get_num_threads() after set_num_threads */
	int mkldnn;              /* torch.backends.mkldnn.is_available() */
	char python[256];        /* the interpreter run */
	char script[512];        /* the script run */
	struct spp_peer_torch_op ops[SPP_PEER_TORCH_NOPS];  /* indexed as the enum above */
};

/*
 * Time the two torch ops on Y = W X (w: M x K, x: K x n row-major, both
 * fp32, n >= 1) with `threads` torch threads (interop threads 1) for about
 * budget_s seconds of timed rounds (at least 5 rounds), and fill *out.
 * Returns 0 (also when a Y fails its check: that op has verified = 0);
 * SPP_E_USAGE for bad arguments; SPP_E_UNSUPPORTED with the reason when
 * torch cannot be imported (the script's one line), no interpreter can be
 * run or the script is not found; SPP_E_OUTPUT when the inputs cannot be
 * written; SPP_E_NOMEM; SPP_E_RUNTIME with what went wrong for any other
 * failure (the script's exit status and last line of output, a killed or
 * timed-out run, a missing or malformed result.json or Y). *out is zeroed
 * first, so it is defined on failure too.
 */
int spp_peer_torch_run(const struct spp_matrix *w, const float *x, int64_t n, int threads,
		       double budget_s, struct spp_peer_torch *out, struct spp_error *err);

/* The interpreter spp_peer_torch_run would use (above), into out[0, size). */
void spp_peer_torch_python(char *out, size_t size);

/*
 * Locate the script (above) into out[0, size). Returns 0, or
 * SPP_E_UNSUPPORTED saying where it looked.
 */
int spp_peer_torch_script(char *out, size_t size, struct spp_error *err);

#endif
