/*
 * Little-endian integers of a file's bytes, read byte by byte (any
 * alignment, any host order): the one reader the binary loaders share.
 */
#ifndef SPP_BASE_LE_H
#define SPP_BASE_LE_H

#include <stdint.h>

/* The n-byte (1 to 8) little-endian unsigned integer at p. */
static inline uint64_t spp_le(const unsigned char *p, int n)
{
	uint64_t v = 0;

	for (int i = n - 1; i >= 0; i--)
		v = v << 8 | p[i];
	return v;
}

#endif
