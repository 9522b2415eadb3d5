/*
 * Counters: cache misses, instructions and software events of a kernel
 * run, from one of several backends behind one interface (DESIGN sections
 * 4 and 6). Every figure carries the backend it came from (`source`);
 * what a backend cannot count stays NAN and is reported null, never 0.
 *
 *   papi  PAPI presets, one event set per OpenMP thread (PAPI_thread_init)
 *   perf  libpfm4 names -> perf_event_open, one fd per event per thread,
 *         scaled by time enabled / running when multiplexed
 *   sim   the trace-driven cache simulator (counters/sim.h): replays the
 *         portable kernels' accesses, deterministic
 *   none  timing only
 *
 * The GPU's counters (counters/cupti.h, CUPTI) follow the same lifecycle
 * with a launch in place of start / stop, outside this registry.
 *
 * The lifecycle is LIKWID's: probe (can it count here, and why not), open
 * (a session for `threads` OpenMP threads), start / stop (bracket exactly
 * the counted region; counts accumulate over start/stop pairs), read
 * (totals and per-thread figures so far), close. A session is opaque and
 * belongs to the caller between open and close. No backend prints.
 */
#ifndef SPP_COUNTERS_COUNTERS_H
#define SPP_COUNTERS_COUNTERS_H

#include <stddef.h>
#include <stdint.h>

#include "base/error.h"

#define SPP_COUNTERS_MAX_THREADS 64
#define SPP_COUNTERS_MAX_BACKENDS 8

/* What a backend may count. Names are the report's field names. */
#define SPP_COUNTER_EVENTS(X)                     \
	X(L1D_ACCESSES, "l1d_accesses")           \
	X(L1D_MISSES, "l1d_misses")               \
	X(L2_ACCESSES, "l2_accesses")             \
	X(L2_MISSES, "l2_misses")                 \
	X(LLC_ACCESSES, "llc_accesses")           \
	X(LLC_MISSES, "llc_misses")               \
	X(INSTRUCTIONS, "instructions")           \
	X(CYCLES, "cycles")                       \
	X(LOADS, "loads")                         \
	X(STORES, "stores")                       \
	X(TASK_CLOCK_NS, "task_clock_ns")         \
	X(PAGE_FAULTS, "page_faults")             \
	X(CONTEXT_SWITCHES, "context_switches")

enum spp_counter_event {
#define SPP_CEV_ENUM(id, name) SPP_CEV_##id,
	SPP_COUNTER_EVENTS(SPP_CEV_ENUM)
#undef SPP_CEV_ENUM
	SPP_CEV_COUNT
};

/* The report name of an event ("l1d_misses"); "?" when out of range. */
const char *spp_counter_event_name(enum spp_counter_event e);

/* Whether a backend can count here, and what. */
struct spp_counter_avail {
	const char *name;       /* backend name (static) */
	int works;              /* 1: it counts something here */
	int cache_events;       /* 1: it counts L1D and LLC misses here */
	unsigned events;        /* bit e set: event e counts here */
	char why[192];          /* one line: why not, or what is missing; "" when all is well */
};

/* Settings of a session. */
struct spp_counter_config {
	int threads;            /* OpenMP threads the counted region runs on (1..MAX_THREADS) */
	const void *sim;        /* sim: const struct spp_sim_geometry * (NULL: 48K/12, 2M/16, 32M/16, 64) */
	uint64_t sim_budget;    /* sim: line accesses simulated per run before sampling; 0: default */
};

/* Counts of a session: NAN where the backend does not count an event. */
struct spp_counter_sample {
	double v[SPP_CEV_COUNT];            /* summed over threads */
	int nthreads;
	double thread[SPP_COUNTERS_MAX_THREADS][SPP_CEV_COUNT];
	double scaled;          /* perf: largest time_enabled / time_running applied (1: none) */
};

struct spp_counter_backend {
	const char *name;       /* "papi", "perf", "sim", "none" */
	const char *summary;    /* one line for `spprof info` */
	/* Fill out: can this backend count on this machine, and what. Never fails. */
	void (*probe)(struct spp_counter_avail *out);
	/* A session for cfg; 0, SPP_E_UNSUPPORTED (err says why) or SPP_E_NOMEM. */
	int (*open)(const struct spp_counter_config *cfg, void **session, struct spp_error *err);
	/* Bracket the counted region, on the thread that runs the parallel region. 0 or SPP_E_RUNTIME. */
	int (*start)(void *session);
	int (*stop)(void *session);
	/* Totals since open (all start/stop pairs). 0 or SPP_E_RUNTIME. */
	int (*read)(void *session, struct spp_counter_sample *out);
	/* Accepts NULL. */
	void (*close)(void *session);
	/*
	 * Call fn for each event name this backend knows here (native and
	 * generic names for perf, presets for papi). Returns the count.
	 */
	int (*list_events)(void (*fn)(void *ctx, const char *name, const char *desc), void *ctx);
};

/* The backends built in, in the order `auto` prefers them; NULL-terminated. */
extern const struct spp_counter_backend *const spp_counter_backends[];

/* A backend by name; NULL when unknown or not built in. */
const struct spp_counter_backend *spp_counter_backend_find(const char *name);

/*
 * Probe every built-in backend: out[0..n-1], in registry order. Returns n.
 */
int spp_counters_probe_all(struct spp_counter_avail *out, int max);

/*
 * Resolve --counters: "auto" picks the first hardware backend that counts
 * cache events here (papi, then perf), else "sim"; a named backend is
 * returned when it works here, else SPP_E_UNSUPPORTED with the reason
 * ("'papi': no PMU (virtualized)"); an unknown name is SPP_E_USAGE.
 * avail/n are the probes to decide from (spp_counters_probe_all), so that
 * tests can force a backend unavailable. why (may be NULL) gets one line
 * on the choice.
 */
int spp_counters_select(const char *want, const struct spp_counter_avail *avail,
			int n, const struct spp_counter_backend **out,
			char *why, size_t why_n, struct spp_error *err);

/*
 * Why hardware counting fails here, in one line for messages: "no PMU
 * (virtualized: KVM)", "perf_event_paranoid is 3: counting refused", or
 * the errno text. errnum is the errno of a failed perf_event_open (0:
 * probe the machine only). Used by the papi and perf backends.
 */
void spp_counters_pmu_reason(int errnum, char *buf, size_t n);

/* Cache figures of one run, as the report's `cache` block holds them. */
struct spp_cache_figures {
	char source[8];         /* "papi", "perf", "sim"; "" when none (block null) */
	double v[SPP_CEV_COUNT];/* NAN unknown */
	double l1d_miss_rate, l2_miss_rate, llc_miss_rate; /* misses / accesses; NAN unknown */
	double dram_bytes;      /* hw DRAM event, else llc_misses x line; NAN unknown */
	char dram_from[32];     /* "llc_misses x 64" ... ; "" when unknown */
	double dram_gbs;        /* dram_bytes / the run's median time; NAN unknown */
	double dram_over_model; /* dram_bytes / bytes_moved (DESIGN section 4's model); NAN unknown */
	double sampled;         /* sim: fraction of row blocks simulated (1 all); NAN otherwise */
	double runs;            /* counted runs the figures are averaged over; NAN: not counted */
	int nthreads;           /* per-thread misses kept for threads 0..nthreads-1 */
	double thread_l1d[SPP_COUNTERS_MAX_THREADS], thread_llc[SPP_COUNTERS_MAX_THREADS];
	char geometry[96];      /* sim: the modelled hierarchy; "" otherwise */
	char note[256];         /* how to read the figures; "" when nothing to say */
};

/* Every figure unknown, no source. */
void spp_cache_figures_init(struct spp_cache_figures *f);

/*
 * Figures of `source` from a session's totals over `runs` counted runs
 * (each figure divided by runs), line the cache line size for the DRAM
 * estimate (0: unknown).
 */
void spp_cache_figures_from_sample(struct spp_cache_figures *f, const char *source,
				   const struct spp_counter_sample *s, double runs, int line);

/* The counters settings of a profile (--counters, --cache-model). */
struct spp_counters_opts {
	char want[16];          /* "auto" (default), "papi", "perf", "sim", "none" */
	int sim_beside;         /* want is a hardware choice and the simulator runs beside it (cache_sim) */
	char cache_model[128];  /* --cache-model spec; "" from the machine */
	uint64_t sim_budget;    /* 0: default */
};

void spp_counters_opts_init(struct spp_counters_opts *o);

/*
 * Parse a --counters value into o's want and sim_beside: one name (auto,
 * papi, perf, sim, none), or a list of two, a hardware choice (auto, papi,
 * perf) and sim, in either order ("papi,sim"): the hardware counts the
 * run's cache figures and the simulator replays the same run beside them.
 * Any other list (sim,sim, none,sim, papi,perf, three names, an empty
 * name) or an unknown name is SPP_E_USAGE with one line saying why; o is
 * unchanged then.
 */
int spp_counters_parse(const char *arg, struct spp_counters_opts *o, struct spp_error *err);

/* o's choice as --counters spells it ("auto", "perf,sim"), for the report's settings. */
void spp_counters_opts_format(const struct spp_counters_opts *o, char *buf, size_t n);

/*
 * spp_counters_select for o->want, and whether the simulator runs beside
 * the backend chosen (*beside): 1 when o->sim_beside and the choice is a
 * hardware backend. Where auto chose sim itself, *beside is 0, since a
 * second simulated block would repeat the first, and why says so. A
 * hardware backend that cannot count here fails as it does alone.
 */
int spp_counters_resolve(const struct spp_counters_opts *o, const struct spp_counter_avail *avail,
			 int n, const struct spp_counter_backend **out, int *beside,
			 char *why, size_t why_n, struct spp_error *err);

#endif
