/*
 * What the PyTorch peer (profiler/peer_torch.h, which runs it) leaves: the
 * figures of its two ops on one layer, as results, so that a report can
 * render them. Plain data; the caller owns every struct.
 */
#ifndef SPP_PROFILER_PEER_TORCH_RESULT_H
#define SPP_PROFILER_PEER_TORCH_RESULT_H

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

#endif
