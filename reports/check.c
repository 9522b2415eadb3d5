/*
 * Evaluating the rules of `spprof check` on a report (and its baseline)
 * into a spprof.check/1 tree: per rule, one item per scope it covers (the
 * model, or each layer its pattern matches), each pass / fail / skip with a
 * one-line message. The writers in check_write.c render only this tree.
 */
#include "reports/gate.h"
#include "reports/rules.h"

#include <fnmatch.h>
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "reports/cells.h"

enum item_status { ITEM_PASS, ITEM_FAIL, ITEM_SKIP };

static const char *const status_name[] = {"pass", "fail", "skip"};

struct ctx {
	const cJSON *report, *baseline;
	cJSON *model_view, *base_model_view; /* owned */
	int oom;
};

static cJSON *add_item(struct ctx *c, cJSON *items, const char *target, enum item_status st,
		       const char *message)
{
	cJSON *o = cJSON_CreateObject();

	if (!o || !cJSON_AddStringToObject(o, "target", target) ||
	    !cJSON_AddStringToObject(o, "status", status_name[st]) ||
	    !cJSON_AddStringToObject(o, "message", message)) {
		cJSON_Delete(o);
		c->oom = 1;
		return NULL;
	}
	cJSON_AddItemToArray(items, o);
	return o;
}

static void add_value(struct ctx *c, cJSON *item, const char *key,
		      const struct spp_metric_value *v)
{
	cJSON *x;

	if (!item)
		return;
	if (v->kind == SPP_METRIC_NUMBER)
		x = cJSON_AddNumberToObject(item, key, v->num);
	else if (v->kind == SPP_METRIC_STRING)
		x = cJSON_AddStringToObject(item, key, v->str);
	else
		x = cJSON_AddNullToObject(item, key);
	if (!x)
		c->oom = 1;
	if (v->has_spread) {
		char k[64];

		snprintf(k, sizeof(k), "%s_%s", key, v->ci ? "ci95" : "p10_p90");
		x = cJSON_AddArrayToObject(item, k);
		if (!x || !cJSON_AddItemToArray(x, cJSON_CreateNumber(v->lo)) ||
		    !cJSON_AddItemToArray(x, cJSON_CreateNumber(v->hi)))
			c->oom = 1;
	}
}

static int compare(double a, enum spp_rule_op op, double b)
{
	switch (op) {
	case SPP_OP_EQ:
		return a == b;
	case SPP_OP_NE:
		return a != b;
	case SPP_OP_GE:
		return a >= b;
	case SPP_OP_LE:
		return a <= b;
	case SPP_OP_GT:
		return a > b;
	case SPP_OP_LT:
		return a < b;
	}
	return 0;
}

static void eval_bound(struct ctx *c, const struct spp_rule *r, const cJSON *scope,
		       const char *target, cJSON *items, int *nfail)
{
	struct spp_metric_value v;
	enum item_status st;
	char msg[400], path[256];
	cJSON *item;

	spp_metric_resolve(scope, &r->path, &v);
	spp_metric_path_text(&r->path, path, sizeof(path));
	if (v.kind != SPP_METRIC_NUMBER && v.kind != SPP_METRIC_STRING) {
		st = ITEM_FAIL;
		snprintf(msg, sizeof(msg), "%s", v.why);
	} else if (r->rhs_is_str != (v.kind == SPP_METRIC_STRING)) {
		st = ITEM_FAIL;
		if (v.kind == SPP_METRIC_STRING)
			snprintf(msg, sizeof(msg), "'%s' is the string \"%.60s\", not a number",
				 path, v.str);
		else
			snprintf(msg, sizeof(msg), "'%s' is the number %.6g, not a string", path, v.num);
	} else if (r->rhs_is_str) {
		int eq = strcmp(v.str, r->rhs_str) == 0;

		st = (r->op == SPP_OP_EQ) == eq ? ITEM_PASS : ITEM_FAIL;
		snprintf(msg, sizeof(msg), "%s = \"%.60s\"%s%s \"%.60s\"", path, v.str,
			 st == ITEM_PASS ? ", " : ", needs ", spp_rule_op_text(r->op), r->rhs_str);
	} else {
		st = compare(v.num, r->op, r->rhs) ? ITEM_PASS : ITEM_FAIL;
		snprintf(msg, sizeof(msg), "%s = %.6g%s%s %.6g", path, v.num,
			 st == ITEM_PASS ? ", " : ", needs ", spp_rule_op_text(r->op), r->rhs);
	}
	item = add_item(c, items, target, st, msg);
	add_value(c, item, "value", &v);
	*nfail += st == ITEM_FAIL;
}

static void eval_regression(struct ctx *c, const struct spp_rule *r, const cJSON *scope,
			    const cJSON *base_scope, const char *target, cJSON *items,
			    int *nfail, int *nskip)
{
	struct spp_metric_value v, b;
	enum item_status st = ITEM_PASS;
	char msg[400], path[256], change[64] = "";
	const char *why = NULL;
	cJSON *item;

	spp_metric_path_text(&r->path, path, sizeof(path));
	if (!base_scope) {
		add_item(c, items, target, ITEM_SKIP, "not in the baseline: nothing to regress from");
		(*nskip)++;
		return;
	}
	spp_metric_resolve(base_scope, &r->path, &b);
	spp_metric_resolve(scope, &r->path, &v);
	if (b.kind != SPP_METRIC_NUMBER) {
		snprintf(msg, sizeof(msg), "baseline: %s", b.kind == SPP_METRIC_STRING
			 ? "not a number" : b.why);
		st = ITEM_SKIP;
	} else if (v.kind != SPP_METRIC_NUMBER) {
		snprintf(msg, sizeof(msg), "%s (baseline %.6g)", v.kind == SPP_METRIC_STRING
			 ? "not a number" : v.why, b.num);
		st = ITEM_FAIL;
	} else {
		double drop_limit = b.num - fabs(b.num) * r->max_drop;
		double grow_limit = b.num + fabs(b.num) * r->max_growth;
		int bad = (r->has_drop && v.num < drop_limit) ||
			  (r->has_growth && v.num > grow_limit);

		if (b.num != 0)
			snprintf(change, sizeof(change), " (%+.1f %%)", (v.num - b.num) / fabs(b.num) * 100);
		if (bad && v.time_based && !spp_metric_outside_noise(&b, &v)) {
			why = "within the runs' p10-p90 spreads: noise, not a regression";
			bad = 0;
		}
		st = bad ? ITEM_FAIL : ITEM_PASS;
		if (bad && r->has_drop && v.num < drop_limit)
			why = r->max_drop > 0 ? "fell more than allowed" : "fell";
		else if (bad)
			why = r->max_growth > 0 ? "grew more than allowed" : "grew";
		snprintf(msg, sizeof(msg), "%s %.6g -> %.6g%s%s%s%s", path, b.num, v.num, change,
			 why ? ": " : "", why ? why : "", "");
		if (bad) {
			size_t u = strlen(msg);

			if (r->has_drop && v.num < drop_limit)
				snprintf(msg + u, sizeof(msg) - u, " (max_drop %g %%)", r->max_drop * 100);
			else
				snprintf(msg + u, sizeof(msg) - u, " (max_growth %g %%)", r->max_growth * 100);
		}
	}
	item = add_item(c, items, target, st, msg);
	add_value(c, item, "value", &v);
	add_value(c, item, "baseline", &b);
	*nfail += st == ITEM_FAIL;
	*nskip += st == ITEM_SKIP;
}

static cJSON *eval_rule(struct ctx *c, const struct spp_rule *r)
{
	cJSON *o = cJSON_CreateObject(), *items;
	int nfail = 0, nskip = 0, nitems;
	const cJSON *l;

	if (!o || !cJSON_AddStringToObject(o, "name", r->name) ||
	    !cJSON_AddStringToObject(o, "kind", r->regression ? "regression" : "bound") ||
	    !cJSON_AddStringToObject(o, r->regression ? "regression" : "expr", r->text) ||
	    (r->has_drop && !cJSON_AddNumberToObject(o, "max_drop", r->max_drop)) ||
	    (r->has_growth && !cJSON_AddNumberToObject(o, "max_growth", r->max_growth)) ||
	    !(items = cJSON_CreateArray())) {
		cJSON_Delete(o);
		c->oom = 1;
		return NULL;
	}
	if (r->scope != SPP_SCOPE_LAYERS) {
		const cJSON *s, *bs;
		const char *target = r->scope == SPP_SCOPE_MODEL ? "model" : "summary";

		s = r->scope == SPP_SCOPE_MODEL ? c->model_view : spp_cell_get(c->report, "summary");
		bs = r->scope == SPP_SCOPE_MODEL ? c->base_model_view
						 : spp_cell_get(c->baseline, "summary");
		if (r->regression)
			eval_regression(c, r, s, bs, target, items, &nfail, &nskip);
		else
			eval_bound(c, r, s, target, items, &nfail);
	} else {
		cJSON_ArrayForEach(l, spp_cell_get(c->report, "layers")) {
			const char *name = spp_cell_str(l, "name");

			if (!name || fnmatch(r->pattern, name, 0) != 0)
				continue;
			if (r->regression)
				eval_regression(c, r, l, spp_gate_find_layer(c->baseline, name),
						name, items, &nfail, &nskip);
			else
				eval_bound(c, r, l, name, items, &nfail);
		}
	}
	nitems = cJSON_GetArraySize(items);
	if (nitems == 0) {
		char msg[320];

		snprintf(msg, sizeof(msg), "no layer matches '%.256s'", r->pattern);
		add_item(c, items, "(no layer)", ITEM_FAIL, msg);
		nfail++;
		nitems = 1;
	}
	cJSON_AddItemToObject(o, "items", items);
	if (!cJSON_AddStringToObject(o, "status", nfail ? "fail" : "pass") ||
	    !cJSON_AddNumberToObject(o, "checked", nitems - nskip) ||
	    !cJSON_AddNumberToObject(o, "failed", nfail) ||
	    !cJSON_AddNumberToObject(o, "skipped", nskip))
		c->oom = 1;
	return o;
}

int spp_check_run(const struct spp_rules *rules, const cJSON *report,
		  const char *report_path, const cJSON *baseline,
		  const char *baseline_path, cJSON **out, struct spp_error *err)
{
	struct ctx c = {.report = report, .baseline = baseline};
	cJSON *root = NULL, *arr;
	int failed = 0, rc = SPP_OK;

	*out = NULL;
	for (int i = 0; i < rules->n && !baseline; i++)
		if (rules->rule[i].regression)
			return spp_error_set(err, SPP_E_USAGE,
					     "rule '%.80s' is a regression rule: it needs --baseline",
					     rules->rule[i].name);
	c.model_view = spp_gate_model_view(report);
	c.base_model_view = baseline ? spp_gate_model_view(baseline) : NULL;
	root = cJSON_CreateObject();
	if (!c.model_view || (baseline && !c.base_model_view) || !root ||
	    !cJSON_AddStringToObject(root, "schema", SPP_CHECK_SCHEMA) ||
	    !cJSON_AddStringToObject(root, "report", report_path) ||
	    !(baseline_path ? cJSON_AddStringToObject(root, "baseline", baseline_path)
			    : cJSON_AddNullToObject(root, "baseline")) ||
	    !(arr = cJSON_AddArrayToObject(root, "rules")))
		goto oom;
	for (int i = 0; i < rules->n; i++) {
		cJSON *o = eval_rule(&c, &rules->rule[i]);

		if (!o)
			goto oom;
		cJSON_AddItemToArray(arr, o);
		failed += strcmp(spp_cell_str(o, "status"), "fail") == 0;
	}
	if (c.oom || !cJSON_AddNumberToObject(root, "rules_total", rules->n) ||
	    !cJSON_AddNumberToObject(root, "passed", rules->n - failed) ||
	    !cJSON_AddNumberToObject(root, "failed", failed))
		goto oom;
	*out = root;
	root = NULL;
	goto done;
oom:
	rc = spp_error_set(err, SPP_E_NOMEM, "out of memory evaluating the rules");
done:
	cJSON_Delete(root);
	cJSON_Delete(c.model_view);
	cJSON_Delete(c.base_model_view);
	return rc;
}
