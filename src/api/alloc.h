/* The allocation paths: the inline fast paths shared by every exported
 * entry point, and the slow paths behind them. */
#ifndef COREALLOC_ALLOC_H
#define COREALLOC_ALLOC_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "api/profile.h"
#include "api/profile_sampler.h"
#include "core/sizeclass.h"
#include "core/superblock.h"
#include "core/zone.h"
#include "frontend/frontend.h"

void *alloc_malloc_slow(size_t size);
#if PROFILE_IN_FAST_PATH
/* The profiling library: a sample point passed in an allocation of size
 * bytes, which is served sampled or not (profile_sample_point decides). */
void *alloc_malloc_sample_point(size_t size);
#endif
void alloc_free_slow(void *p);
/* A free the fast check could not vouch for: the closer look, then (in
 * secure mode) the canary and the fill, then back to a cache. */
void alloc_free_checked(void *p, unsigned cls, const char *call);
void *alloc_calloc(size_t count, size_t size);
void *alloc_realloc(void *p, size_t size);
/* alignment: a power of two. NULL (errno ENOMEM) when out of memory. */
void *alloc_aligned(size_t alignment, size_t size);
size_t alloc_usable_size(const void *p);
void *alloc_object_start(const void *p);
size_t alloc_object_size(const void *p);
size_t alloc_trim(void);
const char *alloc_frontend_name(void);

/* The fast paths: one critical section each (see fastpath.h). A malloc
 * of up to SC_LUT_MAX bytes finds its class with one load; a free finds
 * its class from the address (the zone it lies in), and anything else
 * (NULL, large blocks, foreign pointers, no zones) takes the slow path.
 * Before an object is cached again, free checks it: its superblock's
 * descriptor vouches for a block start among those handed out, and the
 * block must not carry the free mark already; anything else gets the
 * closer look, which reports double, wild and interior frees. Before
 * start-up the class table is zero and the sections miss, so the slow
 * path (which starts the allocator up) recomputes the class. The
 * profiling library counts every request first, so its slow path does
 * not (see api/profile.h).
 *
 * malloc's fast path past the profiler's count: a block popped off the
 * front end, or else what miss_path(size) returns (a constant: the call is
 * a jump; operator new passes its own, see api/cxx_new.h). */
static inline void *alloc_malloc_unsampled(size_t size, void *(*miss_path)(size_t))
{
    unsigned cls;
    if (__builtin_expect(size <= SC_LUT_MAX, 1))
        cls = sc_lut[size];
    else if (size <= SMALL_MAX)
        cls = sc_of(size);
    else
        return miss_path(size);
    void *p;
    FRONTEND_POP(p, cls, miss);
    return p;
miss:
    return miss_path(size);
}

static inline void *alloc_malloc(size_t size)
{
#if PROFILE_IN_FAST_PATH
    if (__builtin_expect(sampler_count(size), 0))
        return alloc_malloc_sample_point(size);
#endif
    return alloc_malloc_unsampled(size, alloc_malloc_slow);
}

/* Whether p lies in a class's tile; then *entry is its superblock slot's
 * fast entry and *cls the tile's column (past SC_COUNT no superblock: its
 * bound is 0). */
static inline bool alloc_zone_entry(const void *p, const struct zone_fast_entry **entry, uintptr_t *cls)
{
    uintptr_t tile = ((uintptr_t)p - frontend_layout.zone_base) >> ZONE_TILE_SHIFT;
    if (__builtin_expect(tile >= ZONE_TILES, 0))
        return false;
    *cls = tile % ZONE_ROW_TILES;
    *entry = zone_fast_entry_of((uintptr_t)p);
    return true;
}

/* Whether the program holds p, as free decides it at once: below its
 * superblock's fast bound and without the free mark. False asks for the
 * closer look (frontend_verify_free). */
static inline bool alloc_zone_block_held(const struct zone_fast_entry *entry, const void *p)
{
    return __builtin_expect(sb_zone_free_fast_at(entry, (uintptr_t)p), 1) &&
           !__builtin_expect(block_maybe_marked_free(p) && block_marked_free(p), 0);
}

static inline void alloc_free(void *p)
{
    uintptr_t cls;
    const struct zone_fast_entry *entry;
    if (__builtin_expect(alloc_zone_entry(p, &entry, &cls), 1)) {
        if (!alloc_zone_block_held(entry, p))
            goto suspect;
        uint32_t local_ids = __atomic_load_n(&entry->local_ids, __ATOMIC_RELAXED);
        block_mark_free(p);
        FRONTEND_PUSH_LOCAL(p, cls, local_ids, full, foreign);
        return;
    full:
        frontend_free_slow(p, (unsigned)cls);
        return;
    foreign:
        frontend_free_foreign(p, (unsigned)cls);
        return;
    suspect:
        if (cls < SC_COUNT)
            alloc_free_checked(p, (unsigned)cls, "free");
        else
            alloc_free_slow(p);
        return;
    }
    alloc_free_slow(p);
}

#endif
