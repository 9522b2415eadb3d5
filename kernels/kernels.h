/*
 * Sparse formats and SpMM kernels: Y = W * X with W (M x K) encoded in a
 * format, X row-major K x N, Y row-major M x N, fp32 compute.
 *
 * One table of operations per device, indexed by format key (STYLE.md).
 * No kernel times itself, prints, or allocates in spmm(): the measurement
 * code in profiler/ is written once around these operations.
 *
 * Ownership: encode() fills a caller-owned struct spp_encoded whose buffers
 * belong to it until release(); release() accepts NULL and a zeroed struct.
 * An encoded matrix does not borrow the input matrix.
 */
#ifndef SPP_KERNELS_KERNELS_H
#define SPP_KERNELS_KERNELS_H

#include <stddef.h>
#include <stdint.h>

#include "base/error.h"

/* A dense fp32 matrix, row-major, leading dimension k. Borrowed. */
struct spp_matrix {
	int64_t m, k;
	const float *v;
};

/* Vector code paths; spp_isa_detect() picks the best the CPU has. */
enum spp_isa {
	SPP_ISA_PORTABLE,
	SPP_ISA_AVX2,    /* AVX2 + FMA */
	SPP_ISA_AVX512,  /* AVX-512 F/BW/VL/DQ */
	SPP_ISA_COUNT
};

/* "portable", "avx2", "avx512". */
const char *spp_isa_name(enum spp_isa isa);

/* Best ISA this CPU and OS support (cpuid + xgetbv). */
enum spp_isa spp_isa_cpu(void);

/*
 * The ISA the kernels run and encode for: spp_isa_cpu(), capped by the
 * environment's SPPROF_ISA (portable, avx2 or avx512; another value is
 * ignored), so that a lesser ISA's kernels can be timed or simulated on
 * a CPU that has a better one, as valgrind runs them (AVX2 at most).
 */
enum spp_isa spp_isa_detect(void);

/*
 * How the AVX-512 bitmask kernel expands a row's packed values into the
 * lanes of the mask at N = 1: vexpandps, or each lane's rank counted with
 * vpopcntd (AVX512_VPOPCNTDQ) and the values permuted with vpermt2ps.
 * On an EPYC Zen 5, vexpandps and vcompressps whose mask changes from one
 * instruction to the next took 5.2 cycles each (0.7 with a fixed mask), and
 * the permute 2.5 cycles a 16-column chunk in all; Intel's vexpandps is
 * not known to have that cost, and the permute was not timed there.
 */
enum spp_expand {
	SPP_EXPAND_VEXPAND,
	SPP_EXPAND_PERMUTE,
	SPP_EXPAND_COUNT
};

/* "vexpand", "permute". */
const char *spp_expand_name(enum spp_expand how);

/* This CPU's choice: permute on an AMD CPU with AVX512_VPOPCNTDQ, else vexpand. */
enum spp_expand spp_expand_cpu(void);

/*
 * The one the kernel runs: spp_expand_cpu(), or the environment's
 * SPPROF_EXPAND (vexpand or permute; permute only where the CPU has
 * AVX512_VPOPCNTDQ, another value is ignored), so that both are tested
 * and timed on one machine.
 */
enum spp_expand spp_expand_detect(void);

/*
 * A fused epilogue: what a kernel applies to each element of Y before it
 * stores it, y[i][j] = act(sum + bias[i]). The vector kernels apply it
 * while the row chunk is still in registers; the portable ones over each
 * part's rows as the part ends. ReLU is max(v, 0), NaN giving 0 as the
 * vector max does.
 */
enum spp_epilogue {
	SPP_EPILOGUE_NONE,
	SPP_EPILOGUE_BIAS,
	SPP_EPILOGUE_BIAS_RELU,
	SPP_EPILOGUE_COUNT
};

struct spp_epi {
	enum spp_epilogue kind;
	const float *bias;  /* M entries, one per row of Y; unused with none */
};

/* "none", "bias", "bias_relu"; NULL out of range. */
const char *spp_epilogue_name(enum spp_epilogue e);

/* The epilogue of a name; -1 when unknown. */
int spp_epilogue_parse(const char *name);

/*
 * The epilogue as its own pass over Y (m x n) on `threads` threads, with
 * AVX2 when isa allows: the unfused comparison and the reference.
 */
void spp_epilogue_apply(const struct spp_epi *e, float *y, int64_t m, int64_t n, int threads,
			enum spp_isa isa);

/* Settings of one kernel call, and what it reports back. */
struct spp_exec {
	int threads;        /* OpenMP threads (>= 1); must equal the encode()'s */
	enum spp_isa isa;   /* must be <= spp_isa_detect() */
	double *busy_ns;    /* optional out: busy time of each thread, `threads` entries */
	struct spp_epi epi; /* zero: none */
};

struct spp_format_ops;
struct spp_trace_ops;
struct spp_encoded;

/* One part of a CPU kernel: part p of w (its partition, struct spp_encoded nparts), epilogue e. */
typedef void (*spp_part_fn)(const struct spp_encoded *w, int part, const float *x, float *y,
			    int64_t n, const struct spp_epi *e);

struct spp_encoded {
	const struct spp_format_ops *ops;
	int64_t m, k, nnz;
	uint64_t bytes;        /* encoded bytes the kernel reads: values + indices + offsets */
	/*
	 * Rows of X the kernel reads: the columns of W with a non-zero (bsr:
	 * the columns of its non-zero blocks); 0: every row (K). Each is read
	 * for all N columns, so bw_util's bytes are what the kernel moves.
	 */
	int64_t x_rows;
	int nparts;            /* work partition (one part per thread), by non-zeros */
	int64_t *part_nnz;     /* non-zeros of each part: nnz_imbalance = max / mean */
	void *impl;            /* the format's own buffers */
};

/*
 * What a storage formula of DESIGN section 3 reads: exact counts of a
 * layer in the GEMM view (the static scan's), and the bytes per value of
 * the layer's own dtype (fractional for sub-byte and block types). The
 * pattern fields are those of the entry's own block or N:M pattern.
 */
struct spp_storage_counts {
	int64_t m, k;
	uint64_t nnz;
	/* how values are stored: value_bits each (a block-quantized dtype: its code's),
	 * and for a block-quantized dtype one scale of qscale bytes per qblock values */
	int value_bits, qblock, qscale;
	uint64_t blocks, zero_blocks;   /* aligned block x block blocks (W zero-padded), all-zero ones */
	uint64_t groups, groups_ok;     /* N:M groups of `block` along K, those holding <= keep */
};

/*
 * Bytes of n stored values, whole: the codes packed (ceil(n * bits / 8)),
 * and for a block-quantized dtype the scales of the stored stream, one per
 * qblock values kept (a sparse format keeps the model's quantization in
 * blocks of what it stores). For n = M * K it is the dense size.
 */
static inline uint64_t spp_value_bytes(const struct spp_storage_counts *c, uint64_t n)
{
	uint64_t codes = (n * (uint64_t)c->value_bits + 7) / 8;

	return c->qblock ? codes + (n + (uint64_t)c->qblock - 1) / (uint64_t)c->qblock *
					   (uint64_t)c->qscale
			 : codes;
}

/* A format: one entry per format and device (the CPU's: SPP_CPU_FORMAT_LIST below). */
struct spp_format_ops {
	const char *key;       /* "csr", "coo", "bsr4", "bsr8", "bsr16", "bitmask", "nm2_4", ... */
	int block;             /* B of bsrB; N:M: the group size M; else 0 */
	int keep;              /* N of nmN_M; else 0 */
	/*
	 * Encode w for `threads` threads (the partition is part of the
	 * encoding) and for products with X of n columns: a layout hint
	 * (csr and nm cut K into tiles for X's rows at n >= 2, and none at
	 * n = 1); spmm is right at every N whatever n was. Returns 0,
	 * SPP_E_NOMEM, or SPP_E_UNSUPPORTED with the reason when the format
	 * cannot hold w (an N:M format on a non-compliant matrix,
	 * spp_nm_check's message).
	 */
	int (*encode)(const struct spp_matrix *w, int threads, int64_t n,
		      struct spp_encoded *out, struct spp_error *err);
	/* y = w * x (then ex->epi); x is K x N, y is M x N, both row-major. Returns 0. */
	int (*spmm)(const struct spp_encoded *w, const float *x, float *y,
		    int64_t n, const struct spp_exec *ex);
	void (*release)(struct spp_encoded *e);
	const char *colour;    /* of the format in the HTML report's charts: "#4e79a7" */
	/*
	 * Storage bytes of DESIGN section 3 (values in the model's dtype,
	 * int32 indices), for the static figures: 0 and *bytes, or
	 * SPP_E_UNSUPPORTED with the reason when the format cannot hold the
	 * layer (the N:M rule, spp_nm_check). NULL for the activation kernels,
	 * which have no storage row.
	 */
	int (*storage)(const struct spp_format_ops *f, const struct spp_storage_counts *c,
		       double *bytes, struct spp_error *err);
	/* How the cache simulator replays the portable kernel (kernels/trace.h); NULL: it does not. */
	const struct spp_trace_ops *trace;
	/*
	 * The CPU formats' implementations, one per ISA, after oneDNN's
	 * implementation lists: part[isa] computes part p of Y = W X (and the
	 * epilogue of its rows, where the format fuses it). The portable one
	 * is always there; an ISA without its own entry (NULL) runs the best
	 * one below it (spp_format_part). spmm is then kernels/cpu's one
	 * driver, which runs the parts on OpenMP threads. NULL everywhere for
	 * a format that is not a CPU format of spprof's.
	 */
	spp_part_fn part[SPP_ISA_COUNT];
};

/* The implementation of f that runs on isa: part[isa], else the nearest below it; NULL: none. */
spp_part_fn spp_format_part(const struct spp_format_ops *f, enum spp_isa isa);

/*
 * The CPU formats, in report order: one row per format, X(ID, key), the
 * entry being spp_cpu_<key> (kernels/cpu/<file>.c). Everything that lists
 * formats follows this list: spp_cpu_formats, the static storage figures
 * (SPP_ST_<ID>, profiler/static.h) and so the JSON, HTML and breakeven
 * format lists, and the traced kernels of the cache simulator.
 *
 * A new format is its file, defining `const struct spp_format_ops
 * SPP_CPU_OPS(key)` (kernels/trace.h) with every field above filled, plus
 * its row here; the file is a source like any other in
 * kernels/cpu/meson.build and, for its traced copy, in the list of
 * counters/meson.build. test_kernels checks that the row reaches the
 * storage figures, the report schema and the HTML colours.
 */
#define SPP_CPU_FORMAT_LIST(X)                                                 \
	X(CSR, csr)                                                            \
	X(COO, coo)                                                            \
	X(BSR4, bsr4)                                                          \
	X(BSR8, bsr8)                                                          \
	X(BSR16, bsr16)                                                        \
	X(BITMASK, bitmask)                                                    \
	X(NM1_4, nm1_4)                                                        \
	X(NM2_4, nm2_4)                                                        \
	X(NM4_8, nm4_8)

enum {
#define SPP_CPU_FORMAT_COUNT_ONE(id, key) SPP_CPU_FORMAT_##id,
	SPP_CPU_FORMAT_LIST(SPP_CPU_FORMAT_COUNT_ONE)
#undef SPP_CPU_FORMAT_COUNT_ONE
	SPP_CPU_NFORMATS
};

/* The CPU formats, in report order (SPP_CPU_FORMAT_LIST); NULL-terminated. */
extern const struct spp_format_ops *const spp_cpu_formats[];

/*
 * The activation-sparsity kernels (kernels/cpu/act.c): csc (weight-only,
 * the pair of csc_act), csr_act and csc_act, which also skip the zeros of
 * X. Run beside spp_cpu_formats when activations have zeros; NULL-terminated.
 */
extern const struct spp_format_ops *const spp_cpu_act_formats[];

/* Look a CPU format up by key, in both tables; NULL when unknown. */
const struct spp_format_ops *spp_cpu_format_find(const char *key);

struct spp_blas_info {
	char name[32];        /* "OpenBLAS" */
	char version[64];     /* from openblas_get_config() */
	char config[256];     /* the whole config string */
	char core[64];        /* openblas_get_corename(): the kernel set in use */
	int max_threads;      /* openblas_get_num_threads() */
	char coretype_env[64];/* OPENBLAS_CORETYPE if set, else "" */
	int coretype_set;     /* OPENBLAS_CORETYPE is set (an empty value changes the core too) */
};

/* Describe the OpenBLAS linked in (the dense candidates: kernels/dense/dense.h). */
void spp_blas_info(struct spp_blas_info *out);

/*
 * The N:M rule, the one every part applies: W's rows are cut along K into
 * groups of `group` consecutive elements (K zero-padded to a multiple of
 * group); W is keep:group compliant when every group holds at most keep
 * non-zeros.
 */
static inline int spp_nm_group_ok(unsigned nnz_in_group, int keep)
{
	return nnz_in_group <= (unsigned)keep;
}

/* Groups of an m x k matrix: m * ceil(k / group). */
static inline uint64_t spp_nm_groups(int64_t m, int64_t k, int group)
{
	return (uint64_t)m * (uint64_t)((k + group - 1) / group);
}

/* Groups of w that break the rule (hold more than keep non-zeros). */
uint64_t spp_nm_violations(const struct spp_matrix *w, int keep, int group);

/*
 * The verdict and its one message: 0 when bad == 0, else SPP_E_UNSUPPORTED
 * with "not 2:4 compliant: 6.25% of groups hold more than 2 non-zeros".
 */
int spp_nm_check(int keep, int group, uint64_t groups, uint64_t bad, struct spp_error *err);

/* Plain reference SpMM on the dense matrix (tests and verification). */
void spp_reference_gemm(const struct spp_matrix *w, const float *x, float *y,
			int64_t n);

#endif
