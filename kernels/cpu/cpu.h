/*
 * Internal to kernels/cpu: the buffers of each CPU format, the work
 * partition shared by all of them, the vector kernels each format
 * exports from its per-ISA files (csr_avx512.c, ...; simd.h) and the ISA
 * dispatch that picks among them.
 *
 * Every format keeps its fp32 values and its indices in buffers it owns
 * (base/buffer.h: zero-filled and padded by SPP_BUFFER_PAD bytes so that
 * a vector load that runs a little past the last element stays in bounds).
 * The partition is computed at encode time: part p covers the units (rows,
 * block rows or non-zeros) [lo[p], lo[p+1]); a part may be empty.
 */
#ifndef SPP_KERNELS_CPU_CPU_H
#define SPP_KERNELS_CPU_CPU_H

#include <stdint.h>
#include <string.h>

#include "kernels/kernels.h"
#include "kernels/trace.h"

#if defined(__x86_64__) && (defined(__GNUC__) || defined(__clang__))
#define CPU_X86 1
#define CPU_AVX512_SET "avx512f,avx512bw,avx512vl,avx512dq,fma,popcnt,bmi,bmi2"
#define CPU_AVX512 __attribute__((target(CPU_AVX512_SET)))
/* the AVX-512 set with AVX512_VPOPCNTDQ, for a kernel run only where spp_expand_detect() allows */
#define CPU_AVX512_VPOPCNT __attribute__((target(CPU_AVX512_SET ",avx512vpopcntdq")))
#define CPU_AVX2 __attribute__((target("avx2,fma,popcnt,bmi,bmi2")))
#else
#define CPU_X86 0
#endif

/*
 * A format's implementations by ISA (spp_format_ops.part): the portable
 * kernel and, where this build has vector code, kern_avx2 and kern_avx512.
 *   .part = CPU_PARTS(csr_part_c, cpu_csr_part),
 */
#if CPU_X86
#define CPU_PARTS(portable, kern)                                              \
	{[SPP_ISA_PORTABLE] = (portable), [SPP_ISA_AVX2] = kern##_avx2,       \
	 [SPP_ISA_AVX512] = kern##_avx512}
#else
#define CPU_PARTS(portable, kern) {[SPP_ISA_PORTABLE] = (portable)}
#endif

/* Part p's units [*u0, *u1) of a partition lo; 0 when the part is empty (it has nothing to do). */
static inline int cpu_part_range(const int64_t *lo, int p, int64_t *u0, int64_t *u1)
{
	*u0 = lo[p];
	*u1 = lo[p + 1];
	return *u0 < *u1;
}

/*
 * Split `units` units whose cumulative cost is cum[0..units] (cum[0] == 0)
 * into `parts` consecutive ranges of about equal cost: lo[0..parts].
 */
void cpu_partition(const int64_t *cum, int64_t units, int parts, int64_t *lo);

/* CLOCK_MONOTONIC in ns. */
double cpu_now_ns(void);

/*
 * K-tile width (columns) for a matrix of the given density run at N = n,
 * so that the rows of X one tile touches (256 bytes each for a 64-column
 * chunk) stay in L1 while a tile segment still holds enough non-zeros to
 * amortise the load and store of the Y row accumulators. Returns k when
 * one tile fits, and at n = 1, where x is a single row that L1 holds and
 * each segment ends in a horizontal sum and a scalar store of y.
 */
int64_t cpu_tile_width(int64_t k, double density, int64_t n);

/*
 * Non-zeros of w's rows as a prefix: cum[0] = 0, cum[i + 1] = non-zeros of
 * rows 0..i (cum[m] is w's nnz), the cost each format partitions by.
 * malloc'd (the caller frees); NULL when out of memory.
 */
int64_t *cpu_row_cum(const struct spp_matrix *w);

/*
 * The rows of X a kernel reads on w (struct spp_encoded x_rows): the
 * columns in groups of `block` (1: each column alone) that hold a non-zero
 * of w, every column of such a group counted; 0 when out of memory (read
 * as every row).
 */
int64_t cpu_x_rows(const struct spp_matrix *w, int64_t block);

/* Fill out->nparts/part_nnz from a partition and per-unit nnz prefix. */
int cpu_set_parts(struct spp_encoded *out, int threads, const int64_t *lo,
		  const int64_t *nnz_cum, struct spp_error *err);

/* Release what every format shares: part_nnz and the impl struct. */
void cpu_release_common(struct spp_encoded *e);


/* The fused epilogue on one element of row `row` (e NULL or none: v); ReLU as the vector max. */
static inline float cpu_epi1(const struct spp_epi *e, int64_t row, float v)
{
	if (!e || e->kind == SPP_EPILOGUE_NONE)
		return v;
	v += e->bias[row];
	return e->kind == SPP_EPILOGUE_BIAS_RELU ? (v > 0 ? v : 0.0f) : v;
}

/*
 * The epilogue over rows [r0, r1) of Y (n columns) in place, by the part
 * that computed them as it ends: the portable kernels' fusion.
 */
void cpu_epi_rows(const struct spp_epi *e, float *y, int64_t r0, int64_t r1, int64_t n);

/*
 * The one driver of every CPU format (spp_format_ops.spmm): the format's
 * implementation for ex->isa (spp_format_part) on every part, on
 * ex->threads OpenMP threads, recording each thread's busy time when
 * ex->busy_ns is set. Returns 0. The traced copy is spp_trace_spmm.
 */
int cpu_spmm(const struct spp_encoded *w, const float *x, float *y, int64_t n,
	     const struct spp_exec *ex);

/* csr: K-tiled; values and columns in (tile, row) order. */
struct cpu_csr {
	int64_t tiles, tile_w;  /* tile t holds columns [t*tile_w, (t+1)*tile_w) */
	int32_t *ptr;           /* tiles*m + 1: segment (t, i) is [ptr[t*m+i], ptr[t*m+i+1]) */
	uint16_t *col;          /* nnz column indices relative to the tile's first */
	float *val;             /* nnz values */
	int64_t *lo;            /* nparts + 1 row boundaries */
};

/* coo: (row, col, val) triplets sorted by row then column. */
struct cpu_coo {
	int32_t *row, *col;
	float *val;
	int64_t *lo;            /* nparts + 1 boundaries in non-zeros, at row starts */
	int64_t *rlo;           /* the same boundaries in rows */
};

/* Part p's non-zeros [*z0, *z1) and rows [*r0, *r1); 0 when it has no rows. */
static inline int cpu_coo_range(const struct cpu_coo *c, int p, int64_t *z0, int64_t *z1,
				int64_t *r0, int64_t *r1)
{
	*z0 = c->lo[p];
	*z1 = c->lo[p + 1];
	return cpu_part_range(c->rlo, p, r0, r1);
}

/* bsrB: B x B blocks, row-major inside a block, zero-padded at the edges. */
struct cpu_bsr {
	int b;
	int64_t mb, kb;         /* block rows, block columns */
	int64_t nzb;
	int32_t *ptr;           /* mb + 1 */
	int32_t *bcol;          /* nzb block-column indices */
	float *val;             /* nzb * b * b */
	int64_t *lo;            /* nparts + 1 block-row boundaries */
};

/* bitmask: one bit per element (row stride ceil(k/8) bytes, bit c%8 of byte c/8). */
struct cpu_bitmask {
	int64_t stride;         /* bytes per mask row */
	uint8_t *mask;
	int32_t *ptr;           /* m + 1 offsets of each row's values */
	float *val;             /* nnz values in row-major order */
	int64_t *lo;            /* nparts + 1 row boundaries */
};

/*
 * nmN_M: each row is ceil(k/M) groups of M columns; a group keeps exactly N
 * (value, position) slots, padded with value 0 at position 0. Along K the
 * groups form tiles of tile_g groups, and the slots are stored tile-major:
 * the segment of row i in the tile of groups [g0, g1) holds (g1-g0)*N
 * slots from storage slot cpu_nm_seg(s, i, g0) = (m*g0 + i*(g1-g0))*N, in
 * group order; value val[S], column (g0 + (S - seg)/N)*M + position.
 * Positions are `bits` = ceil(log2 M) bits each, packed little-endian:
 * bits [S*bits, S*bits + bits) of the byte stream pos.
 */
struct cpu_nm {
	int keep, group, bits;  /* N, M, bits per position */
	int64_t m;              /* rows */
	int64_t groups;         /* per row */
	int64_t tile_g;         /* groups per K tile */
	float *val;
	uint8_t *pos;
	int64_t *lo;            /* nparts + 1 row boundaries */
};

/* End of the K tile that starts at group g0. */
static inline int64_t cpu_nm_tile_end(const struct cpu_nm *s, int64_t g0)
{
	return g0 + s->tile_g < s->groups ? g0 + s->tile_g : s->groups;
}

/* First storage slot of row i's segment in the tile that starts at group g0. */
static inline int64_t cpu_nm_seg(const struct cpu_nm *s, int64_t i, int64_t g0)
{
	return (s->m * g0 + i * (cpu_nm_tile_end(s, g0) - g0)) * s->keep;
}

/* Bits per position for groups of M: ceil(log2 M), at least 1 (a constant for a constant M). */
static inline int cpu_nm_bits(int group)
{
	return group > 2 ? 32 - __builtin_clz((unsigned)group - 1) : 1;
}

/*
 * The positions from storage slot S on, slot S's in the lowest bits, with
 * bits = s->bits (passed so that a kernel can give it as a constant):
 * 8 bytes read (the buffers are padded), whole positions in the low 57
 * bits. Untraced: a kernel traces the 8 bytes where it reads them.
 */
static inline uint64_t cpu_nm_pos_run(const struct cpu_nm *s, int64_t S, int bits)
{
	int64_t bit = S * bits;
	uint64_t v;

	memcpy(&v, s->pos + (bit >> 3), 8);
	return v >> (bit & 7);
}

/* The trace of cpu_nm_pos_run's 8-byte read at slot S (kernels trace where they read). */
#define CPU_NM_TRACE_POS(s, S, bits) SPP_TRACE_LOAD((s)->pos + ((S) * (bits) >> 3), 8)

/* Position of storage slot S. */
static inline unsigned cpu_nm_pos(const struct cpu_nm *s, int64_t S)
{
	return (unsigned)cpu_nm_pos_run(s, S, s->bits) & ((1u << s->bits) - 1);
}

/*
 * One segment times x, slot by slot: the first `len` slots from storage
 * slot S0, x pointing at the segment's first column; the vector kernels'
 * N = 1 for any N:M, inlined into each so that it compiles for the
 * caller's ISA.
 */
static inline __attribute__((always_inline)) float cpu_nm_seg_dot(const struct cpu_nm *s, int64_t S0,
								    int64_t len, const float *x)
{
	float acc = 0;

	for (int64_t p = 0; p < len; p++) {
		SPP_TRACE_LOAD(&s->val[S0 + p], 4);
		CPU_NM_TRACE_POS(s, S0 + p, s->bits);
		SPP_TRACE_LOAD(&x[p / s->keep * s->group + cpu_nm_pos(s, S0 + p)], 4);
		acc += s->val[S0 + p] * x[p / s->keep * s->group + cpu_nm_pos(s, S0 + p)];
	}
	return acc;
}

#if CPU_X86
/* The vector implementations (spp_part_fn), the AVX2 and AVX-512 builds of each format's body. */
#define CPU_DECLARE_PARTS(kern)                                            \
	void kern##_avx512(const struct spp_encoded *w, int p, const float *x, float *y,    \
			   int64_t n, const struct spp_epi *e);                         \
	void kern##_avx2(const struct spp_encoded *w, int p, const float *x, float *y,      \
			 int64_t n, const struct spp_epi *e);
CPU_DECLARE_PARTS(cpu_csr_part)
CPU_DECLARE_PARTS(cpu_coo_part)
CPU_DECLARE_PARTS(cpu_bsr_part)
CPU_DECLARE_PARTS(cpu_bitmask_part)
CPU_DECLARE_PARTS(cpu_nm_part)
#undef CPU_DECLARE_PARTS
/* spprof's dense GEMV (gemv_body.h): y[r0..r1) = W[r0..r1, :] x, W row-major M x K. */
void cpu_gemv_rows_avx512(const float *w, int64_t k, int64_t r0, int64_t r1, const float *x,
			  float *y);
void cpu_gemv_rows_avx2(const float *w, int64_t k, int64_t r0, int64_t r1, const float *x,
			float *y);
/* csr_act on a csr encoding w: at n >= 2 skipping columns whose xnz flag is 0, at n = 1 zeros of x. */
void cpu_csr_act_part_avx512(const struct spp_encoded *w, const uint8_t *xnz, int64_t r0,
			     int64_t r1, const float *x, float *y, int64_t n);
#endif

/* The formats' entries (SPP_CPU_FORMAT_LIST; spp_trace_<key> in the traced copy). */
#define CPU_DECLARE_OPS(id, key) extern const struct spp_format_ops SPP_CPU_OPS(key);
SPP_CPU_FORMAT_LIST(CPU_DECLARE_OPS)
#undef CPU_DECLARE_OPS

extern const struct spp_format_ops spp_cpu_csc, spp_cpu_csr_act, spp_cpu_csc_act;

/*
 * For a format's replay hook narrow (kernels/trace.h): a copy of the
 * partition lo[0..nparts] in scratch with part p narrowed to [u0, u1);
 * returns scratch.
 */
int64_t *cpu_narrow_lo(const int64_t *lo, int nparts, int p, int64_t u0, int64_t u1,
		       int64_t *scratch);

#endif
