/*
 * Trace points of the CPU kernels, and each format's replay hooks, for
 * the cache simulator (counters/sim.h).
 *
 * The kernel sources in kernels/cpu/ are compiled twice: once as they are
 * (the timed build, where these macros are nothing and no trace code
 * exists), and once with -DSPP_TRACE (counters/meson.build), where every
 * trace point reports one access to the simulator and the symbols of the
 * second copy are renamed, so that both copies link into one library:
 * an entry SPP_CPU_OPS(<key>) is spp_cpu_<key> in the first copy and
 * spp_trace_<key> in the second, a vector kernel cpu_<key>_part_<isa>
 * is spp_trace_<key>_part_<isa>, and the OpenMP driver cpu_spmm
 * becomes spp_trace_spmm (counters/sim_replay.c), which runs the
 * parts one after the other on the calling thread in a fixed order, each
 * on its own simulated core, on the ISA the timed runs used.
 *
 * Portable kernels: a trace point sits at loop level, SPP_TRACE_LOAD(p,
 * bytes) before a loop that reads bytes contiguous bytes from p (a
 * 64-column slice of an X row is one trace point, not 64), in the order
 * the kernel touches them.
 * Vector kernels (AVX2, AVX-512): a trace point per load or store
 * instruction on W, X and Y, with the bytes it touches: simd.h's
 * vocabulary traces its loads, stores and gathers itself (a masked access
 * the lines of its lanes, a gather each element), and the kernels trace
 * their scalar and raw-intrinsic accesses. Software prefetches are not
 * accesses (as cachegrind, which ignores them), nor are the kernels'
 * stack scratch arrays.
 *
 * The simulator knows no format's buffers: each entry's struct
 * spp_trace_ops (spp_format_ops.trace) tells it where the partition of
 * row units is, how to run part of a part (sampling), and which buffers
 * the encoding holds (their canonical addresses).
 */
#ifndef SPP_KERNELS_TRACE_H
#define SPP_KERNELS_TRACE_H

#include <stddef.h>
#include <stdint.h>

#include "kernels/kernels.h"

/* One buffer of an encoding: bytes from p. */
struct spp_trace_buffer {
	const void *p;
	uint64_t bytes;
};

#define SPP_TRACE_MAX_BUFFERS 6

struct spp_trace_ops {
	const char *unit;       /* a row unit of the partition: "row", "block-row" */
	size_t impl_size;       /* bytes of the encoding's impl struct */
	/* The partition in row units: part p covers [lo[p], lo[p + 1]). */
	const int64_t *(*part_lo)(const struct spp_encoded *w);
	/*
	 * Narrow part p of a copy of w's impl struct (impl, impl_size bytes) to
	 * the row units [u0, u1): its partition arrays are pointed at scratch[0]
	 * and scratch[1] (w->nparts + 1 entries each), the rest left as it is.
	 */
	void (*narrow)(const struct spp_encoded *w, void *impl, int p, int64_t u0, int64_t u1,
		       int64_t *const scratch[2]);
	/* The encoding's buffers, at most SPP_TRACE_MAX_BUFFERS; returns how many. */
	int (*buffers)(const struct spp_encoded *w, struct spp_trace_buffer *out);
	/*
	 * A K-tiled format (csr and nm at N >= 2): the kernels sweep each K
	 * tile over every row of a part before the next, so a sample of the
	 * rows would amortise each tile's X over fewer rows (measured: L2
	 * misses 13x a full replay's at a third of the rows of a 4096 x 4096
	 * csr at 90 %, N = 64); such a replay samples whole tiles instead.
	 * tiles: how many (NULL: untiled). tile_view: a copy of w's impl
	 * struct (impl) narrowed to tile t alone, a one-tile encoding of the
	 * columns [*k0, *k0 + *kw), run on X from its row *k0; returns 0, or
	 * -1 when the tile cannot stand alone (then the replay is whole).
	 */
	int64_t (*tiles)(const struct spp_encoded *w);
	int (*tile_view)(const struct spp_encoded *w, void *impl, int64_t t, int64_t *k0,
			 int64_t *kw);
};

/*
 * Defined by the simulator (counters/sim_replay.c), called by the traced
 * copies: one access by the calling thread (a no-op when no simulator
 * listens), and the driver that runs the parts in turn.
 */
void spp_trace_access(const void *p, size_t bytes, int store);
/*
 * The vector kernels' masked and gathered accesses: the lines of the
 * lanes set in `lanes` (bit l: lane l), lane l at p + l * esize, one
 * access per distinct line in lane order; a gather's lane l at
 * base + idx[l] * esize, one access per lane (as the hardware and
 * cachegrind see a gather: an element load each).
 */
void spp_trace_masked(const void *p, size_t esize, uint64_t lanes, int store);
void spp_trace_gather(const void *base, const int32_t *idx, int n, uint64_t lanes, size_t esize);
int spp_trace_spmm(const struct spp_encoded *w, const float *x, float *y, int64_t n,
		   const struct spp_exec *ex);

#ifdef SPP_TRACE
#define SPP_TRACE_LOAD(p, bytes) spp_trace_access((p), (size_t)(bytes), 0)
#define SPP_TRACE_STORE(p, bytes) spp_trace_access((p), (size_t)(bytes), 1)
#define SPP_TRACE_MASKED(p, esize, lanes, store) \
	spp_trace_masked((p), (size_t)(esize), (uint64_t)(lanes), (store))
#define SPP_CPU_OPS(key) spp_trace_##key
#define cpu_spmm spp_trace_spmm
/* the traced copies of the vector kernels (kernels/cpu/cpu.h) */
#define cpu_csr_part_avx512 spp_trace_csr_part_avx512
#define cpu_csr_part_avx2 spp_trace_csr_part_avx2
#define cpu_coo_part_avx512 spp_trace_coo_part_avx512
#define cpu_coo_part_avx2 spp_trace_coo_part_avx2
#define cpu_bsr_part_avx512 spp_trace_bsr_part_avx512
#define cpu_bsr_part_avx2 spp_trace_bsr_part_avx2
#define cpu_bitmask_part_avx512 spp_trace_bitmask_part_avx512
#define cpu_bitmask_part_avx2 spp_trace_bitmask_part_avx2
#define cpu_nm_part_avx512 spp_trace_nm_part_avx512
#define cpu_nm_part_avx2 spp_trace_nm_part_avx2
#else
#define SPP_TRACE_LOAD(p, bytes) ((void)0)
#define SPP_TRACE_STORE(p, bytes) ((void)0)
#define SPP_TRACE_MASKED(p, esize, lanes, store) ((void)0)
#define SPP_CPU_OPS(key) spp_cpu_##key
#endif

#endif
