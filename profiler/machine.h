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
#include "kernels/kernels.h"
#include "profiler/error.h"

#define SPP_MAX_CACHES 8

struct spp_cache_level {
	int level;            /* 1, 2, 3 */
	char type[16];        /* "data", "unified", "instruction" */
	uint64_t size;        /* bytes, per instance */
	int ways;             /* 0 when unknown */
	int line;             /* bytes; 0 when unknown */
	int shared_by;        /* logical CPUs sharing one instance; 0 unknown */
};

/* Calibrated peaks for one thread count; 0 means not measured. */
struct spp_calibration {
	int threads;
	double read_gbs;      /* STREAM-like read (sum) bandwidth */
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
 * Store calibrations for this machine and cpu in the cache, replacing the
 * entries of the same thread counts. Returns 0 or SPP_E_OUTPUT.
 */
int spp_calibration_store(const char *cpu, const struct spp_calibration *cal,
			  int count, struct spp_error *err);

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

/* Load the cached calibration for this CPU and thread count; 0 or -1. */
int spp_calibration_load(const char *cpu, int threads, struct spp_calibration *out);

#endif
