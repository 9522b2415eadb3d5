/*
 * A layer name made of every hostile code point (C0 and C1 controls, DEL,
 * bidi controls, invisible formatting, line separators) and a forged CI
 * workflow line, through every output path: analyze and report in text,
 * Markdown, CSV and HTML, compare in text, Markdown and CSV, check in text,
 * Markdown and JUnit, and an error message. No output may hold one of the
 * code points raw, no line may be forged, and no CSV cell may start a
 * formula.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cjson/cJSON.h>
#include <cmocka.h>

#include "base/safe_text.h"
#include "test/e2e/cli_fixture.h"
#include "test/harness.h"

#define FORGED "::error title=spprof::forged"

/* Append code point cp to s as UTF-8. */
static void put_cp(char **s, uint32_t cp)
{
	unsigned char *p = (unsigned char *)*s;

	if (cp < 0x80) {
		*p++ = (unsigned char)cp;
	} else if (cp < 0x800) {
		*p++ = (unsigned char)(0xc0 | cp >> 6);
		*p++ = (unsigned char)(0x80 | (cp & 0x3f));
	} else if (cp < 0x10000) {
		*p++ = (unsigned char)(0xe0 | cp >> 12);
		*p++ = (unsigned char)(0x80 | (cp >> 6 & 0x3f));
		*p++ = (unsigned char)(0x80 | (cp & 0x3f));
	} else {
		*p++ = (unsigned char)(0xf0 | cp >> 18);
		*p++ = (unsigned char)(0x80 | (cp >> 12 & 0x3f));
		*p++ = (unsigned char)(0x80 | (cp >> 6 & 0x3f));
		*p++ = (unsigned char)(0x80 | (cp & 0x3f));
	}
	*s = (char *)p;
}

/* "=evil", a forged line, then every hostile code point the sanitizer knows */
static void hostile_name(char *buf)
{
	char *p = buf + sprintf(buf, "=evil\n" FORGED "\n");

	for (uint32_t cp = 1; cp < 0xe0080; cp++)
		if (spp_cp_hostile(cp) && (cp < 0xe0000 || cp % 7 == 0) && cp != '\n')
			put_cp(&p, cp);
	strcpy(p, ".weight");
}

/* name as a JSON string body: controls as \u00XX, '"' and '\\' escaped */
static void json_escape(const char *name, char *out)
{
	for (const unsigned char *c = (const unsigned char *)name; *c; c++) {
		if (*c < 0x20)
			out += sprintf(out, "\\u%04x", *c);
		else if (*c == '"' || *c == '\\')
			out += sprintf(out, "\\%c", *c);
		else
			*out++ = (char)*c;
	}
	*out = '\0';
}

/* A safetensors model of two 8x8 F32 layers, the hostile one and "@SUM(A1)". */
static void write_model(const char *path, const char *name, int zeros)
{
	char *esc = malloc(16384), *head = malloc(20000), *file;
	float w[128];
	size_t hl;

	json_escape(name, esc);
	hl = (size_t)sprintf(head, "{\"%s\":{\"dtype\":\"F32\",\"shape\":[8,8],\"data_offsets\":[0,256]},"
			     "\"@SUM(A1)\":{\"dtype\":\"F32\",\"shape\":[8,8],\"data_offsets\":[256,512]}}",
			     esc);
	for (int i = 0; i < 128; i++)
		w[i] = i % 8 < zeros ? 0.0f : 1.0f + (float)i;
	file = malloc(8 + hl + sizeof(w));
	for (int i = 0; i < 8; i++)
		file[i] = (char)((uint64_t)hl >> (8 * i));
	memcpy(file + 8, head, hl);
	memcpy(file + 8 + hl, w, sizeof(w));
	assert_int_equal(harness_write(path, file, 8 + hl + sizeof(w)), 0);
	free(esc);
	free(head);
	free(file);
}

/* No hostile code point but newline (and tab in HTML/XML), no forged line. */
static void assert_clean(const char *what, const char *s, size_t n)
{
	size_t at = 0;

	while (at < n) {
		uint32_t cp;
		size_t len = spp_utf8_next((const unsigned char *)s + at, n - at, &cp);

		if (len == 0 || (spp_cp_hostile(cp) && cp != '\n' && cp != '\t'))
			fail_msg("%s: raw U+%04X at byte %zu", what, len ? (unsigned)cp : 0xfffdu, at);
		if (cp == '\n' && !strncmp(s + at + 1, FORGED, strlen(FORGED)))
			fail_msg("%s: a forged line at byte %zu", what, at + 1);
		at += len;
	}
	if (n >= strlen(FORGED) && !strncmp(s, FORGED, strlen(FORGED)))
		fail_msg("%s: a forged first line", what);
}

static void run_clean(const char *const *args, int want_status)
{
	struct harness_run r;
	char what[256];

	assert_int_equal(harness_spprof(&r, args), 0);
	snprintf(what, sizeof(what), "%s %s %s", args[0], args[1], args[2] ? args[2] : "");
	if (r.status != want_status)
		fail_msg("%s: status %d, stderr %s", what, r.status, r.err);
	assert_clean(what, r.out, r.out_len);
	assert_clean(what, r.err, r.err_len);
	if (want_status == 2)
		assert_int_equal(harness_count_lines(r.err), 1);
	harness_run_free(&r);
}

static void assert_no_formula(const char *csv)
{
	/* a cell starts after a newline or a comma, quoted or not */
	for (const char *p = csv; *p; p++)
		if ((p == csv || p[-1] == '\n' || p[-1] == ',') &&
		    (p[0] == '=' || p[0] == '@' || (p[0] == '"' && (p[1] == '=' || p[1] == '@'))))
			fail_msg("a CSV cell starts a formula: %.40s", p);
}

static void check_reports(const char *dir, const char *a, const char *b)
{
	static const char *const fmts[] = {"text", "md", "csv", "html"};
	char *rules = harness_join(dir, "rules.json"), *junit = harness_join(dir, "j.xml");
	char *xml;
	struct harness_run r;
	static const char rules_text[] = "{\"rules\": [{\"name\": \"\\u202e=bad\\u001b[2J\","
		" \"expr\": \"layers[*].sparsity > 0.9\"}]}";

	for (size_t i = 0; i < 4; i++) {
		run_clean((const char *[]){"report", a, "--format", fmts[i], NULL}, 0);
		if (i < 3)
			run_clean((const char *[]){"compare", a, b, "--format", fmts[i], NULL}, 0);
	}
	RUN(&r, "report", a, "--format", "csv");
	assert_no_formula(r.out);
	assert_non_null(strstr(r.out, "'=evil"));
	assert_non_null(strstr(r.out, "'@SUM(A1)"));
	harness_run_free(&r);
	RUN(&r, "compare", a, b, "--format", "csv");
	assert_no_formula(r.out);
	harness_run_free(&r);
	assert_int_equal(harness_write(rules, rules_text, sizeof(rules_text) - 1), 0);
	run_clean((const char *[]){"check", a, "--rules", rules, NULL}, 1);
	run_clean((const char *[]){"check", a, "--rules", rules, "--format", "md", "--junit", junit, NULL}, 1);
	xml = harness_slurp(junit, NULL);
	assert_non_null(xml);
	assert_clean("junit", xml, strlen(xml));
	free(xml);
	free(rules);
	free(junit);
}

void test_hostile_names(void **state)
{
	char *dir = harness_tmpdir(), *name = malloc(16384);
	char *m1 = harness_join(dir, "a.safetensors"), *m2 = harness_join(dir, "b.safetensors");
	char *a = harness_join(dir, "a.json"), *b = harness_join(dir, "b.json");
	char *dup = harness_join(dir, "dup.safetensors"), *head, *esc;
	static const char *const fmts[] = {"text", "md", "csv", "html"};
	size_t hl;

	(void)state;
	hostile_name(name);
	write_model(m1, name, 4);
	write_model(m2, name, 6);
	for (size_t i = 0; i < 4; i++)
		run_clean((const char *[]){"analyze", m1, "--static", "--format", fmts[i], NULL}, 0);
	run_clean((const char *[]){"analyze", m1, "--static", "--format", "json", "-o", a, NULL}, 0);
	run_clean((const char *[]){"analyze", m2, "--static", "--format", "json", "-o", b, NULL}, 0);
	check_reports(dir, a, b);

	/* an error message naming the tensor: a duplicate key */
	esc = malloc(16384);
	head = malloc(40000);
	json_escape(name, esc);
	hl = (size_t)sprintf(head, "........{\"%s\":{\"dtype\":\"F32\",\"shape\":[1],\"data_offsets\":[0,4]},"
			     "\"%s\":{\"dtype\":\"F32\",\"shape\":[1],\"data_offsets\":[4,8]}}01234567",
			     esc, esc);
	for (int i = 0; i < 8; i++)
		head[i] = (char)((uint64_t)(hl - 16) >> (8 * i));
	assert_int_equal(harness_write(dup, head, hl), 0);
	run_clean((const char *[]){"analyze", dup, "--static", NULL}, 2);

	free(esc); free(head); free(name);
	free(m1); free(m2); free(a); free(b); free(dup);
	harness_rmtree(dir);
}

/* spprof args under a 60 s CPU limit: status, and a peak memory under 512 MiB (ASan's included). */
static void bounded(const char *const *args, int status, const char *want)
{
	struct harness_run r;

	assert_int_equal(harness_spprof_limited(&r, args, 60), 0);
	if (r.status != status || (want && !strstr(r.err, want)))
		fail_msg("%s %s: status %d, want %d with '%s': %s", args[0], args[1], r.status,
			 status, want ? want : "", r.err);
	if (r.maxrss_kb > 512 * 1024)
		fail_msg("%s %s: peak memory %ld KiB, more than 512 MiB", args[0], args[1],
			 r.maxrss_kb);
	harness_run_free(&r);
}

/*
 * A 61-byte Matrix Market file "1 2147483647 0" was densified to 8 GiB
 * (plus scan buffers) and the .smtx equivalent too. The static scan counts
 * from the entries, in bounded time and memory; the kernel runs, which need
 * W dense, are refused before anything is allocated, naming the layer and
 * the bytes. --max-memory and --max-layers lower the bounds.
 */
void test_resource_budget(void **state)
{
	char *dir = harness_tmpdir(), *mtx = harness_join(dir, "wide.mtx");
	char *smtx = harness_join(dir, "wide.smtx"), *small = harness_join(dir, "small.mtx");
	char *big = harness_join(dir, "big.mtx"), *model = harness_join(dir, "m.safetensors");
	static const char wide[] = "%%MatrixMarket matrix coordinate real general\n1 2147483647 0\n";
	static const char swide[] = "1, 2147483647, 0\n0 0\n\n";
	static const char ok[] = "%%MatrixMarket matrix coordinate real general\n64 64 1\n1 1 2.5\n";
	/* 3.6e9 elements, two non-zeros: far past 2^31 dense, nothing sparse */
	static const char sq[] = "%%MatrixMarket matrix coordinate pattern general\n"
				 "60000 60000 2\n1 1\n60000 60000\n";
	struct harness_run r;
	cJSON *doc;

	(void)state;
	assert_int_equal(harness_write(mtx, wide, sizeof(wide) - 1), 0);
	assert_int_equal(harness_write(smtx, swide, sizeof(swide) - 1), 0);
	assert_int_equal(harness_write(small, ok, sizeof(ok) - 1), 0);
	assert_int_equal(harness_write(big, sq, sizeof(sq) - 1), 0);
	bounded((const char *[]){"analyze", mtx, "--static", NULL}, 0, NULL);
	bounded((const char *[]){"analyze", smtx, "--static", NULL}, 0, NULL);
	bounded((const char *[]){"analyze", mtx, "--n", "1", NULL}, 2,
		"layer 'wide' (its runs' dense 1x2147483647 W and |W|, X and Y at N = 1) needs "
		"32.00 GiB, over the memory budget");
	bounded((const char *[]){"analyze", smtx, NULL}, 2, "over the memory budget");
	RUN(&r, "analyze", big, "--static", "--format", "json");
	assert_int_equal(r.status, 0);
	doc = cJSON_Parse(r.out);
	assert_non_null(doc);
	assert_int_equal(cJSON_GetObjectItem(cJSON_GetArrayItem(cJSON_GetObjectItem(doc, "layers"), 0),
					     "nnz")->valuedouble, 2);
	cJSON_Delete(doc);
	harness_run_free(&r);
	/* a 16 KiB dense matrix: fine by default, refused under 4K */
	RUN(&r, "analyze", small, "--static", "--format", "json");
	assert_int_equal(r.status, 0);
	harness_run_free(&r);
	/* runs of the 64x64 layer at N = 1: 2 x 16 KiB of W and |W|, 2 x 256 B of X, 3 x 256 B of Y */
	cli_refused((const char *[]){"analyze", small, "--n", "1", "--max-memory", "4K", NULL},
		       "needs 33.25 KiB, over the --max-memory limit of 4.00 KiB");
	cli_refused((const char *[]){"analyze", small, "--static", "--max-memory", "4X", NULL},
		       "want a byte count");
	RUN(&r, "synth", "-o", model, "--layer", "a=8x8:unstructured:0.5", "--layer",
	    "b=8x8:unstructured:0.5");
	assert_int_equal(r.status, 0);
	harness_run_free(&r);
	cli_refused((const char *[]){"analyze", model, "--static", "--max-layers", "1", NULL},
		       "the model makes more than 1 layers, the --max-layers limit");
	RUN(&r, "analyze", model, "--static", "--max-layers", "2", "--format", "json");
	assert_int_equal(r.status, 0);
	harness_run_free(&r);
	free(mtx); free(smtx); free(small); free(big); free(model);
	harness_rmtree(dir);
}
