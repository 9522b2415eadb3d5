/*
 * Shared by the formats tests (test_formats*.c): a growable byte buffer
 * for writing files in the tests, the static analysis of a file through
 * the library, and the "malformed input" check through the spprof binary.
 */
#ifndef SPP_TEST_FORMATS_FIXTURE_H
#define SPP_TEST_FORMATS_FIXTURE_H

#include <stddef.h>
#include <stdint.h>

#include "profiler/analyze.h"

struct bytes {
	unsigned char *p;
	size_t n, cap;
};

void bytes_put(struct bytes *b, const void *data, size_t n);
void bytes_u8(struct bytes *b, uint8_t v);
void bytes_u16(struct bytes *b, uint16_t v);
void bytes_u32(struct bytes *b, uint32_t v);
void bytes_u64(struct bytes *b, uint64_t v);
/* zero bytes up to a multiple of align */
void bytes_pad(struct bytes *b, size_t align);
void bytes_free(struct bytes *b);

/* The scratch folder of the run (created on first use) joined with name. */
char *fx_path(const char *name);
void fx_cleanup(void);

/* Write b to the scratch file name; returns the path (heap). */
char *fx_write(const char *name, const struct bytes *b);

/* Static analysis of path through the library; asserts success. */
struct spp_analysis *fx_analyze(const char *path);

/* The layer of a that is named name; asserts it exists. */
int fx_layer(const struct spp_analysis *a, const char *name);

/*
 * spprof analyze PATH --static must fail with exit 2 and one line on
 * stderr that names the file and holds want (when not NULL).
 */
void fx_expect_bad(const char *path, const char *want);

#endif
