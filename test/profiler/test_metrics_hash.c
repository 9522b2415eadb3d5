/*
 * The content hash: equal bytes hash equal, one flipped bit changes it, and
 * it matches the definition in hash.c written out here with xxHash, at one
 * and two threads and over several files.
 */
#include <math.h>
#include <omp.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <xxhash.h>

#include <cmocka.h>

#include "profiler/hash.h"
#include "base/mapfile.h"
#include "test/harness.h"
#include "test/profiler/metrics_fixture.h"

/* The definition in hash.c, written out independently. */
static void ref_hash(const unsigned char *const *bufs, const uint64_t *sizes,
		     int n, char hex[33])
{
	const uint64_t chunk = 16u << 20;
	unsigned char *cat = malloc(4096);
	size_t at = 0;
	XXH128_canonical_t d;

	assert_non_null(cat);
	for (int f = 0; f < n; f++) {
		for (uint64_t o = 0; o < sizes[f]; o += chunk) {
			uint64_t len = sizes[f] - o < chunk ? sizes[f] - o : chunk;
			XXH128_canonicalFromHash(&d, XXH3_128bits(bufs[f] + o, len));
			memcpy(cat + at, d.digest, 16);
			at += 16;
		}
		for (int b = 7; b >= 0; b--)
			cat[at++] = (unsigned char)(sizes[f] >> (8 * b));
	}
	XXH128_canonicalFromHash(&d, XXH3_128bits(cat, at));
	for (int i = 0; i < 16; i++)
		snprintf(hex + 2 * i, 3, "%02x", d.digest[i]);
	free(cat);
}

static void hash_files(struct spp_mapped_file *files, int n, struct spp_hash *h)
{
	struct spp_model mdl;
	struct spp_error err;

	memset(&mdl, 0, sizeof(mdl));
	mdl.path = "model";
	mdl.format = "safetensors";
	mdl.files = files;
	mdl.nfiles = n;
	assert_int_equal(spp_model_hash(&mdl, h, &err), 0);
	assert_string_equal(h->algo, "xxh3-128/chunk16m");
	assert_int_equal(strlen(h->hex), 32);
	assert_int_equal(strspn(h->hex, "0123456789abcdef"), 32);
}

void test_hash_bytes(void **state)
{
	const size_t n = (1u << 20) + 3;
	unsigned char *a = malloc(n), *b = malloc(n);
	struct spp_mapped_file f = {0};
	struct spp_hash ha, hb, hflip;
	char want[33];
	const unsigned char *bufs[1];
	uint64_t sizes[1] = {n};

	(void)state;
	assert_non_null(a);
	assert_non_null(b);
	for (size_t i = 0; i < n; i++)
		a[i] = b[i] = (unsigned char)(rnd() >> 11);
	f.base = a;
	f.size = n;
	hash_files(&f, 1, &ha);
	f.base = b;
	hash_files(&f, 1, &hb);
	assert_string_equal(ha.hex, hb.hex);
	b[n / 2] ^= 0x01;
	hash_files(&f, 1, &hflip);
	assert_string_not_equal(ha.hex, hflip.hex);
	bufs[0] = a;
	ref_hash(bufs, sizes, 1, want);
	assert_string_equal(ha.hex, want);
	free(a);
	free(b);
}

void test_hash_large_file(void **state)
{
	const size_t n = 40u << 20;
	unsigned char *buf = malloc(n);
	unsigned char small[5] = {1, 2, 3, 4, 5};
	char *path = harness_join(metrics_tmp, "big.bin");
	struct spp_mapped_file files[3];
	struct spp_hash h1, h2, h3;
	struct spp_error err;
	char want[33], want3[33];
	const unsigned char *bufs[3];
	uint64_t sizes[3];
	int saved = omp_get_max_threads();

	(void)state;
	assert_non_null(buf);
	for (size_t i = 0; i < n; i += 8) {
		uint64_t r = rnd();
		memcpy(buf + i, &r, 8);
	}
	assert_int_equal(harness_write(path, buf, n), 0);
	assert_int_equal(spp_mapfile_open(path, &files[0], &err), 0);
	assert_int_equal(files[0].size, n);
	omp_set_num_threads(1);
	hash_files(files, 1, &h1);
	omp_set_num_threads(2);
	hash_files(files, 1, &h2);
	omp_set_num_threads(saved);
	assert_string_equal(h1.hex, h2.hex);
	bufs[0] = buf;
	sizes[0] = n;
	ref_hash(bufs, sizes, 1, want);
	assert_string_equal(h1.hex, want);
	/* files in order, an empty one included: sizes are part of the input */
	memset(&files[1], 0, sizeof(files[1]));
	memset(&files[2], 0, sizeof(files[2]));
	files[2].base = small;
	files[2].size = sizeof(small);
	hash_files(files, 3, &h3);
	bufs[1] = NULL;
	bufs[2] = small;
	sizes[1] = 0;
	sizes[2] = sizeof(small);
	ref_hash(bufs, sizes, 3, want3);
	assert_string_equal(h3.hex, want3);
	assert_string_not_equal(h3.hex, h1.hex);
	spp_mapfile_close(&files[0]);
	free(buf);
	free(path);
}
