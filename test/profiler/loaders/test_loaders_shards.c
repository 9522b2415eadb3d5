/*
 * The safetensors loaders (test_loaders.c runs these): sharded checkpoints
 * through their index, valid and malformed, and the fuzz seed corpus read
 * as its file names say.
 */
#include <dirent.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cmocka.h>

#include "profiler/loaders.h"
#include "profiler/safetensors.h"
#include "test/harness.h"
#include "test/profiler/loaders/loaders_fixture.h"

/* ---- sharded checkpoints ---- */

static const char shard1[] = "{\"a\":" T("F32", "[2]", "[0,8]") ",\"b\":" T("I32", "[1]", "[8,12]") "}";
static const char shard2[] = "{\"__metadata__\":{\"format\":\"pt\"},\"c\":" T("F16", "[2,2]", "[0,8]")
	",\"d\":" T("U8", "[3]", "[8,11]") "}";

static char *write_index(const char *name, const char *json)
{
	char *p = path_of(name);
	assert_int_equal(harness_write(p, json, strlen(json)), 0);
	return p;
}

void test_index_valid(void **state)
{
	struct spp_model *m = NULL;
	struct spp_error err = {0};
	unsigned char d1[12], d2[11];
	char *s1, *s2, *ix;
	static const char *names[] = {"c", "d", "a", "b"};
	static const int files[] = {0, 0, 1, 1};
	static const uint64_t begins[] = {0, 8, 0, 8};

	(void)state;
	for (int i = 0; i < 12; i++)
		d1[i] = (unsigned char)(100 + i);
	for (int i = 0; i < 11; i++)
		d2[i] = (unsigned char)(200 + i);
	s1 = write_st_n("m-1.safetensors", shard1, 0, d1, sizeof(d1));
	s2 = write_st_n("m-2.safetensors", shard2, 0, d2, sizeof(d2));
	/* m-2 appears first; "d" is in m-2 but not listed: it is included */
	ix = write_index("model.safetensors.index.json",
			 "{\"metadata\": {\"total_size\": 23},\n \"weight_map\": {\"c\": "
			 "\"m-2.safetensors\", \"a\": \"m-1.safetensors\", \"b\": \"m-1.safetensors\"}}\n");
	for (int pass = 0; pass < 2; pass++) {
		int rc = pass ? spp_model_open(ix, &m, &err) : spp_load_safetensors_index(ix, &m, &err);
		assert_int_equal(rc, SPP_OK);
		assert_string_equal(m->path, ix);
		assert_string_equal(m->format, "safetensors");
		assert_int_equal(m->nfiles, 2);
		assert_string_equal(m->files[0].path, s2);
		assert_string_equal(m->files[1].path, s1);
		assert_int_equal(m->bytes, (8 + strlen(shard1) + 12) + (8 + strlen(shard2) + 11));
		assert_int_equal(m->ntensors, 4);
		for (int i = 0; i < 4; i++) {
			const struct spp_tensor *t = &m->tensors[i];
			size_t hlen = strlen(files[i] ? shard1 : shard2);
			const unsigned char *src = files[i] ? d1 : d2;
			assert_string_equal(t->name, names[i]);
			assert_int_equal(t->file, files[i]);
			assert_int_equal(t->offset, 8 + hlen + begins[i]);
			assert_ptr_equal(t->data, m->files[files[i]].base + t->offset);
			assert_memory_equal(t->data, src + begins[i], t->nbytes);
		}
		assert_int_equal(m->tensors[0].dtype, SPP_DTYPE_F16);
		assert_int_equal(m->tensors[3].dtype, SPP_DTYPE_I32);
		spp_model_destroy(m);
		m = NULL;
	}
	free(ix);

	/* a shard in a subfolder is inside the index's folder */
	{
		char *sub = path_of("sub");
		char *s3;
		assert_int_equal(mkdir(sub, 0700), 0);
		s3 = write_st_n("sub/m-3.safetensors", shard1, 0, d1, sizeof(d1));
		ix = write_index("sub.index.json",
				 "{\"weight_map\": {\"a\": \"sub/m-3.safetensors\"}}");
		assert_int_equal(spp_load_safetensors_index(ix, &m, &err), SPP_OK);
		assert_int_equal(m->ntensors, 2);
		assert_string_equal(m->files[0].path, s3);
		spp_model_destroy(m);
		free(ix);
		free(s3);
		free(sub);
	}
	free(s1);
	free(s2);
}

void test_index_bad(void **state)
{
	static const struct {
		const char *json;
		int status;
		const char *need, *tensor;
	} cases[] = {
		{"{\"weight_map\": {\"a\": \"m-1.safetensors\", \"x\": \"gone.safetensors\"}}",
		 SPP_E_IO, "gone.safetensors", NULL},
		{"{\"weight_map\": {\"a\": \"m-1.safetensors\", \"c\": \"m-1.safetensors\", \"d\": \"m-2.safetensors\"}}",
		 SPP_E_FORMAT, "is listed in shard 'm-1.safetensors' but is stored in 'm-2.safetensors'", "c"},
		{"{\"weight_map\": {\"a\": \"m-1.safetensors\", \"zz\": \"m-1.safetensors\"}}",
		 SPP_E_FORMAT, "is listed in shard 'm-1.safetensors' but is not in it", "zz"},
		{"{\"weight_map\": {\"a\": \"m-1.safetensors\", \"dup\": \"m-dup.safetensors\"}}",
		 SPP_E_FORMAT, "is stored in two shards, 'm-1.safetensors' and 'm-dup.safetensors'", "a"},
		{"{\"weight_map\": {\"a\": \"../m-1.safetensors\"}}", SPP_E_FORMAT,
		 "shard '../m-1.safetensors' is not a file inside the index's folder", "a"},
		{"{\"weight_map\": {\"a\": \"sub/../../m-1.safetensors\"}}", SPP_E_FORMAT,
		 "is not a file inside", "a"},
		{"{\"weight_map\": {\"a\": \"/etc/passwd\"}}", SPP_E_FORMAT, "is not a file inside", "a"},
		{"{\"weight_map\": {\"a\": \"\"}}", SPP_E_FORMAT, "is not a file inside", "a"},
		{"{\"weight_map\": [\"m-1.safetensors\"]}", SPP_E_FORMAT, "'weight_map' is not an object", NULL},
		{"{\"metadata\": {}}", SPP_E_FORMAT, "missing 'weight_map'", NULL},
		{"{\"weight_map\": {}}", SPP_E_FORMAT, "'weight_map' is empty", NULL},
		{"{\"metadata\": 3, \"weight_map\": {\"a\": \"m-1.safetensors\"}}", SPP_E_FORMAT,
		 "'metadata' is not an object", NULL},
		{"{\"weight_map\": {\"a\": 1}}", SPP_E_FORMAT, "maps to a non-string", "a"},
		{"{\"weight_map\": {\"a\": \"m-1.safetensors\", \"a\": \"m-1.safetensors\"}}",
		 SPP_E_FORMAT, "appears twice", "a"},
		{"{\"weight_map\": {\"a\": \"m-1.safetensors\"}} x", SPP_E_FORMAT, "bytes after the JSON object", NULL},
		{"{\"weight_map\": {\"a\": ", SPP_E_FORMAT, "not valid JSON", NULL},
		{"{\"weight_map\": {\"a\": \"m-bad.safetensors\"}}", SPP_E_FORMAT,
		 "m-bad.safetensors': tensor 'a': unknown dtype 'F12'", NULL},
	};
	char *s1, *s2, *sd, *sb;

	(void)state;
	s1 = write_st("m-1.safetensors", shard1, 12);
	s2 = write_st("m-2.safetensors", shard2, 11);
	sd = write_st("m-dup.safetensors", "{\"a\":" T("F32", "[1]", "[0,4]") ",\"dup\":" T("U8", "[1]", "[4,5]") "}", 5);
	sb = write_st("m-bad.safetensors", "{\"a\":" T("F12", "[1]", "[0,4]") "}", 4);
	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		char name[64];
		char *ix;
		snprintf(name, sizeof(name), "bad-%02zu.index.json", i);
		ix = write_index(name, cases[i].json);
		print_message("index case %zu: %s\n", i, cases[i].need);
		if (cases[i].status == SPP_E_FORMAT && !strstr(cases[i].need, "m-bad")) {
			expect_fail_with(ix, cases[i].status, cases[i].need, cases[i].tensor,
					 spp_load_safetensors_index);
		} else {
			/* a failing shard is named by its own path, not the index's */
			struct spp_model *m = (struct spp_model *)1;
			struct spp_error err = {0};
			assert_int_equal(spp_load_safetensors_index(ix, &m, &err), cases[i].status);
			assert_null(m);
			assert_int_equal(spp_status_exit_code(err.code), 2);
			assert_true(contains(err.msg, scratch_dir()));
			assert_true(contains(err.msg, cases[i].need));
		}
		free(ix);
	}
	free(s1);
	free(s2);
	free(sd);
	free(sb);
}

/* The fuzz seeds are what their names say: valid-* parse, bad-* do not. */
void test_seed_corpus(void **state)
{
	const char *data = getenv("SPP_TEST_DATA");
	char *dir;
	DIR *d;
	struct dirent *e;
	int valid = 0, bad = 0;

	(void)state;
	if (!data)
		skip();
	dir = harness_join(data, "../fuzz/corpus/safetensors");
	d = opendir(dir);
	assert_non_null(d);
	while ((e = readdir(d)) != NULL) {
		int is_valid = strncmp(e->d_name, "valid-", 6) == 0;
		struct spp_tensor *t = NULL;
		struct spp_error err = {0};
		size_t len = 0;
		char *p, *buf;
		int n = 0, rc;

		if (!is_valid && strncmp(e->d_name, "bad-", 4) != 0)
			continue;
		p = harness_join(dir, e->d_name);
		buf = harness_slurp(p, &len);
		assert_non_null(buf);
		rc = spp_safetensors_parse((const unsigned char *)buf, len, e->d_name, &t, &n, &err);
		print_message("%s: %s\n", e->d_name, rc ? err.msg : "ok");
		if (is_valid) {
			assert_int_equal(rc, SPP_OK);
			valid++;
		} else {
			assert_int_equal(rc, SPP_E_FORMAT);
			assert_null(t);
			assert_true(contains(err.msg, e->d_name));
			bad++;
		}
		spp_safetensors_tensors_free(t, n);
		free(buf);
		free(p);
	}
	closedir(d);
	free(dir);
	assert_true(valid >= 5);
	assert_true(bad >= 20);
}
