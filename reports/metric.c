/*
 * Metric paths in a saved report: parsing "runs[cpu/csr].time_ns.median",
 * reading the figure it names from a layer (or the model view), and the
 * p10-p90 spread of a timed figure, from which the noise rule of
 * docs/CHECK.md decides whether a change counts.
 */
#include "reports/gate.h"

#include <ctype.h>
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "reports/cells.h"

static int ident_start(int c)
{
	return isalpha(c) || c == '_';
}

static int ident_char(int c)
{
	return isalnum(c) || c == '_';
}

static int key_char(int c)
{
	return isalnum(c) || c == '_' || c == '/' || c == '.' || c == '-' ||
	       c == '+' || c == ':';
}

/* A quoted key "..." with \" and \\; returns characters used or -1. */
static int parse_quoted(const char *s, int col, char *out, size_t n,
			struct spp_parse_fault *f)
{
	size_t len = 0;
	int i = 1;

	for (;;) {
		char c = s[i];

		if (c == '\0')
			return spp_parse_fault_set(f, col, "unterminated string");
		if (c == '"')
			break;
		if (c == '\\') {
			if (s[i + 1] != '"' && s[i + 1] != '\\')
				return spp_parse_fault_set(f, col + i, "unknown escape '\\%c' (only \\\" and \\\\)",
					     s[i + 1] ? s[i + 1] : ' ');
			c = s[++i];
		}
		if (len + 1 >= n)
			return spp_parse_fault_set(f, col, "string longer than %zu characters", n - 1);
		out[len++] = c;
		i++;
	}
	out[len] = '\0';
	return i + 1;
}

int spp_metric_path_parse(const char *s, int col0, struct spp_metric_path *out,
			  struct spp_parse_fault *f)
{
	int i = 0;

	memset(out, 0, sizeof(*out));
	for (;;) {
		struct spp_metric_seg *seg;
		size_t len = 0;

		if (!ident_start((unsigned char)s[i]))
			return s[i] ? spp_parse_fault_set(f, col0 + i, "expected a field name, found '%c'", s[i])
				    : spp_parse_fault_set(f, col0 + i, "expected a field name at the end");
		if (out->nseg == SPP_METRIC_MAX_SEGS)
			return spp_parse_fault_set(f, col0 + i, "path deeper than %d fields", SPP_METRIC_MAX_SEGS);
		seg = &out->seg[out->nseg++];
		seg->column = col0 + i;
		while (ident_char((unsigned char)s[i])) {
			if (len + 1 >= sizeof(seg->name))
				return spp_parse_fault_set(f, col0 + i, "field name too long");
			seg->name[len++] = s[i++];
		}
		if (s[i] == '[') {
			int start = i;

			i++;
			seg->has_key = 1;
			if (s[i] == '"') {
				int used = parse_quoted(s + i, col0 + i, seg->key, sizeof(seg->key), f);

				if (used < 0)
					return -1;
				i += used;
			} else {
				len = 0;
				while (key_char((unsigned char)s[i])) {
					if (len + 1 >= sizeof(seg->key))
						return spp_parse_fault_set(f, col0 + i, "key too long");
					seg->key[len++] = s[i++];
				}
				if (s[i] == '*' || s[i] == '?')
					return spp_parse_fault_set(f, col0 + i, "'%s[...]' takes one exact key such "
						     "as cpu/csr, not a pattern", seg->name);
				if (len == 0)
					return spp_parse_fault_set(f, col0 + i, "empty or invalid key in '%s[...]'",
						     seg->name);
			}
			if (s[i] != ']')
				return spp_parse_fault_set(f, col0 + i, "expected ']' to close the '[' at column %d",
					     col0 + start);
			i++;
		}
		if (s[i] != '.')
			return i;
		i++;
	}
}

void spp_metric_path_text(const struct spp_metric_path *p, char *buf, size_t n)
{
	struct spp_buf b;

	spp_buf_init(&b, buf, n);
	for (int i = 0; i < p->nseg; i++)
		spp_buf_add(&b, "%s%s%s%s%s", i ? "." : "", p->seg[i].name, p->seg[i].has_key ? "[" : "",
			    p->seg[i].has_key ? p->seg[i].key : "", p->seg[i].has_key ? "]" : "");
}

/* The run of backend/format in a runs array; a key without '/' matches the format alone. */
static const cJSON *find_run(const cJSON *runs, const char *key)
{
	const char *slash = strchr(key, '/');
	const cJSON *r;

	cJSON_ArrayForEach(r, runs) {
		const char *b = spp_cell_str(r, "backend"), *fm = spp_cell_str(r, "format");

		if (!b || !fm)
			continue;
		if (slash) {
			if (strlen(b) == (size_t)(slash - key) &&
			    strncmp(b, key, (size_t)(slash - key)) == 0 &&
			    strcmp(fm, slash + 1) == 0)
				return r;
		} else if (strcmp(fm, key) == 0) {
			return r;
		}
	}
	return NULL;
}

static int run_times(const cJSON *t, double *med, double *p10, double *p90)
{
	return spp_cell_num(t, "median", med) && spp_cell_num(t, "p10", p10) &&
	       spp_cell_num(t, "p90", p90) && *med > 0 && *p10 > 0 && *p90 >= *p10;
}

/* p10-p90 spread of a timed figure of run (DESIGN section 4 defines each). */
static void spread(const cJSON *scope, const cJSON *run, const char *rest,
		   struct spp_metric_value *v)
{
	double med, p10, p90, dmed, dp10, dp90, s, lo, hi;
	const cJSON *dense_t;
	const char *fmt = spp_cell_str(run, "format");
	const char *backend = spp_cell_str(run, "backend");

	if (!run_times(spp_cell_get(run, "time_ns"), &med, &p10, &p90))
		return;
	if (strncmp(rest, "time_ns.", 8) == 0) {
		const cJSON *t = spp_cell_get(run, "time_ns");

		lo = p10;
		hi = p90;
		/* the median's 95 % interval, where the run has one */
		if (!strcmp(rest, "time_ns.median") && spp_cell_num(t, "ci_low", &lo) &&
		    spp_cell_num(t, "ci_high", &hi))
			v->ci = 1;
		else
			lo = p10, hi = p90;
	} else if (!strcmp(rest, "gflops") || !strcmp(rest, "bandwidth_gbs") ||
		   !strcmp(rest, "bw_util")) {
		/* rate = work / time: the fast end of the times is the high end */
		lo = v->num * med / p90;
		hi = v->num * med / p10;
	} else {
		/* speedup, efficiency, gap: t_dense / t_format, and scalings of it */
		if (fmt && !strcmp(fmt, "dense")) {
			lo = hi = v->num; /* 1 (and 1/ideal) by definition */
			goto set;
		}
		dense_t = spp_cell_get(run, "dense_time_ns");
		if (!dense_t && backend) {
			char key[2 * SPP_METRIC_NAME_MAX];

			snprintf(key, sizeof(key), "%s/dense", backend);
			dense_t = spp_cell_get(find_run(spp_cell_get(scope, "runs"), key), "time_ns");
		}
		if (!run_times(dense_t, &dmed, &dp10, &dp90) ||
		    !spp_cell_num(run, "speedup", &s) || s <= 0)
			return;
		/* the speedup's 95 % interval from the rounds, where the run has one */
		if (spp_cell_num(run, "speedup_ci_low", &lo) && spp_cell_num(run, "speedup_ci_high", &hi))
			v->ci = 1;
		else
			lo = dp10 / p90, hi = dp90 / p10;
		if (!strcmp(rest, "efficiency")) {
			lo *= v->num / s;
			hi *= v->num / s;
		} else if (!strcmp(rest, "gap")) {
			double scale = (1 - v->num) / s, l = lo;

			lo = 1 - hi * scale;
			hi = 1 - l * scale;
		}
	}
set:
	v->lo = fmin(lo, v->num);
	v->hi = fmax(hi, v->num);
	v->has_spread = 1;
}

static int is_timed(const char *rest)
{
	static const char *const timed[] = {
		"time_ns.median", "time_ns.p10", "time_ns.p90", "speedup", "efficiency",
		"gap", "gflops", "bandwidth_gbs", "bw_util",
	};

	for (size_t i = 0; i < sizeof(timed) / sizeof(timed[0]); i++)
		if (!strcmp(rest, timed[i]))
			return 1;
	return 0;
}

void spp_metric_resolve(const cJSON *scope, const struct spp_metric_path *p,
			struct spp_metric_value *v)
{
	const cJSON *cur = scope, *run = NULL, *parent = NULL;
	char where[256], rest[256] = "";
	int run_seg = -1;

	memset(v, 0, sizeof(*v));
	for (int i = 0; i < p->nseg; i++) {
		const struct spp_metric_seg *seg = &p->seg[i];
		const cJSON *m = spp_cell_get(cur, seg->name);
		struct spp_metric_path part = *p;

		if (cJSON_IsNull(cur) && i > 0) {
			/* a block that is null as a whole: every figure in it is unknown */
			part.nseg = i;
			spp_metric_path_text(&part, where, sizeof(where));
			v->kind = SPP_METRIC_NULL;
			snprintf(v->why, sizeof(v->why), "'%.150s' is null (not known in this report)",
				 where);
			return;
		}
		part.nseg = i + 1;
		spp_metric_path_text(&part, where, sizeof(where));
		if (!cJSON_IsObject(cur) || !m) {
			v->kind = SPP_METRIC_ABSENT;
			snprintf(v->why, sizeof(v->why), "no such metric '%.150s'", where);
			return;
		}
		if (seg->has_key && cJSON_IsArray(m)) {
			m = find_run(m, seg->key);
			if (!m) {
				v->kind = SPP_METRIC_ABSENT;
				snprintf(v->why, sizeof(v->why), "no such metric '%.120s' (no %.40s run)",
					 where, seg->key);
				return;
			}
			run = m;
			run_seg = i;
		} else if (seg->has_key) {
			const cJSON *k = spp_cell_get(m, seg->key);

			if (!k) {
				v->kind = cJSON_IsNull(m) ? SPP_METRIC_NULL : SPP_METRIC_ABSENT;
				snprintf(v->why, sizeof(v->why), "no such metric '%.150s'%s", where,
					 cJSON_IsNull(m) ? " (null in the report)" : "");
				return;
			}
			m = k;
		}
		parent = cur;
		cur = m;
	}
	for (int i = run_seg + 1; run && i < p->nseg; i++) {
		size_t u = strlen(rest);
		snprintf(rest + u, sizeof(rest) - u, "%s%s", u ? "." : "", p->seg[i].name);
	}
	spp_metric_path_text(p, where, sizeof(where));
	if (cJSON_IsNumber(cur) || cJSON_IsBool(cur)) {
		v->kind = SPP_METRIC_NUMBER;
		v->num = cJSON_IsBool(cur) ? (cJSON_IsTrue(cur) ? 1 : 0) : cur->valuedouble;
	} else if (cJSON_IsString(cur)) {
		v->kind = SPP_METRIC_STRING;
		v->str = cur->valuestring;
	} else if (cJSON_IsNull(cur)) {
		const char *st = spp_cell_str(run, "status"), *why = spp_cell_str(run, "reason");

		v->kind = SPP_METRIC_NULL;
		if (st && strcmp(st, "ok") != 0)
			snprintf(v->why, sizeof(v->why), "'%.100s' is null: the run is %.20s%s%.60s",
				 where, st, why ? ": " : "", why ? why : "");
		else if ((why = spp_cell_str(parent, "reason")))
			snprintf(v->why, sizeof(v->why), "'%.100s' is null: %.80s", where, why);
		else
			snprintf(v->why, sizeof(v->why), "'%.150s' is null (not known in this report)",
				 where);
		return;
	} else {
		v->kind = SPP_METRIC_OTHER;
		snprintf(v->why, sizeof(v->why), "'%.150s' is %s, not a figure", where,
			 cJSON_IsArray(cur) ? "an array" : "an object");
		return;
	}
	if (run && v->kind == SPP_METRIC_NUMBER && is_timed(rest)) {
		v->time_based = 1;
		spread(scope, run, rest, v);
	}
}

int spp_metric_outside_noise(const struct spp_metric_value *a,
			     const struct spp_metric_value *b)
{
	int b_out = a->has_spread ? (b->num < a->lo || b->num > a->hi) : b->num != a->num;
	int a_out = b->has_spread ? (a->num < b->lo || a->num > b->hi) : a->num != b->num;

	if (a->ci && b->ci)
		return a->hi < b->lo || b->hi < a->lo;
	return a_out && b_out;
}

const cJSON *spp_gate_find_layer(const cJSON *report, const char *name)
{
	const cJSON *l;

	cJSON_ArrayForEach(l, spp_cell_get(report, "layers")) {
		const char *n = spp_cell_str(l, "name");

		if (n && !strcmp(n, name))
			return l;
	}
	return NULL;
}

struct total {
	char backend[64], format[64];
	double t[3], d[3]; /* median, p10, p90 of the format, of dense */
	int layers;
};

/* Sum one layer's ok runs into the totals (dense of the same backend required). */
static int add_layer(const cJSON *layer, struct total *tot, int *ntot, int cap)
{
	const cJSON *runs = spp_cell_get(layer, "runs"), *r;

	cJSON_ArrayForEach(r, runs) {
		const char *b = spp_cell_str(r, "backend"), *fm = spp_cell_str(r, "format");
		const char *st = spp_cell_str(r, "status");
		double t[3], d[3];
		char key[160];
		int j;

		if (!b || !fm || !st || strcmp(st, "ok") ||
		    !run_times(spp_cell_get(r, "time_ns"), &t[0], &t[1], &t[2]))
			continue;
		snprintf(key, sizeof(key), "%s/dense", b);
		if (!run_times(spp_cell_get(find_run(runs, key), "time_ns"), &d[0], &d[1], &d[2]))
			continue;
		for (j = 0; j < *ntot; j++)
			if (!strcmp(tot[j].backend, b) && !strcmp(tot[j].format, fm))
				break;
		if (j == *ntot) {
			if (*ntot == cap)
				continue;
			memset(&tot[j], 0, sizeof(tot[j]));
			snprintf(tot[j].backend, sizeof(tot[j].backend), "%s", b);
			snprintf(tot[j].format, sizeof(tot[j].format), "%s", fm);
			(*ntot)++;
		}
		for (int q = 0; q < 3; q++) {
			tot[j].t[q] += t[q];
			tot[j].d[q] += d[q];
		}
		tot[j].layers++;
	}
	return 0;
}

static cJSON *times(const double *t)
{
	cJSON *o = cJSON_CreateObject();

	if (o && (!cJSON_AddNumberToObject(o, "median", t[0]) ||
		  !cJSON_AddNumberToObject(o, "p10", t[1]) ||
		  !cJSON_AddNumberToObject(o, "p90", t[2]))) {
		cJSON_Delete(o);
		return NULL;
	}
	return o;
}

cJSON *spp_gate_model_view(const cJSON *report)
{
	enum { CAP = 64 };
	struct total tot[CAP];
	int ntot = 0;
	const cJSON *l, *model = spp_cell_get(report, "model");
	cJSON *view = cJSON_IsObject(model) ? cJSON_Duplicate(model, 1) : cJSON_CreateObject();
	cJSON *runs;

	if (!view)
		return NULL;
	cJSON_DeleteItemFromObjectCaseSensitive(view, "runs");
	runs = cJSON_AddArrayToObject(view, "runs");
	if (!runs)
		goto oom;
	cJSON_ArrayForEach(l, spp_cell_get(report, "layers"))
		add_layer(l, tot, &ntot, CAP);
	for (int j = 0; j < ntot; j++) {
		cJSON *r = cJSON_CreateObject();

		if (!r)
			goto oom;
		cJSON_AddItemToArray(runs, r);
		if (!cJSON_AddStringToObject(r, "backend", tot[j].backend) ||
		    !cJSON_AddStringToObject(r, "format", tot[j].format) ||
		    !cJSON_AddStringToObject(r, "status", "ok") ||
		    !cJSON_AddNumberToObject(r, "layers", tot[j].layers) ||
		    !cJSON_AddNumberToObject(r, "speedup", tot[j].d[0] / tot[j].t[0]))
			goto oom;
		cJSON *a = times(tot[j].t), *b = times(tot[j].d);

		if (!a || !b) {
			cJSON_Delete(a);
			cJSON_Delete(b);
			goto oom;
		}
		cJSON_AddItemToObject(r, "time_ns", a);
		cJSON_AddItemToObject(r, "dense_time_ns", b);
	}
	return view;
oom:
	cJSON_Delete(view);
	return NULL;
}
