/* The one hash of the tests and tools (murmur3's 64-bit finalizer): every
 * input bit reaches every output bit, so a table may use the high bits (a
 * shard) and the low ones (a slot) of one hash. A hash, not a generator:
 * for random sequences use rng.h. */
#ifndef COREALLOC_HASH_H
#define COREALLOC_HASH_H

#include <stdint.h>

static inline uint64_t hash64(uint64_t x)
{
    x ^= x >> 33;
    x *= 0xFF51AFD7ED558CCDull;
    x ^= x >> 33;
    x *= 0xC4CEB9FE1A85EC53ull;
    x ^= x >> 33;
    return x;
}

#endif
