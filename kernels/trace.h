/*
 * Trace points of the portable CPU kernels, and each format's replay
 * hooks, for the cache simulator (counters/sim.h).
 *
 * The kernel sources in kernels/cpu/ are compiled twice: once as they are
 * (the timed build, where these macros are nothing and no trace code
 * exists), and once with -DSPP_TRACE (counters/meson.build), where every
 * trace point reports one access to the simulator and the symbols of the
 * second copy are renamed, so that both copies link into one library:
 * an entry SPP_CPU_OPS(<key>) is spp_cpu_<key> in the first copy and
 * spp_trace_<key> in the second, and the OpenMP driver cpu_run_parts
 * becomes spp_trace_run_parts (counters/sim_replay.c), which runs the
 * parts one after the other on the calling thread in a fixed order, each
 * on its own simulated core.
 *
 * A trace point sits at loop level: SPP_TRACE_LOAD(p, bytes) before a loop
 * that reads bytes contiguous bytes from p (a 64-column slice of an X row
 * is one trace point, not 64), in the order the kernel touches them.
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

/* One part of a kernel: part p of w on the given ISA, epilogue e (kernels/cpu's drivers). */
typedef void (*spp_part_fn)(const struct spp_encoded *w, int part, const float *x,
			    float *y, int64_t n, enum spp_isa isa, const struct spp_epi *e);

/* One buffer of an encoding: bytes from p. */
struct spp_trace_buffer {
	const void *p;
	uint64_t bytes;
};

#define SPP_TRACE_MAX_BUFFERS 6

struct spp_trace_ops {
	const char *unit;       /* a row unit of the partition: "row", "block-row" */
	int n1_reordered;       /* at N = 1 the vector kernels read X in another order */
	/*
	 * The kernels sweep each K tile over every row of a part before the
	 * next: a sample of the rows would amortise each tile's X over fewer
	 * rows (measured: L2 misses 13x a full replay's at a third of the rows
	 * of a 4096 x 4096 csr at 90 %, N = 64), so such a replay is never sampled.
	 */
	int tiled;
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
};

/*
 * Defined by the simulator (counters/sim_replay.c), called by the traced
 * copies: one access by the calling thread (a no-op when no simulator
 * listens), and the driver that runs the parts in turn.
 */
void spp_trace_access(const void *p, size_t bytes, int store);
void spp_trace_run_parts(const struct spp_encoded *w, spp_part_fn fn, const float *x,
			 float *y, int64_t n, const struct spp_exec *ex);

#ifdef SPP_TRACE
#define SPP_TRACE_LOAD(p, bytes) spp_trace_access((p), (size_t)(bytes), 0)
#define SPP_TRACE_STORE(p, bytes) spp_trace_access((p), (size_t)(bytes), 1)
#define SPP_CPU_OPS(key) spp_trace_##key
#define cpu_run_parts spp_trace_run_parts
#else
#define SPP_TRACE_LOAD(p, bytes) ((void)0)
#define SPP_TRACE_STORE(p, bytes) ((void)0)
#define SPP_CPU_OPS(key) spp_cpu_##key
#endif

#endif
