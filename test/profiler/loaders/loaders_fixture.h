/*
 * Shared by the safetensors loader tests (test_loaders*.c): files written
 * in the run's scratch folder, the check that a malformed file is refused
 * with the right message, and the tests test_loaders_shards.c holds for
 * test_loaders.c's list.
 */
#ifndef SPP_TEST_PROFILER_LOADERS_LOADERS_FIXTURE_H
#define SPP_TEST_PROFILER_LOADERS_LOADERS_FIXTURE_H

#include <stddef.h>

#include "base/error.h"
#include "profiler/loaders.h"

/* A header entry: dtype, shape and data_offsets as JSON text. */
#define T(dt, shape, offs) "{\"dtype\":\"" dt "\",\"shape\":" shape ",\"data_offsets\":" offs "}"

/* The scratch folder of the whole run (made by the group's setup). */
const char *scratch_dir(void);

/* name in the run's scratch folder (heap); the test fails when out of memory. */
char *path_of(const char *name);

/* u64 header length, header (hlen bytes, or strlen when 0), data (0xab
 * bytes when NULL) to the scratch file name; its path (heap). */
char *write_st_n(const char *name, const char *header, size_t hlen,
		 const unsigned char *data, size_t dlen);

/* write_st_n() with the header's strlen and dlen bytes of 0xab. */
char *write_st(const char *name, const char *header, size_t dlen);

/* Whether hay holds needle; prints both when not. */
int contains(const char *hay, const char *needle);

/* load and spp_model_open() refuse path with status and a message naming it
 * that holds need (and the tensor, when given). */
void expect_fail_with(const char *path, int status, const char *need,
		      const char *tensor,
		      int (*load)(const char *, struct spp_model **, struct spp_error *));

void test_index_valid(void **state);
void test_index_bad(void **state);
void test_seed_corpus(void **state);

#endif
