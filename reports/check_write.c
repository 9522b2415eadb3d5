/*
 * Renderings of a spprof.check/1 tree: a text summary for the terminal,
 * Markdown for a pull-request comment, JSON, and JUnit XML for CI systems
 * (one testcase per rule and layer). Also the atomic file writer shared
 * with compare.
 */
#include "reports/gate.h"

#include <errno.h>
#include <string.h>

#include "base/atomic_file.h"
#include "reports/cells.h"
#include "reports/report.h"

int spp_gate_format_from_name(const char *name, enum spp_gate_format *out)
{
	if (!name)
		return -1;
	if (!strcmp(name, "text") || !strcmp(name, "txt"))
		*out = SPP_GATE_TEXT;
	else if (!strcmp(name, "json"))
		*out = SPP_GATE_JSON;
	else if (!strcmp(name, "csv"))
		*out = SPP_GATE_CSV;
	else if (!strcmp(name, "md") || !strcmp(name, "markdown"))
		*out = SPP_GATE_MD;
	else
		return -1;
	return 0;
}

static double num(const cJSON *o, const char *key)
{
	double v = 0;

	spp_cell_num(o, key, &v);
	return v;
}

static const char *str(const cJSON *o, const char *key)
{
	const char *s = spp_cell_str(o, key);

	return s ? s : "";
}

static const char *rule_text(const cJSON *rule)
{
	const char *t = spp_cell_str(rule, "expr");

	return t ? t : str(rule, "regression");
}

static void write_text(const cJSON *res, FILE *f)
{
	const cJSON *rule, *item;

	fprintf(f, "check %s", str(res, "report"));
	if (spp_cell_str(res, "baseline"))
		fprintf(f, " against baseline %s", str(res, "baseline"));
	fputs("\n\n", f);
	cJSON_ArrayForEach(rule, spp_cell_get(res, "rules")) {
		int fail = !strcmp(str(rule, "status"), "fail");

		fprintf(f, "%s  %s: %s", fail ? "FAIL" : "PASS", str(rule, "name"), rule_text(rule));
		fprintf(f, "  (%.0f checked, %.0f failed", num(rule, "checked"), num(rule, "failed"));
		if (num(rule, "skipped") > 0)
			fprintf(f, ", %.0f skipped", num(rule, "skipped"));
		fputs(")\n", f);
		cJSON_ArrayForEach(item, spp_cell_get(rule, "items")) {
			const char *st = str(item, "status");

			/* a passing rule over 300 layers would bury the failures */
			if (!fail && strcmp(st, "skip") != 0)
				continue;
			if (!strcmp(st, "pass"))
				continue;
			fprintf(f, "      %s %s: %s\n", st, str(item, "target"), str(item, "message"));
		}
	}
	fprintf(f, "\ncheck: %.0f %s, %.0f passed, %.0f failed\n", num(res, "rules_total"),
		spp_cell_plural(num(res, "rules_total"), "rule", "rules"), num(res, "passed"), num(res, "failed"));
}

static void write_md(const cJSON *res, FILE *f)
{
	const cJSON *rule, *item;
	double failed = num(res, "failed");

	fprintf(f, "### spprof check: %s\n\n", failed > 0 ? "failed" : "passed");
	fprintf(f, "%.0f of %.0f rules passed on `%s`", num(res, "passed"),
		num(res, "rules_total"), str(res, "report"));
	if (spp_cell_str(res, "baseline"))
		fprintf(f, " (baseline `%s`)", str(res, "baseline"));
	fputs(".\n\n| result | rule | checked | failed | skipped |\n|---|---|---:|---:|---:|\n", f);
	cJSON_ArrayForEach(rule, spp_cell_get(res, "rules")) {
		fputs(!strcmp(str(rule, "status"), "fail") ? "| :x: fail | " : "| :white_check_mark: pass | ", f);
		spp_cell_md(f, str(rule, "name"));
		fputs("<br>", f);
		spp_cell_md_code(f, rule_text(rule));
		fprintf(f, " | %.0f | %.0f | %.0f |\n", num(rule, "checked"), num(rule, "failed"),
			num(rule, "skipped"));
	}
	if (failed <= 0)
		return;
	fputs("\n#### Failures\n\n", f);
	cJSON_ArrayForEach(rule, spp_cell_get(res, "rules")) {
		cJSON_ArrayForEach(item, spp_cell_get(rule, "items")) {
			if (strcmp(str(item, "status"), "fail") != 0)
				continue;
			fputs("- **", f);
			spp_cell_md(f, str(rule, "name"));
			fputs("** ", f);
			spp_cell_md_code(f, str(item, "target"));
			fputs(": ", f);
			spp_cell_md(f, str(item, "message"));
			fputc('\n', f);
		}
	}
}

/* XML attribute/text: the five entities; control characters XML 1.0 forbids become '?'. */
static void xml_text(FILE *f, const char *s)
{
	for (; *s; s++) {
		unsigned char c = (unsigned char)*s;

		switch (c) {
		case '&': fputs("&amp;", f); break;
		case '<': fputs("&lt;", f); break;
		case '>': fputs("&gt;", f); break;
		case '"': fputs("&quot;", f); break;
		case '\'': fputs("&apos;", f); break;
		default:
			fputc(c < 0x20 && c != '\t' && c != '\n' && c != '\r' ? '?' : c, f);
		}
	}
}

static int junit(const cJSON *res, FILE *f, struct spp_error *err)
{
	const cJSON *rule, *item;
	int tests = 0, failures = 0, skipped = 0;

	cJSON_ArrayForEach(rule, spp_cell_get(res, "rules")) {
		cJSON_ArrayForEach(item, spp_cell_get(rule, "items")) {
			tests++;
			failures += !strcmp(str(item, "status"), "fail");
			skipped += !strcmp(str(item, "status"), "skip");
		}
	}
	fputs("<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n", f);
	fprintf(f, "<testsuites name=\"spprof check\" tests=\"%d\" failures=\"%d\" "
		   "errors=\"0\" skipped=\"%d\">\n", tests, failures, skipped);
	cJSON_ArrayForEach(rule, spp_cell_get(res, "rules")) {
		int n = cJSON_GetArraySize(spp_cell_get(rule, "items"));

		fputs("  <testsuite name=\"", f);
		xml_text(f, str(rule, "name"));
		fprintf(f, "\" tests=\"%d\" failures=\"%.0f\" errors=\"0\" skipped=\"%.0f\">\n", n,
			num(rule, "failed"), num(rule, "skipped"));
		fputs("    <properties><property name=\"rule\" value=\"", f);
		xml_text(f, rule_text(rule));
		fputs("\"/></properties>\n", f);
		cJSON_ArrayForEach(item, spp_cell_get(rule, "items")) {
			const char *st = str(item, "status");

			fputs("    <testcase classname=\"", f);
			xml_text(f, str(rule, "name"));
			fputs("\" name=\"", f);
			xml_text(f, str(item, "target"));
			if (!strcmp(st, "pass")) {
				fputs("\"/>\n", f);
				continue;
			}
			fputs(!strcmp(st, "fail") ? "\">\n      <failure type=\"rule\" message=\""
						  : "\">\n      <skipped message=\"", f);
			xml_text(f, str(item, "message"));
			if (!strcmp(st, "fail")) {
				fputs("\">", f);
				xml_text(f, rule_text(rule));
				fputs("</failure>\n", f);
			} else {
				fputs("\"/>\n", f);
			}
			fputs("    </testcase>\n", f);
		}
		fputs("  </testsuite>\n", f);
	}
	fputs("</testsuites>\n", f);
	if (ferror(f))
		return spp_error_set(err, SPP_E_OUTPUT, "cannot write the JUnit XML: %s",
				     strerror(errno));
	return SPP_OK;
}

static int write_any(const cJSON *res, enum spp_gate_format fmt, FILE *f,
		    struct spp_error *err)
{
	switch (fmt) {
	case SPP_GATE_JSON:
		return spp_report_write_json(res, f, err);
	case SPP_GATE_TEXT:
		write_text(res, f);
		break;
	case SPP_GATE_MD:
		write_md(res, f);
		break;
	case SPP_GATE_CSV:
		return spp_error_set(err, SPP_E_USAGE, "check writes text, json or md, not csv");
	}
	if (ferror(f))
		return spp_error_set(err, SPP_E_OUTPUT, "cannot write the check result: %s",
				     strerror(errno));
	return SPP_OK;
}

/* names from the report reach people escaped (see spp_cell_safe_tree) */
int spp_check_write_junit(const cJSON *res, FILE *f, struct spp_error *err)
{
	cJSON *owned = NULL;
	const cJSON *safe = spp_cell_safe_tree(res, &owned);
	int rc;

	if (!safe)
		return spp_error_set(err, SPP_E_NOMEM, "out of memory writing the check result");
	rc = junit(safe, f, err);
	cJSON_Delete(owned);
	return rc;
}

int spp_check_write(const cJSON *res, enum spp_gate_format fmt, FILE *f,
		    struct spp_error *err)
{
	cJSON *owned = NULL;
	const cJSON *safe = res;
	int rc;

	if (fmt != SPP_GATE_JSON && !(safe = spp_cell_safe_tree(res, &owned)))
		return spp_error_set(err, SPP_E_NOMEM, "out of memory writing the check result");
	rc = write_any(safe, fmt, f, err);
	cJSON_Delete(owned);
	return rc;
}

int spp_gate_write_file(const cJSON *tree, int is_check, int junit,
			enum spp_gate_format fmt, int all, const char *path,
			struct spp_error *err)
{
	struct spp_atomic_file af;
	struct spp_error rerr = {0};
	int rc;

	rc = spp_atomic_open(&af, path, err);
	if (rc)
		return rc;
	errno = 0;
	if (junit)
		rc = spp_check_write_junit(tree, af.f, &rerr);
	else if (is_check)
		rc = spp_check_write(tree, fmt, af.f, &rerr);
	else
		rc = spp_compare_write(tree, fmt, all, af.f, &rerr);
	if (rc) {
		spp_atomic_abort(&af);
		return spp_error_set(err, rc, "cannot write '%s': %s", path, rerr.msg);
	}
	return spp_atomic_commit(&af, err);
}
