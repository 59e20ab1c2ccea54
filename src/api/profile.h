/* The heap profiler (COREALLOC_PROFILE=1), as the allocation paths meet
 * it. Every allocation is counted once, against the thread's countdown to
 * its next sample point (profile_sampler.h). Where depends on the build
 * (PROFILE_IN_FAST_PATH, platform/options.h):
 * - the default library: its fast paths do not count, so profiling on
 *   runs per-thread caches, whose fast paths always miss, and every
 *   allocation reaches alloc.c's slow paths, where profile_sampling
 *   counts it; off, the slow paths pay one predictable branch;
 * - the profiling library (libcorealloc-prof.so): malloc's fast path
 *   counts every request before its cache (api/alloc.h) and calls
 *   profile_sample_point when a sample point passed, so the per-CPU
 *   caches stay on; the paths that do not go through it (calloc of a large
 *   block, aligned allocation) count in their slow paths as above.
 * A sampled allocation is served as a span of its own (core/large.c),
 * whatever its size: its free arrives on the large-block path, the only
 * one that asks the profiler, so frees of other blocks pay nothing and
 * may stay on the fast path. */
#ifndef COREALLOC_PROFILE_H
#define COREALLOC_PROFILE_H

#include <stdbool.h>
#include <stddef.h>

#include "platform/compiler.h"
#include "platform/options.h"

/* Whether allocations are being sampled (set once by profile_start). */
extern INTERNAL_DATA bool profile_on;

/* Start-up, without allocating: the table's lock. */
void profile_init(void);
/* Once the allocator works: the unwinder loaded, the signal handler and
 * the exit dump set up, then sampling on. */
void profile_start(void);

bool profile_take(size_t size);
/* Counts an allocation of size bytes that no fast path counted: whether it
 * is to be sampled (and served by profile_record's caller as a span of
 * its own). */
static inline bool profile_sampling(size_t size)
{
    return __builtin_expect(profile_on, 0) && profile_take(size);
}
#if PROFILE_IN_FAST_PATH
/* The fast path counted size bytes and a sample point passed (or the
 * thread has not drawn its first): whether the allocation is sampled.
 * Allocations not to be counted (profiling not started, the profiler's
 * own) take their count back; with profiling off the thread's countdown
 * is parked, so its fast path never comes here again. */
bool profile_sample_point(size_t size);
#endif
/* Records the sampled block p of size bytes with the caller's stack. */
void profile_record(void *p, size_t size);

void profile_forget_sampled(void *p);
/* Runs fn, work the allocator does for itself in the program's call (its
 * purge thread's start, whose pthread_create allocates: see init.c):
 * nothing fn allocates is sampled, so none of it shows as the program's. */
void profile_unsampled(void (*fn)(void));
/* A large block is being freed: its sample, if it has one, ends. */
static inline void profile_forget(void *p)
{
    if (__builtin_expect(profile_on, 0))
        profile_forget_sampled(p);
}
/* realloc resized a large block from old to new (size bytes): as a free
 * and an allocation of the new size, which may be sampled. */
void profile_resized(void *old, void *new_block, size_t size);

/* corealloc_profile_dump(): 0, or -1 with errno. */
int profile_dump_api(const char *path);

#endif
