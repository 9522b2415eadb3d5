/*
 * The measurement session: what every command that times runs (analyze,
 * sweep, bench) sets up once and its runs share, and the record of it
 * that a report keeps (its settings) and merge and --resume read back.
 *
 *	struct spp_session s;
 *	spp_session_open(&s, &opts, machine, err);  // dense set, flusher of --cold
 *	spp_session_runs(&s, threads, &ro);         // run options, thread policy, pinning
 *	... spp_layer_measure(..., &ro, ...) ...    // the dense choice is remembered per shape
 *	spp_session_runs_done(&s);                  // the flusher's buffer released
 *	spp_session_close(&s);
 *
 * The options are cmd's session group (cmd/options.c, cmd_session_options):
 * one row per option, bound to struct spp_session_opts in every command.
 */
#ifndef SPP_PROFILER_SESSION_H
#define SPP_PROFILER_SESSION_H

#include <stdint.h>

#include "base/error.h"
#include "kernels/dense/dense.h"
#include "profiler/machine.h"
#include "profiler/measure.h"
#include "profiler/run.h"

/* What a session is asked for: the options the measuring commands share. */
struct spp_session_opts {
	const char *dense;    /* --dense: the candidates (spp_dense_parse); NULL every library */
	int cold;             /* --cold: caches evicted before every timed run */
	double time_budget_s; /* --time-budget: timed seconds per layer (analyze) or measured point */
	uint64_t seed;        /* --seed: X (and a sweep's W); at most 2^53, a report's numbers are doubles */
	int repeat;           /* analyze --repeat: timed runs per format; 0 until the budget is used */
	/* the command's policy, not an option: 0 the harness's defaults (struct spp_bench_opts) */
	int warmup, min_repeats;
};

/* The largest --seed: a report writes it as a JSON number, exact to 2^53. */
#define SPP_SESSION_MAX_SEED (UINT64_C(1) << 53)

/* The record of a session's runs, as a report's settings keep it. */
struct spp_run_settings {
	int threads;            /* threads the runs used */
	int pinned;             /* threads pinned to a CPU (0: none) */
	int warmup, min_repeats, max_repeats;
	int cold;               /* caches evicted before every timed run */
	double verify_rtol;
	char schedule[16];      /* "interleaved" or "blocked" */
	char thread_policy[512];
	char cold_method[128];  /* how caches are evicted; "" when warm */
};

/*
 * The record's rows in a report's settings, X(KEY, MEMBER, KIND) with KIND
 * INT, BOOL, NUM or STR (an empty STR is null): written by reports/json.c
 * (spp_report_run_settings) and read back by reports/merge.c, one table.
 */
#define SPP_RUN_SETTINGS(X)                        \
	X("run_threads", threads, INT)             \
	X("warmup", warmup, INT)                   \
	X("min_repeats", min_repeats, INT)         \
	X("max_repeats", max_repeats, INT)         \
	X("cold", cold, BOOL)                      \
	X("cold_method", cold_method, STR)         \
	X("verify_rtol", verify_rtol, NUM)         \
	X("schedule", schedule, STR)               \
	X("thread_policy", thread_policy, STR)     \
	X("pinned", pinned, INT)

struct spp_session {
	struct spp_session_opts opts;
	struct spp_machine *machine;      /* borrowed; NULL: not described (no bw_util) */
	struct spp_dense_set dense;       /* the candidates; dense.n 0 when not opened */
	struct spp_dense_memo dense_memo; /* each shape's dense choice, timed once */
	struct spp_flusher flusher;       /* opts.cold: the eviction buffer */
	struct spp_run_settings settings; /* filled as the session is opened and its runs set */
};

/* The defaults: every library, warm, the command's budget, seed 1. */
void spp_session_opts_init(struct spp_session_opts *o, double time_budget_s);

/*
 * Open a session on machine m (its ISA picks the dense candidates' code, its
 * caches size the flusher; NULL: this machine's): the dense candidates of
 * o->dense (those that cannot run stay in s->dense with ok 0 and the
 * reason, for the caller to warn of, also when this fails) and, with
 * o->cold, the flusher. 0, SPP_E_USAGE (a bad list), SPP_E_RUNTIME (no
 * candidate can run) or SPP_E_NOMEM; spp_session_close releases s either way.
 */
int spp_session_open(struct spp_session *s, const struct spp_session_opts *o, struct spp_machine *m,
		     struct spp_error *err);

/*
 * The run options of the session's runs on `threads` threads: the dense
 * set and memo, seed, budget and repeats, the cache state and flusher, the
 * bandwidth model of s->machine's calibration for that many threads; the
 * thread policy chosen and the threads pinned (spp_run_thread_policy,
 * spp_run_threads_prepare), all recorded in s->settings.
 */
void spp_session_runs(struct spp_session *s, int threads, struct spp_run_opts *ro);

/*
 * The runs are over: release what only they use (the flusher's buffer,
 * twice the LLC), keeping the dense candidates and choices a report describes.
 */
void spp_session_runs_done(struct spp_session *s);

/* Release the dense set, memo and flusher; accepts a zeroed or failed session. */
void spp_session_close(struct spp_session *s);

#endif
