/*
 * Small deterministic random numbers (splitmix64) for synthetic weights and
 * activations: the same seed gives the same stream on every machine.
 */
#ifndef SPP_BASE_RNG_H
#define SPP_BASE_RNG_H

#include <stdint.h>

struct spp_rng {
	uint64_t state;
};

static inline void spp_rng_seed(struct spp_rng *r, uint64_t seed)
{
	r->state = seed;
}

static inline uint64_t spp_rng_next(struct spp_rng *r)
{
	uint64_t z = (r->state += 0x9e3779b97f4a7c15u);
	z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9u;
	z = (z ^ (z >> 27)) * 0x94d049bb133111ebu;
	return z ^ (z >> 31);
}

/* Uniform in [0, 1) with 53 random bits. */
static inline double spp_rng_uniform(struct spp_rng *r)
{
	return (double)(spp_rng_next(r) >> 11) * (1.0 / 9007199254740992.0);
}

/* Uniform integer in [0, bound), bound > 0 (multiply-shift, tiny bias). */
static inline uint64_t spp_rng_below(struct spp_rng *r, uint64_t bound)
{
	return (uint64_t)(((unsigned __int128)spp_rng_next(r) * bound) >> 64);
}

#endif
