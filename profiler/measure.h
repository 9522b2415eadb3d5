/*
 * Measurement: the benchmark harness that runs a set of
 * timed calls (the dense baseline and each format of a layer) warm-up
 * first, then interleaved round after round until a repeat count or a time
 * budget is reached, cache eviction for cold runs, and thread pinning.
 *
 * Written once for every format (DESIGN section 4): nothing here knows what
 * a call computes. The clock is a parameter so that tests drive the
 * harness with deterministic times.
 */
#ifndef SPP_PROFILER_MEASURE_H
#define SPP_PROFILER_MEASURE_H

#include <stddef.h>
#include <stdint.h>

#include "base/error.h"
#include "profiler/stats.h"

/* Thread pools the harness tells apart (kernels/dense/dense.h: enum spp_dense_pool). */
#define SPP_BENCH_POOLS 4

/* A clock in nanoseconds; tests inject a fake one. */
struct spp_clock {
	double (*now_ns)(void *ctx);
	void *ctx;
};

/* CLOCK_MONOTONIC. */
void spp_clock_monotonic(struct spp_clock *c);

/*
 * The machine's state as /proc/stat gives it: CPU time since boot and the
 * steal of it, in ticks, and the tasks running or runnable now
 * (procs_running, the reader itself included).
 */
struct spp_sys_sample {
	double ticks, steal;
	int running;
};

/* Read /proc/stat into *s: 0, or -1 when it cannot be read. */
int spp_sys_sample_read(struct spp_sys_sample *s);

/* Where the harness reads the machine's state; tests inject a fake one. */
struct spp_sys_probe {
	int (*read)(void *ctx, struct spp_sys_sample *s);  /* 0, or -1: unknown */
	void *ctx;
};

/* /proc/stat (spp_sys_sample_read). */
void spp_sys_probe_proc(struct spp_sys_probe *p);

/* Reference items the disturbed-round check reads at the most (spp_bench_opts nref). */
#define SPP_BENCH_REF_MAX 16

/* One timed call of the harness. */
struct spp_bench_item {
	/*
	 * Run once; fill busy_ns[0..nthreads-1] with each thread's busy time
	 * when nthreads > 0. Returns 0 or a negative status (stops the harness).
	 */
	int (*run)(void *ctx, double *busy_ns);
	void *ctx;
	int nthreads;  /* entries of busy_ns it fills; 0: it reports none */
	int pool;      /* thread pool it runs on: 0 OpenMP (the caller's), 1.. others (BLAS) */
	/*
	 * A device that times itself (CUDA events around the launch alone):
	 * when set, each timed run calls this instead of run and takes *ns
	 * as its time, the host clock unread; run is then the warm-up. NULL:
	 * timed runs are run between two readings of the clock.
	 */
	int (*timed)(void *ctx, double *ns);
};

enum spp_schedule {
	SPP_SCHED_INTERLEAVED, /* each round runs every item once, in a shuffled order */
	SPP_SCHED_BLOCKED,     /* all of item 0's runs, then item 1's, ... */
};

struct spp_bench_opts {
	int warmup;            /* untimed runs of each item before its first timed run */
	int repeat;            /* > 0: exactly this many timed runs of each item */
	double budget_ns;      /* repeat == 0: run until the timed rounds took this long */
	int min_repeats;       /* repeat == 0: at least this many (>= 1) */
	int max_repeats;       /* repeat == 0: at most this many */
	enum spp_schedule schedule;
	/*
	 * Blocked schedule: before a block whose item runs on another pool
	 * than the block before (the first block follows pool 0, the
	 * caller's), sleep settle_ns[previous pool] so that the pool left
	 * behind stops spinning before timing starts. 0: no sleep.
	 */
	double settle_ns[SPP_BENCH_POOLS];
	struct spp_clock clock;
	/* called before each timed run, outside the timed region (cold runs); may be NULL */
	void (*before)(void *ctx, int item);
	void *before_ctx;
	/*
	 * Counters (counters/counters.h): count_start right before a timed
	 * run's first clock reading and count_stop right after its last, so
	 * that counting brackets exactly the timed call and its cost stays
	 * out of the time; each may be NULL.
	 */
	void (*count_start)(void *ctx, int item);
	void (*count_stop)(void *ctx, int item);
	void *count_ctx;
	/*
	 * 1: an item whose call fails is dropped (its result says why) and
	 * the others go on; 0: the first failure stops the harness.
	 */
	int drop_failed;
	/*
	 * 1: the budget counts the timed runs' own times (device time, for
	 * self-timed items); 0: the wall time of the timed rounds, before
	 * hooks included.
	 */
	int budget_run_time;
	/* the interleaved rounds' orders: permutations drawn from splitmix64(seed) */
	uint64_t seed;
	/*
	 * Disturbed rounds (interleaved schedule): a round is discarded, for
	 * every item, when each of the reference items [0, nref) (the dense
	 * candidates) took more than SPP_ROUND_SLOW times its first quartile,
	 * or when at its end the machine's steal time had risen or more tasks
	 * were running than expect_running (the run's own threads; 0: not
	 * checked). Rounds then go on, up to twice the budget, until
	 * min_repeats clean ones are done. nref 0 and sys.read NULL: no round
	 * is discarded.
	 */
	int nref;
	int expect_running;
	struct spp_sys_probe sys;
	/*
	 * > 1 (interleaved rounds to a budget): after min_repeats rounds, a
	 * reference item whose fastest round is slower than race times the
	 * fastest reference's median is retired: it runs no more rounds, and
	 * its result holds the rounds it ran (result.retired); after the
	 * first SPP_RACE_FAR_ROUNDS rounds, one slower than SPP_RACE_FAR
	 * times (profiler/stats.h). 0: off.
	 */
	double race;
};

/*
 * Defaults: warmup 2, repeat 0, budget 0.2 s, min 5, max 1000, interleaved,
 * seed 1, monotonic clock, no disturbed-round check.
 */
void spp_bench_opts_init(struct spp_bench_opts *o);

struct spp_bench_result {
	struct spp_time_stats time;
	/*
	 * Its times in the order they were taken: rounds[r] is the r-th kept
	 * round's with the interleaved schedule (each alive item once a
	 * round; the same rounds kept for every item), so that item i's and
	 * item j's rounds[r] were timed side by side.
	 */
	double rounds[SPP_BENCH_MAX_ROUNDS];
	int nrounds;
	double imbalance;      /* median over runs of max/mean busy time; 0 unknown */
	/*
	 * Rounds discarded as disturbed (the same for every item of a run);
	 * or, when fewer than min_repeats clean rounds were left even so, the
	 * disturbed rounds kept (disturbed), no round discarded: the times are
	 * those of every round. judged: 0 when no round was judged (blocked
	 * schedule, an exact repeat count, or no reference and no probe).
	 */
	int discarded, disturbed, judged;
	int retired;           /* race: timed no more after its first nrounds rounds */
	int rc;                /* drop_failed: the status the item was dropped with (no time); 0 ok */
	int failed_warmup;     /* ... in a warm-up run (1) or a timed run (0) */
};

/*
 * Time n items. Warm-up runs first (each item `warmup` times, in the
 * schedule's order), then timed runs: interleaved rounds (each in its own
 * shuffled order, so that no item always follows the same one or holds
 * the same place; disturbed rounds discarded, above), or blocks per item. With repeat > 0 each item runs exactly repeat timed
 * times; otherwise rounds continue until at least min_repeats are done and
 * the timed rounds (flushes included) have used budget_ns, or max_repeats
 * are done; a blocked schedule gives each item budget_ns / n and settles
 * between pools (settle_ns).
 * out[i] is item i's result. Returns 0, SPP_E_NOMEM, or the first failing
 * item's status (err says which item); with drop_failed a failing item
 * is dropped instead (out[i].rc, no time) and the call returns 0.
 */
int spp_bench_run(const struct spp_bench_item *items, int n,
		  const struct spp_bench_opts *o, struct spp_bench_result *out,
		  struct spp_error *err);

/* A memory range a run touches. */
struct spp_range {
	const void *p;
	size_t n;
};

/*
 * Evict data from the caches for a cold run: flush each range's lines
 * (clflushopt where the CPU has it, clflush on other x86), then, when
 * evict_bytes > 0, read a buffer that large (about 2x the largest cache)
 * with all threads so that data held in buffers the caller cannot name is
 * evicted too. The buffer lives in f; spp_flusher_init allocates it.
 */
struct spp_flusher {
	unsigned char *buf;
	size_t bytes;
	volatile double sink;
};

/* Returns 0 or SPP_E_NOMEM; bytes 0 gives a flusher with ranges only. */
int spp_flusher_init(struct spp_flusher *f, size_t bytes, struct spp_error *err);
void spp_flusher_fini(struct spp_flusher *f);
void spp_cache_flush(struct spp_flusher *f, const struct spp_range *r, int nr);

/* How spp_cache_flush evicts ranges here: "clflushopt", "clflush" or "none". */
const char *spp_cache_flush_method(void);

/* Read every line of the nr ranges, bringing them into the caller's caches (a cold run's X and Y). */
void spp_cache_touch(struct spp_flusher *f, const struct spp_range *r, int nr);

/*
 * Pin OpenMP threads 0..threads-1 to the process's CPUs in turn (thread t
 * to the (t mod count)-th CPU the process was allowed when it first asked:
 * taskset's, mpirun's binding, a cgroup's), each setting its own affinity
 * inside a parallel region. Returns the number of threads pinned (threads
 * when all worked; 0 where the OS refuses or lacks it).
 */
int spp_pin_threads(int threads);

/* Pin the calling thread as spp_pin_threads pins thread t. Returns 0 or -1. */
int spp_pin_self(int t);

#endif
