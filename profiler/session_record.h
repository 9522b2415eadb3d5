/*
 * A measurement session (profiler/session.h) as results: the options it
 * is asked for, as a report keeps them, and what it leaves for the
 * report: the dense candidates it opened, each shape's dense choice and
 * the record of its runs' settings, kept by an analysis after its session
 * closes (and filled from a saved report by merge). Nothing here measures.
 */
#ifndef SPP_PROFILER_SESSION_RECORD_H
#define SPP_PROFILER_SESSION_RECORD_H

#include "kernels/dense/dense.h"
#include "profiler/run_result.h"

/*
 * The cache state of the timed runs (--cache): auto (the default) is cold
 * when the weights the runs stand for (a model's, a sweep's W) exceed the
 * LLC, which is how a model larger than the LLC meets its layers, and warm
 * when they fit; cold and warm are that state whatever the size. --cold is
 * --cache cold (it sets the int to 1).
 */
enum spp_cache_state { SPP_CACHE_AUTO, SPP_CACHE_COLD, SPP_CACHE_WARM };

/* What a session is asked for: the options the measuring commands share. */
struct spp_session_opts {
	const char *dense;    /* --dense: the candidates (spp_dense_parse); NULL every library */
	int cache;            /* --cache, --cold: enum spp_cache_state */
	uint64_t weights_bytes; /* --cache auto: the weights the runs stand for; 0 unknown (warm) */
	double time_budget_s; /* --time-budget: timed seconds per layer (analyze) or measured point */
	uint64_t seed;        /* --seed: X (and a sweep's W); at most 2^53, a report's numbers are doubles */
	int repeat;           /* analyze --repeat: timed runs per format; 0 until the budget is used */
	/* the command's policy, not an option: 0 the harness's defaults (struct spp_bench_opts) */
	int warmup, min_repeats;
};

/* The largest --seed: a report writes it as a JSON number, exact to 2^53. */
#define SPP_SESSION_MAX_SEED (UINT64_C(1) << 53)

/* The defaults: every library, warm, the command's budget, seed 1. */
void spp_session_opts_init(struct spp_session_opts *o, double time_budget_s);

/* The record of a session's runs, as a report's settings keep it. */
struct spp_run_settings {
	int threads;            /* threads the runs used */
	int pinned;             /* threads pinned to a CPU (0: none) */
	int warmup, min_repeats, max_repeats;
	int cold;               /* caches evicted before every timed run (the cache state resolved) */
	char cache[8];          /* "warm" or "cold" */
	char cache_rule[160];   /* why: "--cache cold", "auto: the weights, 420.0 MiB, exceed the LLC, 32.0 MiB" */
	double verify_rtol;
	char schedule[16];      /* "interleaved" or "blocked" */
	char thread_policy[512];
	char cold_method[128];  /* how caches are evicted; "" when warm */
	/*
	 * The machine while the runs were timed (/proc): the steal share of
	 * all CPU time (a VM's host running others; NAN unknown) and the 1-minute
	 * load average at the start and the end (NAN unknown). Not settings (not
	 * in the table: a journal and merge's parts compare those): the
	 * report's machine.conditions.
	 */
	double steal_share, load_start, load_end;
};

/*
 * The record's rows in a report's settings, X(KEY, MEMBER, KIND) with KIND
 * INT, BOOL, NUM or STR (an empty STR is null): written by reports/json.c
 * and read back by reports/merge.c, one table.
 */
#define SPP_RUN_SETTINGS(X)                        \
	X("run_threads", threads, INT)             \
	X("warmup", warmup, INT)                   \
	X("min_repeats", min_repeats, INT)         \
	X("max_repeats", max_repeats, INT)         \
	X("cache", cache, STR)                     \
	X("cache_rule", cache_rule, STR)           \
	X("cold", cold, BOOL)                      \
	X("cold_method", cold_method, STR)         \
	X("verify_rtol", verify_rtol, NUM)         \
	X("schedule", schedule, STR)               \
	X("thread_policy", thread_policy, STR)     \
	X("pinned", pinned, INT)

struct spp_session_record {
	struct spp_dense_set dense;       /* the candidates; dense.n 0 when none were opened */
	struct spp_dense_memo dense_memo; /* each shape's dense choice, timed once */
	struct spp_run_settings settings;
};

/* Close the dense candidates and free the choices; accepts a zeroed record. */
void spp_session_record_release(struct spp_session_record *r);

#endif
