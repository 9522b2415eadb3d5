/*
 * Measurement, continued (test_measure.c holds the list): the harness
 * driven by a fake clock: the rounds' shuffled orders, the budget, the
 * minimum and maximum, self-timed items, dropped items, and disturbed
 * rounds discarded and re-measured, and the race that retires dense
 * candidates that cannot win.
 */
#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include <cmocka.h>

#include "base/error.h"
#include "profiler/measure.h"

#define NEAR(a, b) assert_true(fabs((double)(a) - (double)(b)) <= 1e-9 * fmax(1, fabs((double)(b))))

/* A fake clock the fake items advance by their known durations. */
struct fake {
	double t;
	int log[256];
	int nlog;
	int before;
	int fail_at;  /* call number that fails (once); -1 never */
	int fail_id, fail_nth;  /* or item fail_id's call fail_nth (0: its first); -1 never */
	/* the machine the probe reports: steal ticks and running tasks after each read */
	int reads;
	double steal[64];
	int running[64];
};

static double fake_now(void *ctx)
{
	return ((struct fake *)ctx)->t;
}

struct fake_item {
	struct fake *f;
	int id;
	double dur;
	int calls;
	/* its calls [slow_from, slow_to) take slow times dur */
	int slow_from, slow_to;
	double slow;
};

static int fake_run(void *ctx, double *busy)
{
	struct fake_item *it = ctx;
	struct fake *f = it->f;
	int c = it->calls++;

	if (f->nlog == f->fail_at || (it->id == f->fail_id && c == f->fail_nth)) {
		f->fail_at = f->fail_id = -1;
		return SPP_E_RUNTIME;
	}
	if (f->nlog < 256)
		f->log[f->nlog] = it->id;
	f->nlog++;
	f->t += it->dur * (c >= it->slow_from && c < it->slow_to ? it->slow : 1);
	if (busy) {
		busy[0] = 1;
		busy[1] = 3;
	}
	return 0;
}

static void fake_before(void *ctx, int item)
{
	(void)item;
	((struct fake *)ctx)->before++;
}

static void bench_setup(struct fake *f, struct fake_item *fi, struct spp_bench_item *items,
			struct spp_bench_opts *o)
{
	static const double dur[3] = {100, 30, 50};

	memset(f, 0, sizeof(*f));
	f->fail_at = f->fail_id = -1;
	for (int i = 0; i < 3; i++) {
		fi[i] = (struct fake_item){f, i, dur[i], 0, 0, 0, 1};
		items[i] = (struct spp_bench_item){fake_run, &fi[i], i == 2 ? 2 : 0, 0, NULL};
	}
	spp_bench_opts_init(o);
	o->clock = (struct spp_clock){fake_now, f};
}

/* Whether log[from, from + n) holds each of the n items once. */
static int a_round(const int *log, int from, int n)
{
	int seen[8] = {0};

	for (int j = 0; j < n; j++)
		if (log[from + j] < 0 || log[from + j] >= n || seen[log[from + j]]++)
			return 0;
	return 1;
}

void test_harness_interleaved(void **state)
{
	struct fake f, g;
	struct fake_item fi[3];
	struct spp_bench_item items[3];
	struct spp_bench_opts o;
	struct spp_bench_result res[3];
	struct spp_error err = {0};
	int first[3] = {0}, same_as_rotation = 1;

	(void)state;
	bench_setup(&f, fi, items, &o);
	o.warmup = 1;
	o.repeat = 30;
	o.before = fake_before;
	o.before_ctx = &f;
	assert_int_equal(spp_bench_run(items, 3, &o, res, &err), 0);
	assert_int_equal(f.nlog, 93);
	/* the warm-up in order, then each round every item once, in a shuffled order */
	for (int i = 0; i < 3; i++)
		assert_int_equal(f.log[i], i);
	for (int r = 0; r < 30; r++) {
		assert_true(a_round(f.log, 3 + 3 * r, 3));
		first[f.log[3 + 3 * r]]++;
		same_as_rotation &= f.log[3 + 3 * r] == r % 3 && f.log[4 + 3 * r] == (r + 1) % 3;
	}
	/* every item leads some round; the orders are not the old rotation */
	assert_true(first[0] > 0 && first[1] > 0 && first[2] > 0);
	assert_false(same_as_rotation);
	/* one flush per timed run, none for warm-up */
	assert_int_equal(f.before, 90);
	NEAR(res[0].time.median, 100);
	NEAR(res[1].time.p90, 30);
	NEAR(res[2].time.p10, 50);
	assert_int_equal(res[1].time.repeats, 30);
	assert_int_equal(res[1].nrounds, 30);
	/* item 2 reports busy times 1 and 3: max / mean 1.5; the others none */
	NEAR(res[2].imbalance, 1.5);
	NEAR(res[0].imbalance, 0);
	/* the same seed, the same orders; another seed, others */
	bench_setup(&g, fi, items, &o);
	o.warmup = 1;
	o.repeat = 30;
	assert_int_equal(spp_bench_run(items, 3, &o, res, &err), 0);
	assert_memory_equal(f.log, g.log, sizeof(f.log));
	bench_setup(&g, fi, items, &o);
	o.warmup = 1;
	o.repeat = 30;
	o.seed = 2;
	assert_int_equal(spp_bench_run(items, 3, &o, res, &err), 0);
	assert_memory_not_equal(f.log, g.log, sizeof(f.log));
}

/* A self-timed run (a device's events): its own time, ten times its duration, the clock unread. */
static int fake_timed(void *ctx, double *ns)
{
	struct fake_item *it = ctx;
	int rc = fake_run(ctx, NULL);

	if (!rc)
		it->f->t -= it->dur; /* the host clock does not move */
	*ns = 10 * it->dur;
	return rc;
}

void test_harness_device(void **state)
{
	struct fake f;
	struct fake_item fi[3];
	struct spp_bench_item items[3];
	struct spp_bench_opts o;
	struct spp_bench_result res[3];
	struct spp_error err = {0};

	(void)state;
	bench_setup(&f, fi, items, &o);
	for (int i = 0; i < 3; i++)
		items[i].timed = fake_timed;
	o.warmup = 1;
	o.drop_failed = 1;
	o.budget_run_time = 1;
	/*
	 * rounds of 1800 device-ns against a budget of 5000: item 1 fails in
	 * its third timed run (its fourth call) and is dropped, the others go
	 * on, and the budget, counting device time only (the host clock moves
	 * in the warm-up alone), is spent after the third round
	 */
	o.budget_ns = 5000;
	o.min_repeats = 1;
	f.fail_id = 1;
	f.fail_nth = 3;
	assert_int_equal(spp_bench_run(items, 3, &o, res, &err), 0);
	assert_int_equal(f.nlog, 11);
	assert_true(a_round(f.log, 0, 3) && a_round(f.log, 3, 3) && a_round(f.log, 6, 3));
	assert_true(f.log[9] != 1 && f.log[10] != 1 && f.log[9] != f.log[10]);
	NEAR(f.t, 180);
	NEAR(res[0].time.median, 1000);
	NEAR(res[2].time.median, 500);
	assert_int_equal(res[0].time.repeats, 3);
	assert_int_equal(res[2].time.repeats, 3);
	assert_int_equal(res[0].rc, 0);
	assert_int_equal(res[1].rc, SPP_E_RUNTIME);
	assert_int_equal(res[1].failed_warmup, 0);
	assert_int_equal(res[1].time.repeats, 0);

	/* a failing warm-up drops the item before any timing; without drop_failed it stops all */
	bench_setup(&f, fi, items, &o);
	o.warmup = 1;
	o.repeat = 2;
	o.drop_failed = 1;
	f.fail_at = 0;
	assert_int_equal(spp_bench_run(items, 3, &o, res, &err), 0);
	assert_int_equal(res[0].rc, SPP_E_RUNTIME);
	assert_int_equal(res[0].failed_warmup, 1);
	assert_int_equal(res[1].time.repeats, 2);
	bench_setup(&f, fi, items, &o);
	f.fail_at = 0;
	assert_int_equal(spp_bench_run(items, 3, &o, res, &err), SPP_E_RUNTIME);
}

void test_harness_budget(void **state)
{
	struct fake f;
	struct fake_item fi[3];
	struct spp_bench_item items[3];
	struct spp_bench_opts o;
	struct spp_bench_result res[3];
	struct spp_error err = {0};

	(void)state;
	/* a round takes 180: 900 after 5 rounds is under 1000, 1080 after 6 is not */
	bench_setup(&f, fi, items, &o);
	o.warmup = 0;
	o.budget_ns = 1000;
	o.min_repeats = 2;
	assert_int_equal(spp_bench_run(items, 3, &o, res, &err), 0);
	assert_int_equal(res[0].time.repeats, 6);
	assert_int_equal(f.nlog, 18);

	/* the maximum stops it first */
	bench_setup(&f, fi, items, &o);
	o.budget_ns = 1e12;
	o.min_repeats = 1;
	o.max_repeats = 4;
	assert_int_equal(spp_bench_run(items, 3, &o, res, &err), 0);
	assert_int_equal(res[1].time.repeats, 4);
	assert_int_equal(f.nlog, 2 * 3 + 4 * 3);

	/* a spent budget still gives the minimum */
	bench_setup(&f, fi, items, &o);
	o.budget_ns = 1;
	o.min_repeats = 3;
	assert_int_equal(spp_bench_run(items, 3, &o, res, &err), 0);
	assert_int_equal(res[2].time.repeats, 3);

	/* blocked: each item's warm-up and runs together, budget / 3 each */
	bench_setup(&f, fi, items, &o);
	o.schedule = SPP_SCHED_BLOCKED;
	o.warmup = 1;
	o.budget_ns = 600;  /* 200 per item: 2 of 100, 7 of 30, 4 of 50 */
	o.min_repeats = 1;
	assert_int_equal(spp_bench_run(items, 3, &o, res, &err), 0);
	assert_int_equal(res[0].time.repeats, 2);
	assert_int_equal(res[1].time.repeats, 7);
	assert_int_equal(res[2].time.repeats, 4);
	assert_int_equal(f.nlog, 3 + 13);
	for (int i = 0; i < f.nlog; i++)
		assert_int_equal(f.log[i], i < 3 ? 0 : i < 11 ? 1 : 2);

	/* a failing call stops the harness with its status */
	bench_setup(&f, fi, items, &o);
	o.repeat = 2;
	f.fail_at = 4;
	assert_int_equal(spp_bench_run(items, 3, &o, res, &err), SPP_E_RUNTIME);
	assert_non_null(strstr(err.msg, "failed"));
}

static int fake_sys(void *ctx, struct spp_sys_sample *s)
{
	struct fake *f = ctx;
	int r = f->reads < 64 ? f->reads : 63;

	f->reads++;
	s->ticks = 100.0 * f->reads;
	s->steal = f->steal[r];
	s->running = f->running[r] ? f->running[r] : 1;
	return 0;
}

/* Three items, no warm-up, a budget of 900: five rounds of 180 when nothing is disturbed. */
static void disturbed_setup(struct fake *f, struct fake_item *fi, struct spp_bench_item *items,
			    struct spp_bench_opts *o)
{
	bench_setup(f, fi, items, o);
	o->warmup = 0;
	o->budget_ns = 900;
}

/*
 * Disturbed rounds: the reference (item 0, the dense candidate) slowed in
 * a round, steal risen or another task running at its end: the round is
 * discarded for every item and re-measured within twice the budget; too
 * few clean ones even so: everything kept, and said.
 */
void test_harness_disturbed(void **state)
{
	struct fake f;
	struct fake_item fi[3];
	struct spp_bench_item items[3];
	struct spp_bench_opts o;
	struct spp_bench_result res[3];
	struct spp_error err = {0};

	(void)state;
	/* a round takes 180: the budget of 900 ends after 5; rounds 1 and 2 have the reference 1.5x slower */
	disturbed_setup(&f, fi, items, &o);
	o.nref = 1;
	fi[0].slow_from = 1, fi[0].slow_to = 3, fi[0].slow = 1.5;
	fi[1].slow_from = 1, fi[1].slow_to = 3, fi[1].slow = 1.2;
	assert_int_equal(spp_bench_run(items, 3, &o, res, &err), 0);
	/* two more rounds make the five clean ones */
	assert_int_equal(f.nlog, 21);
	for (int i = 0; i < 3; i++) {
		assert_int_equal(res[i].discarded, 2);
		assert_int_equal(res[i].disturbed, 0);
		assert_int_equal(res[i].time.repeats, 5);
		assert_int_equal(res[i].nrounds, 5);
	}
	NEAR(res[0].time.p90, 100);
	NEAR(res[1].time.p90, 30);
	for (int r = 0; r < 5; r++)
		NEAR(res[0].rounds[r], 100);

	/* a slower format alone is no disturbance */
	disturbed_setup(&f, fi, items, &o);
	o.nref = 1;
	fi[2].slow_from = 1, fi[2].slow_to = 3, fi[2].slow = 2;
	assert_int_equal(spp_bench_run(items, 3, &o, res, &err), 0);
	assert_int_equal(res[0].discarded, 0);
	assert_int_equal(res[2].time.repeats, 5);

	/* the machine: steal rises in round 1, a second task runs at the end of round 3 */
	disturbed_setup(&f, fi, items, &o);
	o.sys = (struct spp_sys_probe){fake_sys, &f};
	o.expect_running = 1;
	f.steal[2] = f.steal[3] = f.steal[4] = f.steal[5] = f.steal[6] = f.steal[7] = 3;
	f.running[4] = 2;
	assert_int_equal(spp_bench_run(items, 3, &o, res, &err), 0);
	assert_int_equal(res[1].discarded, 2);
	assert_int_equal(res[1].time.repeats, 5);
	assert_int_equal(f.nlog, 21);

	/* disturbed throughout: rounds until twice the budget, then every round kept and said */
	disturbed_setup(&f, fi, items, &o);
	o.sys = (struct spp_sys_probe){fake_sys, &f};
	o.expect_running = 1;
	for (int r = 0; r < 64; r++)
		f.running[r] = 2;
	assert_int_equal(spp_bench_run(items, 3, &o, res, &err), 0);
	assert_int_equal(res[0].disturbed, 10);
	assert_int_equal(res[0].judged, 1);
	assert_int_equal(res[0].discarded, 0);
	assert_int_equal(res[0].time.repeats, 10);
	assert_int_equal(f.nlog, 30);

	/* an exact repeat count is never extended */
	bench_setup(&f, fi, items, &o);
	o.warmup = 0;
	o.repeat = 4;
	o.nref = 1;
	fi[0].slow_from = 1, fi[0].slow_to = 3, fi[0].slow = 1.5;
	assert_int_equal(spp_bench_run(items, 3, &o, res, &err), 0);
	assert_int_equal(res[0].time.repeats, 4);
	assert_int_equal(res[0].discarded, 0);
	assert_int_equal(res[0].judged, 0);
}

/*
 * The race: items 0 and 1 are the references (dense candidates), item 1
 * 30 a run. Item 0 at 100, over SPP_RACE_FAR times item 1 in its fastest
 * round, runs no more after SPP_RACE_FAR_ROUNDS rounds; at 40, over race
 * times, after min_repeats; the others get its rounds.
 */
void test_harness_race(void **state)
{
	struct fake f;
	struct fake_item fi[3];
	struct spp_bench_item items[3];
	struct spp_bench_opts o;
	struct spp_bench_result res[3];
	struct spp_error err = {0};

	(void)state;
	bench_setup(&f, fi, items, &o);
	o.warmup = 0;
	o.nref = 2;
	o.min_repeats = 5;
	o.budget_ns = 2 * 180 + 20 * 80; /* 2 rounds of 180, then 20 of 80 */
	o.race = 1.10;
	assert_int_equal(spp_bench_run(items, 3, &o, res, &err), 0);
	assert_true(res[0].retired);
	assert_false(res[1].retired || res[2].retired);
	assert_int_equal(res[0].time.repeats, SPP_RACE_FAR_ROUNDS);
	assert_int_equal(res[0].nrounds, SPP_RACE_FAR_ROUNDS);
	assert_int_equal(res[1].time.repeats, 22);
	assert_int_equal(res[2].time.repeats, 22);

	bench_setup(&f, fi, items, &o);
	fi[0].dur = 40;
	o.warmup = 0;
	o.nref = 2;
	o.min_repeats = 5;
	o.budget_ns = 5 * 120 + 20 * 80;
	o.race = 1.10;
	assert_int_equal(spp_bench_run(items, 3, &o, res, &err), 0);
	assert_true(res[0].retired);
	assert_int_equal(res[0].time.repeats, 5);
	assert_int_equal(res[1].time.repeats, 25);

	/* a close candidate (within race of the fastest) stays in */
	bench_setup(&f, fi, items, &o);
	fi[0].dur = 32;
	o.warmup = 0;
	o.nref = 2;
	o.min_repeats = 5;
	o.budget_ns = 20 * 112;
	o.race = 1.10;
	assert_int_equal(spp_bench_run(items, 3, &o, res, &err), 0);
	assert_false(res[0].retired);
	assert_int_equal(res[0].time.repeats, res[1].time.repeats);

	/* off (race 0): every reference runs to the end */
	bench_setup(&f, fi, items, &o);
	o.warmup = 0;
	o.nref = 2;
	o.min_repeats = 5;
	o.budget_ns = 10 * 180;
	assert_int_equal(spp_bench_run(items, 3, &o, res, &err), 0);
	assert_false(res[0].retired);
	assert_int_equal(res[0].time.repeats, 10);
}
