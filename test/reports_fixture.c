#include "test/reports_fixture.h"

#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "test/tensor_fixture.h"

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


void fixture_init(struct fixture *fx, int nlayers)
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
		tensor_make_named(&fx->tensors[0], "model.layers.0.self_attn.q_proj.weight", SPP_DTYPE_F32, 2, s0, zeros);
		tensor_make_named(&fx->tensors[1], "model.layers.0.mlp.down_proj.weight", SPP_DTYPE_BF16, 2, s1, zeros);
		tensor_make_named(&fx->tensors[2], "conv.weight", SPP_DTYPE_F32, 4, s2, zeros);
		tensor_make_named(&fx->tensors[3], "fc.bias", SPP_DTYPE_F32, 1, sb, zeros);
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
			tensor_make_named(&fx->tensors[i], fx->names[i], SPP_DTYPE_F32, 2, s0, zeros);
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
	fx->a.opts.session.seed = 7;
	fx->warnings[0] = (struct spp_warning){SPP_WARN_NO_KERNEL_RUNS,
					       "kernel runs are not built yet: static metrics only"};
	fx->a.warnings = fx->warnings;
	fx->a.nwarnings = 1;
	/* the derived figures, as spp_analyze_run computes them */
	assert_int_equal(spp_analysis_derive(&fx->a, &(struct spp_error){0}), 0);
}

void fixture_fini(struct fixture *fx)
{
	free(fx->tensors);
	free(fx->layers);
	spp_analysis_derived_free(&fx->a);
	free(fx->stats);
}

cJSON *build(struct fixture *fx)
{
	struct spp_error err = {0};
	cJSON *r = spp_report_build(&fx->a, "9.9.9", &err);

	assert_non_null(r);
	return r;
}

/* Render into a heap string. */
char *render(const cJSON *r, enum spp_report_format fmt, int color)
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

void expect_json(const char *want_text, const cJSON *got, const char *where)
{
	cJSON *want = cJSON_Parse(want_text);

	if (!want)
		fail_msg("bad expectation near '%.20s'", cJSON_GetErrorPtr());
	expect_subset(want, got, where);
	cJSON_Delete(want);
}
