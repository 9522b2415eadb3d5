/*
 * The machine a profile runs on: CPU, vector ISA, caches, threads, the dense
 * BLAS, and the calibrated peak bandwidth and FLOP rate (spprof calibrate).
 * Everything a report's "machine" block holds, gathered once per run.
 */
#ifndef SPP_PROFILER_MACHINE_H
#define SPP_PROFILER_MACHINE_H

#include <stddef.h>
#include <stdint.h>

#include "counters/counters.h"
#include "counters/sim.h"
#include "kernels/cuda/device.h"
#include "kernels/kernels.h"
#include "base/error.h"

#define SPP_MAX_CACHES 8

struct spp_cache_level {
	int level;            /* 1, 2, 3 */
	char type[16];        /* "data", "unified", "instruction" */
	uint64_t size;        /* bytes, per instance */
	int ways;             /* 0 when unknown */
	int line;             /* bytes; 0 when unknown */
	int shared_by;        /* logical CPUs sharing one instance; 0 unknown */
};

/*
 * The memory levels a working set can fit in, for bw_util (DESIGN section
 * 4): a run's bandwidth is compared with the read bandwidth of the
 * smallest level that holds its working set.
 */
enum spp_bw_level { SPP_BW_L1, SPP_BW_L2, SPP_BW_LLC, SPP_BW_DRAM, SPP_BW_LEVELS };

/* "L1", "L2", "LLC", "DRAM". */
const char *spp_bw_level_name(enum spp_bw_level l);

/* Calibrated peaks for one thread count; 0 means not measured. */
struct spp_calibration {
	int threads;
	double read_gbs;      /* STREAM-like read (sum) bandwidth from DRAM (= level_gbs[DRAM]) */
	/*
	 * Read bandwidth of each level, measured on the smallest working set
	 * counted in it (just above the level below fills), so that no run
	 * whose working set the level holds can read faster: level_bytes is
	 * the probe's working set, all threads together.
	 */
	double level_gbs[SPP_BW_LEVELS];
	double level_bytes[SPP_BW_LEVELS];
	double triad_gbs;     /* STREAM triad a = b + s*c, counting 3 arrays */
	double peak_gflops;   /* fp32 FMA peak of the widest ISA */
	char isa[16];         /* ISA the FMA probe used */
	char when[32];        /* ISO-8601 UTC time of the measurement */
};

struct spp_machine {
	char cpu[128];                 /* model name; "" when unknown */
	char vendor[32];
	enum spp_isa isa;              /* spp_isa_detect() */
	int logical_cpus;              /* online CPUs */
	int threads;                   /* threads this run uses */
	struct spp_cache_level caches[SPP_MAX_CACHES];
	int ncaches;
	char cache_note[160];          /* why cache sizes look wrong, or "" */
	char cache_source[16];         /* "sysfs" or "cpuid" */
	struct spp_blas_info blas;
	int have_calibration;          /* cal holds a cached measurement for `threads` */
	struct spp_calibration cal;
	char hypervisor[32];           /* from cpuid; "" on bare metal */
	/* each counter backend built in: does it count here, what, why not */
	struct spp_counter_avail counters[SPP_COUNTERS_MAX_BACKENDS];
	int ncounters;
	/* the simulator's hierarchy from caches (spp_sim_geometry_from_machine) */
	struct spp_sim_geometry sim;
	char sim_note[256];            /* what it capped or assumed, or "" */
	struct spp_cuda_probe gpus;    /* the CUDA devices, or why there are none */
};

/*
 * Describe this machine for a run on `threads` threads; loads the cached
 * calibration for that thread count when there is one (no measuring here).
 * Never fails: what cannot be read stays empty / zero and is reported null.
 */
void spp_machine_describe(struct spp_machine *m, int threads);

/* Folder of the calibration cache: $XDG_CACHE_HOME/spprof or ~/.cache/spprof. */
int spp_calibration_path(char *buf, size_t len);

/*
 * Measure the peaks for 1..max_threads threads (spp_calibration per count,
 * out[0..max_threads-1]) and store them in the cache, keyed by CPU model
 * and thread count. Returns 0, or SPP_E_NOMEM / SPP_E_OUTPUT.
 */
int spp_calibrate(int max_threads, double seconds_per_probe,
		  struct spp_calibration *out, struct spp_error *err);

/*
 * The same probes on machine m (spp_machine_describe) for the `count`
 * thread counts listed (out[i] for threads[i]), stored nowhere: a
 * benchmark's yardstick measured in its own run. Returns 0 or SPP_E_NOMEM.
 */
int spp_calibrate_measure(const struct spp_machine *m, const int *threads, int count,
			  double seconds_per_probe, struct spp_calibration *out,
			  struct spp_error *err);

/*
 * Store calibrations for this machine and cpu in the cache, replacing the
 * entries of the same thread counts. Returns 0 or SPP_E_OUTPUT.
 */
int spp_calibration_store(const char *cpu, const struct spp_calibration *cal,
			  int count, struct spp_error *err);

/*
 * Cache levels from AMD's leaves 0x80000005 (ecx5: L1D) and 0x80000006
 * (ecx6: L2, edx6: L3), which every AMD CPU answers, appended to m->caches
 * for a hypervisor that passes no cache topology (leaf 0x8000001d empty).
 * They say nothing of sharing: L1 and L2 are taken as a core's own and the
 * L3 as shared by every CPU the OS shows (m->logical_cpus), the least it can
 * be; an associativity left to leaf 0x8000001d (code 9) is 0, unknown.
 */
void spp_machine_caches_amd_legacy(struct spp_machine *m, unsigned ecx5, unsigned ecx6, unsigned edx6);

/*
 * Check a cache hierarchy for what no real CPU has (sizes that do not
 * divide into ways x lines, a level smaller than the one below it, more
 * than 32 MiB of last-level cache per core); fills m->cache_note.
 */
void spp_machine_check_caches(struct spp_machine *m);

/*
 * Size of the largest cache, believable part only: a level reported larger
 * than 32 MiB per sharing CPU (see spp_machine_check_caches) counts as
 * 32 MiB per CPU. 0 when nothing is known.
 */
uint64_t spp_machine_largest_cache(const struct spp_machine *m);

/*
 * Capacity in bytes of each level for a run on `threads` threads, all
 * threads together (private levels count once per thread): L1 data, L2,
 * the believable LLC (spp_machine_largest_cache), DRAM unbounded
 * (UINT64_MAX). A level the machine does not report is 0.
 */
void spp_bw_capacities(const struct spp_machine *m, int threads, uint64_t cap[SPP_BW_LEVELS]);

/*
 * The level a working set of `bytes` fits in (the smallest whose capacity
 * holds it; DRAM when cold, since every run starts with empty caches).
 */
enum spp_bw_level spp_bw_level_of(const uint64_t cap[SPP_BW_LEVELS], double bytes, int cold);

/* What bw_util is taken against: each level's capacity and read bandwidth, and the FMA peak. */
struct spp_bw_model {
	uint64_t cap[SPP_BW_LEVELS];  /* spp_bw_capacities */
	double gbs[SPP_BW_LEVELS];    /* calibrated level_gbs; 0 unknown */
	int cold;                     /* runs start with empty caches: DRAM */
	double peak_gflops;           /* calibrated fp32 FMA peak of those threads; 0 unknown */
};

/*
 * The model of machine m's calibration for `threads` threads (every gbs 0
 * without one, so bw_util stays null).
 */
void spp_bw_model_init(struct spp_bw_model *b, const struct spp_machine *m, int threads, int cold);

/*
 * The machine's hierarchy: L1D, L2 and the last level from m->caches, the
 * LLC capped at its believable size (spp_machine_largest_cache: a VM's
 * pass-through 480 MiB L3 becomes 32 MiB per sharing CPU); levels the OS
 * does not report take 48K/12, 2M/16, 32M/16, line 64. note (may be NULL)
 * says what was capped or assumed, "" otherwise.
 */
void spp_sim_geometry_from_machine(const struct spp_machine *m, struct spp_sim_geometry *g,
				   char *note, size_t note_n);

/* Load the cached calibration for this CPU and thread count; 0 or -1. */
int spp_calibration_load(const char *cpu, int threads, struct spp_calibration *out);

#endif
