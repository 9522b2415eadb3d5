/*
 * The ONNX loader: models written at test time by the ONNX project's own
 * Python package (test/onnx/make_models.py) with the figures numpy computed
 * for them, malformed protobuf built byte by byte here, and every model of
 * Debian's libonnx-testdata, which must load or fail cleanly.
 */
#include <ftw.h>
#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <cjson/cJSON.h>
#include <cmocka.h>

#include "base/budget.h"
#include "profiler/layer.h"
#include "profiler/loaders.h"
#include "profiler/onnx/onnx.h"
#include "profiler/static.h"
#include "test/harness.h"

#define TESTDATA "/usr/share/libonnx-testdata"

/* ---- a protobuf writer, for malformed files ---- */

struct pb {
	unsigned char *p;
	size_t n, cap;
};

static void pb_raw(struct pb *b, const void *data, size_t len)
{
	if (b->n + len > b->cap) {
		b->cap = (b->n + len) * 2 + 64;
		b->p = realloc(b->p, b->cap);
		assert_non_null(b->p);
	}
	if (len)
		memcpy(b->p + b->n, data, len);
	b->n += len;
}

static void pb_varint(struct pb *b, uint64_t v)
{
	unsigned char c;

	do {
		c = (unsigned char)(v & 0x7f);
		v >>= 7;
		if (v)
			c |= 0x80;
		pb_raw(b, &c, 1);
	} while (v);
}

static void pb_int(struct pb *b, unsigned field, uint64_t v)
{
	pb_varint(b, (uint64_t)field << 3);
	pb_varint(b, v);
}

static void pb_bytes(struct pb *b, unsigned field, const void *data, size_t len)
{
	pb_varint(b, (uint64_t)field << 3 | 2);
	pb_varint(b, len);
	pb_raw(b, data, len);
}

/* field holds msg, which is freed */
static void pb_msg(struct pb *b, unsigned field, struct pb *msg)
{
	pb_bytes(b, field, msg->p, msg->n);
	free(msg->p);
	*msg = (struct pb){0};
}

/* ModelProto{ir_version 8, graph{initializer{dims, FLOAT, name, raw_data}}} */
static struct pb model_with(const int64_t *dims, int ndims, size_t raw_len)
{
	struct pb t = {0}, g = {0}, m = {0};
	float raw[64] = {0};

	assert_true(raw_len <= sizeof(raw));
	for (int i = 0; i < ndims; i++)
		pb_int(&t, 1, (uint64_t)dims[i]);
	pb_int(&t, 2, 1);
	pb_bytes(&t, 8, "w", 1);
	raw[0] = 1.0f;
	pb_bytes(&t, 9, raw, raw_len);
	pb_msg(&g, 5, &t);
	pb_int(&m, 1, 8);
	pb_msg(&m, 7, &g);
	return m;
}

static char *tmp;

/* Run spprof analyze on a file holding b; expect exit 2 and the file and
 * what named in the one error line. */
static void expect_bad(const char *name, struct pb *b, const char *what)
{
	char *path = harness_join(tmp, name);
	const char *args[] = {"analyze", path, "--static", NULL};
	struct harness_run r;

	assert_int_equal(harness_write(path, b->p, b->n), 0);
	assert_int_equal(harness_spprof(&r, args), 0);
	if (r.status != 2 || !strstr(r.err, name) || !strstr(r.err, what) ||
	    harness_count_lines(r.err) != 1)
		fail_msg("%s: exit %d, stderr '%s' (want 2 and '%s')", name, r.status, r.err,
			 what);
	assert_string_equal(r.out, "");
	harness_run_free(&r);
	free(path);
}

static void test_malformed(void **state)
{
	static const int64_t ok_dims[] = {2, 2}, huge[] = {INT64_C(1) << 40, INT64_C(1) << 40};
	static const int64_t neg[] = {2, -2};
	struct pb b = model_with(ok_dims, 2, 16), bomb = {0};
	char *path = harness_join(tmp, "ok.onnx");
	const char *args[] = {"analyze", path, "--static", "--format", "json", NULL};
	struct harness_run r;

	(void)state;
	/* the control: the same writer's well-formed model loads */
	assert_int_equal(harness_write(path, b.p, b.n), 0);
	assert_int_equal(harness_spprof(&r, args), 0);
	assert_int_equal(r.status, 0);
	cJSON *rep = cJSON_Parse(r.out);
	assert_non_null(rep);
	assert_int_equal(cJSON_GetNumberValue(cJSON_GetObjectItem(
				 cJSON_GetObjectItem(rep, "model"), "params")), 4);
	cJSON_Delete(rep);
	harness_run_free(&r);
	free(path);

	b.n -= 5;
	expect_bad("truncated.onnx", &b, "field 7 at byte 2 holds 29 bytes, only 24 remain");
	free(b.p);

	b = (struct pb){0};
	pb_int(&b, 1, 8);
	pb_bytes(&b, 7, "\x0b\x00", 2); /* graph{field 1, wire type 3 (group)} */
	expect_bad("wire_type.onnx", &b, "wire type 3");
	free(b.p);

	b = (struct pb){0};
	pb_int(&b, 1, 8);
	pb_bytes(&b, 7, "\x0a\x04\x2a\x02\x10\x05", 6); /* graph.node.attribute{f as a varint} */
	expect_bad("field_type.onnx", &b, "AttributeProto.f");
	free(b.p);

	/* If inside If, 400 deep: a graph in a node's attribute in a graph ... */
	for (int i = 0; i < 400; i++) {
		struct pb a = {0}, n = {0}, g = {0};
		if (bomb.n)
			pb_msg(&a, 6, &bomb);
		pb_msg(&n, 5, &a);
		pb_msg(&g, 1, &n);
		bomb = g;
	}
	b = (struct pb){0};
	pb_int(&b, 1, 8);
	pb_msg(&b, 7, &bomb);
	expect_bad("bomb.onnx", &b, "nest deeper than");
	free(b.p);

	b = model_with(huge, 2, 4);
	expect_bad("dims_overflow.onnx", &b, "overflows 64 bits");
	free(b.p);
	b = model_with(neg, 2, 16);
	expect_bad("negative_dims.onnx", &b, "is negative");
	free(b.p);
	b = model_with(ok_dims, 2, 12);
	expect_bad("raw_size.onnx", &b, "raw_data holds 12 bytes, dims x data_type need 16");
	free(b.p);

	/* text is not taken for ONNX */
	b = (struct pb){0};
	pb_raw(&b, "hello, world\n", 13);
	expect_bad("text.onnx", &b, "unknown model format");
	free(b.p);
}

/*
 * A tiny file whose sparse initializer W (U8, no values) of dims
 * [2^20, 1, 1] feeds op_type: stacked MatMul, ConvTranspose with group
 * 2^20 and LSTM directions once made one layer per slice, a million
 * layers (9.7 GB) from 70 bytes. Now the layer budget refuses it at once.
 */
static struct pb tiny_sliced(const char *op_type, int group)
{
	struct pb vals = {0}, idx = {0}, sp = {0}, node = {0}, attr = {0}, g = {0}, m = {0};

	pb_int(&vals, 1, 0);
	pb_int(&vals, 2, 2);
	pb_bytes(&vals, 8, "W", 1);
	pb_int(&idx, 1, 0);
	pb_int(&idx, 2, 7);
	pb_msg(&sp, 1, &vals);
	pb_msg(&sp, 2, &idx);
	pb_int(&sp, 3, UINT64_C(1) << 20);
	pb_int(&sp, 3, 1);
	pb_int(&sp, 3, 1);
	pb_bytes(&node, 1, "x", 1);
	pb_bytes(&node, 1, "W", 1);
	pb_bytes(&node, 2, "y", 1);
	pb_bytes(&node, 4, op_type, strlen(op_type));
	if (group) {
		pb_bytes(&attr, 1, "group", 5);
		pb_int(&attr, 3, UINT64_C(1) << 20);
		pb_int(&attr, 20, 2);
		pb_msg(&node, 5, &attr);
	}
	pb_msg(&g, 1, &node);
	pb_msg(&g, 15, &sp);
	pb_int(&m, 1, 8);
	pb_msg(&m, 7, &g);
	return m;
}

static void test_layer_budget(void **state)
{
	static const struct {
		const char *op, *file;
		int group;
	} cases[] = {{"MatMul", "tiny_matmul.onnx", 0},
		     {"ConvTranspose", "tiny_convt.onnx", 1},
		     {"LSTM", "tiny_lstm.onnx", 0}};
	char want[96];

	(void)state;
	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		struct pb b = tiny_sliced(cases[i].op, cases[i].group);

		/* 4096 layers plus one per 256 bytes of the file */
		snprintf(want, sizeof(want), "(%s) makes more than %zu layers", cases[i].op,
			 (size_t)SPP_BUDGET_LAYERS_BASE + b.n / SPP_BUDGET_LAYERS_PER_BYTE);
		alarm(20);
		expect_bad(cases[i].file, &b, want);
		alarm(0);
		free(b.p);
	}
}

/* External data cannot be resolved from a buffer: a clean refusal. */
static void test_buffer_external(void **state)
{
	struct pb t = {0}, e = {0}, g = {0}, m = {0};
	struct spp_model *model = calloc(1, sizeof(*model));
	struct spp_error err = {0};

	(void)state;
	pb_int(&t, 1, 4);
	pb_int(&t, 2, 1);
	pb_bytes(&t, 8, "ext", 3);
	pb_bytes(&e, 1, "location", 8);
	pb_bytes(&e, 2, "w.bin", 5);
	pb_msg(&t, 13, &e);
	pb_int(&t, 14, 1);
	pb_msg(&g, 5, &t);
	pb_int(&m, 1, 8);
	pb_msg(&m, 7, &g);
	assert_true(spp_onnx_sniff(m.p, m.n, m.n));
	assert_non_null(model);
	model->path = strdup("buf");
	assert_int_equal(spp_onnx_parse(m.p, m.n, "buf", NULL, NULL, model, &err), SPP_E_UNSUPPORTED);
	assert_non_null(strstr(err.msg, "'buf': tensor 'ext'"));
	spp_model_destroy(model);
	free(m.p);
}

/* ---- cross-check against models written by python3-onnx ---- */

static const char *python; /* an interpreter that imports onnx and numpy */

static const char *find_python(void)
{
	static const char *const cands[] = {"python3", "/usr/bin/python3"};
	const char *args[] = {"-c", "import onnx, numpy", NULL};

	for (size_t i = 0; i < sizeof(cands) / sizeof(cands[0]); i++) {
		struct harness_run r;
		if (harness_exec(&r, cands[i], args) == 0 && r.status == 0) {
			harness_run_free(&r);
			return cands[i];
		}
		harness_run_free(&r);
	}
	return NULL;
}

static const cJSON *get(const cJSON *o, const char *path)
{
	char key[64];

	while (o && *path) {
		size_t n = strcspn(path, ".");
		snprintf(key, sizeof(key), "%.*s", (int)n, path);
		o = cJSON_GetObjectItemCaseSensitive(o, key);
		path += n + (path[n] == '.');
	}
	return o;
}

static void check_num(const char *model, const char *layer, const char *key,
		      const cJSON *want, const cJSON *got)
{
	if (!cJSON_IsNumber(got) || fabs(got->valuedouble - want->valuedouble) >
	    1e-12 * (1 + fabs(want->valuedouble)))
		fail_msg("%s: layer '%s': %s = %s, numpy says %.17g", model, layer, key,
			 got ? cJSON_PrintUnformatted(got) : "missing", want->valuedouble);
}

static void check_str(const char *model, const char *layer, const char *key,
		      const cJSON *want, const cJSON *got)
{
	if (cJSON_IsNull(want) ? !cJSON_IsNull(got)
			       : !cJSON_IsString(got) ||
				 strcmp(got->valuestring, want->valuestring) != 0)
		fail_msg("%s: layer '%s': %s = %s, want %s", model, layer, key,
			 got ? cJSON_PrintUnformatted(got) : "missing", cJSON_PrintUnformatted(want));
}

/* Codes some case expects warnings of: every case says how many it has. */
static const char *const checked_codes[] = {"unresolved_weight"};

/* The report's warnings of each checked code, each holding the texts of one entry. */
static void check_warnings(const char *model, const cJSON *want, const cJSON *rep)
{
	for (size_t i = 0; i < sizeof(checked_codes) / sizeof(checked_codes[0]); i++) {
		const cJSON *list = get(get(want, "warnings"), checked_codes[i]), *e, *w, *t;
		int got = 0;

		cJSON_ArrayForEach(w, get(rep, "warnings"))
			got += strcmp(cJSON_GetStringValue(get(w, "code")), checked_codes[i]) == 0;
		if (got != cJSON_GetArraySize(list))
			fail_msg("%s: %d %s warnings, want %d", model, got, checked_codes[i],
				 cJSON_GetArraySize(list));
		cJSON_ArrayForEach(e, list) {
			int found = 0;

			cJSON_ArrayForEach(w, get(rep, "warnings")) {
				const char *msg = cJSON_GetStringValue(get(w, "message"));
				int all = strcmp(cJSON_GetStringValue(get(w, "code")), checked_codes[i]) == 0;

				cJSON_ArrayForEach(t, e)
					all = all && strstr(msg, t->valuestring);
				found |= all;
			}
			if (!found)
				fail_msg("%s: no %s warning holds %s", model, checked_codes[i],
					 cJSON_PrintUnformatted(e));
		}
	}
}

static void check_report(const char *model, const cJSON *want, const cJSON *rep)
{
	static const char *const totals[] = {"params", "nnz", "tensors"};
	const cJSON *layers = get(rep, "layers"), *w;
	int matched = 0;

	for (size_t i = 0; i < 3; i++)
		check_num(model, "(model)", totals[i], get(want, totals[i]),
			  get(get(rep, "model"), totals[i]));
	cJSON_ArrayForEach(w, get(want, "layers")) {
		const cJSON *l = NULL, *c;
		cJSON_ArrayForEach(c, layers)
			if (strcmp(cJSON_GetStringValue(get(c, "name")), w->string) == 0)
				l = c;
		if (!l)
			fail_msg("%s: no layer '%s' in the report", model, w->string);
		matched++;
		cJSON_ArrayForEach(c, w) {
			char key[64];
			const char *k = c->string;
			if (strcmp(k, "nm2_4") == 0 || strncmp(k, "zero_", 5) == 0)
				snprintf(key, sizeof(key), "pattern.%s", k);
			else if (strcmp(k, "node") == 0)
				snprintf(key, sizeof(key), "node");
			else
				snprintf(key, sizeof(key), "%s", k);
			if (cJSON_IsNumber(c))
				check_num(model, w->string, key, c, get(l, key));
			else
				check_str(model, w->string, key, c, get(l, key));
		}
	}
	assert_int_equal(matched, cJSON_GetArraySize(layers));
	check_warnings(model, want, rep);
}

static void test_cross_check(void **state)
{
	char *dir = harness_tmpdir(), *script, *cases_path, *text;
	const char *data = getenv("SPP_TEST_DATA");
	struct harness_run r;
	cJSON *cases, *c;
	int ncases = 0;

	(void)state;
	if (!python) {
		print_message("skip: no python3 that imports onnx and numpy "
			      "(Debian: python3-onnx python3-numpy)\n");
		harness_rmtree(dir);
		skip();
	}
	assert_non_null(data);
	assert_true(asprintf(&script, "%s/../onnx/make_models.py", data) > 0);
	const char *gen[] = {script, dir, NULL};
	assert_int_equal(harness_exec(&r, python, gen), 0);
	if (r.status != 0)
		fail_msg("make_models.py: exit %d: %s", r.status, r.err);
	harness_run_free(&r);
	cases_path = harness_join(dir, "cases.json");
	text = harness_slurp(cases_path, NULL);
	assert_non_null(text);
	cases = cJSON_Parse(text);
	assert_non_null(cases);
	cJSON_ArrayForEach(c, cases) {
		const char *name = cJSON_GetStringValue(get(c, "model"));
		char *path = harness_join(dir, name);
		const char *args[16] = {"analyze", path, "--static", "--format", "json"};
		int na = 5;
		const cJSON *a;

		cJSON_ArrayForEach(a, get(c, "args"))
			if (na < 15)
				args[na++] = a->valuestring;
		args[na] = NULL;
		assert_int_equal(harness_spprof(&r, args), 0);
		if (get(c, "exit")) {
			if (r.status != get(c, "exit")->valueint || !strstr(r.err, name))
				fail_msg("%s: exit %d, stderr '%s'", name, r.status, r.err);
			cJSON_ArrayForEach(a, get(c, "message"))
				if (!strstr(r.err, a->valuestring))
					fail_msg("%s: stderr '%s' lacks '%s'", name, r.err,
						 a->valuestring);
		} else {
			cJSON *rep = cJSON_Parse(r.out);
			if (r.status != 0 || !rep)
				fail_msg("%s: exit %d, stderr '%s'", name, r.status, r.err);
			check_report(name, c, rep);
			cJSON_Delete(rep);
		}
		harness_run_free(&r);
		free(path);
		ncases++;
	}
	print_message("onnx cross-check: %d models written by python3-onnx\n", ncases);
	assert_true(ncases >= 15);
	cJSON_Delete(cases);
	free(text);
	free(cases_path);
	free(script);
	harness_rmtree(dir);
}

/* ---- Debian's libonnx-testdata: every model loads or fails cleanly ---- */

static int loaded, clean, layers_seen;

static int visit(const char *path, const struct stat *st, int type, struct FTW *f)
{
	struct spp_model *m = NULL;
	struct spp_error err = {0};
	size_t n = strlen(path);
	int rc;

	(void)st;
	(void)f;
	if (type != FTW_F || n < 5 || strcmp(path + n - 5, ".onnx") != 0)
		return 0;
	rc = spp_model_open(path, &m, &err);
	if (rc) {
		/* clean: an input error, one line that starts with the quoted file */
		if ((rc != SPP_E_FORMAT && rc != SPP_E_UNSUPPORTED && rc != SPP_E_IO) ||
		    strncmp(err.msg + 1, path, n) != 0 || strchr(err.msg, '\n'))
			fail_msg("%s: status %d, '%s'", path, rc, err.msg);
		clean++;
		return 0;
	}
	struct spp_layer *layers = NULL;
	int nl = 0;
	assert_int_equal(spp_layers_from_model(m, 128, 0, &layers, &nl, &err), 0);
	for (int i = 0; i < nl; i++) {
		/* every element the view reaches lies inside the tensor */
		const struct spp_gemm_view *v = &layers[i].view;
		assert_true(spp_view_index(v, v->m - 1, v->k - 1) < layers[i].weight->numel);
	}
	layers_seen += nl;
	/* read every tensor's data: a bad pointer shows under the sanitizers */
	for (int i = 0; i < m->ntensors; i++) {
		uint64_t nnz;
		if (spp_static_tensor_nnz(&m->tensors[i], &nnz, &err) == 0)
			assert_true(nnz <= m->tensors[i].numel);
	}
	free(layers);
	spp_model_destroy(m);
	loaded++;
	return 0;
}

static void test_testdata(void **state)
{
	(void)state;
	if (!harness_exists(TESTDATA)) {
		print_message("skip: %s is missing (Debian: libonnx-testdata)\n", TESTDATA);
		skip();
	}
	assert_int_equal(nftw(TESTDATA, visit, 16, FTW_PHYS), 0);
	print_message("libonnx-testdata: %d models: %d loaded (%d layers), %d clean errors, "
		      "0 crashes\n", loaded + clean, loaded, layers_seen, clean);
	assert_true(loaded + clean > 1000);
	assert_true(loaded > clean);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_malformed),
		cmocka_unit_test(test_layer_budget),
		cmocka_unit_test(test_buffer_external),
		cmocka_unit_test(test_cross_check),
		cmocka_unit_test(test_testdata),
	};
	int rc;

	tmp = harness_tmpdir();
	if (!tmp)
		return 1;
	python = find_python();
	rc = cmocka_run_group_tests_name("onnx", tests, NULL, NULL);
	harness_rmtree(tmp);
	return rc;
}
