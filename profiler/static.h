/*
 * Exact static analysis of a layer (DESIGN section 3): sparsity, pattern,
 * FLOPs and storage per format. Deterministic: the same weights give the
 * same figures on every machine and thread count.
 *
 * Two steps, so that the formulas can be tested by hand:
 *   spp_static_count()  scans the weights once (OpenMP over row blocks)
 *                       into integer counts;
 *   spp_static_derive() turns counts into the reported figures.
 */
#ifndef SPP_PROFILER_STATIC_H
#define SPP_PROFILER_STATIC_H

#include <stddef.h>
#include <stdint.h>

#include "kernels/kernels.h"
#include "base/dtype.h"
#include "base/error.h"
#include "profiler/layer.h"

/* Block sizes of the block pattern and the bsrB formats. */
#define SPP_NBLOCK 4
extern const int spp_block_sizes[SPP_NBLOCK]; /* 2, 4, 8, 16 */

/* N:M patterns reported; group along K, K zero-padded to a multiple of M. */
#define SPP_NNM 3
struct spp_nm {
	int n, m;
	const char *key; /* "nm1_4" */
};
extern const struct spp_nm spp_nm_patterns[SPP_NNM]; /* 1:4, 2:4, 4:8 */

/*
 * N:M along both axes of W: groups of M consecutive K-elements of a row
 * (along K, the axis the kernels and sparse tensor cores group along) or
 * of M consecutive rows of a column (along M; M zero-padded likewise).
 * For each group width the most non-zeros one group holds is the
 * tightest N that every group complies with.
 */
enum spp_nm_axis { SPP_AXIS_K, SPP_AXIS_M, SPP_NAXIS };
#define SPP_NWIDTH 3
extern const int spp_nm_widths[SPP_NWIDTH]; /* 4, 8, 16 */

/*
 * The kernels of a convolution: its (output, input channel) slices of
 * kh x kw (x kd) weights, each read as a mask of its non-zeros (bit p for
 * spatial position p, row-major over the kernel's dimensions).
 */
#define SPP_KERNEL_TOP 16
#define SPP_KERNEL_MAX_PATTERNS (1u << 16) /* distinct patterns counted at most */
struct spp_kernel_counts {
	int size;                  /* weights per kernel (kh * kw ...); 0: not a conv */
	int ndims, dims[3];        /* the kernel's shape */
	uint64_t kernels, zero;    /* M * C kernels, the all-zero ones */
	uint64_t channels, zero_channels; /* C input channels, those whose every kernel is zero */
	/* distinct non-zero masks; -1 when more than SPP_KERNEL_MAX_PATTERNS, or size > 64 */
	int64_t patterns;
	int ntop;                  /* the most common masks, most first (count, then mask) */
	uint64_t top_mask[SPP_KERNEL_TOP], top_count[SPP_KERNEL_TOP];
};

/*
 * Whether a mask looks learned by magnitude: the |w| of the surviving
 * (non-zero, finite) weights of every row_step-th row, row_step the larger of
 * ceil(M / 256) and ceil(M * K / 2^18) (at most 256 rows and about 2^18
 * values), read in fp32. A magnitude mask cuts everything below a threshold and
 * leaves a gap near zero; a random mask keeps the weights' own spread,
 * which for Gaussian, Laplace or uniform weights puts about 6 % of the
 * survivors below an eighth of their median.
 */
#define SPP_PROV_ROWS 256                 /* rows sampled at most */
#define SPP_PROV_VALUES ((uint64_t)1 << 18) /* values sampled, about */
enum spp_prov_status {
	SPP_PROV_COUNTED,     /* the figures below hold */
	SPP_PROV_NO_DECODE,   /* the dtype has no fp32 decoding (decode.h) */
	SPP_PROV_BLOCK_SCALE, /* ggml blocks: a scale per 32 values, magnitudes not comparable */
};
struct spp_provenance_counts {
	enum spp_prov_status status;
	int integer;         /* integer codes (their step is 1) */
	int64_t row_step;
	uint64_t rows, survivors;  /* rows sampled, their non-zeros */
	uint64_t in_band;          /* survivors with |w| < scale / 8 */
	float scale;   /* the survivors' median |w| (the lower one), its fp32 form cut to 3 mantissa bits */
	float min_abs; /* smallest surviving |w| */
};

/* Integer counts from one scan of a layer. */
struct spp_static_counts {
	int64_t m, k;
	uint64_t nnz;
	uint64_t row_nnz_min, row_nnz_max;
	double row_nnz_sumsq;             /* sum of squared row counts */
	uint64_t nm_groups[SPP_NNM];      /* groups per pattern: M * ceil(K / group) */
	uint64_t nm_ok[SPP_NNM];          /* groups holding at most n non-zeros */
	uint64_t nm_groups_m[SPP_NNM];    /* the same along M: K * ceil(M / group) */
	uint64_t nm_ok_m[SPP_NNM];
	uint32_t nm_max[SPP_NAXIS][SPP_NWIDTH]; /* most non-zeros in a group of 4, 8, 16 */
	uint64_t blocks[SPP_NBLOCK];      /* aligned B x B blocks (W zero-padded) */
	uint64_t zero_blocks[SPP_NBLOCK]; /* of those, entirely zero */
	uint64_t zeros_in_zero_block4;    /* real (unpadded) elements in zero 4x4 blocks */
	uint64_t zero_rows, zero_cols;
	struct spp_kernel_counts kernel; /* conv layers (static_kernels.c); size 0 else */
	struct spp_provenance_counts prov; /* the mask's provenance (provenance.c) */
};

/* The counts of one scan shared by the layers of one weight and view
 * (spp_layer.memo): filled by the first spp_static_count, copied after. */
struct spp_scan_memo {
	int done;
	struct spp_static_counts counts;
};

/*
 * Give the n layers of *layers (spp_layers_from_model's array) that read
 * one weight through one view one scan memo, placed after the layers in
 * their block (grown here), so that free(*layers) frees both: a graph that
 * applies one weight 49,000 times scans it once. 0, or -1 (out of memory;
 * *layers unchanged, each layer's scan its own).
 */
int spp_static_share_scans(struct spp_layer **layers, int n);

/*
 * Scan a layer's weights into counts. Parallel over row blocks with OpenMP
 * (the caller's thread setting). Returns 0, SPP_E_NOMEM, or
 * SPP_E_UNSUPPORTED for a dtype with no zero test.
 */
int spp_static_count(const struct spp_layer *l, struct spp_static_counts *out,
		     struct spp_error *err);

/*
 * The kernel counts of a conv layer (op conv1d/2d/3d, weight [O, C, k...])
 * into out (size 0 for any other layer): one serial pass over the layer's
 * zero masks. Returns 0, SPP_E_NOMEM, or the scan's errors.
 */
int spp_static_kernels(const struct spp_layer *l, struct spp_kernel_counts *out,
		       struct spp_error *err);

/*
 * A kernel mask as text: a 3x3 "010/111/010" (rows of the kernel, top
 * first, '/' between rows; 3-D kernels '|' between planes). Returns buf.
 */
char *spp_kernel_mask_text(const struct spp_kernel_counts *k, uint64_t mask, char *buf, size_t n);

/* Count non-zero elements of a whole tensor (for model totals). */
int spp_static_tensor_nnz(const struct spp_tensor *t, uint64_t *nnz,
			  struct spp_error *err);

/*
 * The storage figures: dense, then every CPU format of the registry in its
 * order (SPP_CPU_FORMAT_LIST, kernels/kernels.h): SPP_ST_CSR, ...
 */
enum spp_storage_fmt {
	SPP_ST_DENSE,
#define SPP_ST_ONE(id, key) SPP_ST_##id,
	SPP_CPU_FORMAT_LIST(SPP_ST_ONE)
#undef SPP_ST_ONE
	SPP_ST_COUNT
};

/* Report key of a storage format: "dense", "csr", "bsr4", "nm2_4", ...; "?" out of range. */
const char *spp_storage_key(enum spp_storage_fmt f);

/* The registry entry of a storage format (spp_cpu_formats); NULL for dense and out of range. */
const struct spp_format_ops *spp_storage_ops(enum spp_storage_fmt f);

/* The storage format of a key; -1 when none (a peer, an activation or CUDA-only kernel). */
int spp_storage_find(const char *key);

struct spp_storage {
	int applicable;
	double bytes;        /* whole bytes (spp_value_bytes: packed codes, block scales) */
	double ratio;        /* dense bytes / bytes; 0 when bytes == 0 (reported null) */
	char reason[128];    /* why not applicable */
};

enum spp_pattern_class {
	SPP_CLASS_DENSE,
	SPP_CLASS_NM,
	SPP_CLASS_CHANNEL,
	SPP_CLASS_BLOCK,
	SPP_CLASS_UNSTRUCTURED,
	SPP_CLASS_KERNEL,  /* a conv with >= 90 % of its zeros in all-zero kernels */
	SPP_CLASS_PATTERN, /* a conv whose 16 commonest kernel masks cover >= 95 % of its non-zero kernels */
};

/* "dense", "nm", "channel", "block", "unstructured", "kernel", "pattern". */
const char *spp_pattern_class_name(enum spp_pattern_class c);

/* The verdict on a mask's provenance (struct spp_provenance_counts). */
enum spp_provenance {
	SPP_PROV_NOT_JUDGED, /* no mask (under 5 % zeros), or no figures: why in the reason */
	SPP_PROV_MAGNITUDE,  /* at most 0.5 % of >= 200 survivors in the band below scale / 8 */
	SPP_PROV_RANDOM,     /* at least 2 % of them there */
	SPP_PROV_UNCLEAR,    /* in between, too few survivors, or codes too coarse for the band */
	SPP_PROV_STRUCTURED, /* whole rows, columns, kernels or channels hold >= SPP_PROV_STRUCTURED_SHARE of the zeros */
};
/*
 * Structured pruning (torch's ln_structured: whole channels by their L2
 * norm) leaves survivors the magnitude test cannot judge: a kept channel
 * holds small weights beside large ones, so it read "random-like".
 */
#define SPP_PROV_STRUCTURED_SHARE 0.9
#define SPP_PROV_MIN_SURVIVORS 200

/* "magnitude-like", "random-like", "unclear", "structured"; NULL when not judged. */
const char *spp_provenance_name(enum spp_provenance p);

/* The verdict on survivors sampled with in_band of them below scale / 8
 * (SPP_PROV_UNCLEAR with why in the buffer when neither rule holds). */
enum spp_provenance spp_provenance_judge(uint64_t survivors, uint64_t in_band, char *why, size_t n);

/* 1 when c's provenance counts can be judged (a decodable dtype, a layer
 * with at least 5 % zeros); else 0, with why. */
int spp_provenance_countable(const struct spp_static_counts *c, uint64_t numel, char *why, size_t n);

/*
 * Granularity of the zeros: at each level the units that are entirely
 * zero, as a count, a fraction of the level's units and the share of the
 * layer's zeros they hold. Rows are output channels (neurons), columns
 * inputs; kernels and channels (input channels, every kernel of theirs
 * zero) exist for convs of kernels of 2 or more weights only.
 */
enum spp_gran_level {
	SPP_GRAN_ELEMENT,
	SPP_GRAN_ROW,
	SPP_GRAN_COLUMN,
	SPP_GRAN_KERNEL,
	SPP_GRAN_CHANNEL,
	SPP_GRAN_LAYER,
	SPP_NGRAN
};
/* "element", "row", "column", "kernel", "channel", "layer". */
const char *spp_gran_name(enum spp_gran_level g);
struct spp_granularity {
	int defined;       /* 0: the level does not apply to the layer */
	uint64_t units, zero;
	double fraction;    /* zero / units */
	double zeros_share; /* zeros in those units / the layer's zeros; NAN without zeros */
};

/* A layer all zero, or zero but for a few values (nnz <= numel / 1000, at most 64). */
enum spp_layer_zero { SPP_LAYER_LIVE, SPP_LAYER_ZERO, SPP_LAYER_NEARLY_ZERO };
/* "zero", "nearly_zero"; NULL for a live layer. */
const char *spp_layer_zero_name(enum spp_layer_zero z);

struct spp_layer_static {
	struct spp_static_counts counts;
	uint64_t numel;
	double sparsity;
	/* FLOPs at the layer's N; a multiply-add is 2 */
	double flops_dense, flops_sparse;
	double theoretical_speedup;    /* 0 when nnz == 0: reported null */
	double nm[SPP_NNM];            /* fraction of compliant groups, along K */
	double nm_m[SPP_NNM];          /* the same along M */
	double block[SPP_NBLOCK];      /* fraction of zero B x B blocks */
	double row_nnz_mean, row_nnz_cv;
	/* conv kernels (counts.kernel.size > 0): the top 4, 8, 16 masks' share
	 * of the non-zero kernels; NAN for other layers and when undefined */
	double kernel_cover[3];
	enum spp_pattern_class cls;
	struct spp_granularity gran[SPP_NGRAN];
	enum spp_layer_zero layer_zero;
	enum spp_provenance prov;
	double prov_low_share;  /* in_band / survivors; NAN when not counted */
	double prov_min_ratio;  /* min_abs / scale; NAN when not counted */
	char prov_reason[128];   /* why not judged, or unclear */
	int prov_pooled;        /* the survivors count towards the model's verdict */
	struct spp_storage storage[SPP_ST_COUNT];
	/*
	 * 1 when the layer's dtype has no zero test (ggml block types other
	 * than Q8_0 / Q4_0): only numel and the GEMM shape are known, every
	 * other figure is unknown (reported null) and no kernel runs.
	 * Zero-initialised structs are analysed layers.
	 */
	int unsupported;
	char reason[128];  /* why, when unsupported */
};

/*
 * The granularity levels, the layer-zero state and the provenance verdict
 * of out (its numel, sparsity and counts set) from c (static_levels.c).
 */
void spp_static_derive_levels(const struct spp_static_counts *c, struct spp_layer_static *out);

/* Derive every figure of DESIGN section 3 from counts; pure, no failure. */
void spp_static_derive(const struct spp_static_counts *c, enum spp_dtype dtype,
		       int64_t n, struct spp_layer_static *out);

#endif
