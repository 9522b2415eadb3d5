/*
 * The measurement session: what every command that times runs (analyze,
 * sweep, bench) sets up once and its runs share, and the record of it
 * that a report keeps (its settings) and merge and --resume read back.
 *
 *	struct spp_session s;
 *	spp_session_open(&s, &opts, machine, rec, err); // dense set, flusher of --cold
 *	spp_session_runs(&s, threads, &ro);         // run options, thread policy, pinning
 *	... spp_layer_measure(..., &ro, ...) ...    // the dense choice is remembered per shape
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
#include "profiler/session_record.h"

struct spp_session {
	struct spp_session_opts opts;
	struct spp_machine *machine;      /* borrowed; NULL: not described (no bw_util) */
	/*
	 * What the session leaves (profiler/session_record.h): the dense
	 * candidates, each shape's dense choice and the settings record,
	 * filled as the session is opened and its runs set. The caller's
	 * (an analysis keeps it for its report), else own.
	 */
	struct spp_session_record *rec;
	struct spp_session_record own;
	struct spp_flusher flusher;       /* cold runs: the eviction buffer */
	double ticks0[2];                 /* /proc/stat at the open: all CPU time, steal; NAN unknown */
};

/*
 * Open a session on machine m (its ISA picks the dense candidates' code, its
 * caches size the flusher; NULL: this machine's) that fills rec (NULL: its
 * own): the dense candidates of o->dense (those that cannot run stay in
 * rec->dense with ok 0 and the reason, for the caller to warn of, also
 * when this fails), the cache state (o->cache, resolved against m's LLC
 * for auto: rec->settings cold, cache and cache_rule) and, cold, the flusher. 0, SPP_E_USAGE (a bad
 * list), SPP_E_RUNTIME (no candidate can run) or SPP_E_NOMEM;
 * spp_session_close releases s either way (a caller's rec stays its own).
 */
int spp_session_open(struct spp_session *s, const struct spp_session_opts *o, struct spp_machine *m,
		     struct spp_session_record *rec, struct spp_error *err);

/*
 * The run options of the session's runs on `threads` threads: the dense
 * set and memo, seed, budget and repeats, the cache state and flusher, the
 * bandwidth model of s->machine's calibration for that many threads; the
 * thread policy chosen and the threads pinned (spp_run_thread_policy,
 * spp_run_threads_prepare), all recorded in s->rec->settings.
 */
void spp_session_runs(struct spp_session *s, int threads, struct spp_run_opts *ro);

/* /proc/stat's first line: all CPU time since boot and the steal of it, in ticks; NAN both when unreadable. */
void spp_cpu_ticks(double t[2]);

/* The 1-minute load average (/proc/loadavg); NAN when unreadable. */
double spp_load_1m(void);

/*
 * Record the machine's steal share and load over the session so far (the
 * record's steal_share, load_end), for what is judged before the session
 * closes (the plausibility warnings).
 */
void spp_session_conditions(struct spp_session *s);

/*
 * Record the conditions (above) at the end, release the flusher, and the
 * record when it is the session's own; accepts a zeroed or failed session.
 */
void spp_session_close(struct spp_session *s);

#endif
