/*
 * Private to the weight scans (static_scan.c, static_scan_tensor.c): how an
 * element is read and tested for zero, inlined into their hot loops, and
 * the ISA clones those loops are compiled for.
 */
#ifndef SPP_PROFILER_STATIC_SCAN_ELEMS_H
#define SPP_PROFILER_STATIC_SCAN_ELEMS_H

#include <stdint.h>
#include <string.h>

#include "profiler/static_scan_internal.h"

#if defined(__BYTE_ORDER__) && __BYTE_ORDER__ != __ORDER_LITTLE_ENDIAN__
#error "the zero masks assume little-endian element storage, as safetensors has"
#endif

/* The hot loops are compiled twice, for the baseline ISA and for AVX2, and
 * the loader picks one (ifunc): a distribution build then still scans at
 * memory speed on the machines that have AVX2. */
#if defined(__x86_64__) && defined(__linux__) && defined(__GNUC__) && !defined(__clang__)
#define HOT __attribute__((target_clones("avx2", "default")))
#else
#define HOT
#endif

/* Contiguous runs are read in tiles, each prefetching the tile PF_AHEAD
 * bytes on, so that DRAM keeps streaming while a row's counts are made
 * (the hardware prefetcher stops at page boundaries). */
#define TILE_BYTES 1024
#define PF_AHEAD 2048

static inline uint16_t ld16(const unsigned char *p)
{
	uint16_t v;
	memcpy(&v, p, sizeof(v));
	return v;
}

static inline uint32_t ld32(const unsigned char *p)
{
	uint32_t v;
	memcpy(&v, p, sizeof(v));
	return v;
}

static inline uint64_t ld64(const unsigned char *p)
{
	uint64_t v;
	memcpy(&v, p, sizeof(v));
	return v;
}

/* Packed codes, LSB first in the byte stream. */
static inline unsigned f4_code(const unsigned char *d, uint64_t i)
{
	return (d[i >> 1] >> ((i & 1) * 4)) & 0xfu;
}

static inline unsigned f6_code(const unsigned char *d, uint64_t i)
{
	uint64_t bit = i * 6;
	unsigned off = (unsigned)(bit & 7);
	const unsigned char *p = d + (bit >> 3);
	unsigned v = (unsigned)p[0] >> off;

	if (off > 2) /* the code runs into the next byte */
		v |= (unsigned)p[1] << (8 - off);
	return v & 0x3fu;
}

/*
 * Whether element i of a Q8_0 / Q4_0 tensor is non-zero: its block's scale
 * is not +-0 and its code does not decode to 0 (Q8_0: q = 0; Q4_0: the
 * nibble 8, value d * (q - 8)). A Q4_0 block's byte j holds value j in its
 * low nibble and value j + 16 in its high one.
 */
static inline int quant_nonzero(const struct elems *e, uint64_t i)
{
	const unsigned char *b = e->data + (i / QBLOCK) * (uint64_t)e->block_bytes;
	unsigned j = (unsigned)(i % QBLOCK);

	if (((b[0] | (unsigned)b[1] << 8) & 0x7fffu) == 0)
		return 0;
	if (e->quant == SPP_DTYPE_Q8_0)
		return b[2 + j] != 0;
	return (j < 16 ? b[2 + j] & 0xfu : b[2 + j - 16] >> 4) != 8;
}

/* Byte range holding elements [e0, e0 + n). */
static void elem_bytes(const struct elems *e, uint64_t e0, uint64_t n,
		       const unsigned char **p, uint64_t *len)
{
	uint64_t b0 = e0 * (uint64_t)e->bits / 8;
	uint64_t b1 = ((e0 + n) * (uint64_t)e->bits + 7) / 8;

	if (e->block_bytes) {
		b0 = e0 / QBLOCK * (uint64_t)e->block_bytes;
		b1 = (e0 + n + QBLOCK - 1) / QBLOCK * (uint64_t)e->block_bytes;
	}

	*p = e->data + b0;
	*len = b1 - b0;
}

/* A prefetch may point past the tensor (it never faults); integer
 * arithmetic keeps that from being an out-of-bounds pointer in C. */
static inline void prefetch_at(const unsigned char *p, int64_t off)
{
	__builtin_prefetch((const void *)((uintptr_t)p + (uintptr_t)off));
}

#endif
