/* The heap profiler (COREALLOC_PROFILE=1), as the allocation paths meet
 * it. Off, it costs the slow paths one predictable branch and the fast
 * paths nothing. On, the front end runs per-thread caches, whose fast
 * paths always miss, so every allocation reaches alloc.c's slow path,
 * where the sampler counts it. A sampled allocation is served as a span
 * of its own (core/large.c), whatever its size: its free arrives on the
 * large-block path, the only one that asks the profiler, so frees of
 * other blocks pay nothing. */
#ifndef COREALLOC_PROFILE_H
#define COREALLOC_PROFILE_H

#include <stdbool.h>
#include <stddef.h>

#include "platform/compiler.h"

/* Whether allocations are being sampled (set once by profile_start). */
extern INTERNAL_DATA bool profile_on;

/* Start-up, without allocating: the table's lock. */
void profile_init(void);
/* Once the allocator works: the unwinder loaded, the signal handler and
 * the exit dump set up, then sampling on. */
void profile_start(void);

bool profile_take(size_t size);
/* Whether an allocation of size bytes is to be sampled (and served by
 * profile_record's caller as a span of its own). */
static inline bool profile_sampling(size_t size)
{
    return __builtin_expect(profile_on, 0) && profile_take(size);
}
/* Records the sampled block p of size bytes with the caller's stack. */
void profile_record(void *p, size_t size);

void profile_forget_sampled(void *p);
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
