/*
 * One parsed rule of `spprof check` (private to reports/: rules.c parses,
 * check.c evaluates). docs/CHECK.md has the grammar.
 */
#ifndef SPP_REPORTS_RULES_H
#define SPP_REPORTS_RULES_H

#include "reports/gate.h"

enum spp_rule_scope { SPP_SCOPE_MODEL, SPP_SCOPE_SUMMARY, SPP_SCOPE_LAYERS };

/* In the order of their text in rules.c. */
enum spp_rule_op { SPP_OP_EQ, SPP_OP_NE, SPP_OP_GE, SPP_OP_LE, SPP_OP_GT, SPP_OP_LT };

struct spp_rule {
	char name[128];
	char text[512];          /* the expr or regression target as written */
	int regression;
	enum spp_rule_scope scope;
	char pattern[256];       /* layers[PATTERN], an fnmatch glob */
	struct spp_metric_path path;
	enum spp_rule_op op;     /* bound rules */
	int rhs_is_str;
	double rhs;
	char rhs_str[128];
	int has_drop, has_growth; /* regression rules */
	double max_drop, max_growth;
};

/* "==", ">=", ... */
const char *spp_rule_op_text(enum spp_rule_op op);

/* Parse a bound expression / a regression target into r; -1 with f on a fault. */
int spp_rule_parse_expr(const char *s, struct spp_rule *r, struct spp_parse_fault *f);
int spp_rule_parse_target(const char *s, struct spp_rule *r, struct spp_parse_fault *f);

/*
 * 0 when path p, read in scope (enum spp_rule_scope), names a field the
 * report's schema has (metric_schema.c); else -1 with f: "no metric
 * 'runs[cpu/csr].speedupp' in a layer of a report ...", at its column.
 */
int spp_metric_path_check(int scope, const struct spp_metric_path *p, struct spp_parse_fault *f);

/*
 * The report schema's node of a layer (runs 0) or of a run (runs 1), and
 * the node of member name of a node (NULL when the schema has no such
 * field): the fixed set of fields a writer of columns may take.
 */
const cJSON *spp_report_schema_row(int runs);
const cJSON *spp_report_schema_member(const cJSON *node, const char *name);

#endif
