/*
 * Renderings of a spprof.compare/1 tree: text and Markdown list the figures
 * that changed (all of them with `all`), CSV and JSON hold every figure.
 */
#include "reports/gate.h"

#include <errno.h>
#include <math.h>
#include <string.h>


#include "reports/cells.h"
#include "reports/report.h"

static const char *str(const cJSON *o, const char *key)
{
	const char *s = spp_cell_str(o, key);

	return s ? s : "";
}

/* A figure for people: integers whole, else 6 significant digits, strings as they are, null as "—". */
static void value_text(const cJSON *v, char *buf, size_t n)
{
	if (cJSON_IsNumber(v))
		spp_cell_figure(v->valuedouble, 6, 0, buf, n);
	else if (cJSON_IsString(v))
		snprintf(buf, n, "%s", v->valuestring);
	else
		snprintf(buf, n, "%s", "—");
}

static void change_text(const cJSON *e, char *buf, size_t n)
{
	const char *ch = str(e, "change");
	double d, rel;

	if (spp_cell_num(e, "delta", &d) && d != 0) {
		int u;

		spp_cell_figure(d, 4, 1, buf, n);
		u = (int)strlen(buf);

		if (spp_cell_num(e, "rel_change", &rel) && u > 0 && (size_t)u < n)
			snprintf(buf + u, n - (size_t)u, " (%+.1f%%)", rel * 100);
		if (!strcmp(ch, "noise")) {
			size_t l = strlen(buf);
			snprintf(buf + l, n - l, "%s", ", within noise");
		}
		return;
	}
	snprintf(buf, n, "%s", ch);
}

/* Without all, only real changes: not the unchanged, not those within noise. */
static int shown(const cJSON *e, int all)
{
	const char *ch = str(e, "change");

	return all || (strcmp(ch, "same") != 0 && strcmp(ch, "noise") != 0);
}

static void text_rows(FILE *f, const cJSON *metrics, int all)
{
	const cJSON *e;
	char a[64], b[64], c[96];

	cJSON_ArrayForEach(e, metrics) {
		if (!shown(e, all))
			continue;
		value_text(spp_cell_get(e, "base"), a, sizeof(a));
		value_text(spp_cell_get(e, "new"), b, sizeof(b));
		change_text(e, c, sizeof(c));
		fprintf(f, "  %-40s %14s %14s  %s\n", str(e, "metric"), a, b, c);
	}
}

static int count_shown(const cJSON *metrics, int all)
{
	const cJSON *e;
	int n = 0;

	cJSON_ArrayForEach(e, metrics)
		n += shown(e, all);
	return n;
}

static void write_text(const cJSON *d, FILE *f, int all)
{
	const cJSON *l, *s = spp_cell_get(d, "summary");
	double v;

	fprintf(f, "base  %s (%s, %s)\n", str(d, "base.report"), str(d, "base.model"),
		str(d, "base.created"));
	fprintf(f, "new   %s (%s, %s)\n", str(d, "new.report"), str(d, "new.model"),
		str(d, "new.created"));
	if (cJSON_IsFalse(spp_cell_get(d, "same_machine")))
		fprintf(f, "machines differ: base on %s, new on %s: the time figures compare the "
			   "machines too\n", str(d, "base.machine"), str(d, "new.machine"));
	fprintf(f, "layers: %.0f common, %.0f added, %.0f removed; figures: %.0f changed, "
		   "%.0f within noise\n\n",
		spp_cell_num(s, "layers_common", &v) ? v : 0,
		spp_cell_num(s, "layers_added", &v) ? v : 0,
		spp_cell_num(s, "layers_removed", &v) ? v : 0,
		spp_cell_num(s, "figures_changed", &v) ? v : 0,
		spp_cell_num(s, "figures_within_noise", &v) ? v : 0);
	fprintf(f, "%-42s %14s %14s  %s\n", "model", "base", "new", "change");
	if (count_shown(spp_cell_get(d, "model"), all))
		text_rows(f, spp_cell_get(d, "model"), all);
	else
		fputs("  (no change)\n", f);
	cJSON_ArrayForEach(l, spp_cell_get(d, "layers")) {
		const char *st = str(l, "status");

		if (strcmp(st, "common") != 0) {
			fprintf(f, "\n%s layer %s\n", !strcmp(st, "added") ? "added" : "removed",
				str(l, "name"));
			continue;
		}
		if (!count_shown(spp_cell_get(l, "metrics"), all))
			continue;
		fprintf(f, "\nlayer %s\n", str(l, "name"));
		text_rows(f, spp_cell_get(l, "metrics"), all);
	}
}

static void md_rows(FILE *f, const cJSON *metrics, int all)
{
	const cJSON *e;
	char a[64], b[64], c[96];

	fputs("| figure | base | new | change |\n|---|---:|---:|---|\n", f);
	cJSON_ArrayForEach(e, metrics) {
		if (!shown(e, all))
			continue;
		value_text(spp_cell_get(e, "base"), a, sizeof(a));
		value_text(spp_cell_get(e, "new"), b, sizeof(b));
		change_text(e, c, sizeof(c));
		fputs("| `", f);
		fputs(str(e, "metric"), f);
		fputs("` | ", f);
		spp_cell_md(f, a);
		fputs(" | ", f);
		spp_cell_md(f, b);
		fputs(" | ", f);
		spp_cell_md(f, c);
		fputs(" |\n", f);
	}
}

static void write_md(const cJSON *d, FILE *f, int all)
{
	const cJSON *l, *s = spp_cell_get(d, "summary"), *n;
	double v;

	fputs("### spprof compare\n\n", f);
	fprintf(f, "Base `%s`, new `%s`: ", str(d, "base.report"), str(d, "new.report"));
	if (cJSON_IsFalse(spp_cell_get(d, "same_machine")))
		fprintf(f, "on different machines (base %s, new %s), so the times compare the machines "
			   "too; ", str(d, "base.machine"), str(d, "new.machine"));
	fprintf(f, "%.0f common layers, %.0f added, %.0f removed; %.0f figures changed, "
		   "%.0f within noise.\n\n",
		spp_cell_num(s, "layers_common", &v) ? v : 0,
		spp_cell_num(s, "layers_added", &v) ? v : 0,
		spp_cell_num(s, "layers_removed", &v) ? v : 0,
		spp_cell_num(s, "figures_changed", &v) ? v : 0,
		spp_cell_num(s, "figures_within_noise", &v) ? v : 0);
	fputs("#### Model\n\n", f);
	if (count_shown(spp_cell_get(d, "model"), all))
		md_rows(f, spp_cell_get(d, "model"), all);
	else
		fputs("No change.\n", f);
	cJSON_ArrayForEach(l, spp_cell_get(d, "layers")) {
		if (strcmp(str(l, "status"), "common") != 0 ||
		    !count_shown(spp_cell_get(l, "metrics"), all))
			continue;
		fputs("\n#### `", f);
		fputs(str(l, "name"), f);
		fputs("`\n\n", f);
		md_rows(f, spp_cell_get(l, "metrics"), all);
	}
	for (int k = 0; k < 2; k++) {
		const cJSON *list = spp_cell_get(d, k ? "removed" : "added");

		if (cJSON_GetArraySize(list) == 0)
			continue;
		fprintf(f, "\n#### %s layers\n\n", k ? "Removed" : "Added");
		cJSON_ArrayForEach(n, list)
			fprintf(f, "- `%s`\n", cJSON_IsString(n) ? n->valuestring : "");
	}
}

static void csv_cell(FILE *f, const char *s, int last)
{
	spp_cell_csv(f, s);
	fputc(last ? '\n' : ',', f);
}

static void csv_value(FILE *f, const cJSON *v, int last)
{
	char buf[64];

	if (cJSON_IsNumber(v)) {
		spp_cell_number(v->valuedouble, buf, sizeof(buf));
		csv_cell(f, buf, last);
	} else {
		csv_cell(f, cJSON_IsString(v) ? v->valuestring : "", last);
	}
}

static void csv_rows(FILE *f, const char *scope, const char *layer, const cJSON *metrics)
{
	const cJSON *e;

	cJSON_ArrayForEach(e, metrics) {
		csv_cell(f, scope, 0);
		csv_cell(f, layer, 0);
		csv_cell(f, str(e, "metric"), 0);
		csv_value(f, spp_cell_get(e, "base"), 0);
		csv_value(f, spp_cell_get(e, "new"), 0);
		csv_value(f, spp_cell_get(e, "delta"), 0);
		csv_value(f, spp_cell_get(e, "rel_change"), 0);
		csv_cell(f, str(e, "change"), 1);
	}
}

static void write_csv(const cJSON *d, FILE *f)
{
	const cJSON *l;

	static const char *const head[] = {"scope", "layer", "metric", "base", "new",
					   "delta", "rel_change", "change"};

	for (int i = 0; i < 8; i++)
		csv_cell(f, head[i], i == 7);
	csv_rows(f, "model", "", spp_cell_get(d, "model"));
	cJSON_ArrayForEach(l, spp_cell_get(d, "layers")) {
		const char *st = str(l, "status");

		if (!strcmp(st, "common")) {
			csv_rows(f, "layer", str(l, "name"), spp_cell_get(l, "metrics"));
			continue;
		}
		/* an added or removed layer: one row naming it */
		csv_cell(f, "layer", 0);
		csv_cell(f, str(l, "name"), 0);
		fputs(",,,,,", f);
		csv_cell(f, st, 1);
	}
}

static int write_any(const cJSON *diff, enum spp_gate_format fmt, int all,
		      FILE *f, struct spp_error *err)
{
	switch (fmt) {
	case SPP_GATE_JSON:
		return spp_report_write_json(diff, f, err);
	case SPP_GATE_TEXT:
		write_text(diff, f, all);
		break;
	case SPP_GATE_MD:
		write_md(diff, f, all);
		break;
	case SPP_GATE_CSV:
		write_csv(diff, f);
		break;
	}
	if (ferror(f))
		return spp_error_set(err, SPP_E_OUTPUT, "cannot write the comparison: %s",
				     strerror(errno));
	return SPP_OK;
}

int spp_compare_write(const cJSON *diff, enum spp_gate_format fmt, int all,
		      FILE *f, struct spp_error *err)
{
	cJSON *owned = NULL;
	const cJSON *safe = diff;
	int rc;

	/* names from the reports reach people escaped (see spp_cell_safe_tree) */
	if (fmt != SPP_GATE_JSON && !(safe = spp_cell_safe_tree(diff, &owned)))
		return spp_error_set(err, SPP_E_NOMEM, "out of memory writing the comparison");
	rc = write_any(safe, fmt, all, f, err);
	cJSON_Delete(owned);
	return rc;
}
