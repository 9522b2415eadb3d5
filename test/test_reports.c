/*
 * Reports: the spprof.report/1 tree built from a hand-made analysis, and
 * every writer and the reader rendering and loading it. The analysis is
 * filled by hand with figures worked out from DESIGN section 3, so these
 * tests check the report part alone, not the static analysis.
 */
#include <dirent.h>
#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include <cmocka.h>
#include <csv.h>
#include <omp.h>

#include "reports/report.h"
#include "test/harness.h"

#define REASON_NA "not 2:4 compliant (50% of groups)"

struct fixture {
	struct spp_tensor *tensors;
	struct spp_model model;
	struct spp_layer *layers;
	struct spp_layer_static *stats;
	char *warnings[1];
	struct spp_analysis a;
	char names[300][64];
};

static const float zeros[128];

static void storage(struct spp_layer_static *s, enum spp_storage_fmt f, double bytes)
{
	s->storage[f].applicable = 1;
	s->storage[f].bytes = bytes;
	s->storage[f].ratio = bytes > 0 ? s->storage[SPP_ST_DENSE].bytes / bytes : 0;
}

static void not_applicable(struct spp_layer_static *s, enum spp_storage_fmt f, const char *why)
{
	s->storage[f].applicable = 0;
	snprintf(s->storage[f].reason, sizeof(s->storage[f].reason), "%s", why);
}

static void tensor(struct spp_tensor *t, const char *name, enum spp_dtype dt,
		   int ndim, const int64_t *shape)
{
	memset(t, 0, sizeof(*t));
	t->name = (char *)name;
	t->dtype = dt;
	t->ndim = ndim;
	t->numel = 1;
	for (int d = 0; d < ndim; d++) {
		t->shape[d] = shape[d];
		t->numel *= (uint64_t)shape[d];
	}
	t->data = (const unsigned char *)zeros;
	t->nbytes = t->numel * 4;
}

/*
 * Layer 0: 8x16 F32, 2:4 sparse (64 of 128). Storage by DESIGN 3 with
 * vb = 4: dense 512, csr 64*8 + 9*4 = 548, coo 64*12 = 768, bsr4 8 blocks
 * 8*64 + 32 + 12 = 556, bsr8 2*256 + 8 + 8 = 528, bsr16 1024 + 4 + 8 = 1036,
 * bitmask 8*2 + 256 + 36 = 308, nm2_4 G = 32: 256 + 16 = 272,
 * nm4_8 G = 16: 256 + 24 = 280. N = 128: dense FLOPs 2*8*16*128 = 32768.
 */
static void stats0(struct spp_layer_static *s)
{
	memset(s, 0, sizeof(*s));
	s->counts.m = 8, s->counts.k = 16, s->counts.nnz = 64;
	s->counts.row_nnz_min = 8, s->counts.row_nnz_max = 8;
	s->numel = 128, s->sparsity = 0.5;
	s->flops_dense = 32768, s->flops_sparse = 16384, s->theoretical_speedup = 2;
	s->nm[0] = 0, s->nm[1] = 1, s->nm[2] = 1;
	s->block[0] = 0.25;
	s->row_nnz_mean = 8, s->row_nnz_cv = 0;
	s->cls = SPP_CLASS_NM;
	storage(s, SPP_ST_DENSE, 512);
	storage(s, SPP_ST_CSR, 548);
	storage(s, SPP_ST_COO, 768);
	storage(s, SPP_ST_BSR4, 556);
	storage(s, SPP_ST_BSR8, 528);
	storage(s, SPP_ST_BSR16, 1036);
	storage(s, SPP_ST_BITMASK, 308);
	not_applicable(s, SPP_ST_NM1_4, "not 1:4 compliant (0% of groups)");
	storage(s, SPP_ST_NM2_4, 272);
	storage(s, SPP_ST_NM4_8, 280);
}

/* Layer 1: 4x8 BF16 (vb 2), 20 non-zeros, no N:M pattern holds. */
static void stats1(struct spp_layer_static *s)
{
	memset(s, 0, sizeof(*s));
	s->counts.m = 4, s->counts.k = 8, s->counts.nnz = 20;
	s->counts.row_nnz_min = 3, s->counts.row_nnz_max = 7;
	s->counts.zero_cols = 1;
	s->numel = 32, s->sparsity = 0.375;
	s->flops_dense = 8192, s->flops_sparse = 5120, s->theoretical_speedup = 1.6;
	s->nm[0] = 0.25, s->nm[1] = 0.5, s->nm[2] = 0.75;
	s->row_nnz_mean = 5, s->row_nnz_cv = 0.31622776601683794;
	s->cls = SPP_CLASS_UNSTRUCTURED;
	storage(s, SPP_ST_DENSE, 64);
	storage(s, SPP_ST_CSR, 140);
	storage(s, SPP_ST_COO, 200);
	storage(s, SPP_ST_BSR4, 80);
	storage(s, SPP_ST_BSR8, 140);
	storage(s, SPP_ST_BSR16, 524);
	storage(s, SPP_ST_BITMASK, 64);
	not_applicable(s, SPP_ST_NM1_4, "not 1:4 compliant (25% of groups)");
	not_applicable(s, SPP_ST_NM2_4, REASON_NA);
	not_applicable(s, SPP_ST_NM4_8, "not 4:8 compliant (75% of groups)");
}

/* Layer 2: conv2d [4, 2, 3, 3] (M 4, K 18) pruned to nothing: nnz 0. */
static void stats2(struct spp_layer_static *s)
{
	memset(s, 0, sizeof(*s));
	s->counts.m = 4, s->counts.k = 18;
	s->counts.zero_rows = 4, s->counts.zero_cols = 18;
	s->numel = 72, s->sparsity = 1;
	s->flops_dense = 18432;
	for (int i = 0; i < SPP_NNM; i++)
		s->nm[i] = 1;
	for (int i = 0; i < SPP_NBLOCK; i++)
		s->block[i] = 1;
	s->cls = SPP_CLASS_CHANNEL;
	storage(s, SPP_ST_DENSE, 288);
	storage(s, SPP_ST_CSR, 20);
	storage(s, SPP_ST_COO, 0);
	storage(s, SPP_ST_BSR4, 8);
	storage(s, SPP_ST_BSR8, 8);
	storage(s, SPP_ST_BSR16, 8);
	storage(s, SPP_ST_BITMASK, 32);
	storage(s, SPP_ST_NM1_4, 85);
	storage(s, SPP_ST_NM2_4, 170);
	storage(s, SPP_ST_NM4_8, 210);
}

/* The three layers above plus a bias, or nlayers copies of layer 0 (0 allowed). */
static void fixture_init(struct fixture *fx, int nlayers)
{
	static const int64_t s0[] = {8, 16}, s1[] = {4, 8}, s2[] = {4, 2, 3, 3}, sb[] = {8};
	int nt = nlayers < 0 ? 4 : nlayers;

	memset(fx, 0, sizeof(*fx));
	fx->tensors = calloc((size_t)nt + 1, sizeof(*fx->tensors));
	fx->layers = calloc((size_t)nt + 1, sizeof(*fx->layers));
	fx->stats = calloc((size_t)nt + 1, sizeof(*fx->stats));
	assert_non_null(fx->tensors);
	assert_non_null(fx->layers);
	assert_non_null(fx->stats);
	if (nlayers < 0) {
		tensor(&fx->tensors[0], "model.layers.0.self_attn.q_proj.weight", SPP_DTYPE_F32, 2, s0);
		tensor(&fx->tensors[1], "model.layers.0.mlp.down_proj.weight", SPP_DTYPE_BF16, 2, s1);
		tensor(&fx->tensors[2], "conv.weight", SPP_DTYPE_F32, 4, s2);
		tensor(&fx->tensors[3], "fc.bias", SPP_DTYPE_F32, 1, sb);
		for (int i = 0; i < 3; i++)
			spp_layer_init(&fx->layers[i], &fx->tensors[i], 128);
		stats0(&fx->stats[0]);
		stats1(&fx->stats[1]);
		stats2(&fx->stats[2]);
		fx->a.nlayers = 3;
		fx->a.totals.tensors = 4;
		fx->a.totals.params = 240;
		fx->a.totals.nnz = 92;
		fx->a.totals.sparsity = 1 - 92.0 / 240;
	} else {
		for (int i = 0; i < nlayers; i++) {
			snprintf(fx->names[i], sizeof(fx->names[i]),
				 "model.layers.%d.self_attn.q_proj.weight", i);
			tensor(&fx->tensors[i], fx->names[i], SPP_DTYPE_F32, 2, s0);
			spp_layer_init(&fx->layers[i], &fx->tensors[i], 128);
			stats0(&fx->stats[i]);
		}
		fx->a.nlayers = nlayers;
		fx->a.totals.tensors = (uint64_t)nlayers;
		fx->a.totals.params = 128 * (uint64_t)nlayers;
		fx->a.totals.nnz = 64 * (uint64_t)nlayers;
		fx->a.totals.sparsity = nlayers ? 0.5 : 0;
	}
	fx->model.path = "models/tiny.safetensors";
	fx->model.format = "safetensors";
	fx->model.tensors = fx->tensors;
	fx->model.ntensors = nt;
	fx->model.bytes = 1234;
	fx->a.model = &fx->model;
	fx->a.layers = fx->layers;
	fx->a.stats = fx->stats;
	fx->a.totals.bytes = 1234;
	fx->a.totals.hash.algo = "xxh3-128-tree-test";
	snprintf(fx->a.totals.hash.hex, sizeof(fx->a.totals.hash.hex), "%s",
		 "0123456789abcdef0123456789abcdef");
	spp_analyze_opts_init(&fx->a.opts);
	fx->a.opts.static_only = 1;
	fx->a.opts.seed = 7;
	fx->warnings[0] = "kernel runs are not built yet: static metrics only";
	fx->a.warnings = fx->warnings;
	fx->a.nwarnings = 1;
}

static void fixture_fini(struct fixture *fx)
{
	free(fx->tensors);
	free(fx->layers);
	free(fx->stats);
}

static cJSON *build(struct fixture *fx)
{
	struct spp_error err = {0};
	cJSON *r = spp_report_build(&fx->a, "9.9.9", &err);

	assert_non_null(r);
	return r;
}

/*
 * Expected parts of the tree, as JSON. Every name given must be present
 * with the same type and value (numbers to 1e-12 relative: the ratios are
 * written to 16 digits); names not given are not checked.
 */
static const char want_top[] = "{"
	"\"schema\": \"spprof.report/1\", \"tool\": {\"name\": \"spprof\", \"version\": \"9.9.9\"},"
	"\"created\": \"1970-01-02T00:00:00Z\","
	"\"model\": {\"path\": \"models/tiny.safetensors\", \"format\": \"safetensors\","
	"  \"hash\": {\"algo\": \"xxh3-128-tree-test\", \"value\": \"0123456789abcdef0123456789abcdef\"},"
	"  \"bytes\": 1234, \"params\": 240, \"nnz\": 92, \"sparsity\": 0.6166666666666667,"
	"  \"tensors\": 4, \"layers\": 3},"
	"\"machine\": {\"caches\": null, \"peak_bw_gbs\": null, \"peak_gflops\": null,"
	"  \"counters\": null, \"dense_blas\": null, \"gpus\": []},"
	"\"settings\": {\"n\": 128, \"batch\": null, \"threads\": null, \"repeats\": null,"
	"  \"formats\": [], \"backends\": [], \"seed\": 7, \"static\": true},"
	"\"summary\": {\"layers\": 3, \"gemm_params\": 232, \"gemm_nnz\": 84,"
	"  \"gemm_sparsity\": 0.6379310344827587,"
	"  \"storage\": {\"dense\": {\"bytes\": 864, \"ratio\": 1, \"applicable_layers\": 3},"
	"    \"csr\": {\"bytes\": 708, \"ratio\": 1.2203389830508475, \"applicable_layers\": 3},"
	/* nm2_4 holds layers 0 and 2 only: 272 + 170 bytes against 512 + 288 */
	"    \"nm2_4\": {\"bytes\": 442, \"ratio\": 1.8099547511312217, \"applicable_layers\": 2},"
	"    \"nm1_4\": {\"bytes\": 85, \"applicable_layers\": 1}},"
	"  \"flops\": {\"dense\": 59392, \"sparse\": 21504, \"theoretical_speedup\": 2.761904761904762}},"
	"\"warnings\": [\"kernel runs are not built yet: static metrics only\"]}";

static const char want_layer0[] = "{"
	"\"name\": \"model.layers.0.self_attn.q_proj.weight\", \"op\": \"linear\","
	"\"dtype\": \"F32\", \"shape\": [8, 16], \"m\": 8, \"k\": 16, \"n\": 128,"
	"\"n_source\": \"option\", \"numel\": 128, \"nnz\": 64, \"sparsity\": 0.5,"
	"\"pattern\": {\"class\": \"nm\", \"nm1_4\": 0, \"nm2_4\": 1, \"nm4_8\": 1, \"block2\": 0.25,"
	"  \"block4\": 0, \"block8\": 0, \"block16\": 0, \"zero_rows\": 0, \"zero_cols\": 0,"
	"  \"row_nnz\": {\"min\": 8, \"max\": 8, \"mean\": 8, \"cv\": 0}},"
	"\"flops\": {\"dense\": 32768, \"sparse\": 16384, \"theoretical_speedup\": 2},"
	"\"storage\": {\"dense\": {\"bytes\": 512, \"ratio\": 1},"
	"  \"csr\": {\"bytes\": 548, \"ratio\": 0.9343065693430657},"
	"  \"coo\": {\"bytes\": 768, \"ratio\": 0.6666666666666666},"
	"  \"bsr4\": {\"bytes\": 556, \"ratio\": 0.920863309352518},"
	"  \"bsr8\": {\"bytes\": 528, \"ratio\": 0.9696969696969697},"
	"  \"bsr16\": {\"bytes\": 1036, \"ratio\": 0.4942084942084942},"
	"  \"bitmask\": {\"bytes\": 308, \"ratio\": 1.6623376623376624},"
	"  \"nm1_4\": {\"bytes\": null, \"ratio\": null, \"applicable\": false,"
	"    \"reason\": \"not 1:4 compliant (0% of groups)\"},"
	"  \"nm2_4\": {\"bytes\": 272, \"ratio\": 1.8823529411764706},"
	"  \"nm4_8\": {\"bytes\": 280, \"ratio\": 1.8285714285714285}},"
	"\"runs\": [], \"breakeven\": {}, \"recommendation\": null}";

/* A format that cannot hold the layer is not a number. */
static const char want_layer1[] = "{\"dtype\": \"BF16\", \"shape\": [4, 8],"
	"\"pattern\": {\"class\": \"unstructured\", \"zero_cols\": 1,"
	"  \"row_nnz\": {\"min\": 3, \"max\": 7, \"mean\": 5, \"cv\": 0.31622776601683794}},"
	"\"flops\": {\"theoretical_speedup\": 1.6},"
	"\"storage\": {\"nm2_4\": {\"bytes\": null, \"ratio\": null, \"applicable\": false,"
	"  \"reason\": \"" REASON_NA "\"}}}";

/* nnz 0: no speedup and no row cv exist; a 0-byte format has no ratio. */
static const char want_layer2[] = "{\"name\": \"conv.weight\", \"op\": \"conv2d\","
	"\"shape\": [4, 2, 3, 3], \"m\": 4, \"k\": 18, \"nnz\": 0, \"sparsity\": 1,"
	"\"pattern\": {\"class\": \"channel\", \"zero_rows\": 4, \"zero_cols\": 18,"
	"  \"row_nnz\": {\"cv\": null}},"
	"\"flops\": {\"dense\": 18432, \"sparse\": 0, \"theoretical_speedup\": null},"
	"\"storage\": {\"coo\": {\"bytes\": 0, \"ratio\": null}, \"csr\": {\"bytes\": 20, \"ratio\": 14.4}}}";

/* Whether got holds everything in want (see above); where names the spot on failure. */
static void expect_subset(const cJSON *want, const cJSON *got, const char *where)
{
	const cJSON *w;
	char sub[256];

	if ((want->type & 0xff) != (got->type & 0xff) &&
	    !(cJSON_IsBool(want) && cJSON_IsBool(got)))
		fail_msg("%s: type %d, want %d", where, got->type & 0xff, want->type & 0xff);
	if (cJSON_IsNumber(want)) {
		double a = got->valuedouble, b = want->valuedouble;

		if (fabs(a - b) > 1e-12 * fmax(1, fabs(b)))
			fail_msg("%s: %.17g, want %.17g", where, a, b);
	} else if (cJSON_IsString(want)) {
		if (strcmp(want->valuestring, got->valuestring) != 0)
			fail_msg("%s: '%s', want '%s'", where, got->valuestring, want->valuestring);
	} else if (cJSON_IsBool(want)) {
		if (cJSON_IsTrue(want) != cJSON_IsTrue(got))
			fail_msg("%s: wrong boolean", where);
	} else if (cJSON_IsArray(want)) {
		if (cJSON_GetArraySize(want) != cJSON_GetArraySize(got))
			fail_msg("%s: %d items, want %d", where, cJSON_GetArraySize(got),
				 cJSON_GetArraySize(want));
		for (int i = 0; i < cJSON_GetArraySize(want); i++) {
			snprintf(sub, sizeof(sub), "%s[%d]", where, i);
			expect_subset(cJSON_GetArrayItem(want, i), cJSON_GetArrayItem(got, i), sub);
		}
	} else if (cJSON_IsObject(want)) {
		cJSON_ArrayForEach(w, want) {
			const cJSON *g = cJSON_GetObjectItemCaseSensitive(got, w->string);

			snprintf(sub, sizeof(sub), "%s.%s", where, w->string);
			if (!g)
				fail_msg("%s missing", sub);
			expect_subset(w, g, sub);
		}
	}
}

static void expect_json(const char *want_text, const cJSON *got, const char *where)
{
	cJSON *want = cJSON_Parse(want_text);

	if (!want)
		fail_msg("bad expectation near '%.20s'", cJSON_GetErrorPtr());
	expect_subset(want, got, where);
	cJSON_Delete(want);
}

static void test_tree(void **state)
{
	static const char *const want_layers[] = {want_layer0, want_layer1, want_layer2};
	struct fixture fx;
	const cJSON *mc, *ls, *st, *f;
	cJSON *r;
	(void)state;

	fixture_init(&fx, -1);
	r = build(&fx);
	/* SOURCE_DATE_EPOCH = 86400 (main) pins "created" */
	expect_json(want_top, r, "report");
	mc = cJSON_GetObjectItem(r, "machine");
	assert_true(cJSON_IsString(cJSON_GetObjectItem(mc, "cpu")) ||
		    cJSON_IsNull(cJSON_GetObjectItem(mc, "cpu")));
	assert_true(cJSON_GetObjectItem(mc, "threads")->valuedouble == omp_get_max_threads());
	ls = cJSON_GetObjectItem(r, "layers");
	assert_int_equal(cJSON_GetArraySize(ls), 3);
	for (int i = 0; i < 3; i++)
		expect_json(want_layers[i], cJSON_GetArrayItem(ls, i), "layer");
	/* every layer lists all ten formats; "applicable" appears only as false */
	cJSON_ArrayForEach(f, ls) {
		st = cJSON_GetObjectItem(f, "storage");
		assert_int_equal(cJSON_GetArraySize(st), SPP_ST_COUNT);
		for (const cJSON *x = st->child; x; x = x->next) {
			const cJSON *a = cJSON_GetObjectItem(x, "applicable");

			assert_true(!a || cJSON_IsFalse(a));
			assert_true(cJSON_IsNumber(cJSON_GetObjectItem(x, "bytes")) == !a);
		}
	}
	cJSON_Delete(r);
	fixture_fini(&fx);
}

static const cJSON *dotted(const cJSON *o, const char *path);

/* Render into a heap string. */
static char *render(const cJSON *r, enum spp_report_format fmt, int color)
{
	struct spp_render_opts o = {color};
	struct spp_error err = {0};
	char *buf = NULL;
	size_t len = 0;
	FILE *f = open_memstream(&buf, &len);

	assert_non_null(f);
	assert_int_equal(spp_report_render(r, fmt, f, &o, &err), 0);
	assert_int_equal(fclose(f), 0);
	return buf;
}

static void test_json_roundtrip(void **state)
{
	struct fixture fx;
	struct spp_error err = {0};
	char *dir = harness_tmpdir(), *path, *t1, *t2, *c1, *c2;
	cJSON *r, *back = NULL;
	(void)state;

	fixture_init(&fx, -1);
	/* cJSON alone would print these with 15 digits and lose the last bits */
	fx.a.totals.bytes = (UINT64_C(1) << 53) - 1;
	fx.stats[1].row_nnz_cv = 0.1 + 0.2;
	r = build(&fx);
	path = harness_join(dir, "r.json");
	assert_int_equal(spp_report_write_file(r, SPP_REPORT_JSON, path, NULL, &err), 0);
	assert_int_equal(spp_report_load(path, &back, &err), 0);
	assert_true(cJSON_Compare(r, back, 1));
	assert_true(cJSON_GetObjectItem(cJSON_GetObjectItem(back, "model"), "bytes")->valuedouble ==
		    9007199254740991.0);
	assert_true(dotted(cJSON_GetArrayItem(cJSON_GetObjectItem(back, "layers"), 1),
			   "pattern.row_nnz.cv")->valuedouble == 0.1 + 0.2);
	assert_true(dotted(cJSON_GetArrayItem(cJSON_GetObjectItem(back, "layers"), 0),
			   "storage.csr.ratio")->valuedouble == 512.0 / 548);
	/* a saved report re-renders exactly like the fresh one */
	t1 = render(r, SPP_REPORT_TEXT, 0);
	t2 = render(back, SPP_REPORT_TEXT, 0);
	assert_string_equal(t1, t2);
	c1 = render(r, SPP_REPORT_CSV, 0);
	c2 = render(back, SPP_REPORT_CSV, 0);
	assert_string_equal(c1, c2);
	free(t1), free(t2), free(c1), free(c2);
	cJSON_Delete(back);
	cJSON_Delete(r);
	free(path);
	harness_rmtree(dir);
	fixture_fini(&fx);
}

/* The line of text that contains needle, copied; fails when none. */
static char *line_with(const char *text, const char *needle)
{
	const char *p = strstr(text, needle), *b, *e;

	if (!p)
		fail_msg("no line contains \"%s\" in:\n%s", needle, text);
	for (b = p; b > text && b[-1] != '\n'; b--)
		;
	e = strchr(p, '\n');
	return strndup(b, e ? (size_t)(e - b) : strlen(b));
}

/* Display column (code points) of needle within line. */
static int column_of(const char *line, const char *needle)
{
	const char *p = strstr(line, needle);
	int col = 0;

	assert_non_null(p);
	for (const char *q = line; q < p; q++)
		col += ((unsigned char)*q & 0xc0) != 0x80;
	return col;
}

static int display_width(const char *s)
{
	int w = 0;

	for (; *s; s++)
		w += ((unsigned char)*s & 0xc0) != 0x80;
	return w;
}

/* Text with the ANSI colour sequences removed. */
static char *strip_ansi(const char *s)
{
	char *out = malloc(strlen(s) + 1), *o = out;

	assert_non_null(out);
	while (*s) {
		if (*s == '\033' && s[1] == '[') {
			s += 2;
			while (*s && *s != 'm')
				s++;
			if (*s)
				s++;
			continue;
		}
		*o++ = *s++;
	}
	*o = '\0';
	return out;
}

static void test_text(void **state)
{
	struct fixture fx;
	char *plain, *color, *stripped, *hdr, *row0, *row1, *row2, *tot;
	cJSON *r;
	(void)state;

	fixture_init(&fx, -1);
	r = build(&fx);
	plain = render(r, SPP_REPORT_TEXT, 0);
	assert_null(strchr(plain, '\033'));
	assert_non_null(strstr(plain, "model     models/tiny.safetensors\n"));
	assert_non_null(strstr(plain, "format    safetensors, 1.21 KiB, 4 tensors, 3 GEMM layers\n"));
	assert_non_null(strstr(plain, "params    240, nnz 92, sparsity 61.67%\n"));
	assert_non_null(strstr(plain, "hash      0123456789ab (xxh3-128-tree-test)\n"));
	assert_non_null(strstr(plain, "settings  N 128, threads "));
	assert_non_null(strstr(plain, "warning: kernel runs are not built yet: static metrics only\n"));

	hdr = line_with(plain, "sparsity  class");
	row0 = line_with(plain, "model.layers.0\xe2\x80\xa6q_proj.weight");
	row1 = line_with(plain, "model.layers.0.mlp.down_proj.weight");
	row2 = line_with(plain, "conv.weight");
	tot = line_with(plain, "total (3 layers)");
	/* layer 0: 2:4 sparse F32, best stored as nm2_4 (512 / 272) */
	assert_non_null(strstr(row0, " linear "));
	assert_non_null(strstr(row0, " 8x16 "));
	assert_non_null(strstr(row0, " 50.0% "));
	assert_non_null(strstr(row0, " nm "));
	assert_non_null(strstr(row0, " 1.00 "));
	assert_non_null(strstr(row0, " 32.8 KF "));
	assert_non_null(strstr(row0, " 2.00x "));
	assert_non_null(strstr(row0, " 0.93x "));
	assert_non_null(strstr(row0, " nm2_4 "));
	assert_non_null(strstr(row0, " 1.88x"));
	/* layer 1: dense and bitmask tie at 1.00x; the first listed wins */
	assert_non_null(strstr(row1, " BF16 "));
	assert_non_null(strstr(row1, " 37.5% "));
	assert_non_null(strstr(row1, " 1.60x "));
	assert_non_null(strstr(row1, " dense "));
	/* conv: its stored shape beside the GEMM one; no speedup for nnz 0 */
	assert_non_null(strstr(row2, " 4x18 (4x2x3x3) "));
	assert_non_null(strstr(row2, " 100.0% "));
	assert_non_null(strstr(row2, " 18.4 KF "));
	assert_non_null(strstr(row2, " \xe2\x80\x94 "));
	assert_non_null(strstr(row2, " 14.4x "));
	assert_non_null(strstr(row2, " bsr4 "));
	assert_non_null(strstr(row2, " 36.0x"));
	/* totals: 84 of 232 kept; 59392 / 21504 FLOPs; csr 864 / 708; the best
	 * format that holds every layer is bitmask, 864 / 404 */
	assert_non_null(strstr(tot, " 63.8% "));
	assert_non_null(strstr(tot, " 59.4 KF "));
	assert_non_null(strstr(tot, " 2.76x "));
	assert_non_null(strstr(tot, " 1.22x "));
	assert_non_null(strstr(tot, " bitmask "));
	assert_non_null(strstr(tot, " 2.14x"));
	/* aligned: text columns start together, figures end together */
	assert_int_equal(column_of(row0, "linear"), column_of(hdr, "op"));
	assert_int_equal(column_of(row2, "conv2d"), column_of(hdr, "op"));
	assert_int_equal(column_of(row0, "50.0%") + 5, column_of(hdr, "sparsity") + 8);
	assert_int_equal(column_of(row2, "100.0%") + 6, column_of(hdr, "sparsity") + 8);
	assert_int_equal(column_of(tot, "63.8%") + 5, column_of(hdr, "sparsity") + 8);
	assert_int_equal(display_width(row0), display_width(hdr));

	/* colour adds escape codes and nothing else */
	color = render(r, SPP_REPORT_TEXT, 1);
	assert_non_null(strstr(color, "\033[1m"));
	assert_non_null(strstr(color, "\033[32m"));
	stripped = strip_ansi(color);
	assert_string_equal(stripped, plain);

	free(plain), free(color), free(stripped);
	free(hdr), free(row0), free(row1), free(row2), free(tot);
	cJSON_Delete(r);
	fixture_fini(&fx);
}

static void test_text_sizes(void **state)
{
	struct fixture fx;
	char *text, *line, want[64];
	cJSON *r, *name;
	(void)state;

	fixture_init(&fx, 0);
	r = build(&fx);
	text = render(r, SPP_REPORT_TEXT, 0);
	assert_non_null(strstr(text, "no GEMM layers\n"));
	assert_null(strstr(text, "total"));
	free(text);
	cJSON_Delete(r);
	fixture_fini(&fx);

	fixture_init(&fx, 300);
	r = build(&fx);
	/* a name with no dots is cut by width alone; control bytes are replaced */
	name = cJSON_GetObjectItemCaseSensitive(cJSON_GetArrayItem(cJSON_GetObjectItem(r, "layers"), 7), "name");
	assert_non_null(cJSON_SetValuestring(name, "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789"));
	name = cJSON_GetObjectItemCaseSensitive(cJSON_GetArrayItem(cJSON_GetObjectItem(r, "layers"), 8), "name");
	assert_non_null(cJSON_SetValuestring(name, "evil\033[31m.weight"));
	text = render(r, SPP_REPORT_TEXT, 0);
	assert_null(strchr(text, '\033'));
	assert_non_null(strstr(text, "evil?[31m.weight "));
		/* header 5 + blank, titles + rule, rows, rule + total, blank + warning */
	assert_int_equal(harness_count_lines(text), 6 + 2 + 300 + 2 + 2);
	for (int i = 0; i < 300; i++) {
		if (i == 7 || i == 8)
			continue;
		snprintf(want, sizeof(want), "model.layers.%d\xe2\x80\xa6q_proj.weight ", i);
		line = line_with(text, want);
		assert_true(column_of(line, "linear") <= 36 + 2);
		free(line);
	}
	line = line_with(text, "abcdefghijklmnop");
	assert_non_null(strstr(line, "\xe2\x80\xa6"));
	assert_non_null(strstr(line, "0123456789 "));
	assert_int_equal(column_of(line, "linear"), 36 + 2);
	free(line);
	line = line_with(text, "total (300 layers)");
	assert_non_null(strstr(line, " 50.0% "));
	free(line);
	free(text);
	cJSON_Delete(r);
	fixture_fini(&fx);
}

/* CSV parsed back with libcsv. */
struct table {
	char *cell[16][128];
	int ncell[16];
	int rows;
};

static void on_field(void *s, size_t len, void *data)
{
	struct table *t = data;

	assert_true(t->rows < 16 && t->ncell[t->rows] < 128);
	t->cell[t->rows][t->ncell[t->rows]++] = strndup(s ? s : "", len);
}

static void on_row(int c, void *data)
{
	(void)c;
	((struct table *)data)->rows++;
}

static void parse_csv(const char *text, struct table *t)
{
	struct csv_parser p;

	memset(t, 0, sizeof(*t));
	assert_int_equal(csv_init(&p, CSV_STRICT | CSV_STRICT_FINI), 0);
	assert_int_equal(csv_parse(&p, text, strlen(text), on_field, on_row, t), strlen(text));
	assert_int_equal(csv_fini(&p, on_field, on_row, t), 0);
	csv_free(&p);
	for (int r = 1; r < t->rows; r++)
		assert_int_equal(t->ncell[r], t->ncell[0]);
}

static void table_free(struct table *t)
{
	for (int r = 0; r < t->rows; r++)
		for (int c = 0; c < t->ncell[r]; c++)
			free(t->cell[r][c]);
}

static int col(const struct table *t, const char *name)
{
	for (int c = 0; c < t->ncell[0]; c++)
		if (strcmp(t->cell[0][c], name) == 0)
			return c;
	fail_msg("no CSV column \"%s\"", name);
	return -1;
}

/* Dotted lookup, written here so the test does not trust the writer's own. */
static const cJSON *dotted(const cJSON *o, const char *path)
{
	char buf[256], *save = NULL;

	snprintf(buf, sizeof(buf), "%s", path);
	for (char *k = strtok_r(buf, ".", &save); k && o; k = strtok_r(NULL, ".", &save))
		o = cJSON_IsObject(o) ? cJSON_GetObjectItemCaseSensitive(o, k) : NULL;
	return o;
}

/* Every cell of a layer row equals the tree's value under the column name. */
static void check_row(const struct table *t, int row, const cJSON *layer)
{
	for (int c = 2; c < t->ncell[0]; c++) {
		const char *name = t->cell[0][c], *cell = t->cell[row][c];
		const cJSON *v = dotted(layer, name);
		char *end;

		if (strcmp(name, "shape") == 0)
			continue;
		if (!v || cJSON_IsNull(v)) {
			assert_string_equal(cell, "");
		} else if (cJSON_IsNumber(v)) {
			double d = strtod(cell, &end);

			if (*end || end == cell || d != v->valuedouble)
				fail_msg("row %d %s: '%s' != %.17g", row, name, cell, v->valuedouble);
		} else if (cJSON_IsString(v)) {
			assert_string_equal(cell, v->valuestring);
		} else if (cJSON_IsBool(v)) {
			assert_string_equal(cell, cJSON_IsTrue(v) ? "true" : "false");
		} else {
			fail_msg("column %s holds a non-scalar", name);
		}
	}
}

static void test_csv(void **state)
{
	static const char *const names[] = {
		"name", "op", "dtype", "shape", "m", "k", "n", "n_source", "numel",
		"nnz", "sparsity", "pattern.class", "pattern.nm2_4", "pattern.block16",
		"pattern.row_nnz.cv", "flops.dense", "flops.theoretical_speedup",
		"storage.dense.bytes", "storage.csr.bytes", "storage.csr.ratio",
		"storage.nm2_4.reason", "storage.nm2_4.applicable", "recommendation",
	};
	struct fixture fx;
	struct table t;
	const cJSON *layers;
	cJSON *r, *runs, *run;
	char *text;
	(void)state;

	fixture_init(&fx, -1);
	r = build(&fx);
	/* a name that needs quoting */
	layers = cJSON_GetObjectItem(r, "layers");
	assert_non_null(cJSON_SetValuestring(cJSON_GetObjectItem(cJSON_GetArrayItem(layers, 1), "name"),
					     "odd, \"quoted\"\nname"));
	text = render(r, SPP_REPORT_CSV, 0);
	parse_csv(text, &t);
	assert_int_equal(t.rows, 4);
	assert_string_equal(t.cell[0][0], "model.path");
	assert_string_equal(t.cell[0][1], "model.hash");
	for (size_t i = 0; i < sizeof(names) / sizeof(names[0]); i++)
		col(&t, names[i]);
	for (int c = 0; c < t.ncell[0]; c++) {
		assert_null(strstr(t.cell[0][c], "runs"));
		assert_null(strstr(t.cell[0][c], "breakeven"));
	}
	for (int row = 1; row < 4; row++) {
		assert_string_equal(t.cell[row][0], "models/tiny.safetensors");
		assert_string_equal(t.cell[row][1], "0123456789abcdef0123456789abcdef");
		check_row(&t, row, cJSON_GetArrayItem(layers, row - 1));
	}
	assert_string_equal(t.cell[1][col(&t, "shape")], "8x16");
	assert_string_equal(t.cell[3][col(&t, "shape")], "4x2x3x3");
	assert_string_equal(t.cell[2][col(&t, "name")], "odd, \"quoted\"\nname");
	assert_string_equal(t.cell[2][col(&t, "sparsity")], "0.375");
	assert_string_equal(t.cell[2][col(&t, "storage.nm2_4.reason")], REASON_NA);
	assert_string_equal(t.cell[1][col(&t, "storage.nm2_4.reason")], "");
	assert_string_equal(t.cell[3][col(&t, "flops.theoretical_speedup")], "");
	assert_string_equal(t.cell[1][col(&t, "flops.dense")], "32768");
	/* columns first seen on a later layer join their group */
	assert_int_equal(col(&t, "storage.nm2_4.applicable"), col(&t, "storage.nm2_4.ratio") + 1);
	assert_int_equal(col(&t, "storage.nm2_4.reason"), col(&t, "storage.nm2_4.ratio") + 2);
	table_free(&t);
	free(text);

	/* with runs: one row per run, the run's names unprefixed */
	runs = cJSON_GetObjectItem(cJSON_GetArrayItem(layers, 0), "runs");
	run = cJSON_Parse("{\"backend\": \"cpu\", \"format\": \"csr\", \"status\": \"ok\","
			  " \"time_ns\": {\"median\": 1500, \"p10\": 1400, \"p90\": 1700, \"repeats\": 10},"
			  " \"speedup\": 1.25}");
	cJSON_AddItemToArray(runs, run);
	run = cJSON_Parse("{\"backend\": \"cpu\", \"format\": \"dense\", \"status\": \"ok\","
			  " \"time_ns\": {\"median\": 1875, \"p10\": 1800, \"p90\": 1900, \"repeats\": 10},"
			  " \"speedup\": 1}");
	cJSON_AddItemToArray(runs, run);
	text = render(r, SPP_REPORT_CSV, 0);
	parse_csv(text, &t);
	assert_int_equal(t.rows, 5);
	assert_string_equal(t.cell[1][col(&t, "format")], "csr");
	assert_string_equal(t.cell[1][col(&t, "time_ns.median")], "1500");
	assert_string_equal(t.cell[2][col(&t, "format")], "dense");
	assert_string_equal(t.cell[2][col(&t, "speedup")], "1");
	assert_string_equal(t.cell[2][col(&t, "name")], "model.layers.0.self_attn.q_proj.weight");
	assert_string_equal(t.cell[3][col(&t, "backend")], "");
	assert_string_equal(t.cell[4][col(&t, "time_ns.p90")], "");
	check_row(&t, 3, cJSON_GetArrayItem(layers, 1));
	table_free(&t);
	free(text);
	cJSON_Delete(r);
	fixture_fini(&fx);
}

/* Write text to dir/name and expect spp_report_load to fail with code and msg. */
static void expect_load_error(const char *dir, const char *name, const char *text,
			      int code, const char *msg)
{
	struct spp_error err = {0};
	char *path = harness_join(dir, name), want[512];
	cJSON *out = (cJSON *)1;

	if (text)
		assert_int_equal(harness_write(path, text, strlen(text)), 0);
	assert_int_equal(spp_report_load(path, &out, &err), code);
	assert_null(out);
	snprintf(want, sizeof(want), "'%s'", path);
	if (!strstr(err.msg, want) || !strstr(err.msg, msg))
		fail_msg("message '%s' lacks %s or '%s'", err.msg, want, msg);
	free(path);
}

/* The report as JSON text after edit() changed a copy of it. */
static char *edited(const cJSON *r, void (*edit)(cJSON *))
{
	cJSON *c = cJSON_Duplicate(r, 1);
	char *s;

	edit(c);
	s = cJSON_Print(c);
	cJSON_Delete(c);
	return s;
}

static void layers_object(cJSON *r)
{
	cJSON_ReplaceItemInObject(r, "layers", cJSON_CreateObject());
}

static void drop_name(cJSON *r)
{
	cJSON_DeleteItemFromObject(cJSON_GetArrayItem(cJSON_GetObjectItem(r, "layers"), 1), "name");
}

static void m_string(cJSON *r)
{
	cJSON_ReplaceItemInObject(cJSON_GetArrayItem(cJSON_GetObjectItem(r, "layers"), 0), "m",
				  cJSON_CreateString("8"));
}

static void no_storage(cJSON *r)
{
	cJSON_DeleteItemFromObject(cJSON_GetArrayItem(cJSON_GetObjectItem(r, "layers"), 2), "storage");
}

/* Keep only what the loader demands; the writers must cope with the rest missing. */
static void minimal(cJSON *r)
{
	const char *drop[] = {"tool", "created", "machine", "settings", "summary", "warnings"};
	cJSON *l;

	for (size_t i = 0; i < sizeof(drop) / sizeof(drop[0]); i++)
		cJSON_DeleteItemFromObject(r, drop[i]);
	cJSON_ReplaceItemInObject(r, "model", cJSON_Parse("{\"path\": \"m.safetensors\"}"));
	cJSON_ArrayForEach(l, cJSON_GetObjectItem(r, "layers")) {
		const char *keep[] = {"name", "m", "k", "n", "numel", "nnz", "sparsity"};
		cJSON *c = l->child;

		while (c) {
			cJSON *next = c->next;
			int kept = 0;

			for (size_t i = 0; i < sizeof(keep) / sizeof(keep[0]); i++)
				kept |= strcmp(c->string, keep[i]) == 0;
			if (!kept)
				cJSON_Delete(cJSON_DetachItemViaPointer(l, c));
			c = next;
		}
		cJSON_AddObjectToObject(l, "pattern");
		cJSON_AddObjectToObject(l, "flops");
		cJSON_AddObjectToObject(l, "storage");
	}
}

static void test_load_errors(void **state)
{
	struct fixture fx;
	struct spp_error err = {0};
	char *dir = harness_tmpdir(), *full, *s, *path;
	cJSON *r, *back = NULL;
	(void)state;

	fixture_init(&fx, -1);
	r = build(&fx);
	full = cJSON_Print(r);
	expect_load_error(dir, "missing.json", NULL, SPP_E_IO, "No such file");
	expect_load_error(dir, "empty.json", "", SPP_E_FORMAT, "not JSON");
	expect_load_error(dir, "bad.json", "{\"schema\": \"spprof.report/1\", oops}",
			  SPP_E_FORMAT, "not JSON (error near byte 3");
	expect_load_error(dir, "two.json", "{}{}", SPP_E_FORMAT, "not JSON (trailing data at byte 2)");
	expect_load_error(dir, "schema.json", "{\"schema\": \"x\"}", SPP_E_FORMAT,
			  "not a spprof report (schema is 'x', expected 'spprof.report/1')");
	expect_load_error(dir, "noschema.json", "[1, 2]", SPP_E_FORMAT, "not a spprof report");
	s = edited(r, layers_object);
	expect_load_error(dir, "layers.json", s, SPP_E_FORMAT, "\"layers\" missing or not an array");
	free(s);
	s = edited(r, drop_name);
	expect_load_error(dir, "noname.json", s, SPP_E_FORMAT,
			  "layers[1]: \"name\" missing or not a string");
	free(s);
	s = edited(r, m_string);
	expect_load_error(dir, "mstr.json", s, SPP_E_FORMAT, "layers[0]: \"m\" missing or not a number");
	free(s);
	s = edited(r, no_storage);
	expect_load_error(dir, "nostorage.json", s, SPP_E_FORMAT,
			  "layers[2]: \"storage\" missing or not an object");
	free(s);
	/* cut anywhere, a report is never valid JSON */
	for (size_t cut = 1; cut < strlen(full); cut += strlen(full) / 7) {
		char *half = strndup(full, cut);

		expect_load_error(dir, "cut.json", half, SPP_E_FORMAT, "not JSON");
		free(half);
	}

	/* the least the loader accepts renders in every format */
	s = edited(r, minimal);
	path = harness_join(dir, "min.json");
	assert_int_equal(harness_write(path, s, strlen(s)), 0);
	assert_int_equal(spp_report_load(path, &back, &err), 0);
	for (int fmt = SPP_REPORT_TEXT; fmt <= SPP_REPORT_CSV; fmt++)
		free(render(back, (enum spp_report_format)fmt, fmt == SPP_REPORT_TEXT));
	free(path);
	free(s);
	cJSON_Delete(back);
	free(full);
	cJSON_Delete(r);
	harness_rmtree(dir);
	fixture_fini(&fx);
}

/* The idx-th node below root in pre-order, and its parent; counts down idx. */
static cJSON *nth_node(cJSON *root, int *idx, cJSON **parent)
{
	for (cJSON *c = root->child; c; c = c->next) {
		cJSON *found;

		if ((*idx)-- == 0) {
			*parent = root;
			return c;
		}
		if ((found = nth_node(c, idx, parent)))
			return found;
	}
	return NULL;
}

/*
 * Any one field of a report given another type either fails to load with
 * SPP_E_FORMAT or renders in every format (under the sanitizers, without
 * a fault): the writers never trust a field the loader does not check.
 */
static void test_mutations(void **state)
{
	static const char *const variants[] = {"null", "-1e308", "\"\"", "[]", "{}", "[1e300]", "true"};
	struct fixture fx;
	struct spp_error err = {0};
	char *dir = harness_tmpdir(), *path = harness_join(dir, "m.json");
	int loaded = 0, rejected = 0;
	cJSON *r;
	(void)state;

	fixture_init(&fx, -1);
	r = build(&fx);
	for (int i = 0;; i++) {
		int idx = i, done = 0;

		for (size_t v = 0; v < sizeof(variants) / sizeof(variants[0]); v++) {
			cJSON *c = cJSON_Duplicate(r, 1), *parent = NULL, *node, *back = NULL;
			char *text;
			int rc;

			idx = i;
			node = nth_node(c, &idx, &parent);
			if (!node) {
				cJSON_Delete(c);
				done = 1;
				break;
			}
			assert_true(cJSON_ReplaceItemViaPointer(parent, node, cJSON_Parse(variants[v])));
			text = cJSON_PrintUnformatted(c);
			assert_int_equal(harness_write(path, text, strlen(text)), 0);
			rc = spp_report_load(path, &back, &err);
			if (rc == 0) {
				for (int fmt = SPP_REPORT_TEXT; fmt <= SPP_REPORT_CSV; fmt++)
					free(render(back, (enum spp_report_format)fmt, 1));
				loaded++;
			} else {
				assert_int_equal(rc, SPP_E_FORMAT);
				rejected++;
			}
			cJSON_Delete(back);
			cJSON_free(text);
			cJSON_Delete(c);
		}
		if (done)
			break;
	}
	/* both paths were taken many times */
	assert_true(loaded > 100 && rejected > 50);
	cJSON_Delete(r);
	free(path);
	harness_rmtree(dir);
	fixture_fini(&fx);
}

static int count_entries(const char *dir)
{
	DIR *d = opendir(dir);
	struct dirent *e;
	int n = 0;

	assert_non_null(d);
	while ((e = readdir(d)))
		n += strcmp(e->d_name, ".") != 0 && strcmp(e->d_name, "..") != 0;
	closedir(d);
	return n;
}

static void test_atomic_write(void **state)
{
	struct fixture fx;
	struct spp_error err = {0};
	char *dir = harness_tmpdir(), *path, *sub, *bad, *got, *want, want_msg[512];
	char *big = malloc(100000);
	struct stat st;
	size_t len;
	cJSON *r;
	(void)state;

	fixture_init(&fx, -1);
	r = build(&fx);
	assert_non_null(big);

	bad = harness_join(dir, "nope/r.json");
	assert_int_equal(spp_report_write_file(r, SPP_REPORT_JSON, bad, NULL, &err), SPP_E_OUTPUT);
	snprintf(want_msg, sizeof(want_msg), "cannot write '%s': No such file or directory", bad);
	assert_string_equal(err.msg, want_msg);
	assert_int_equal(count_entries(dir), 0);

	/* over a bigger file: replaced whole, readable by others, no temp left */
	path = harness_join(dir, "r.json");
	memset(big, 'x', 100000);
	assert_int_equal(harness_write(path, big, 100000), 0);
	assert_int_equal(chmod(path, 0600), 0);
	assert_int_equal(spp_report_write_file(r, SPP_REPORT_JSON, path, NULL, &err), 0);
	got = harness_slurp(path, &len);
	want = render(r, SPP_REPORT_JSON, 0);
	assert_string_equal(got, want);
	assert_int_equal(len, strlen(want));
	assert_int_equal(stat(path, &st), 0);
	assert_int_equal(st.st_mode & 0777, 0644);
	assert_int_equal(count_entries(dir), 1);
	free(got), free(want);

	/* a folder in the way: the rename fails, the temp file goes */
	sub = harness_join(dir, "sub.csv");
	assert_int_equal(mkdir(sub, 0755), 0);
	assert_int_equal(spp_report_write_file(r, SPP_REPORT_CSV, sub, NULL, &err), SPP_E_OUTPUT);
	assert_non_null(strstr(err.msg, sub));
	assert_int_equal(count_entries(dir), 2);

	cJSON_Delete(r);
	free(big), free(bad), free(path), free(sub);
	harness_rmtree(dir);
	fixture_fini(&fx);
}

static void test_format_names(void **state)
{
	static const struct {
		int by_path;
		const char *s;
		int rc;
		enum spp_report_format f;
	} cases[] = {
		{0, "text", 0, SPP_REPORT_TEXT}, {0, "txt", 0, SPP_REPORT_TEXT},
		{0, "json", 0, SPP_REPORT_JSON}, {0, "csv", 0, SPP_REPORT_CSV},
		{0, "html", -1, 0}, {0, "JSON", -1, 0},
		{1, "out/r.csv", 0, SPP_REPORT_CSV}, {1, "r.TXT", 0, SPP_REPORT_TEXT},
		{1, "a.b/r.text", 0, SPP_REPORT_TEXT}, {1, "x/r.json", 0, SPP_REPORT_JSON},
		{1, "a.json/report", -1, 0}, {1, "report", -1, 0}, {1, "r.md", -1, 0},
	};
	(void)state;

	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		enum spp_report_format f = (enum spp_report_format)99;
		int rc = cases[i].by_path ? spp_report_format_from_path(cases[i].s, &f)
					  : spp_report_format_from_name(cases[i].s, &f);

		assert_int_equal(rc, cases[i].rc);
		if (rc == 0)
			assert_int_equal(f, cases[i].f);
	}
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_tree),
		cmocka_unit_test(test_json_roundtrip),
		cmocka_unit_test(test_text),
		cmocka_unit_test(test_text_sizes),
		cmocka_unit_test(test_csv),
		cmocka_unit_test(test_load_errors),
		cmocka_unit_test(test_mutations),
		cmocka_unit_test(test_atomic_write),
		cmocka_unit_test(test_format_names),
	};

	setenv("SOURCE_DATE_EPOCH", "86400", 1);
	return cmocka_run_group_tests(tests, NULL, NULL);
}
