/*
 * Trace points of the portable CPU kernels, for the cache simulator
 * (counters/sim.h).
 *
 * The kernel sources in kernels/cpu/ are compiled twice: once as they are
 * (the timed build, where these macros are nothing and no trace code
 * exists), and once with -DSPP_TRACE (counters/meson.build), where every
 * trace point reports one access to the simulator and the symbols of the
 * second copy are renamed, so that both copies link into one library:
 * spp_cpu_<format> becomes spp_trace_<format>, and the OpenMP driver
 * cpu_run_parts becomes spp_trace_run_parts (counters/sim_replay.c),
 * which runs the parts one after the other on the calling thread in a
 * fixed order, each on its own simulated core.
 *
 * A trace point sits at loop level: SPP_TRACE_LOAD(p, bytes) before a loop
 * that reads bytes contiguous bytes from p (a 64-column slice of an X row
 * is one trace point, not 64), in the order the kernel touches them.
 * Include this header before kernels/cpu/cpu.h so that the renaming
 * reaches its declarations.
 */
#ifndef SPP_KERNELS_TRACE_H
#define SPP_KERNELS_TRACE_H

#ifdef SPP_TRACE
#include <stddef.h>

/* One access by the calling thread; a no-op when no simulator listens. */
void spp_trace_access(const void *p, size_t bytes, int store);

#define SPP_TRACE_LOAD(p, bytes) spp_trace_access((p), (size_t)(bytes), 0)
#define SPP_TRACE_STORE(p, bytes) spp_trace_access((p), (size_t)(bytes), 1)

#define spp_cpu_csr spp_trace_csr
#define spp_cpu_coo spp_trace_coo
#define spp_cpu_bsr4 spp_trace_bsr4
#define spp_cpu_bsr8 spp_trace_bsr8
#define spp_cpu_bsr16 spp_trace_bsr16
#define spp_cpu_bitmask spp_trace_bitmask
#define spp_cpu_nm1_4 spp_trace_nm1_4
#define spp_cpu_nm2_4 spp_trace_nm2_4
#define spp_cpu_nm4_8 spp_trace_nm4_8
#define cpu_run_parts spp_trace_run_parts
#else
#define SPP_TRACE_LOAD(p, bytes) ((void)0)
#define SPP_TRACE_STORE(p, bytes) ((void)0)
#endif

#endif
