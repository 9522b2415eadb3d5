/*
 * The safetensors loaders: a valid file read back tensor by tensor, one
 * malformed file per rule of the format (through the library and through the
 * spprof binary), and sharded checkpoints (test_loaders_shards.c, with
 * the fuzz seed corpus). Files are written at test time.
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

static char *tmp; /* scratch folder of the whole run */

/* The scratch folder of the whole run. */
const char *scratch_dir(void)
{
	return tmp;
}

char *path_of(const char *name)
{
	char *p = harness_join(tmp, name);
	assert_non_null(p);
	return p;
}

/* u64 header length, header (hlen bytes, or strlen when 0), data. */
char *write_st_n(const char *name, const char *header, size_t hlen,
		 const unsigned char *data, size_t dlen)
{
	size_t total;
	unsigned char *buf;
	char *p = path_of(name);

	if (!hlen)
		hlen = strlen(header);
	total = 8 + hlen + dlen;
	buf = malloc(total);
	assert_non_null(buf);
	for (int i = 0; i < 8; i++)
		buf[i] = (unsigned char)((uint64_t)hlen >> (8 * i));
	memcpy(buf + 8, header, hlen);
	if (dlen) {
		if (data)
			memcpy(buf + 8 + hlen, data, dlen);
		else
			memset(buf + 8 + hlen, 0xab, dlen);
	}
	assert_int_equal(harness_write(p, buf, total), 0);
	free(buf);
	return p;
}

char *write_st(const char *name, const char *header, size_t dlen)
{
	return write_st_n(name, header, 0, NULL, dlen);
}

int contains(const char *hay, const char *needle)
{
	if (!strstr(hay, needle)) {
		print_error("'%s' not found in '%s'\n", needle, hay);
		return 0;
	}
	return 1;
}

/* Whether spp_model_open() hands path to the loader under test. */
static int routed_here(const char *path)
{
	unsigned char b[9];
	FILE *f = fopen(path, "rb");
	size_t len = f ? fread(b, 1, sizeof(b), f) : 0;

	if (f)
		fclose(f);
	if (len == 9 && b[8] == '{')
		return 1;
	return len > 0 && b[0] == '{'; /* an index: sniffed as one */
}

/*
 * The loader refuses path with status, a message that names the file and
 * holds need (and the tensor, when given); so does spp_model_open, which
 * may refuse earlier as an unknown format when byte 8 is not '{'.
 */
void expect_fail_with(const char *path, int status, const char *need,
		      const char *tensor,
		      int (*load)(const char *, struct spp_model **, struct spp_error *))
{
	struct spp_model *m = (struct spp_model *)1;
	struct spp_error err = {0}, err2 = {0};
	int rc = load(path, &m, &err);

	assert_int_equal(rc, status);
	assert_null(m);
	assert_int_equal(err.code, status);
	assert_int_equal(spp_status_exit_code(rc), 2);
	assert_true(contains(err.msg, path));
	assert_true(contains(err.msg, need));
	if (tensor) {
		char quoted[300];
		snprintf(quoted, sizeof(quoted), "'%s'", tensor);
		assert_true(contains(err.msg, quoted));
	}
	assert_null(strchr(err.msg, '\n'));

	m = (struct spp_model *)1;
	rc = spp_model_open(path, &m, &err2);
	assert_null(m);
	assert_int_equal(spp_status_exit_code(rc), 2);
	assert_true(contains(err2.msg, path));
	if (routed_here(path))
		assert_string_equal(err2.msg, err.msg);
	else
		assert_true(rc == status || rc == SPP_E_FORMAT || rc == SPP_E_UNSUPPORTED);
}

static void expect_fail(const char *path, int status, const char *need, const char *tensor)
{
	expect_fail_with(path, status, need, tensor, spp_load_safetensors);
}

/* ---- a valid file ---- */

struct want {
	const char *name;
	enum spp_dtype dtype;
	int ndim;
	int64_t shape[SPP_MAX_DIMS];
	uint64_t numel, begin, nbytes;
};

static void test_valid_file(void **state)
{
	/* written out of offset order, with metadata and an unknown key */
	static const char hdr[] =
		"{\"g\":{\"dtype\":\"F64\",\"shape\":[1],\"data_offsets\":[44,52]},"
		"\"__metadata__\":{\"format\":\"pt\",\"note\":\"x\"},"
		"\"e\":{\"dtype\":\"F4\",\"shape\":[2,3],\"data_offsets\":[40,43]},"
		"\"a.weight\":{\"dtype\":\"F32\",\"shape\":[2,3],\"data_offsets\":[0,24],\"extra\":1},"
		"\"empty\":{\"dtype\":\"F32\",\"shape\":[0,4],\"data_offsets\":[32,32]},"
		"\"c\":{\"dtype\":\"BF16\",\"shape\":[],\"data_offsets\":[30,32]},"
		"\"d\":{\"dtype\":\"I8\",\"shape\":[2,2,2],\"data_offsets\":[32,40]},"
		"\"b.bias\":{\"dtype\":\"F16\",\"shape\":[3],\"data_offsets\":[24,30]},"
		"\"f\":{\"dtype\":\"U8\",\"shape\":[1,1,1,1,1,1,1,1],\"data_offsets\":[43,44]}}"
		"           ";
	static const struct want w[] = {
		{"a.weight", SPP_DTYPE_F32, 2, {2, 3}, 6, 0, 24},
		{"b.bias", SPP_DTYPE_F16, 1, {3}, 3, 24, 6},
		{"c", SPP_DTYPE_BF16, 0, {0}, 1, 30, 2},
		{"empty", SPP_DTYPE_F32, 2, {0, 4}, 0, 32, 0},
		{"d", SPP_DTYPE_I8, 3, {2, 2, 2}, 8, 32, 8},
		{"e", SPP_DTYPE_F4, 2, {2, 3}, 6, 40, 3},
		{"f", SPP_DTYPE_U8, 8, {1, 1, 1, 1, 1, 1, 1, 1}, 1, 43, 1},
		{"g", SPP_DTYPE_F64, 1, {1}, 1, 44, 8},
	};
	const size_t hlen = sizeof(hdr) - 1, dlen = 52;
	unsigned char data[52];
	struct spp_model *m = NULL;
	struct spp_error err = {0};
	char *p;

	(void)state;
	for (size_t i = 0; i < dlen; i++)
		data[i] = (unsigned char)(i * 37 + 11);
	p = write_st_n("valid.safetensors", hdr, hlen, data, dlen);
	for (int pass = 0; pass < 2; pass++) {
		int rc = pass ? spp_model_open(p, &m, &err) : spp_load_safetensors(p, &m, &err);
		assert_int_equal(rc, SPP_OK);
		assert_non_null(m);
		assert_string_equal(m->format, "safetensors");
		assert_string_equal(m->path, p);
		assert_int_equal(m->nfiles, 1);
		assert_int_equal(m->files[0].size, 8 + hlen + dlen);
		assert_int_equal(m->bytes, 8 + hlen + dlen);
		assert_int_equal(m->ntensors, 8);
		for (int i = 0; i < 8; i++) {
			const struct spp_tensor *t = &m->tensors[i];
			assert_string_equal(t->name, w[i].name);
			assert_int_equal(t->dtype, w[i].dtype);
			assert_int_equal(t->ndim, w[i].ndim);
			for (int d = 0; d < w[i].ndim; d++)
				assert_int_equal(t->shape[d], w[i].shape[d]);
			assert_int_equal(t->numel, w[i].numel);
			assert_int_equal(t->nbytes, w[i].nbytes);
			assert_int_equal(t->offset, 8 + hlen + w[i].begin);
			assert_int_equal(t->file, 0);
			if (w[i].nbytes == 0) {
				assert_null(t->data);
				continue;
			}
			/* a pointer into the mapping, not a copy */
			assert_ptr_equal(t->data, m->files[0].base + t->offset);
			assert_memory_equal(t->data, data + w[i].begin, w[i].nbytes);
		}
		spp_model_destroy(m);
		m = NULL;
	}
	free(p);
}

static void test_valid_edge_files(void **state)
{
	struct spp_model *m = NULL;
	struct spp_error err = {0};
	char *p;

	(void)state;
	/* no tensors at all, and no data */
	p = write_st("none.safetensors", "{}", 0);
	assert_int_equal(spp_load_safetensors(p, &m, &err), SPP_OK);
	assert_int_equal(m->ntensors, 0);
	assert_int_equal(m->bytes, 10);
	spp_model_destroy(m);
	free(p);

	/*
	 * zero-size tensors at the start and at the very end, a huge dimension
	 * next to a 0, and equal offsets ordered by end then name
	 */
	p = write_st("zeros.safetensors",
		     "{\"z2\":{\"dtype\":\"F32\",\"shape\":[0],\"data_offsets\":[4,4]},"
		     "\"z1\":{\"dtype\":\"I64\",\"shape\":[9007199254740992,0,9007199254740992],"
		     "\"data_offsets\":[0,0]},"
		     "\"w\":{\"dtype\":\"U16\",\"shape\":[2],\"data_offsets\":[0,4]},"
		     "\"a0\":{\"dtype\":\"F4\",\"shape\":[0],\"data_offsets\":[0,0]}}", 4);
	assert_int_equal(spp_load_safetensors(p, &m, &err), SPP_OK);
	assert_int_equal(m->ntensors, 4);
	assert_string_equal(m->tensors[0].name, "a0");
	assert_string_equal(m->tensors[1].name, "z1");
	assert_int_equal(m->tensors[1].numel, 0);
	assert_int_equal(m->tensors[1].shape[0], INT64_C(9007199254740992));
	assert_string_equal(m->tensors[2].name, "w");
	assert_string_equal(m->tensors[3].name, "z2");
	assert_null(m->tensors[3].data);
	spp_model_destroy(m);
	free(p);
}

/* 100k tensors written in reverse order: sorted back, all found. */
static void test_many_tensors(void **state)
{
	enum { N = 100000 };
	size_t cap = (size_t)N * 80 + 16, len = 0;
	char *hdr = malloc(cap);
	struct spp_model *m = NULL;
	struct spp_error err = {0};
	char *p;

	(void)state;
	assert_non_null(hdr);
	hdr[len++] = '{';
	for (int i = N - 1; i >= 0; i--)
		len += (size_t)snprintf(hdr + len, cap - len,
					"\"t%06d\":{\"dtype\":\"U8\",\"shape\":[1],\"data_offsets\":[%d,%d]}%s",
					i, i, i + 1, i ? "," : "}");
	p = write_st_n("many.safetensors", hdr, len, NULL, N);
	assert_int_equal(spp_load_safetensors(p, &m, &err), SPP_OK);
	assert_int_equal(m->ntensors, N);
	for (int i = 0; i < N; i += 9973) {
		char name[16];
		snprintf(name, sizeof(name), "t%06d", i);
		assert_string_equal(m->tensors[i].name, name);
		assert_int_equal(m->tensors[i].offset, 8 + len + (size_t)i);
	}
	spp_model_destroy(m);
	free(p);

	/* the same with one name repeated far apart */
	memcpy(hdr + 2, "t000000", 7);
	p = write_st_n("many-dup.safetensors", hdr, len, NULL, N);
	expect_fail(p, SPP_E_FORMAT, "appears twice", "t000000");
	free(p);
	free(hdr);
}

/* ---- malformed files, one rule each ---- */

struct bad {
	const char *header;
	size_t dlen;
	const char *need;
	const char *tensor;
};

static const struct bad bad_headers[] = {
	{"{\"a\": {\"dtype\": \"F32\",", 0, "not valid JSON", NULL},
	{"[1, 2]", 0, "not a JSON object", NULL},
	{"{}  x", 0, "after its JSON object, at byte 12", NULL},
	{"{}\n", 0, "after its JSON object", NULL},
	{"{} {}", 0, "after its JSON object", NULL},
	{"{\"__metadata__\": [1]}", 0, "'__metadata__' is an array, not an object", NULL},
	{"{\"__metadata__\": {\"k\": 1}}", 0, "value of 'k' is a number, not a string", NULL},
	{"{\"__metadata__\": {}, \"__metadata__\": {}}", 0, "'__metadata__' appears twice", NULL},
	{"{\"w\": [1]}", 0, "entry is an array, not an object", "w"},
	{"{\"w\": {\"shape\": [1], \"data_offsets\": [0, 4]}}", 4, "missing 'dtype'", "w"},
	{"{\"w\": {\"dtype\": \"F32\", \"data_offsets\": [0, 4]}}", 4, "missing 'shape'", "w"},
	{"{\"w\": {\"dtype\": \"F32\", \"shape\": [1]}}", 4, "missing 'data_offsets'", "w"},
	{"{\"fc.weight\":" T("F12", "[1]", "[0,4]") "}", 4, "unknown dtype 'F12'", "fc.weight"},
	{"{\"w\": {\"dtype\": 32, \"shape\": [1], \"data_offsets\": [0, 4]}}", 4,
	 "'dtype' is a number, not a string", "w"},
	{"{\"w\": {\"dtype\": \"F32\", \"dtype\": \"F32\", \"shape\": [1], \"data_offsets\": [0, 4]}}",
	 4, "key 'dtype' appears twice", "w"},
	{"{\"w\":" T("F32", "[2,-1]", "[0,4]") "}", 4, "shape[1] = -1 is not a non-negative integer", "w"},
	{"{\"w\":" T("F32", "[1.5]", "[0,4]") "}", 4, "shape[0] = 1.5 is not", "w"},
	{"{\"w\":" T("F32", "[\"2\"]", "[0,8]") "}", 8, "shape[0] is a string", "w"},
	{"{\"w\":" T("F32", "[9007199254740994]", "[0,4]") "}", 4, "beyond 2^53", "w"},
	{"{\"w\":" T("F32", "1", "[0,4]") "}", 4, "'shape' is a number, not an array", "w"},
	{"{\"w\":" T("F32", "[1,1,1,1,1,1,1,1,1]", "[0,4]") "}", 4, "rank 9 exceeds the limit of 8", "w"},
	{"{\"w\":" T("U8", "[4294967296,4294967296]", "[0,4]") "}", 4,
	 "element count of the shape overflows", "w"},
	{"{\"w\":" T("U16", "[4294967296,2147483648]", "[0,4]") "}", 4,
	 "byte size of shape x dtype overflows", "w"},
	{"{\"w\":" T("F32", "[1]", "[0]") "}", 4, "'data_offsets' has 1 entries, not 2", "w"},
	{"{\"w\":" T("F32", "[1]", "[0,4,8]") "}", 4, "'data_offsets' has 3 entries, not 2", "w"},
	{"{\"w\":" T("F32", "[1]", "4") "}", 4, "'data_offsets' is a number", "w"},
	{"{\"w\":" T("F32", "[1]", "[4,0]") "}", 4, "data_offsets [4, 0) end before they begin", "w"},
	{"{\"w\":" T("F32", "[1]", "[0,\"4\"]") "}", 4, "data_offsets[1] is a string", "w"},
	{"{\"w\":" T("F32", "[1]", "[0.5,4]") "}", 4, "data_offsets[0] = 0.5 is not", "w"},
	{"{\"w\":" T("F32", "[2]", "[0,4]") "}", 4,
	 "data_offsets [0, 4) hold 4 bytes, shape x dtype needs 8", "w"},
	{"{\"a\":" T("F32", "[1]", "[0,4]") ",\"b\":" T("F32", "[1]", "[8,12]") "}", 12,
	 "tensor 'b' starts at byte 8 of the data buffer, expected 4 (gap)", "b"},
	{"{\"a\":" T("F32", "[1]", "[4,8]") "}", 8,
	 "starts at byte 4 of the data buffer, expected 0 (gap)", "a"},
	{"{\"a\":" T("F32", "[2]", "[0,8]") ",\"b\":" T("F32", "[1]", "[4,8]") "}", 8,
	 "inside tensor 'a' which ends at 8 (overlap)", "b"},
	{"{\"a\":" T("F32", "[2]", "[0,8]") ",\"z\":" T("F32", "[0]", "[4,4]") "}", 8,
	 "(overlap)", "z"},
	{"{\"a\":" T("F32", "[1]", "[0,4]") "}", 9, "holds 9 bytes but the tensors end at byte 4 (5 trailing bytes)", NULL},
	{"{}", 3, "(3 trailing bytes)", NULL},
	{"{\"a\":" T("F32", "[1]", "[0,4]") ",\"b\":" T("F32", "[1]", "[4,8]") "}", 6,
	 "ends at byte 8 of the data buffer, which holds only 6 bytes", "b"},
	{"{\"a\":" T("F32", "[1]", "[0,4]") ",\"a\":" T("F32", "[1]", "[4,8]") "}", 8,
	 "appears twice in the header", "a"},
	{"{\"q\":" T("F4", "[3]", "[0,2]") "}", 2, "3 elements of F4 take 12 bits, which do not end on a byte boundary", "q"},
	{"{\"q\":" T("F6_E2M3", "[3]", "[0,3]") "}", 3, "18 bits", "q"},
};

static void test_bad_headers(void **state)
{
	(void)state;
	for (size_t i = 0; i < sizeof(bad_headers) / sizeof(bad_headers[0]); i++) {
		char name[64];
		char *p;
		snprintf(name, sizeof(name), "bad-%02zu.safetensors", i);
		p = write_st(name, bad_headers[i].header, bad_headers[i].dlen);
		print_message("case %zu: %s\n", i, bad_headers[i].need);
		expect_fail(p, SPP_E_FORMAT, bad_headers[i].need, bad_headers[i].tensor);
		free(p);
	}
}

static void test_bad_framing(void **state)
{
	static const unsigned char five[5] = {5, 0, 0, 0, 0};
	static const unsigned char past[10] = {0, 0, 0, 0, 1, 0, 0, 0, '{', '}'};
	static const unsigned char zero[8] = {0};
	static const char nul[] = "{\"a\":\0 1}";
	char *p;
	FILE *f;

	(void)state;
	p = path_of("empty.safetensors");
	assert_int_equal(harness_write(p, "", 0), 0);
	expect_fail(p, SPP_E_FORMAT, "truncated: 0 bytes, a safetensors file starts with an 8-byte header length", NULL);
	free(p);

	p = path_of("five.safetensors");
	assert_int_equal(harness_write(p, five, sizeof(five)), 0);
	expect_fail(p, SPP_E_FORMAT, "truncated: 5 bytes", NULL);
	free(p);

	p = path_of("past.safetensors");
	assert_int_equal(harness_write(p, past, sizeof(past)), 0);
	expect_fail(p, SPP_E_FORMAT, "header length 4294967296 runs past the end of the file (size 10)", NULL);
	free(p);

	p = path_of("zero.safetensors");
	assert_int_equal(harness_write(p, zero, sizeof(zero)), 0);
	expect_fail(p, SPP_E_FORMAT, "header length is 0", NULL);
	free(p);

	p = write_st_n("nul.safetensors", nul, sizeof(nul) - 1, NULL, 0);
	expect_fail(p, SPP_E_FORMAT, "NUL byte in the header at byte 13", NULL);
	free(p);

	/* 100,000,001 bytes of header in a sparse file: refused before reading it */
	p = path_of("huge.safetensors");
	f = fopen(p, "wb");
	assert_non_null(f);
	assert_int_equal(fwrite("\x01\xe1\xf5\x05\0\0\0\0{", 1, 9, f), 9);
	assert_int_equal(fclose(f), 0);
	assert_int_equal(truncate(p, 8 + 100000001 + 16), 0);
	expect_fail(p, SPP_E_FORMAT, "header length 100000001 exceeds the limit of 100000000 bytes", NULL);
	free(p);

	p = path_of("missing.safetensors");
	expect_fail(p, SPP_E_IO, "cannot open", NULL);
	free(p);
}

/* The binary: exit 2, one line on stderr naming the file, no output file. */
static void test_binary_rejects(void **state)
{
	static const struct {
		const char *file, *header;
		size_t dlen;
	} cases[] = {
		{"cli-dtype.safetensors", "{\"fc.weight\":" T("F12", "[1]", "[0,4]") "}", 4},
		{"cli-gap.safetensors", "{\"a\":" T("F32", "[1]", "[0,4]") ",\"b\":" T("F32", "[1]", "[8,12]") "}", 12},
		{"cli-dup.safetensors", "{\"a\":" T("F32", "[1]", "[0,4]") ",\"a\":" T("F32", "[1]", "[4,8]") "}", 8},
		{"cli-short.safetensors", "{\"a\":" T("F32", "[4]", "[0,16]") "}", 10},
		{"cli-json.safetensors", "{\"a\": nope}", 0},
		{"cli-newline\nname.safetensors", "{\"a\\nb\":" T("F12", "[1]", "[0,4]") "}", 4},
	};
	char *outjson = path_of("out.json");

	(void)state;
	if (!getenv("SPPROF"))
		skip();
	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		struct harness_run r = {0};
		char *p = write_st(cases[i].file, cases[i].header, cases[i].dlen);
		const char *args[] = {"analyze", "--static", p, "-o", outjson, NULL};
		char shown[512], *nl;

		assert_int_equal(harness_spprof(&r, args), 0);
		print_message("%s -> %d: %s", cases[i].file, r.status, r.err);
		assert_int_equal(r.status, 2);
		/* a newline in the path, too, is shown escaped: one line */
		assert_int_equal(harness_count_lines(r.err), 1);
		assert_true(r.err_len > 0 && r.err[r.err_len - 1] == '\n');
		snprintf(shown, sizeof(shown), "%s", p);
		if ((nl = strchr(p, '\n')))
			snprintf(shown + (nl - p), sizeof(shown) - (size_t)(nl - p), "\\x0a%s", nl + 1);
		assert_true(contains(r.err, shown));
		assert_int_equal(r.out_len, 0);
		assert_false(harness_exists(outjson));
		harness_run_free(&r);
		free(p);
	}
	free(outjson);
}

static int setup(void **state)
{
	(void)state;
	tmp = harness_tmpdir();
	return tmp ? 0 : -1;
}

static int teardown(void **state)
{
	(void)state;
	harness_rmtree(tmp);
	tmp = NULL;
	return 0;
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_valid_file),
		cmocka_unit_test(test_valid_edge_files),
		cmocka_unit_test(test_many_tensors),
		cmocka_unit_test(test_bad_headers),
		cmocka_unit_test(test_bad_framing),
		cmocka_unit_test(test_binary_rejects),
		cmocka_unit_test(test_index_valid),
		cmocka_unit_test(test_index_bad),
		cmocka_unit_test(test_seed_corpus),
	};
	return cmocka_run_group_tests(tests, setup, teardown);
}
