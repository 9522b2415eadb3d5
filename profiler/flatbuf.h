/*
 * A small verified reader of FlatBuffers (TensorFlow Lite's container):
 * every table, vtable, field, vector and string is checked to lie inside
 * the buffer before it is read, so a hostile file cannot make a read out of
 * bounds. Debian 12 packages no C FlatBuffers library (flatcc is not in
 * it; libflatbuffers-dev is C++ code generated per schema), and reading is
 * all spprof needs: tables by slot, scalars, offsets, vectors, strings.
 *
 * Faults are sticky: the first one is kept in spp_fb.bad and every later
 * read returns the default, so a caller checks once after a step.
 */
#ifndef SPP_PROFILER_FLATBUF_H
#define SPP_PROFILER_FLATBUF_H

#include <stddef.h>
#include <stdint.h>

struct spp_fb {
	const unsigned char *b;
	uint64_t n;
	const char *bad; /* the first fault, NULL while none */
	uint64_t bad_at; /* its byte */
};

/* A table: its position (0 when absent), its vtable and their lengths. */
struct spp_fb_table {
	uint64_t pos, vt;
	uint32_t vtlen, tlen;
};

/* A vector: the position of its element 0 and its length (0 when absent). */
struct spp_fb_vec {
	uint64_t pos;
	uint32_t len, size;
};

/* The root table (the uoffset at byte 0). */
struct spp_fb_table spp_fb_root(struct spp_fb *f);
/* Little-endian unsigned scalar of size 1, 2, 4 or 8 at slot, dflt when absent. */
uint64_t spp_fb_uint(struct spp_fb *f, const struct spp_fb_table *t, int slot, int size,
		     uint64_t dflt);
/* The same, sign-extended. */
int64_t spp_fb_int(struct spp_fb *f, const struct spp_fb_table *t, int slot, int size,
		   int64_t dflt);
/* The table at slot (pos 0 when absent). */
struct spp_fb_table spp_fb_child(struct spp_fb *f, const struct spp_fb_table *t, int slot);
/* The vector of size-byte elements at slot (len 0 when absent). */
struct spp_fb_vec spp_fb_vector(struct spp_fb *f, const struct spp_fb_table *t, int slot,
				int size);
/* Element i of a vector of tables. */
struct spp_fb_table spp_fb_at(struct spp_fb *f, const struct spp_fb_vec *v, uint32_t i);
/* Element i of a vector of scalars, zero-extended (signed: sign-extended). */
uint64_t spp_fb_vec_uint(const struct spp_fb *f, const struct spp_fb_vec *v, uint32_t i);
int64_t spp_fb_vec_int(const struct spp_fb *f, const struct spp_fb_vec *v, uint32_t i);
/* The string at slot, its bytes and length; NULL when absent. Not NUL-terminated. */
const char *spp_fb_string(struct spp_fb *f, const struct spp_fb_table *t, int slot,
			  uint32_t *len);

#endif
