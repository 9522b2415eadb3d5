/*
 * The synth tests' own minimal safetensors reader, independent of
 * profiler/load_safetensors.c: it checks a written file's layout byte by
 * byte and maps conv elements with its own OIHW arithmetic, not the
 * library's view. Also the checks of each synth pattern on a tensor read
 * back, and writing specs through spp_synth_write().
 */
#ifndef SPP_TEST_SYNTH_READER_H
#define SPP_TEST_SYNTH_READER_H

#include <stddef.h>
#include <stdint.h>

#include <cjson/cJSON.h>

#include "profiler/synth.h"

struct st_tensor {
	const char *name;
	enum spp_dtype dtype;
	int ndim;
	int64_t shape[4];
	uint64_t numel;
	const unsigned char *data;
};

struct st_file {
	char *bytes;
	size_t len;
	cJSON *header;
	cJSON *meta;
	int n;
	struct st_tensor t[64];
};

/* Bytes of one element of d (whole-byte dtypes only). */
int elem_size(enum spp_dtype d);

/* Read and check the whole layout of path into f; any violation fails the test. */
void st_read(const char *path, struct st_file *f);

void st_free(struct st_file *f);

/* The tensor called name; the test fails when there is none. */
const struct st_tensor *st_get(const struct st_file *f, const char *name);

/* Whether storage element idx is zero: value == 0 for F32/F64, bits else. */
int is_zero(enum spp_dtype d, const unsigned char *data, uint64_t idx);

/* Number of zero elements of t. */
uint64_t count_zeros(const struct st_tensor *t);

/* Every group of m along K (ragged last group) holds exactly min(n, len). */
void check_nm(const struct st_tensor *t, int n, int m);

/* Check t against the layer it was written from. */
void check_layer(const struct st_tensor *t, const struct spp_synth_layer *l);

/* The parsed spec; the test fails when it is refused. */
struct spp_synth_layer parse_ok(const char *spec);

/* Parse specs, write them to dir/name with seed; returns the path (heap). */
char *write_specs(const char *dir, const char *name, const char *const *specs,
		  int n, uint64_t seed, struct spp_synth_layer *layers);

/* Tests in test_synth_files.c. */
void test_through_loader(void **state);
void test_cli(void **state);
void test_sample_models(void **state);

#endif
