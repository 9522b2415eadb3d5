/*
 * The trace-driven cache simulator behind the `sim` counter backend.
 *
 * Model: a set-associative LRU L1D and (optional) L2 per simulated core,
 * one shared LLC; every level write-allocates, is non-inclusive (a miss
 * fills each level it passed, evictions are not propagated) and holds
 * lines of one size. An access of `bytes` bytes at p touches every line it
 * overlaps, one line access each; so `accesses` count cache lines touched
 * by the kernels' loop-level trace points, not load instructions, and the
 * miss counts compare with an instruction-level simulator's (cachegrind)
 * while access counts do not. A miss in the LLC is one DRAM line fill.
 *
 * Determinism: addresses are mapped into a canonical space before they
 * index a set: every buffer the replay registers (the encoded W's
 * buffers, X, Y) starts on its own 64 GiB boundary there, so the counts
 * do not depend on where malloc or ASLR put the buffers. The same input
 * gives the same counts on any machine.
 *
 * Threads: the replay runs each thread's part of the partition in turn,
 * part p on simulated core p mod threads, each core with its own L1D and
 * L2 and all sharing the LLC, on the calling thread only: the order of
 * accesses is fixed (whole parts one after the other), so the shared LLC
 * sees no interleaving between cores. This is the price of determinism;
 * it understates LLC contention between threads.
 *
 * Sampling: the line accesses a whole replay would simulate are
 * estimated from a pilot replay of the first 16 row units of the first
 * part that has any (then the simulator is reset), scaled to all the row
 * units and to the passes over each (two for a warm replay, three per
 * warm sampled tile). When that is more than the budget,
 * it simulates row blocks (64 row units of the format: rows, or block rows
 * for bsr) at a fixed stride, every S-th block of each part starting with
 * the first, and scales the counts by units / simulated units; `sampled`
 * is the fraction simulated. A K-tiled encoding (csr and nm at N >= 2)
 * is sampled by whole K tiles instead, every S-th, scaled by columns: a
 * sample of its rows overstates the misses of the level that holds a
 * tile's X, which is reused across all the rows. A sampled tile t is
 * counted after warming passes that leave the caches as the full run
 * would: tile t - 1 before it (cold), and tile t then tile t - 1 (warm,
 * so that tile t's own W and X are in the levels that hold the layer).
 * Where one tile in S is still more than the budget, row blocks of each
 * tile are sampled, each counted after the blocks before it in the tile
 * (the tile's X as they leave it) and, warm, after the block itself.
 * A warm sample's first pass over its own data fills only the LLC
 * (spp_sim_llc_only): a full warm replay finds a layer that fits the LLC
 * there, not in L1 or L2, where a small sample would otherwise stay.
 */
#ifndef SPP_COUNTERS_SIM_H
#define SPP_COUNTERS_SIM_H

#include <stddef.h>
#include <stdint.h>

#include "counters/counters.h"
#include "kernels/kernels.h"
#include "base/error.h"


struct spp_sim_level {
	uint64_t size;          /* bytes per instance; 0: the level is absent (L2 only) */
	int ways;
};

struct spp_sim_geometry {
	struct spp_sim_level l1, l2, llc;
	int line;               /* bytes, a power of two */
};

/*
 * Parse "l1=48K/12,l2=1M/16,llc=32M/16,line=64" (sizes in bytes with an
 * optional K, M or G suffix, then /ways; l2=0 or no l2 item: no L2; line
 * defaults to 64). l1 and llc are required; each level must hold a whole
 * number of sets (size divisible by ways x line). Returns 0 or SPP_E_USAGE
 * naming the faulty item.
 */
int spp_sim_geometry_parse(const char *spec, struct spp_sim_geometry *g,
			   struct spp_error *err);

/*
 * The hierarchy assumed where the OS reports none: 48K/12, 2M/16, 32M/16,
 * line 64 (profiler's spp_sim_geometry_from_machine starts from it).
 */
void spp_sim_geometry_default(struct spp_sim_geometry *g);

/* "l1=48K/12,l2=2M/16,llc=32M/16,line=64": parseable by spp_sim_geometry_parse. */
void spp_sim_geometry_format(const struct spp_sim_geometry *g, char *buf, size_t n);

struct spp_sim;

/* Per core and level counts of a simulator. */
struct spp_sim_counts {
	uint64_t l1_acc, l1_miss, l2_acc, l2_miss, llc_acc, llc_miss;
};

/*
 * A simulator of geometry g with `cores` cores (1..SPP_COUNTERS_MAX_THREADS),
 * every cache empty. Returns 0, SPP_E_USAGE (bad geometry) or SPP_E_NOMEM.
 */
int spp_sim_create(const struct spp_sim_geometry *g, int cores, struct spp_sim **out,
		   struct spp_error *err);
void spp_sim_destroy(struct spp_sim *s);

/* One access of `bytes` (>= 1) bytes at address addr by core `core`. */
void spp_sim_access(struct spp_sim *s, int core, uint64_t addr, uint64_t bytes, int store);

/* 1 when s models geometry g with `cores` cores. */
int spp_sim_same(const struct spp_sim *s, const struct spp_sim_geometry *g, int cores);

/* Every cache empty and every count 0 again, as spp_sim_create left it. */
void spp_sim_reset(struct spp_sim *s);

/*
 * Count the accesses that follow (on: the default), or only let them
 * update the caches (off: a warming pass).
 */
void spp_sim_counting(struct spp_sim *s, int on);

/*
 * While on, an access only fills the LLC, uncounted: a sampled warm
 * replay's first pass, which leaves the sample's data where the timed
 * runs find the layer's (the LLC, when it fits) and not in L1 or L2,
 * where a small sample would stay.
 */
void spp_sim_llc_only(struct spp_sim *s, int on);

/* Counts of core c, or the sum over cores when c < 0. */
void spp_sim_counts(const struct spp_sim *s, int c, struct spp_sim_counts *out);

/*
 * The counts of s less base (per core c at base[c + 1], all at base[0];
 * NULL: none) times scale, as a counter sample of `threads` cores (events
 * the geometry g has no level for: NAN).
 */
void spp_sim_sample(struct spp_counter_sample *smp, const struct spp_sim *s,
		    const struct spp_sim_geometry *g, int threads, double scale,
		    const struct spp_sim_counts *base);

/* Cores of s. */
int spp_sim_cores(const struct spp_sim *s);

/* Line accesses simulated so far (all cores). */
uint64_t spp_sim_total_accesses(const struct spp_sim *s);

/*
 * Replay the traced kernel of enc's format for `isa` (the ISA the timed
 * runs used; the best this CPU has when it has not that one) on x
 * (K x n) into y (M x n, overwritten) through a fresh simulator of
 * geometry g with `threads` cores, and fill f (source "sim"). warm: the state the timed
 * runs are in (one replay fills the caches, the second is counted; the
 * budget shared by the two); else a cold run from empty caches (--cold,
 * and cachegrind's view). budget: line accesses to simulate before
 * sampling (0: SPP_SIM_DEFAULT_BUDGET). Returns 0, SPP_E_UNSUPPORTED (a
 * format with no traced kernel, such as a peer) or SPP_E_NOMEM.
 */
#define SPP_SIM_DEFAULT_BUDGET ((uint64_t)40 * 1000 * 1000)

/*
 * The replay speed analyze budgets a layer's replays at, in line accesses
 * a second: a fixed figure, not one measured in the run, so that the
 * sample chosen (and so every count) is the same in two runs of the same
 * layer. `spprof info` measured 2.3e7 to 3.0e7 on a 2-vCPU AMD EPYC (Zen 4,
 * AVX-512 kernels; 2026-12-07); a slower machine's replays take a larger
 * share of the time budget than SIM_SHARE (profiler/analyze.c).
 */
#define SPP_SIM_NOMINAL_RATE 2.5e7
int spp_sim_replay(const struct spp_sim_geometry *g, int threads, uint64_t budget, int warm,
		   enum spp_isa isa, const struct spp_encoded *enc, const float *x, float *y, int64_t n,
		   struct spp_cache_figures *f, struct spp_error *err);

/* spp_sim_replay, sampled 1 in `stride` units when stride > 0 whatever the budget (sim_check.c). */
int spp_sim_replay_stride(const struct spp_sim_geometry *g, int threads, uint64_t budget, int warm,
			  enum spp_isa isa, const struct spp_encoded *enc, const float *x, float *y,
			  int64_t n, int64_t stride, struct spp_cache_figures *f, struct spp_error *err);

/*
 * Line accesses the simulator replays per second here (a warm replay of
 * csr at 90 %, 512 x 2048, N = 32, on isa: about 20 ms); 0 when it could
 * not run. `spprof info` prints it; analyze budgets its replays at the
 * fixed SPP_SIM_NOMINAL_RATE instead, so that its counts repeat.
 */
double spp_sim_rate(const struct spp_sim_geometry *g, enum spp_isa isa);

/*
 * The sampling error, measured once against full replays (spprof info):
 * csr at 90 %, 2048 x 4096, N = 64, sampled 1 in 8 (whole K tiles) and 1
 * in 64 (row blocks of each tile), and bitmask 1 in 64 (row blocks), warm,
 * one thread; err[] is sampled / full - 1 of the L1D, L2 and LLC misses
 * (NAN where the full replay has none), how the sampled replay's note.
 */
#define SPP_SIM_SAMPLING_CASES 3

struct spp_sim_sampling_case {
	char what[64], how[256];
	double sampled, err[3], speedup;
};

struct spp_sim_sampling {
	struct spp_sim_sampling_case cases[SPP_SIM_SAMPLING_CASES];
	int ncases;
	double rate;            /* line accesses per second of the full replays */
};

int spp_sim_check_sampling(const struct spp_sim_geometry *g, enum spp_isa isa,
			   struct spp_sim_sampling *out, struct spp_error *err);

/* The traced copy of a CPU format (kernels/trace.h); NULL when none. */
const struct spp_format_ops *spp_trace_format_find(const char *key);

/*
 * Route the calling thread's trace points to core `core` of s (NULL: drop
 * them), addresses taken as they are (no canonical mapping): for tests
 * that drive a traced kernel directly.
 */
void spp_sim_trace_attach(struct spp_sim *s, int core);

/* Drop the calling thread's trace points if they go to s (s is being destroyed). */
void spp_sim_trace_detach(const struct spp_sim *s);

extern const struct spp_counter_backend spp_counters_sim;

#endif
