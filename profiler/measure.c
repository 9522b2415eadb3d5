#include "profiler/measure.h"

#include <errno.h>
#include <math.h>
#include <omp.h>
#include <stdio.h>
#include <pthread.h>
#include <sched.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "base/rng.h"

#if defined(__x86_64__) || defined(__i386__)
#include <cpuid.h>
#include <immintrin.h>
#define HAVE_X86 1
#else
#define HAVE_X86 0
#endif

void spp_bench_opts_init(struct spp_bench_opts *o)
{
	memset(o, 0, sizeof(*o));
	o->warmup = 2;
	o->budget_ns = 0.2e9;
	o->min_repeats = 5;
	o->max_repeats = 1000;
	o->schedule = SPP_SCHED_INTERLEAVED;
	o->seed = 1;
	spp_clock_monotonic(&o->clock);
}

/* Per item: its samples and per-run imbalance. */
struct track {
	double *t, *imb;
	int n, nimb;
	int rc, warm;          /* drop_failed: why and where the item was dropped */
	int retired;           /* race: a reference item that cannot win, timed no more */
};

struct bench {
	const struct spp_bench_item *items;
	int n;
	const struct spp_bench_opts *o;
	struct track *tr;
	double *busy;
	struct spp_error *err;
	int alive;             /* items not dropped */
	double spent;          /* the timed runs' own times (budget_run_time) */
	int cap;               /* timed runs an item's track holds */
	struct spp_rng rng;    /* the rounds' orders */
	int *order;            /* n: this round's */
	/* per round: disturbed by the machine (steal, tasks), then by the reference's rate */
	unsigned char *bad;
	struct spp_sys_sample last;
	int have_sys;          /* last holds a reading */
};

static double now(const struct bench *b)
{
	return b->o->clock.now_ns(b->o->clock.ctx);
}

/* A failed call: drop item i (drop_failed) or stop with err. */
static int failed(struct bench *b, int i, int timed, int rc)
{
	if (b->o->drop_failed) {
		b->tr[i].rc = rc;
		b->tr[i].warm = !timed;
		b->alive--;
		return SPP_OK;
	}
	return spp_error_set(b->err, rc, "timed call %d of %d failed (%s)", i, b->n,
			     spp_status_message(rc));
}

static int call(struct bench *b, int i, int timed)
{
	const struct spp_bench_item *it = &b->items[i];
	struct track *tr = &b->tr[i];
	double t0 = 0, t1 = 0, ns = 0;
	int rc;

	if (tr->rc || (timed && tr->retired))
		return SPP_OK; /* dropped, or out of the race */
	if (timed && b->o->before)
		b->o->before(b->o->before_ctx, i);
	if (timed && b->o->count_start)
		b->o->count_start(b->o->count_ctx, i);
	if (timed && it->timed) {
		rc = it->timed(it->ctx, &ns);
	} else {
		t0 = timed ? now(b) : 0;
		rc = it->run(it->ctx, it->nthreads > 0 ? b->busy : NULL);
		t1 = timed ? now(b) : 0;
		ns = t1 - t0;
	}
	if (timed && b->o->count_stop)
		b->o->count_stop(b->o->count_ctx, i);
	if (rc)
		return failed(b, i, timed, rc);
	if (!timed)
		return SPP_OK;
	tr->t[tr->n++] = ns;
	b->spent += ns;
	if (it->nthreads > 0) {
		double imb = spp_max_over_mean(b->busy, it->nthreads);

		if (imb > 0)
			tr->imb[tr->nimb++] = imb;
	}
	return SPP_OK;
}

/* What the timed rounds since start used of the budget: their own times, or the wall time. */
static double used(const struct bench *b, double start)
{
	/* read here on every check, as the rounds' clock always was */
	return b->o->budget_run_time ? b->spent - start : now(b) - start;
}

static int enough(const struct bench *b, int done, double start, double budget)
{
	const struct spp_bench_opts *o = b->o;
	int min = o->min_repeats > 0 ? o->min_repeats : 1;
	int max = o->max_repeats > min ? o->max_repeats : min;
	double elapsed = used(b, start);

	if (b->alive <= 0)
		return 1;
	if (o->repeat > 0)
		return done >= o->repeat;
	return done >= max || (done >= min && elapsed >= budget);
}

/* Whether the disturbed-round check is on: interleaved rounds to a budget, a reference or a probe. */
static int checking(const struct bench *b)
{
	return b->o->repeat <= 0 && (b->o->nref > 0 || b->o->sys.read);
}

/*
 * The machine's state at the end of round r (r < 0: before the first,
 * only read): steal risen, or more tasks running than the run's own.
 */
static void judge_machine(struct bench *b, int r)
{
	const struct spp_bench_opts *o = b->o;
	struct spp_sys_sample s;

	if (!o->sys.read || o->sys.read(o->sys.ctx, &s)) {
		b->have_sys = 0;
		return;
	}
	if (r >= 0 && ((b->have_sys && s.steal > b->last.steal) ||
		       (o->expect_running > 0 && s.running > o->expect_running)))
		b->bad[r] = 1;
	b->last = s;
	b->have_sys = 1;
}

/* The first quartile of an item's times in its first `rounds` rounds; NAN when it has none. */
static double first_quartile(const struct track *tr, int rounds, double *scratch)
{
	int n = tr->n < rounds ? tr->n : rounds;

	if (n <= 0)
		return NAN;
	memcpy(scratch, tr->t, (size_t)n * sizeof(double));
	spp_sort_doubles(scratch, n);
	return spp_percentile_sorted(scratch, n, 0.25);
}

/*
 * Mark the rounds [0, rounds) in which every alive reference item ran
 * slower than SPP_ROUND_SLOW times its first quartile (bad[r] bit 2);
 * returns the clean rounds.
 */
static int judge_rounds(struct bench *b, int rounds, double *scratch)
{
	double q1[SPP_BENCH_REF_MAX];
	int nref = b->o->nref < SPP_BENCH_REF_MAX ? b->o->nref : SPP_BENCH_REF_MAX, clean = 0;

	for (int i = 0; i < nref && i < b->n; i++)
		q1[i] = b->tr[i].rc ? NAN : first_quartile(&b->tr[i], rounds, scratch);
	for (int r = 0; r < rounds; r++) {
		int slow = 0, refs = 0;

		b->bad[r] &= 1;
		for (int i = 0; i < nref && i < b->n; i++)
			if (isfinite(q1[i]) && r < b->tr[i].n) {
				refs++;
				slow += b->tr[i].t[r] > SPP_ROUND_SLOW * q1[i];
			}
		if (refs > 0 && slow == refs)
			b->bad[r] |= 2;
		clean += b->bad[r] == 0;
	}
	return clean;
}

/* One timed round in a shuffled order (Fisher-Yates over splitmix64). */
static int round_once(struct bench *b, int r)
{
	int rc;

	for (int j = 0; j < b->n; j++)
		b->order[j] = j;
	for (int j = b->n - 1; j > 0; j--) {
		int k = (int)spp_rng_below(&b->rng, (uint64_t)j + 1), t = b->order[j];

		b->order[j] = b->order[k];
		b->order[k] = t;
	}
	for (int j = 0; j < b->n; j++)
		if ((rc = call(b, b->order[j], 1)))
			return rc;
	if (checking(b))
		judge_machine(b, r);
	return SPP_OK;
}

/*
 * Keep only the clean rounds of every item (the same rounds for all, so
 * that rounds[r] stay side by side), or all of them when fewer than the
 * minimum are clean; the counts into each result.
 */
static void keep_clean(struct bench *b, int rounds, int clean, struct spp_bench_result *out)
{
	int min = b->o->min_repeats > 0 ? b->o->min_repeats : 1;
	int disturbed = clean < min ? rounds - clean : 0, discarded = disturbed ? 0 : rounds - clean;

	for (int i = 0; i < b->n; i++) {
		struct track *tr = &b->tr[i];
		int kept = 0;

		out[i].discarded = discarded;
		out[i].disturbed = disturbed;
		out[i].judged = 1;
		if (disturbed || discarded == 0)
			continue;
		for (int r = 0; r < tr->n; r++)
			if (r >= rounds || !b->bad[r])
				tr->t[kept++] = tr->t[r];
		tr->n = kept;
	}
}

/*
 * The race (o->race > 1): after the first `rounds` rounds, retire each
 * reference item whose fastest round is slower than margin times the
 * fastest reference's median: SPP_RACE_FAR after SPP_RACE_FAR_ROUNDS
 * rounds, o->race after min_repeats.
 */
static void race(struct bench *b, int rounds, double margin, double *scratch)
{
	int nref = b->o->nref < b->n ? b->o->nref : b->n;
	double best = INFINITY, fastest[SPP_BENCH_REF_MAX];

	if (nref > SPP_BENCH_REF_MAX)
		nref = SPP_BENCH_REF_MAX;
	for (int i = 0; i < nref; i++) {
		const struct track *tr = &b->tr[i];
		int n = tr->n < rounds ? tr->n : rounds;

		fastest[i] = NAN;
		if (tr->rc || n <= 0)
			continue;
		memcpy(scratch, tr->t, (size_t)n * sizeof(double));
		spp_sort_doubles(scratch, n);
		fastest[i] = scratch[0];
		if (spp_percentile_sorted(scratch, n, 0.5) < best)
			best = spp_percentile_sorted(scratch, n, 0.5);
	}
	for (int i = 0; i < nref; i++)
		if (isfinite(fastest[i]) && fastest[i] > margin * best)
			b->tr[i].retired = 1;
}

static int run_interleaved(struct bench *b, struct spp_bench_result *out)
{
	const struct spp_bench_opts *o = b->o;
	int min = o->min_repeats > 0 ? o->min_repeats : 1, r = 0, clean, rc;
	double start, *scratch;

	for (int w = 0; w < o->warmup; w++)
		for (int j = 0; j < b->n; j++)
			if ((rc = call(b, (w + j) % b->n, 0)))
				return rc;
	if (checking(b))
		judge_machine(b, -1);
	if (!(scratch = malloc((size_t)b->cap * sizeof(double))))
		return spp_error_set(b->err, SPP_E_NOMEM, "out of memory for the rounds");
	start = o->budget_run_time ? b->spent : now(b);
	for (; !enough(b, r, start, o->budget_ns); r++) {
		if ((rc = round_once(b, r))) {
			free(scratch);
			return rc;
		}
		if (o->race > 1 && r + 1 == SPP_RACE_FAR_ROUNDS && min > r + 1)
			race(b, r + 1, fmax(SPP_RACE_FAR, o->race), scratch);
		if (o->race > 1 && r + 1 == min)
			race(b, r + 1, o->race, scratch);
	}
	if (!checking(b)) {
		free(scratch);
		return SPP_OK;
	}
	clean = judge_rounds(b, r, scratch);
	/*
	 * re-measure, within twice the budget and the cap: the rounds still
	 * missing, then judged again (the quartiles sorted once a batch, not
	 * once a round)
	 */
	while (clean < min && !rc) {
		int done = 0;

		while (done < min - clean && b->alive > 0 && r < b->cap &&
		       used(b, start) < 2 * o->budget_ns && !(rc = round_once(b, r)))
			done++, r++;
		if (done == 0)
			break;
		clean = judge_rounds(b, r, scratch);
	}
	free(scratch);
	if (!rc)
		keep_clean(b, r, clean, out);
	return rc;
}

static void sleep_ns(double ns)
{
	struct timespec ts;

	if (!(ns > 0))
		return;
	ts.tv_sec = (time_t)(ns / 1e9);
	ts.tv_nsec = (long)(ns - (double)ts.tv_sec * 1e9);
	while (nanosleep(&ts, &ts) != 0 && errno == EINTR)
		;
}

static int run_blocked(struct bench *b)
{
	const struct spp_bench_opts *o = b->o;
	int rc, pool = 0;

	for (int i = 0; i < b->n; i++) {
		int p = b->items[i].pool >= 0 && b->items[i].pool < SPP_BENCH_POOLS ? b->items[i].pool : 1;
		double start;

		if (p != pool)
			sleep_ns(o->settle_ns[pool]);
		pool = p;
		for (int w = 0; w < o->warmup; w++)
			if ((rc = call(b, i, 0)))
				return rc;
		start = o->budget_run_time ? b->spent : now(b);
		for (int r = 0; !enough(b, r, start, o->budget_ns / b->n); r++)
			if ((rc = call(b, i, 1)))
				return rc;
	}
	return SPP_OK;
}

int spp_bench_run(const struct spp_bench_item *items, int n,
		  const struct spp_bench_opts *o, struct spp_bench_result *out,
		  struct spp_error *err)
{
	struct bench b = {.items = items, .n = n, .o = o, .err = err, .alive = n};
	int cap = o->repeat > 0 ? o->repeat : (o->max_repeats > o->min_repeats ? o->max_repeats : o->min_repeats);
	int maxthreads = 1, rc;

	if (cap < 1)
		cap = 1;
	memset(out, 0, (size_t)(n > 0 ? n : 0) * sizeof(*out));
	if (n <= 0)
		return SPP_OK;
	for (int i = 0; i < n; i++)
		if (items[i].nthreads > maxthreads)
			maxthreads = items[i].nthreads;
	b.cap = cap;
	spp_rng_seed(&b.rng, o->seed);
	b.tr = calloc((size_t)n, sizeof(*b.tr));
	b.busy = calloc((size_t)maxthreads, sizeof(*b.busy));
	b.order = calloc((size_t)n, sizeof(*b.order));
	b.bad = calloc((size_t)cap, 1);
	rc = b.tr && b.busy && b.order && b.bad ? SPP_OK : SPP_E_NOMEM;
	for (int i = 0; i < n && !rc; i++) {
		b.tr[i].t = malloc((size_t)cap * sizeof(double));
		b.tr[i].imb = malloc((size_t)cap * sizeof(double));
		if (!b.tr[i].t || !b.tr[i].imb)
			rc = SPP_E_NOMEM;
	}
	if (rc) {
		spp_error_set(err, rc, "out of memory for %d x %d timings", n, cap);
		goto done;
	}
	rc = o->schedule == SPP_SCHED_BLOCKED ? run_blocked(&b) : run_interleaved(&b, out);
	if (rc)
		goto done;
	for (int i = 0; i < n; i++) {
		struct spp_time_stats imb;

		out[i].rc = b.tr[i].rc;
		out[i].failed_warmup = b.tr[i].warm;
		out[i].retired = b.tr[i].retired;
		if (b.tr[i].rc)
			continue; /* dropped: no time */
		out[i].nrounds = b.tr[i].n < SPP_BENCH_MAX_ROUNDS ? b.tr[i].n : SPP_BENCH_MAX_ROUNDS;
		memcpy(out[i].rounds, b.tr[i].t, (size_t)out[i].nrounds * sizeof(double));
		spp_time_stats(b.tr[i].t, b.tr[i].n, &out[i].time);
		if (!spp_time_stats(b.tr[i].imb, b.tr[i].nimb, &imb))
			out[i].imbalance = imb.median;
	}
done:
	for (int i = 0; b.tr && i < n; i++) {
		free(b.tr[i].t);
		free(b.tr[i].imb);
	}
	free(b.tr);
	free(b.busy);
	free(b.order);
	free(b.bad);
	return rc;
}

int spp_flusher_init(struct spp_flusher *f, size_t bytes, struct spp_error *err)
{
	memset(f, 0, sizeof(*f));
	if (!bytes)
		return SPP_OK;
	f->buf = malloc(bytes);
	if (!f->buf)
		return spp_error_set(err, SPP_E_NOMEM,
				     "out of memory for a %zu-byte cache eviction buffer", bytes);
	/* touch every page now, so that flushes never pay for page faults */
	memset(f->buf, 1, bytes);
	f->bytes = bytes;
	return SPP_OK;
}

void spp_flusher_fini(struct spp_flusher *f)
{
	free(f->buf);
	memset(f, 0, sizeof(*f));
}

#if HAVE_X86
static int have_clflushopt(void)
{
	unsigned a, b, c, d;

	if (!__get_cpuid_count(7, 0, &a, &b, &c, &d))
		return 0;
	return (b >> 23) & 1;
}

__attribute__((target("clflushopt")))
static void flush_opt(const unsigned char *p, size_t n)
{
	for (size_t i = 0; i < n; i += 64)
		_mm_clflushopt((void *)(p + i));
	if (n)
		_mm_clflushopt((void *)(p + n - 1));
}

static void flush_plain(const unsigned char *p, size_t n)
{
	for (size_t i = 0; i < n; i += 64)
		_mm_clflush(p + i);
	if (n)
		_mm_clflush(p + n - 1);
}
#endif

const char *spp_cache_flush_method(void)
{
#if HAVE_X86
	return have_clflushopt() ? "clflushopt" : "clflush";
#else
	return "none";
#endif
}

void spp_cache_touch(struct spp_flusher *f, const struct spp_range *r, int nr)
{
	double sum = 0;

	for (int i = 0; i < nr; i++) {
		const unsigned char *p = r[i].p;

		for (size_t o = 0; p && o < r[i].n; o += 64)
			sum += p[o];
	}
	if (f)
		f->sink = sum;
}

void spp_cache_flush(struct spp_flusher *f, const struct spp_range *r, int nr)
{
#if HAVE_X86
	int opt = have_clflushopt();

	for (int i = 0; i < nr; i++) {
		if (!r[i].p || !r[i].n)
			continue;
		if (opt)
			flush_opt(r[i].p, r[i].n);
		else
			flush_plain(r[i].p, r[i].n);
	}
	_mm_mfence();
#else
	(void)r;
	(void)nr;
#endif
	if (f && f->buf) {
		const unsigned char *buf = f->buf;
		size_t bytes = f->bytes;
		double s = 0;

		/* one read per line is enough to claim it */
#pragma omp parallel for reduction(+ : s) schedule(static)
		for (size_t i = 0; i < bytes; i += 64)
			s += buf[i];
		f->sink = s;
	}
}

/* The CPUs the process may run on, taken once, before any thread is pinned. */
static int allowed[CPU_SETSIZE], nallowed;
static pthread_once_t allowed_once = PTHREAD_ONCE_INIT;

static void take_allowed(void)
{
	long ncpu = sysconf(_SC_NPROCESSORS_ONLN);
	cpu_set_t set;

	if (sched_getaffinity(0, sizeof(set), &set) == 0) {
		for (int c = 0; c < CPU_SETSIZE; c++)
			if (CPU_ISSET(c, &set))
				allowed[nallowed++] = c;
	}
	for (long c = 0; nallowed == 0 && c < ncpu && c < CPU_SETSIZE; c++)
		allowed[c] = (int)c; /* unknown: every online CPU */
	if (nallowed == 0 && ncpu > 0)
		nallowed = ncpu < CPU_SETSIZE ? (int)ncpu : CPU_SETSIZE;
}

int spp_pin_self(int t)
{
	cpu_set_t set;

	pthread_once(&allowed_once, take_allowed);
	if (nallowed < 1 || t < 0)
		return -1;
	CPU_ZERO(&set);
	CPU_SET(allowed[t % nallowed], &set);
	return pthread_setaffinity_np(pthread_self(), sizeof(set), &set) == 0 ? 0 : -1;
}

int spp_pin_threads(int threads)
{
	int pinned = 0;

	if (threads < 1)
		return 0;
	pthread_once(&allowed_once, take_allowed); /* on this thread, before any is pinned */
#pragma omp parallel num_threads(threads) reduction(+ : pinned)
	pinned += spp_pin_self(omp_get_thread_num()) == 0;
	return pinned;
}
