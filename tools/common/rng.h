/* The one pseudo-random generator of the benchmarks, tests and tools
 * (xorshift64*, seeded through a multiplicative mix): cheap, reproducible
 * randomness without rand()'s hidden lock. */
#ifndef COREALLOC_RNG_H
#define COREALLOC_RNG_H

#include <stdint.h>

struct rng {
    uint64_t state;
};

static inline struct rng rng_seeded(uint64_t seed)
{
    /* A zero state would stay zero forever. */
    struct rng rng = { seed * 0x9E3779B97F4A7C15ull + 0x2545F4914F6CDD1Dull };
    if (rng.state == 0)
        rng.state = 1;
    return rng;
}

static inline uint64_t rng_next(struct rng *rng)
{
    uint64_t x = rng->state;
    x ^= x >> 12;
    x ^= x << 25;
    x ^= x >> 27;
    rng->state = x;
    return x * 0x2545F4914F6CDD1Dull;
}

/* Uniform in [0, bound) for bound > 0 (the modulo bias is irrelevant here). */
static inline uint64_t rng_below(struct rng *rng, uint64_t bound)
{
    return rng_next(rng) % bound;
}

#endif
