/*
 * The HTML reports in a real browser (test_html --browser): each page of
 * the fixture is rendered by headless Chromium, which writes a screenshot
 * and dumps the DOM after the page's own script ran. A page fails when its
 * script recorded an error (data-spp-errors), did not finish
 * (data-spp-ready), when the browser's DOM lost rows, charts or points the
 * file holds (broken markup), or when the screenshot is not a full-size,
 * non-blank PNG. One page gets a test script appended that sorts and
 * filters the table like a user and writes what it saw into the DOM.
 * Exits 77 (skipped) with the reason when Chromium is not installed.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <cmocka.h>
#include <cjson/cJSON.h>

#include "test/harness.h"
#include "test/reports/html_fixture.h"

#define CHROMIUM "/usr/bin/chromium"
#define WIDTH 1400
#define HEIGHT 2000
/* a blank page of this size is about 13 KB and a few lines of text 16 KB */
#define MIN_PNG_BYTES 60000

int html_browser_main(void);

static struct html_fixture fx;

static int setup(void **state)
{
	(void)state;
	return html_fixture_setup(&fx);
}

static int teardown(void **state)
{
	(void)state;
	html_fixture_teardown(&fx);
	return 0;
}

/* Render html: screenshot into png, DOM into r->out. */
static void chromium(const char *html, const char *png, struct harness_run *r)
{
	char *profile = harness_tmpdir();
	char udd[1024], shot[1024], size[64], url[1024];
	const char *args[] = {"--headless", "--no-sandbox", "--disable-gpu", "--disable-quic",
			      "--no-first-run", "--disable-background-networking",
			      "--disable-component-update", "--disable-sync", "--hide-scrollbars",
			      udd, shot, size, "--dump-dom", url, NULL};

	assert_non_null(profile);
	snprintf(udd, sizeof(udd), "--user-data-dir=%s", profile);
	snprintf(shot, sizeof(shot), "--screenshot=%s", png);
	snprintf(size, sizeof(size), "--window-size=%d,%d", WIDTH, HEIGHT);
	snprintf(url, sizeof(url), "file://%s", html);
	assert_int_equal(harness_exec(r, CHROMIUM, args), 0);
	harness_rmtree(profile);
	if (r->status != 0)
		fail_msg("chromium on '%s': exit %d: %.2000s", html, r->status, r->err);
}

static uint32_t be32(const unsigned char *p)
{
	return (uint32_t)p[0] << 24 | (uint32_t)p[1] << 16 | (uint32_t)p[2] << 8 | p[3];
}

static void check_png(const char *path)
{
	size_t len = 0;
	unsigned char *png = (unsigned char *)harness_slurp(path, &len);

	assert_non_null(png);
	assert_true(len > 33);
	assert_memory_equal(png, "\x89PNG\r\n\x1a\n", 8);
	assert_memory_equal(png + 12, "IHDR", 4);
	assert_int_equal(be32(png + 16), WIDTH);
	assert_int_equal(be32(png + 20), HEIGHT);
	if (len < MIN_PNG_BYTES)
		fail_msg("'%s': %zu bytes: a blank or nearly blank page", path, len);
	free(png);
}

static const char *const kept[] = {"<tr class=\"layer\"", "<svg", "<circle", "<polyline",
				   "<section"};

/*
 * Render case c (from path, a copy of its page, when not NULL) and check
 * the DOM and the screenshot; the DOM is left in r.
 */
static void check_page(int c, const char *path, struct harness_run *out)
{
	struct harness_run r;
	char *src = harness_slurp(fx.html[c], NULL), png[600];
	cJSON *j = html_fixture_load(fx.json[c]);

	assert_non_null(src);
	assert_non_null(j);
	snprintf(png, sizeof(png), "%s/%s.png", fx.dir, html_case_name[c]);
	chromium(path ? path : fx.html[c], png, &r);
	if (strstr(r.out, "data-spp-errors=\""))
		fail_msg("%s: the page's script failed: %.300s", html_case_name[c],
			 strstr(r.out, "data-spp-errors=\""));
	if (!strstr(r.out, "data-spp-ready=\"1\""))
		fail_msg("%s: the page's script did not finish", html_case_name[c]);
	assert_non_null(strstr(r.out, "<title>spprof: "));
	assert_int_equal(html_count(r.out, "<tr class=\"layer\""),
			 cJSON_GetArraySize(cJSON_GetObjectItemCaseSensitive(j, "layers")));
	/* what the file holds, the browser kept: no markup swallowed the rest */
	for (size_t k = 0; k < sizeof(kept) / sizeof(kept[0]); k++) {
		int want = html_count(src, kept[k]), got = html_count(r.out, kept[k]);

		if (want != got)
			fail_msg("%s: %d '%s' in the file, %d in the browser", html_case_name[c], want,
				 kept[k], got);
	}
	assert_true(html_count(r.out, "<svg") >= 3);
	check_png(png);
	*out = r;
	cJSON_Delete(j);
	free(src);
}

/*
 * A copy of case c's page with script appended before </body>, written
 * as <name>.html in the fixture's folder; its path (free it).
 */
static char *with_probe(int c, const char *script, const char *name)
{
	char *src = harness_slurp(fx.html[c], NULL), *copy, *end, *path, file[300];
	size_t len;

	assert_non_null(src);
	end = strstr(src, "</body>");
	assert_non_null(end);
	len = strlen(src) + strlen(script) + 1;
	copy = malloc(len);
	assert_non_null(copy);
	snprintf(copy, len, "%.*s%s%s", (int)(end - src), src, script, end);
	snprintf(file, sizeof(file), "%s.html", name);
	path = harness_join(fx.dir, file);
	assert_int_equal(harness_write(path, copy, strlen(copy)), 0);
	free(copy);
	free(src);
	return path;
}

/* Appended to every page: where the layer table's right edge lies against the window (issue 46 item 9). */
static const char fit[] =
	"<script>(function(){var t=document.getElementById('layer-table');\n"
	"document.documentElement.setAttribute('data-fit',t?Math.ceil(t.getBoundingClientRect().right)+'/'+window.innerWidth+' '+\n"
	"[].map.call(t.tHead.rows[0].cells,function(c){return c.textContent+'='+Math.round(c.getBoundingClientRect().width);}).join(','):'none');})();</script>\n";

static void test_pages(void **state)
{
	/*
	 * Each launch costs seconds: runs-12 is rendered by test_sort_and_filter,
	 * and full-300 holds every chart kind at the larger size (runs-300 and
	 * full-12 are subsets of it and of runs-12; test_html reads them all).
	 * Every column of the layer table is in a 1400 px window: none is cut.
	 */
	static const int cases[] = {HC_S12, HC_FULL300, HC_ODD};

	(void)state;
	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		struct harness_run r;
		char *path = with_probe(cases[i], fit, html_case_name[cases[i]]);
		const char *at;
		int right = 0, inner = 0;

		check_page(cases[i], path, &r);
		at = strstr(r.out, "data-fit=\"");
		assert_non_null(at);
		if (sscanf(at, "data-fit=\"%d/%d", &right, &inner) != 2 || inner != WIDTH || right > inner)
			fail_msg("%s: the layer table reaches %d px: cut in a %d px window (columns: %.600s)",
				 html_case_name[cases[i]], right, WIDTH, at + 10);
		harness_run_free(&r);
		free(path);
	}
}

/* Appended to a copy of the runs-12 page (checked as any page too): sorts and filters like a user, writes what it saw. */
static const char probe[] =
	"<script>(function(){var out=[];try{\n"
	"var t=document.getElementById('layer-table'),th=t.tHead.rows[0].cells,k=-1;\n"
	"for(var i=0;i<th.length;i++)if(th[i].textContent==='sparsity')k=i;\n"
	"function vals(){return [].map.call(t.tBodies[0].rows,function(r){return parseFloat(r.cells[k].getAttribute('data-v'));});}\n"
	"function mono(v,d){for(var i=1;i<v.length;i++)if((v[i]-v[i-1])*d<0)return 0;return 1;}\n"
	"th[k].click();out.push('desc:'+mono(vals(),-1)+th[k].getAttribute('aria-sort'));\n"
	"th[k].click();out.push('asc:'+mono(vals(),1)+th[k].getAttribute('aria-sort'));\n"
	"function shown(){return [].filter.call(t.tBodies[0].rows,function(r){return !r.hidden;}).length;}\n"
	"var q=document.getElementById('layer-filter'),c=document.getElementById('layer-class');\n"
	"q.value='CONV';q.dispatchEvent(new Event('input'));\n"
	"out.push('conv:'+shown()+'/'+document.getElementById('layer-count').textContent);\n"
	"q.value='';q.dispatchEvent(new Event('input'));c.value='nm';c.dispatchEvent(new Event('change'));\n"
	"out.push('nm:'+shown());\n"
	"}catch(e){out.push('error:'+e.message);}\n"
	"document.documentElement.setAttribute('data-probe',out.join(' '));})();</script>\n";

static void test_sort_and_filter(void **state)
{
	char *path = with_probe(HC_R12, probe, "probe"), want[256];
	cJSON *j = html_fixture_load(fx.json[HC_R12]);
	const cJSON *l;
	struct harness_run r;
	int conv = 0, nm = 0, n = 0;

	(void)state;
	assert_non_null(j);
	/* expected from the JSON: the filter matches name, op, class, dtype, any case */
	cJSON_ArrayForEach(l, cJSON_GetObjectItemCaseSensitive(j, "layers")) {
		const char *name = cJSON_GetStringValue(cJSON_GetObjectItemCaseSensitive(l, "name"));
		const char *op = cJSON_GetStringValue(cJSON_GetObjectItemCaseSensitive(l, "op"));
		const char *cls = cJSON_GetStringValue(
			cJSON_GetObjectItemCaseSensitive(cJSON_GetObjectItemCaseSensitive(l, "pattern"), "class"));

		conv += strstr(name, "conv") || strstr(op, "conv");
		nm += strcmp(cls, "nm") == 0;
		n++;
	}
	assert_int_equal(conv, 2);
	assert_true(nm > 0);
	snprintf(want, sizeof(want),
		 "data-probe=\"desc:1descending asc:1ascending conv:%d/%d of %d layers nm:%d\"", conv,
		 conv, n, nm);
	check_page(HC_R12, path, &r);
	if (!strstr(r.out, want))
		fail_msg("expected %s; the page says %.300s", want,
			 strstr(r.out, "data-probe") ? strstr(r.out, "data-probe") : "nothing");
	assert_null(strstr(r.out, "data-spp-errors=\""));
	harness_run_free(&r);
	cJSON_Delete(j);
	free(path);
}

int html_browser_main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_pages),
		cmocka_unit_test(test_sort_and_filter),
	};

	if (access(CHROMIUM, X_OK) != 0) {
		printf("skipped: %s not found (install Debian's chromium: scripts/setup)\n", CHROMIUM);
		return 77;
	}
	return cmocka_run_group_tests(tests, setup, teardown);
}
