/* The reports the HTML tests render (see html_fixture.h). */
#include "test/reports/html_fixture.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "profiler/synth.h"
#include "test/harness.h"

const char *const html_case_name[HC_COUNT] = {"static-12", "runs-12",  "static-300", "runs-300",
					      "full-12",   "full-300", "odd"};

/* 12 layers: every pattern class, linear and conv, two dtypes. */
static const char *const layers12[] = {
	"enc.0.attn.q.weight=128x128:nm2_4:0.5",
	"enc.0.attn.k.weight=128x128:unstructured:0.9",
	"enc.0.attn.v.weight=128x128:block4:0.75",
	"enc.0.attn.o.weight=128x128:channel:0.5",
	"enc.0.mlp.fc1.weight=256x128:unstructured:0.7:F16",
	"enc.0.mlp.fc2.weight=128x256:nm2_4:0.5:F16",
	"stem.conv1.weight=32x16x3x3:unstructured:0.8",
	"stem.conv2.weight=64x32x3x3:block4:0.5",
	"head.pre.weight=64x128:dense:0",
	"head.mid.weight=64x64:unstructured:0.95",
	"head.gate.weight=96x64:nm2_4:0.5",
	"head.out.weight=10x64:unstructured:0.3",
};

double html_curve_speedup(double s, double breakeven)
{
	/* 1 at the breakeven, rising as the work shrinks */
	return (1 - breakeven) / (1 - (s < 0.999 ? s : 0.999));
}

cJSON *html_fixture_load(const char *path)
{
	size_t len;
	char *text = harness_slurp(path, &len);
	cJSON *j = text ? cJSON_ParseWithLength(text, len) : NULL;

	free(text);
	return j;
}

int html_count(const char *hay, const char *needle)
{
	int n = 0;
	size_t len = strlen(needle);

	for (const char *p = hay; (p = strstr(p, needle)); p += len)
		n++;
	return n;
}

static int run_spprof(const char *const *args)
{
	struct harness_run r;
	int status;

	if (harness_spprof(&r, args))
		return -1;
	status = r.status;
	if (status)
		fprintf(stderr, "spprof %s %s: exit %d: %s\n", args[0], args[1], status, r.err);
	harness_run_free(&r);
	return status;
}

/*
 * The 12-layer model through `spprof synth`; the 300-layer one through the
 * same library calls the command makes (spp_synth_parse_layer, then
 * spp_synth_write), as 300 --layer options are more than the harness passes.
 */
static int synth(const char *out, int n300)
{
	static const char *const pats[] = {"unstructured:0.9", "nm2_4:0.5", "block4:0.75",
					   "channel:0.5", "dense:0", "unstructured:0.6"};
	static struct spp_synth_layer ls[300];
	const char *args[2 * 12 + 8];
	struct spp_error err = {0};
	int a = 0;

	if (n300) {
		for (int i = 0; i < 300; i++) {
			char spec[96];

			snprintf(spec, sizeof(spec), "blocks.%d.l%d.weight=64x%d:%s", i / 6, i,
				 32 + (i % 4) * 16, pats[i % 6]);
			if (spp_synth_parse_layer(spec, &ls[i], &err))
				break;
		}
		if (err.code == 0)
			spp_synth_write(out, ls, 300, 1, &err);
		if (err.code)
			fprintf(stderr, "synth '%s': %s\n", out, err.msg);
		return err.code;
	}
	args[a++] = "synth";
	args[a++] = "-o";
	args[a++] = out;
	for (size_t i = 0; i < sizeof(layers12) / sizeof(layers12[0]); i++) {
		args[a++] = "--layer";
		args[a++] = layers12[i];
	}
	args[a] = NULL;
	return run_spprof(args);
}

static int analyze(const char *model, const char *out, int runs)
{
	const char *st[] = {"analyze", model, "--static", "--quiet", "-o", out, NULL};
	/* one thread: no pauses between the thread pools, so 300 layers take a second */
	const char *rn[] = {"analyze", model, "--threads", "1", "--repeat", "2", "--time-budget",
			    "0.01", "--quiet", "-o", out, NULL};

	return run_spprof(runs ? rn : st);
}

static void set(cJSON *obj, const char *key, cJSON *v)
{
	if (cJSON_GetObjectItemCaseSensitive(obj, key))
		cJSON_ReplaceItemInObjectCaseSensitive(obj, key, v);
	else
		cJSON_AddItemToObject(obj, key, v);
}

static cJSON *curve(double breakeven, int never)
{
	static const double xs[] = {0, 0.3, 0.5, 0.7, 0.8, 0.9, 0.95, 0.99};
	cJSON *a = cJSON_CreateArray();

	for (size_t i = 0; i < sizeof(xs) / sizeof(xs[0]); i++) {
		cJSON *p = cJSON_CreateObject();
		double sp = never ? 0.2 + 0.5 * xs[i] : html_curve_speedup(xs[i], breakeven);

		cJSON_AddNumberToObject(p, "sparsity", xs[i]);
		cJSON_AddNumberToObject(p, "time_ns", 1000 / sp);
		cJSON_AddNumberToObject(p, "dense_time_ns", 1000);
		cJSON_AddNumberToObject(p, "speedup", sp);
		cJSON_AddItemToArray(a, p);
	}
	return a;
}

static cJSON *entry(double breakeven, double layer_sparsity, int never)
{
	cJSON *e = cJSON_CreateObject();

	if (never) {
		cJSON_AddNullToObject(e, "sparsity");
		cJSON_AddNullToObject(e, "margin");
		cJSON_AddStringToObject(e, "reason", "never beats dense in [0, 0.999]");
	} else {
		cJSON_AddNumberToObject(e, "sparsity", breakeven);
		cJSON_AddNumberToObject(e, "margin", layer_sparsity - breakeven);
		cJSON_AddNullToObject(e, "reason");
	}
	cJSON_AddItemToObject(e, "curve", curve(breakeven, never));
	return e;
}

/* The hand-made full report: every block a chart needs, well formed. */
static void make_full(cJSON *r)
{
	cJSON *m = cJSON_GetObjectItemCaseSensitive(r, "machine"), *l;
	int i = 0;

	set(m, "peak_gflops", cJSON_CreateNumber(HTML_PEAK_GFLOPS));
	set(m, "peak_bw_gbs", cJSON_CreateNumber(HTML_PEAK_BW));
	{
		/* each level's read bandwidth, DRAM's the peak: a roof each */
		static const char *const names[] = {"L1", "L2", "LLC", "DRAM"};
		static const double gbs[] = {400, 100, 50, HTML_PEAK_BW};
		cJSON *cal = cJSON_CreateObject(), *lv = cJSON_AddObjectToObject(cal, "levels");

		for (int k = 0; k < 4; k++)
			cJSON_AddNumberToObject(cJSON_AddObjectToObject(lv, names[k]), "read_gbs", gbs[k]);
		set(m, "calibration", cal);
	}
	cJSON_ArrayForEach(l, cJSON_GetObjectItemCaseSensitive(r, "layers")) {
		double s = cJSON_GetNumberValue(cJSON_GetObjectItemCaseSensitive(l, "sparsity"));
		cJSON *be = cJSON_CreateObject(), *rec = cJSON_CreateObject(), *run;
		int k = 0;

		if (i == 0)
			set(l, "name", cJSON_CreateString(HTML_EVIL_NAME));
		cJSON_AddItemToObject(be, "cpu/csr", entry(0.4 + 0.02 * (i % 10), s, 0));
		cJSON_AddItemToObject(be, "cpu/bitmask", entry(0.6, s, 0));
		cJSON_AddItemToObject(be, "cpu/coo", entry(0, s, 1));
		set(l, "breakeven", be);
		cJSON_AddStringToObject(rec, "backend", "cpu");
		cJSON_AddStringToObject(rec, "format", "csr");
		cJSON_AddNumberToObject(rec, "speedup", 1.5);
		cJSON_AddStringToObject(rec, "reason", "widest margin");
		set(l, "recommendation", rec);
		cJSON_ArrayForEach(run, cJSON_GetObjectItemCaseSensitive(l, "runs")) {
			cJSON *c = cJSON_CreateObject();

			cJSON_AddStringToObject(c, "source", "sim");
			cJSON_AddNumberToObject(c, "l1d_misses", 100 + i);
			cJSON_AddNumberToObject(c, "l1d_miss_rate", 0.02 + 0.01 * k);
			cJSON_AddNumberToObject(c, "l2_misses", 50 + i);
			cJSON_AddNumberToObject(c, "l2_miss_rate", 0.1 + 0.001 * i);
			cJSON_AddNumberToObject(c, "llc_misses", 10);
			cJSON_AddNumberToObject(c, "llc_miss_rate", 0.3);
			set(run, "cache", c);
			k++;
		}
		i++;
	}
}

/* The odd report: the same blocks present but mistyped, and a name of bad UTF-8. */
static void make_odd(cJSON *r)
{
	cJSON *m = cJSON_GetObjectItemCaseSensitive(r, "machine");
	cJSON *layers = cJSON_GetObjectItemCaseSensitive(r, "layers");
	cJSON *l0 = cJSON_GetArrayItem(layers, 0), *l1 = cJSON_GetArrayItem(layers, 1);
	cJSON *l2 = cJSON_GetArrayItem(layers, 2), *be = cJSON_CreateObject(), *odd;
	cJSON *runs0 = cJSON_GetObjectItemCaseSensitive(l0, "runs");

	set(m, "peak_gflops", cJSON_CreateString("fast"));
	set(m, "peak_bw_gbs", cJSON_CreateNumber(-1));
	/* the levels too, which a machine with a cached calibration writes */
	set(m, "calibration", cJSON_CreateString("done"));
	cJSON_DeleteItemFromObjectCaseSensitive(cJSON_GetObjectItemCaseSensitive(r, "summary"), "storage");
	set(cJSON_GetObjectItemCaseSensitive(r, "summary"), "flops", cJSON_CreateString("many"));
	cJSON_AddStringToObject(be, "cpu/csr", "x");
	odd = cJSON_CreateObject();
	cJSON_AddStringToObject(odd, "curve", "no");
	cJSON_AddStringToObject(odd, "sparsity", "0.5");
	cJSON_AddItemToObject(be, "cpu/coo", odd);
	odd = cJSON_CreateObject();
	cJSON_AddItemToObject(odd, "curve", cJSON_Parse("[1, 2, \"a\", {}, {\"sparsity\": 0.5}]"));
	cJSON_AddItemToObject(be, "", odd);
	set(l0, "breakeven", be);
	set(l0, "recommendation", cJSON_CreateNumber(7));
	set(cJSON_GetArrayItem(runs0, 0), "cache", cJSON_Parse("[1, 2]"));
	set(cJSON_GetArrayItem(runs0, 1), "cache", cJSON_CreateString("sim"));
	set(cJSON_GetArrayItem(runs0, 1), "speedup", cJSON_CreateString("fast"));
	/* every other run loses its cache block, so the note path is drawn */
	for (cJSON *l = layers->child; l; l = l->next)
		for (cJSON *run = cJSON_GetObjectItemCaseSensitive(l, "runs") ?
				  cJSON_GetObjectItemCaseSensitive(l, "runs")->child : NULL;
		     run; run = run->next)
			if (l != l0 || (run != cJSON_GetArrayItem(runs0, 0) &&
					run != cJSON_GetArrayItem(runs0, 1)))
				set(run, "cache", cJSON_CreateNull());
	set(cJSON_GetObjectItemCaseSensitive(l0, "pattern"), "nm2_4", cJSON_CreateString("all"));
	set(l1, "sparsity", cJSON_CreateNull());
	set(l1, "pattern", cJSON_CreateObject());
	set(l1, "storage", cJSON_CreateObject());
	set(l2, "runs", cJSON_CreateArray());
	set(l2, "name", cJSON_CreateString("bad\xff\x01name\xe2\x82"));
}

static int derive(const char *from, const char *to, void (*edit)(cJSON *r))
{
	cJSON *r = html_fixture_load(from);
	char *text;
	int rc;

	if (!r)
		return -1;
	edit(r);
	text = cJSON_Print(r);
	rc = text ? harness_write(to, text, strlen(text)) : -1;
	free(text);
	cJSON_Delete(r);
	return rc;
}

int html_fixture_setup(struct html_fixture *fx)
{
	char *m12, *m300;
	int rc = -1;

	memset(fx, 0, sizeof(*fx));
	fx->dir = harness_tmpdir();
	if (!fx->dir)
		return -1;
	for (int c = 0; c < HC_COUNT; c++) {
		char name[64];

		snprintf(name, sizeof(name), "%s.json", html_case_name[c]);
		fx->json[c] = harness_join(fx->dir, name);
		snprintf(name, sizeof(name), "%s.html", html_case_name[c]);
		fx->html[c] = harness_join(fx->dir, name);
	}
	m12 = harness_join(fx->dir, "m12.safetensors");
	m300 = harness_join(fx->dir, "m300.safetensors");
	if (synth(m12, 0) || synth(m300, 1) || analyze(m12, fx->json[HC_S12], 0) ||
	    analyze(m12, fx->json[HC_R12], 1) || analyze(m300, fx->json[HC_S300], 0) ||
	    analyze(m300, fx->json[HC_R300], 1) ||
	    derive(fx->json[HC_R12], fx->json[HC_FULL], make_full) ||
	    derive(fx->json[HC_R300], fx->json[HC_FULL300], make_full) ||
	    derive(fx->json[HC_R12], fx->json[HC_ODD], make_odd))
		goto done;
	for (int c = 0; c < HC_COUNT; c++) {
		const char *args[] = {"report", fx->json[c], "-o", fx->html[c], NULL};

		if (run_spprof(args))
			goto done;
	}
	rc = 0;
done:
	free(m12);
	free(m300);
	return rc;
}

void html_fixture_teardown(struct html_fixture *fx)
{
	for (int c = 0; c < HC_COUNT; c++) {
		free(fx->json[c]);
		free(fx->html[c]);
	}
	harness_rmtree(fx->dir);
	fx->dir = NULL;
}
