/* A small, fast generator (xorshift64*) for the library's own randomness:
 * secure mode's block order. Not for tests or tools (they have
 * tools/common/rng.h). State must not be 0. */
#ifndef COREALLOC_RANDOM_H
#define COREALLOC_RANDOM_H

#include <stdint.h>

static inline uint64_t random_next(uint64_t *state)
{
    uint64_t x = *state;
    x ^= x >> 12;
    x ^= x << 25;
    x ^= x >> 27;
    *state = x;
    return x * 0x2545F4914F6CDD1Dull;
}

/* Uniform enough in [0, n) for n far below 2^32. */
static inline uint32_t random_below(uint64_t *state, uint32_t n)
{
    return (uint32_t)(((random_next(state) >> 32) * n) >> 32);
}

#endif
