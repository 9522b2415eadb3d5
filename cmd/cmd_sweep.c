/*
 * spprof sweep: the breakeven curve of one shape and pattern (DESIGN
 * section 5). Each format and the dense baseline are timed on synthetic W
 * at a grid of sparsities, refined between the bracketing points by
 * profiler/sweep.c; this file parses options and prints.
 */
#include <inttypes.h>
#include <math.h>
#include <omp.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cmd/cmd.h"
#include "reports/json_values.h"
#include "reports/report.h"
#include "kernels/dense/dense.h"
#include "base/atomic_file.h"
#include "profiler/run.h"
#include "profiler/session.h"
#include "profiler/sweep.h"

#define SWEEP_MAX_FORMATS 32

struct sweep_cfg {
	struct spp_sweep_opts so;
	const struct spp_format_ops *formats[SWEEP_MAX_FORMATS];
	int nformats;
	struct spp_session_opts session; /* --dense, --time-budget, --cold, --seed */
	int json;
	const char *output;
	const char *format;          /* --format */
	const char *formats_list;    /* --formats: parsed once the pattern is known */
	int shape_set;
	int shape_dims;              /* 2: MxK (with --n), 3: MxKxN */
	int64_t ns[SPP_NSWEEP_MAX_N]; /* --n: the N sweep's N */
	int nn;
	double sparsity;             /* --sparsity: the N sweep's W */
	int sparsity_set;
};

/* "64x64x8" or "64x64": two or three integers in [1, 2^20] (*dims); 0 or -1. */
static int parse_shape(const char *s, int64_t *m, int64_t *k, int64_t *n, int *dims)
{
	char buf[96], *save = NULL, *t;
	int64_t v[3];
	int i = 0;

	if (snprintf(buf, sizeof(buf), "%s", s) >= (int)sizeof(buf))
		return -1;
	for (t = strtok_r(buf, "xX", &save); t; t = strtok_r(NULL, "xX", &save)) {
		if (i >= 3 || cmd_parse_i64(t, 1, INT64_C(1) << 20, &v[i]))
			return -1;
		i++;
	}
	if (i < 2 || v[0] * v[1] > INT64_C(1) << 30)
		return -1;
	*m = v[0], *k = v[1], *n = i == 3 ? v[2] : 0;
	*dims = i;
	return 0;
}

/* "unstructured", "nm2_4", "block4", "channel" into o; 0 or -1. */
static int parse_pattern(const char *s, struct spp_sweep_opts *o)
{
	int a, b, used = 0;

	if (strcmp(s, "unstructured") == 0) {
		o->pattern = SPP_SYNTH_UNSTRUCTURED;
	} else if (strcmp(s, "channel") == 0) {
		o->pattern = SPP_SYNTH_CHANNEL;
	} else if (sscanf(s, "nm%d_%d%n", &a, &b, &used) == 2 && s[used] == '\0') {
		if (a < 1 || b < 1 || a > b || b > 64)
			return -1;
		o->pattern = SPP_SYNTH_NM;
		o->nm_n = a;
		o->nm_m = b;
	} else if (sscanf(s, "block%d%n", &a, &used) == 1 && s[used] == '\0') {
		if (a != 2 && a != 4 && a != 8 && a != 16)
			return -1;
		o->pattern = SPP_SYNTH_BLOCK;
		o->block = a;
	} else {
		return -1;
	}
	return 0;
}

/* Whether format f can hold W of the sweep's pattern (an N:M format only its own N:M). */
static int holds(const struct spp_format_ops *f, const struct spp_sweep_opts *o)
{
	if (f->keep == 0)
		return 1;
	return o->pattern == SPP_SYNTH_NM && f->keep == o->nm_n && f->block == o->nm_m;
}

static int opt_shape(const char *cmd, const struct cmd_option *o, const char *arg, void *args)
{
	struct sweep_cfg *c = args;

	(void)o;
	if (parse_shape(arg, &c->so.m, &c->so.k, &c->so.n, &c->shape_dims))
		return cmd_usage_error(cmd, "--shape wants MxKxN (MxK with --n), each in 1..2^20 and "
				       "M*K <= 2^30, not '%s'", arg);
	return 0;
}

static int opt_pattern(const char *cmd, const struct cmd_option *o, const char *arg, void *args)
{
	(void)o;
	if (parse_pattern(arg, &((struct sweep_cfg *)args)->so))
		return cmd_usage_error(cmd, "--pattern wants unstructured, nmN_M, blockB (B in 2, 4, "
				       "8, 16) or channel, not '%s'", arg);
	return 0;
}

static int opt_backends(const char *cmd, const struct cmd_option *o, const char *arg, void *args)
{
	int cpu, cuda, rc = cmd_parse_backends(cmd, arg, &cpu, &cuda);

	(void)o;
	(void)args;
	if (!rc && cuda)
		return cmd_usage_error(cmd, "backend 'cuda' is not available to the sweep (cpu)");
	return rc;
}

#define S struct sweep_cfg

/* The session's options as sweep starts them, and help states them. */
static const struct spp_session_opts sweep_session = {
	.time_budget_s = 0.1,
	.seed = 1,
};

static const struct cmd_option sweep_options[] = {
	{CMD_CALLBACK("shape", "MxKxN", opt_shape), CMD_SEEN(S, shape_set),
	 .help = "the GEMM shape (required); MxK with --n"},
	{CMD_INT_LIST("n", "LIST", S, ns, nn, SPP_NSWEEP_MAX_N, 1, INT64_C(1) << 20),
	 .help = "speedup against N instead of sparsity: time every format at each N of "
		 "the ascending LIST (e.g. 1,2,4,8,16,32,64,128,256) on one W at --sparsity, "
		 "and print where each format wins and the crossover N"},
	{CMD_DOUBLE("sparsity", "S", S, sparsity, 0, 1, CMD_OPT_MAX_OPEN), CMD_SEEN(S, sparsity_set),
	 .help = "with --n: the sparsity of W (required but for nmN_M, which fixes it)"},
	{CMD_CALLBACK("pattern", "P", opt_pattern),
	 .help = "unstructured (default), nmN_M (e.g. nm2_4), blockB (B in 2, 4, 8, 16) or "
		 "channel"},
	{CMD_STRING("formats", "F,...", S, formats_list),
	 .help = "formats; default every CPU format that can hold the pattern (N:M formats "
		 "only with their own pattern)"},
	{CMD_CALLBACK("backends", "cpu", opt_backends),
	 .help = "backends (only cpu is built into the sweep)"},
	{CMD_OPT_THREADS(S, so.threads),
	 .help = "threads of the kernels and the dense baseline; default 1"},
	{CMD_OPT_SESSION(S, session, &sweep_session)},
	{CMD_OPT_FORMAT(S, format), .help = "text or json; default text, or from -o's extension"},
	{CMD_OPT_OUTPUT(S, output), .help = "write to FILE atomically instead of stdout"},
	{0},
};

#undef S

const struct cmd_help cmd_sweep_help = {
	.head = "usage: spprof sweep --shape MxKxN [options]\n"
		"       spprof sweep --shape MxK --n LIST --sparsity S [options]\n"
		"\n"
		"Time each format and the dense baseline (the fastest dense candidate) on synthetic W of\n"
		"shape M x K, applied to N columns, with the given pattern, over a sweep\n"
		"of sparsities; refine between the bracketing points and print the\n"
		"breakeven sparsity per format (the lowest from which it beats dense), or\n"
		"'never' with the reason, and the curve. Each output is checked against\n"
		"dense before it is timed. With --n, the speedup against N instead: one W\n"
		"at --sparsity, each format timed at each N, the N where it wins and the\n"
		"crossover N where its speedup passes 1.\n",
	.options = sweep_options,
	.tail = "exit codes: 0 ok, 2 bad usage, 3 runtime failure\n",
};

static void print_sparsity(FILE *f, double s)
{
	if (isnan(s))
		fprintf(f, "never");
	else
		fprintf(f, "%.1f%%", 100.0 * s);
}

/*
 * r's breakeven cell into be: "never", "25.9%", or with its bracket where
 * both ends are known, "25.9% (25.6-26.3%)" with an en dash. Its width in
 * columns.
 */
static int breakeven_cell(const struct spp_sweep_result *r, char *be, size_t n)
{
	if (isnan(r->breakeven))
		return snprintf(be, n, "never");
	if (isfinite(r->breakeven_low) && isfinite(r->breakeven_high))
		return snprintf(be, n, "%.1f%% (%.1f\xe2\x80\x93%.1f%%)", 100.0 * r->breakeven,
				100.0 * r->breakeven_low, 100.0 * r->breakeven_high) - 2;
	return snprintf(be, n, "%.1f%%", 100.0 * r->breakeven);
}

static void print_text(FILE *f, const struct spp_sweep *s)
{
	char be[48];
	int w = 10;

	fprintf(f, "sweep %" PRId64 "x%" PRId64 "x%" PRId64 " %s, %d thread%s\n\n",
		s->m, s->k, s->n, s->pattern, s->threads, s->threads == 1 ? "" : "s");
	for (int i = 0; i < s->nresults; i++) {
		int cw = breakeven_cell(&s->results[i], be, sizeof(be));

		w = cw > w ? cw : w;
	}
	fprintf(f, "%-14s %-*s %s\n", "format", w, "breakeven", "reason");
	for (int i = 0; i < s->nresults; i++) {
		const struct spp_sweep_result *r = &s->results[i];
		char key[40];
		int cw = breakeven_cell(r, be, sizeof(be));

		snprintf(key, sizeof(key), "%s/%s", r->backend, r->format);
		fprintf(f, "%-14s %s%*s %s\n", key, be, w - cw, "", r->reason[0] ? r->reason : "-");
	}
	for (int i = 0; i < s->nresults; i++) {
		const struct spp_sweep_result *r = &s->results[i];

		fprintf(f, "\n%s/%s curve (breakeven ", r->backend, r->format);
		print_sparsity(f, r->breakeven);
		fprintf(f, ")\n%10s %14s %14s %9s\n", "sparsity", "time_ns", "dense_ns", "speedup");
		for (int p = 0; p < r->npoints; p++) {
			const struct spp_sweep_point *pt = &r->curve[p];

			fprintf(f, "%9.1f%% %14.0f %14.0f ", 100.0 * pt->sparsity, pt->time_ns,
				pt->dense_time_ns);
			if (isnan(pt->speedup))
				fprintf(f, "%9s\n", "-");
			else
				fprintf(f, "%8.2fx\n", pt->speedup);
		}
	}
}

/* The dense baseline of the sweep's shape: one line of text. */
static void print_dense(FILE *f, const struct spp_dense_memo *memo)
{
	const struct spp_dense_choice *ch = memo->n ? &memo->c[0] : NULL;

	if (!ch || ch->winner < 0)
		return;
	fprintf(f, "dense baseline: %s, %s, the fastest of", ch->t[ch->winner].name,
		ch->t[ch->winner].library);
	for (int i = 0; i < ch->nt; i++)
		if (ch->t[i].time.repeats > 0)
			fprintf(f, "%s %s %.4g ms", i ? "," : "", ch->t[i].name, ch->t[i].time.median / 1e6);
		else
			fprintf(f, "%s %s (%s)", i ? "," : "", ch->t[i].name, ch->t[i].reason);
	fprintf(f, " at sparsity 0\n");
}

/*
 * Write j (JSON mode; taken, NULL: out of memory) or the text print(f,
 * arg) to -o atomically, or to stdout.
 */
static int emit(const struct sweep_cfg *c, const struct spp_run_settings *rs, cJSON *j,
		void (*print)(FILE *, const void *), const void *arg, struct spp_error *err)
{
	struct spp_atomic_file af = {0};
	FILE *f = stdout;
	char *text = NULL;
	int rc = SPP_OK;

	if (c->json) {
		text = j ? spp_json_text_exact(j, 1) : NULL;
		cJSON_Delete(j);
		if (!text)
			return spp_error_set(err, SPP_E_NOMEM, "out of memory for the sweep JSON");
	}
	if (c->output) {
		rc = spp_atomic_open(&af, c->output, err);
		if (rc)
			goto out;
		f = af.f;
	}
	if (text)
		fprintf(f, "%s\n", text);
	else
		print(f, arg);
	if (!text)
		fprintf(f, "\ncaches: %s%s (%s)\n", rs->cold ? "cold, " : "warm, each run follows the last",
			rs->cold_method, rs->cache_rule);
	if (c->output)
		rc = spp_atomic_commit(&af, err);
out:
	spp_atomic_abort(&af);
	free(text);
	return rc;
}

struct sweep_text {
	const struct spp_sweep *s;
	const struct spp_dense_memo *memo;
};

static void print_sweep(FILE *f, const void *arg)
{
	const struct sweep_text *t = arg;

	print_dense(f, t->memo);
	print_text(f, t->s);
}

static int write_out(const struct sweep_cfg *c, const struct spp_sweep *s,
		     const struct spp_session *sess, struct spp_error *err)
{
	struct sweep_text t = {s, &sess->rec->dense_memo};

	return emit(c, &sess->rec->settings,
		    c->json ? spp_report_sweep(s, &sess->rec->dense_memo, &sess->rec->settings) : NULL,
		    print_sweep, &t, err);
}

static void print_nsweep(FILE *f, const void *arg)
{
	const struct spp_nsweep *s = arg;

	fprintf(f, "speedup against N, %" PRId64 "x%" PRId64 " %s at %.1f%%, %d thread%s\n\n",
		s->m, s->k, s->pattern, 100.0 * s->sparsity, s->threads, s->threads == 1 ? "" : "s");
	fprintf(f, "%-14s %-24s %s\n", "format", "wins at N", "crossover N");
	for (int i = 0; i < s->nresults; i++) {
		const struct spp_nsweep_result *r = &s->results[i];
		char key[40];

		snprintf(key, sizeof(key), "%s/%s", r->backend, r->format);
		fprintf(f, "%-14s %-24s", key, r->wins[0] ? r->wins : "none");
		for (int c = 0; c < r->ncross; c++)
			fprintf(f, "%s%.3g (faster %s)", c ? ", " : " ", r->cross[c].n,
				r->cross[c].faster_above ? "above" : "below");
		fprintf(f, "%s\n", r->ncross ? "" : " -");
		if (r->reason[0])
			fprintf(f, "%14s %s\n", "", r->reason);
	}
	fprintf(f, "\n%8s", "N");
	for (int i = 0; i < s->nresults; i++)
		fprintf(f, " %10s", s->results[i].format);
	fprintf(f, " %12s\n", "dense_ns");
	for (int p = 0; s->nresults && p < s->results[0].npoints; p++) {
		fprintf(f, "%8" PRId64, s->results[0].n[p]);
		for (int i = 0; i < s->nresults; i++) {
			double v = s->results[i].curve[p].speedup;

			if (isnan(v))
				fprintf(f, " %10s", "-");
			else
				fprintf(f, " %9.2fx", v);
		}
		fprintf(f, " %12.0f\n", s->results[0].curve[p].dense_time_ns);
	}
}

/* The N sweep as JSON (with the dense choice of each N) or text. */
static int write_nsweep(const struct sweep_cfg *c, const struct spp_nsweep *s,
			const struct spp_session *sess, struct spp_error *err)
{
	return emit(c, &sess->rec->settings,
		    c->json ? spp_report_nsweep(s, &sess->rec->dense_memo, &sess->rec->settings) : NULL,
		    print_nsweep, s, err);
}

static int run(struct sweep_cfg *c, struct spp_session *sess, struct spp_error *err)
{
	struct spp_run_opts ro;
	struct spp_sweep_measure sm = {0};
	struct spp_sweep_timer timer;
	struct spp_sweep sw = {0};
	int rc;

	spp_session_runs(sess, c->so.threads, &ro);
	sm.sweep = &c->so;
	sm.run = &ro;
	sm.seed = c->session.seed;
	spp_sweep_measure_timer(&sm, &timer);
	if (c->nn) {
		struct spp_nsweep ns = {0};

		rc = spp_nsweep_run(&c->so, c->sparsity, c->ns, c->nn, c->formats, c->nformats, &timer,
				    &ns, err);
		if (!rc)
			rc = write_nsweep(c, &ns, sess, err);
		spp_nsweep_release(&ns);
	} else {
		rc = spp_sweep_run(&c->so, c->formats, c->nformats, &timer, &sw, err);
		if (!rc)
			rc = write_out(c, &sw, sess, err);
		spp_sweep_release(&sw);
	}
	spp_sweep_measure_fini(&sm);
	return rc;
}

/* The formats of --formats, or the default; 0, or 2 after the usage error. */
static int sweep_formats(struct sweep_cfg *c)
{
	int rc;

	if (!c->formats_list) {
		for (int i = 0; spp_cpu_formats[i] && c->nformats < SWEEP_MAX_FORMATS; i++)
			if (holds(spp_cpu_formats[i], &c->so))
				c->formats[c->nformats++] = spp_cpu_formats[i];
		return 0;
	}
	if ((rc = cmd_parse_formats("sweep", c->formats_list, c->formats, SWEEP_MAX_FORMATS,
				    &c->nformats, 0)))
		return rc;
	for (int i = 0; i < c->nformats; i++)
		if (!holds(c->formats[i], &c->so)) {
			char p[32];

			spp_sweep_pattern_name(&c->so, p, sizeof(p));
			return cmd_usage_error("sweep", "format '%s' cannot hold the pattern '%s'",
					       c->formats[i]->key, p);
		}
	return 0;
}

/* --n, --sparsity and the shape's form agree; 0, or 2 after the usage error. */
static int check_nsweep(struct sweep_cfg *c)
{
	if (!c->nn) {
		if (c->shape_dims != 3)
			return cmd_usage_error("sweep", "--shape wants MxKxN (MxK only with --n)");
		if (c->sparsity_set)
			return cmd_usage_error("sweep", "--sparsity is for the N sweep (--n)");
		return 0;
	}
	if (c->shape_dims != 2)
		return cmd_usage_error("sweep", "with --n, --shape is MxK (the N come from --n)");
	for (int i = 1; i < c->nn; i++)
		if (c->ns[i] <= c->ns[i - 1])
			return cmd_usage_error("sweep", "--n wants ascending, distinct N (%" PRId64
					       " after %" PRId64 ")", c->ns[i], c->ns[i - 1]);
	if (c->so.pattern == SPP_SYNTH_NM) {
		double s = 1.0 - (double)c->so.nm_n / c->so.nm_m;

		if (c->sparsity_set && fabs(c->sparsity - s) > 0.005)
			return cmd_usage_error("sweep", "nm%d_%d fixes the sparsity at %.4g, not %g",
					       c->so.nm_n, c->so.nm_m, s, c->sparsity);
		c->sparsity = s;
	} else if (!c->sparsity_set) {
		return cmd_usage_error("sweep", "--n wants --sparsity S (the sparsity of W)");
	}
	return 0;
}

int cmd_sweep(int argc, char **argv)
{
	struct spp_session sess;
	struct sweep_cfg c;
	struct spp_error err = {0};
	int rc, npos;

	memset(&c, 0, sizeof(c));
	spp_sweep_opts_init(&c.so);
	c.so.threads = 1;
	c.session = sweep_session;
	if ((rc = cmd_parse_options("sweep", sweep_options, &c, argc, argv, &npos)))
		return rc;
	if (npos)
		return cmd_usage_error("sweep", "unexpected argument '%s'", argv[1]);
	if (!c.shape_set)
		return cmd_usage_error("sweep", "--shape MxKxN is required");
	if ((rc = check_nsweep(&c)))
		return rc;
	if (c.format && strcmp(c.format, "text") && strcmp(c.format, "json"))
		return cmd_usage_error("sweep", "unknown --format '%s' (text, json)", c.format);
	c.json = c.format ? strcmp(c.format, "json") == 0
			  : c.output && strlen(c.output) > 5 &&
				    strcmp(c.output + strlen(c.output) - 5, ".json") == 0;
	if ((rc = sweep_formats(&c)))
		return rc;
	/* --cache auto: W as the dense baseline reads it */
	c.session.weights_bytes = (uint64_t)c.so.m * (uint64_t)c.so.k * 4;
	rc = cmd_session_open("sweep", &c.session, NULL, 0, &sess);
	if (!rc && (rc = run(&c, &sess, &err)))
		rc = cmd_fail(&err);
	spp_session_close(&sess);
	return rc;
}
