/*
 * CPU sparse formats (test_kernels.c runs these): the stored bytes of each
 * format on a hand-computed case, release and the registry, and that every
 * format of the registry reaches every place that lists formats.
 */
#include <math.h>
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

#include "counters/sim.h"
#include "kernels/kernels.h"
#include "kernels/dense/dense.h"
#include "kernels/trace.h"
#include "profiler/static.h"
#include "reports/html.h"
#include "test/harness.h"

/*
 * W (4 x 8), 6 non-zeros: row 0 columns 0, 1; row 1 column 5; row 2
 * empty; row 3 columns 2, 3, 7. Bytes per format, by hand:
 *   csr (one K tile; uint16 columns): 6*(4+2) + (4*1+1)*4 = 56
 *   coo: 6*(4+8) = 72
 *   bsr4: 2 blocks (both 4x4 blocks hold a non-zero): 2*16*4 + 2*4 + 2*4 = 144
 *   bsr8: 1 block: 64*4 + 4 + 2*4 = 268
 *   bsr16: 1 block: 256*4 + 4 + 2*4 = 1036
 *   bitmask: 4*1 + 6*4 + 5*4 = 48
 *   nm2_4: 16 slots (4 rows * 2 groups * 2) * 4 + ceil(16 * 2 bits / 8) = 68
 *   nm4_8: 16 slots (4 rows * 1 group * 4) * 4 + ceil(16 * 3 bits / 8) = 70
 *   nm1_4: refused (row 0, group 0 holds 2)
 */
void test_bytes(void **state)
{
	/* x_rows: the rows of X each reads, columns 0-3, 5 and 7 hold the non-zeros (bsr: blocks) */
	static const struct { const char *key; uint64_t bytes; int64_t x_rows; } want[] = {
		{ "csr", 56, 6 }, { "coo", 72, 6 }, { "bsr4", 144, 8 }, { "bsr8", 268, 8 },
		{ "bsr16", 1036, 8 }, { "bitmask", 48, 6 }, { "nm2_4", 68, 6 }, { "nm4_8", 70, 6 },
	};
	float wv[4 * 8] = { 0 };
	struct spp_matrix w = { 4, 8, wv };
	struct spp_encoded e;
	struct spp_error err;

	(void)state;
	wv[0] = 1;
	wv[1] = 2;
	wv[8 + 5] = 3;
	wv[24 + 2] = 4;
	wv[24 + 3] = 5;
	wv[24 + 7] = 6;
	for (size_t i = 0; i < sizeof(want) / sizeof(want[0]); i++) {
		const struct spp_format_ops *fmt = spp_cpu_format_find(want[i].key);

		assert_non_null(fmt);
		assert_int_equal(fmt->encode(&w, 2, 8, &e, &err), 0);
		if (e.bytes != want[i].bytes)
			fail_msg("%s: %llu bytes, want %llu", want[i].key,
				 (unsigned long long)e.bytes, (unsigned long long)want[i].bytes);
		assert_int_equal(e.nnz, 6);
		assert_int_equal(e.x_rows, want[i].x_rows);
		assert_ptr_equal(e.ops, fmt);
		fmt->release(&e);
	}
	assert_int_equal(spp_cpu_format_find("nm1_4")->encode(&w, 1, 1, &e, &err), SPP_E_UNSUPPORTED);
}

void test_release_and_registry(void **state)
{
	static const char *const keys[] = {
		"csr", "coo", "bsr4", "bsr8", "bsr16", "bitmask", "nm1_4", "nm2_4", "nm4_8",
	};
	int f = 0;

	(void)state;
	for (; spp_cpu_formats[f]; f++) {
		struct spp_encoded zero;

		assert_true(f < 9);
		assert_string_equal(spp_cpu_formats[f]->key, keys[f]);
		assert_ptr_equal(spp_cpu_format_find(keys[f]), spp_cpu_formats[f]);
		spp_cpu_formats[f]->release(NULL);
		memset(&zero, 0, sizeof(zero));
		spp_cpu_formats[f]->release(&zero);
	}
	assert_int_equal(f, 9);
	assert_null(spp_cpu_format_find("csx"));
	assert_ptr_equal(spp_cpu_format_find("csr_act"), spp_cpu_act_formats[1]);
	assert_null(spp_cpu_format_find(NULL));
	assert_int_equal(spp_cpu_format_find("bsr8")->block, 8);
	assert_int_equal(spp_cpu_format_find("nm4_8")->keep, 4);
	assert_int_equal(spp_cpu_format_find("nm4_8")->block, 8);
	assert_string_equal(spp_isa_name(SPP_ISA_PORTABLE), "portable");
	assert_string_equal(spp_isa_name(SPP_ISA_AVX2), "avx2");
	assert_string_equal(spp_isa_name(SPP_ISA_AVX512), "avx512");
	assert_true(spp_isa_detect() < SPP_ISA_COUNT);
}

/* The format keys of a storage map of docs/report.schema.json (propertyNames.enum). */
static const cJSON *schema_keys(const cJSON *schema, const char *const *path)
{
	const cJSON *node = schema;

	for (int i = 0; path[i] && node; i++)
		node = cJSON_GetObjectItem(node, path[i]);
	assert_true(cJSON_IsArray(node));
	return node;
}

static int has_key(const cJSON *keys, const char *key)
{
	const cJSON *k;

	cJSON_ArrayForEach(k, keys)
		if (cJSON_IsString(k) && strcmp(k->valuestring, key) == 0)
			return 1;
	return 0;
}

/*
 * A format is one row: every registry entry has a storage row of its own
 * (static figures, which every JSON writer and breakeven iterate), a key in
 * the schema's storage maps, its own colour in the HTML charts and a traced
 * copy with replay hooks for the simulator; the schema lists nothing else.
 */
void test_registry_reaches_everywhere(void **state)
{
	static const char *const layer_path[] = {"properties", "layers", "items", "properties",
						 "storage", "propertyNames", "enum", NULL};
	static const char *const summary_path[] = {"properties", "summary", "properties",
						   "storage", "propertyNames", "enum", NULL};
	char *docs = harness_join(getenv("SPP_TEST_DATA"), "../../docs/report.schema.json");
	char *text = harness_slurp(docs, NULL);
	cJSON *schema = cJSON_Parse(text);
	struct spp_static_counts c = {.m = 8, .k = 16, .nnz = 0};
	struct spp_layer_static st;
	const cJSON *k;

	(void)state;
	assert_non_null(schema);
	for (int i = 0; i < SPP_NNM; i++)
		c.nm_groups[i] = c.nm_ok[i] = spp_nm_groups(c.m, c.k, spp_nm_patterns[i].m);
	spp_static_derive(&c, SPP_DTYPE_F32, 4, &st);
	assert_int_equal(SPP_ST_COUNT, SPP_CPU_NFORMATS + 1);
	assert_string_equal(spp_html_format_color("dense"), "#7f7f7f");
	for (int f = 0; spp_cpu_formats[f]; f++) {
		const struct spp_format_ops *ops = spp_cpu_formats[f];

		assert_int_equal(spp_storage_find(ops->key), SPP_ST_DENSE + 1 + f);
		assert_ptr_equal(spp_storage_ops((enum spp_storage_fmt)(f + 1)), ops);
		if (!st.storage[f + 1].applicable)
			fail_msg("%s: no storage figure: %s", ops->key, st.storage[f + 1].reason);
		assert_true(has_key(schema_keys(schema, layer_path), ops->key));
		assert_true(has_key(schema_keys(schema, summary_path), ops->key));
		assert_non_null(ops->colour);
		assert_string_equal(spp_html_format_color(ops->key), ops->colour);
		for (int g = 0; g < f; g++)
			if (strcmp(spp_cpu_formats[g]->colour, ops->colour) == 0)
				fail_msg("%s and %s share a colour", spp_cpu_formats[g]->key, ops->key);
		assert_non_null(ops->trace);
		assert_non_null(spp_trace_format_find(ops->key));
		assert_non_null(spp_trace_format_find(ops->key)->trace);
		assert_int_equal(spp_trace_format_find(ops->key)->trace->impl_size, ops->trace->impl_size);
	}
	cJSON_ArrayForEach(k, schema_keys(schema, layer_path))
		assert_true(spp_storage_find(k->valuestring) >= 0);
	assert_int_equal(cJSON_GetArraySize(schema_keys(schema, summary_path)), SPP_ST_COUNT);
	/* the one N:M message */
	{
		struct spp_error err = {0};

		assert_int_equal(spp_nm_check(2, 4, 16, 0, &err), 0);
		assert_int_equal(spp_nm_check(2, 4, 16, 1, &err), SPP_E_UNSUPPORTED);
		assert_string_equal(err.msg, "not 2:4 compliant: 6.25% of groups hold more than 2 non-zeros");
	}
	cJSON_Delete(schema);
	free(text);
	free(docs);
}
