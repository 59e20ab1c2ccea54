/* Which allocations the heap profiler samples: each byte allocated is a
 * sample point with probability 1/rate, so an allocation of s bytes is
 * sampled with probability 1 - exp(-s/rate). Each thread counts down the
 * bytes to its next sample point, drawn from the exponential distribution
 * (the gaps of such a process), so no allocation pattern can hide from it. */
#ifndef COREALLOC_PROFILE_SAMPLER_H
#define COREALLOC_PROFILE_SAMPLER_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "platform/compiler.h"

/* Bytes left before the thread's next sample point, as a two's complement
 * count (below zero: a sample point passed); 0 before the thread's first
 * allocation. Initial-exec TLS: the profiling library's fast paths count
 * on it with one subtraction (api/alloc.h). */
extern INTERNAL_DATA __thread uint64_t sampler_bytes_left;

/* Mean bytes between samples (at least 1). */
void sampler_set_rate(size_t rate);

/* Counts an allocation of size bytes: true when a sample point fell in it
 * (or the thread's first gap is still to be drawn). Then sampler_passed
 * decides. A size past the address space wraps the count, harmlessly:
 * such a request fails. */
static inline bool sampler_count(size_t size)
{
    return (int64_t)(sampler_bytes_left -= size) < 0;
}
/* After sampler_count said so: true when the allocation of size bytes is
 * to be sampled; the next gap starts after it. */
bool sampler_passed(size_t size);
/* Takes back the count of an allocation that is not to be counted. */
static inline void sampler_uncount(size_t size) { sampler_bytes_left += size; }
/* The thread's countdown never reaches a sample point (profiling off). */
static inline void sampler_park(void) { sampler_bytes_left = INT64_MAX; }
/* Counts an allocation of size bytes; true when it is to be sampled. */
static inline bool sampler_take(size_t size)
{
    return sampler_count(size) && sampler_passed(size);
}
/* How many allocations of size bytes one sample of that size stands for:
 * 1 / (1 - exp(-size/rate)), the inverse of its probability of being
 * sampled (so the estimates are unbiased). */
double sampler_weight(size_t size);

#endif
