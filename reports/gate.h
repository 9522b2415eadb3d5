/*
 * Reading figures out of saved reports for `spprof compare` and
 * `spprof check` (docs/CHECK.md): metric paths ("runs[cpu/csr].speedup"),
 * their p10-p90 spreads, the rule language, and the two result trees
 * (spprof.compare/1, spprof.check/1) with their writers.
 *
 * Every tree returned here is owned by the caller (cJSON_Delete); values
 * returned inside a struct spp_metric_value borrow from the report they
 * were read from and live as long as it does.
 */
#ifndef SPP_REPORTS_GATE_H
#define SPP_REPORTS_GATE_H

#include <stddef.h>
#include <stdio.h>

#include <cjson/cJSON.h>

#include "base/error.h"

#define SPP_COMPARE_SCHEMA "spprof.compare/1"
#define SPP_CHECK_SCHEMA "spprof.check/1"

#define SPP_METRIC_MAX_SEGS 8
#define SPP_METRIC_NAME_MAX 96

/* name or name[key]: "storage", "runs[cpu/csr]", "breakeven[cpu/bsr4]". */
struct spp_metric_seg {
	char name[SPP_METRIC_NAME_MAX];
	char key[SPP_METRIC_NAME_MAX];
	int has_key;
	int column;                /* 1-based, of the name in the text parsed */
};

struct spp_metric_path {
	struct spp_metric_seg seg[SPP_METRIC_MAX_SEGS];
	int nseg;
};

/* A fault in a rule or path: what, and the 1-based column it starts at. */
struct spp_parse_fault {
	int column;
	char what[160];
};

/* Fill f with column and the formatted what; returns -1 (the parsers' failure). */
int spp_parse_fault_set(struct spp_parse_fault *f, int column, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));

/*
 * Parse a path ("pattern.nm2_4", "runs[cpu/csr].time_ns.median") from s.
 * Stops at the first character that cannot continue it and returns the
 * number of characters used (>0), or -1 with f filled (column counted from
 * col0, the column of s[0]).
 */
int spp_metric_path_parse(const char *s, int col0, struct spp_metric_path *out,
			  struct spp_parse_fault *f);

/* Canonical text of a path ("runs[cpu/csr].speedup") into buf. */
void spp_metric_path_text(const struct spp_metric_path *p, char *buf, size_t n);

enum spp_metric_kind {
	SPP_METRIC_ABSENT, /* the field is not in the report */
	SPP_METRIC_NULL,   /* present and null: unknown */
	SPP_METRIC_NUMBER, /* also a boolean, as 0 or 1 */
	SPP_METRIC_STRING,
	SPP_METRIC_OTHER,  /* an object or array: not a figure */
};

struct spp_metric_value {
	enum spp_metric_kind kind;
	double num;
	const char *str;    /* borrowed from the report */
	int time_based;     /* a timed figure (docs/CHECK.md, the noise rule) */
	int has_spread;     /* lo/hi hold its p10-p90 spread, or its 95 % interval (ci) */
	int ci;             /* lo/hi are the 95 % confidence interval from the rounds */
	double lo, hi;
	char why[200];      /* for ABSENT/NULL/OTHER: the reason, one line */
};

/*
 * Read the figure at p in scope (a layer object, or a model view from
 * spp_gate_model_view). Never fails: what is missing is said in v->why.
 */
void spp_metric_resolve(const cJSON *scope, const struct spp_metric_path *p,
			struct spp_metric_value *v);

/*
 * The model-level scope of a report: the members of "model", plus "runs":
 * per backend/format totals over the layers where the format and its
 * backend's dense baseline both ran ok ({backend, format, status, layers,
 * time_ns {median, p10, p90}, dense_time_ns {...}, speedup}). NULL only
 * when out of memory.
 */
cJSON *spp_gate_model_view(const cJSON *report);

/* Layer named name in report's layers, or NULL. */
const cJSON *spp_gate_find_layer(const cJSON *report, const char *name);

/*
 * The noise rule: whether the change from a to b is significant. Two
 * values with 95 % intervals (a speedup from interleaved rounds): the
 * intervals do not overlap. Otherwise outside both spreads (b outside a's
 * p10-p90 and a outside b's). Values without spreads are compared
 * exactly: any difference counts.
 */
int spp_metric_outside_noise(const struct spp_metric_value *a,
			     const struct spp_metric_value *b);

/* ---- compare ---- */

/*
 * The differences between two loaded reports (docs/CHECK.md): model
 * figures and per-layer figures, layers matched by name, added and removed
 * ones listed; the tree has every compared figure. NULL when out of memory
 * (err filled).
 */
cJSON *spp_compare_build(const cJSON *base, const char *base_path,
			 const cJSON *next, const char *next_path,
			 struct spp_error *err);

enum spp_gate_format { SPP_GATE_TEXT, SPP_GATE_JSON, SPP_GATE_CSV, SPP_GATE_MD };

/* "text", "json", "csv", "md"/"markdown"; 0 or -1. */
int spp_gate_format_from_name(const char *name, enum spp_gate_format *out);

/* Render a compare tree; 0, SPP_E_OUTPUT or SPP_E_NOMEM. all: unchanged rows too. */
int spp_compare_write(const cJSON *diff, enum spp_gate_format fmt, int all,
		      FILE *f, struct spp_error *err);

/* ---- check ---- */

struct spp_rule;

struct spp_rules {
	struct spp_rule *rule;
	int n;
	int needs_baseline; /* some rule is a regression rule */
};

/*
 * Load and parse a RULES.json file (docs/CHECK.md). SPP_E_IO when
 * unreadable, SPP_E_FORMAT naming the file, the rule and the column of the
 * fault otherwise. Release with spp_rules_free.
 */
int spp_rules_load(const char *path, struct spp_rules *out, struct spp_error *err);

/* Parse rules from a parsed JSON document; file names the source in messages. */
int spp_rules_parse(const cJSON *doc, const char *file, struct spp_rules *out,
		    struct spp_error *err);

void spp_rules_free(struct spp_rules *r);

/*
 * Evaluate rules on report (and baseline, NULL when none; then a regression
 * rule is a usage error). Returns the spprof.check/1 tree in *out, with
 * "failed" the number of failing rules. SPP_E_USAGE / SPP_E_NOMEM.
 */
int spp_check_run(const struct spp_rules *rules, const cJSON *report,
		  const char *report_path, const cJSON *baseline,
		  const char *baseline_path, cJSON **out, struct spp_error *err);

/* Render a check tree as text, JSON or Markdown; 0, SPP_E_OUTPUT, SPP_E_USAGE (csv). */
int spp_check_write(const cJSON *result, enum spp_gate_format fmt, FILE *f,
		    struct spp_error *err);

/* JUnit XML of a check tree: one testcase per rule and layer. */
int spp_check_write_junit(const cJSON *result, FILE *f, struct spp_error *err);

/*
 * Write a compare tree (is_check 0) or a check tree (is_check 1; junit 1
 * for JUnit XML) into path atomically: temp file, fsync, rename. 0 or
 * SPP_E_OUTPUT / SPP_E_NOMEM naming path; nothing is left behind on failure.
 */
int spp_gate_write_file(const cJSON *tree, int is_check, int junit,
			enum spp_gate_format fmt, int all, const char *path,
			struct spp_error *err);

#endif
