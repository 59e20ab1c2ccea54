/* Which allocations the heap profiler samples: each byte allocated is a
 * sample point with probability 1/rate, so an allocation of s bytes is
 * sampled with probability 1 - exp(-s/rate). Each thread counts down the
 * bytes to its next sample point, drawn from the exponential distribution
 * (the gaps of such a process), so no allocation pattern can hide from it. */
#ifndef COREALLOC_PROFILE_SAMPLER_H
#define COREALLOC_PROFILE_SAMPLER_H

#include <stdbool.h>
#include <stddef.h>

/* Mean bytes between samples (at least 1). */
void sampler_set_rate(size_t rate);
/* Counts an allocation of size bytes; true when it is to be sampled. */
bool sampler_take(size_t size);
/* How many allocations of size bytes one sample of that size stands for:
 * 1 / (1 - exp(-size/rate)), the inverse of its probability of being
 * sampled (so the estimates are unbiased). */
double sampler_weight(size_t size);

#endif
