/* The fast paths of the front end: one critical section each, on the slab
 * of the CPU (or concurrency id) the thread runs on, with no branch on
 * which front end is in use: where the per-CPU caches are off (no rseq,
 * COREALLOC_FRONTEND=thread, or before start-up), the layout points every
 * thread at a stopped slab, the section misses, and the slow path serves
 * the per-thread caches. The ablation libraries replace them with locked
 * caches at compile time. */
#ifndef COREALLOC_FASTPATH_H
#define COREALLOC_FASTPATH_H

#include <stdint.h>

#include "arch/sections.h"
#include "frontend/cache.h"
#include "platform/compiler.h"

/* What the fast paths read, in one cache line: where the sections find
 * the slabs (read by the symbol's name, see arch/slab.h), and where the
 * size-class zones are. */
struct frontend_layout {
    struct slab_layout sections; /* first: the sections address it as frontend_layout */
    uintptr_t zone_base; /* zone_region_base, copied into this line: a pointer's tile is
                          * (p - zone_base) >> ZONE_TILE_SHIFT when below ZONE_TILES,
                          * its class the tile's column (core/zone.h) */
};
extern INTERNAL_DATA struct frontend_layout frontend_layout;

#if defined(COREALLOC_ABLATION)

#include "frontend/lockedcache.h"

#define FRONTEND_POP(item, cls, miss)                    \
    do {                                                 \
        if (!((item) = lockedcache_try_alloc(cls)))      \
            goto miss;                                   \
        block_handing_out(item);                         \
    } while (0)
#define FRONTEND_PUSH(ptr, cls, miss)                    \
    do {                                                 \
        if (!lockedcache_try_free(ptr, cls))             \
            goto miss;                                   \
    } while (0)
#define FRONTEND_PUSH_LOCAL(ptr, cls, local_ids, miss, foreign) \
    do {                                                        \
        (void)(local_ids);                                      \
        if (0)                                                  \
            goto foreign;                                       \
        FRONTEND_PUSH(ptr, cls, miss);                          \
    } while (0)

#else

/* Pops an object of cls into item, or jumps to miss. */
#define FRONTEND_POP(item, cls, miss)                                                    \
    do {                                                                                 \
        ARCH_SLAB_POP(item, frontend_layout, cls, miss);                                 \
        block_handing_out(item);                                                         \
    } while (0)
/* Pushes ptr (a block of cls, checked and marked free) on its stack, or
 * jumps to miss. */
#define FRONTEND_PUSH(ptr, cls, miss) ARCH_SLAB_PUSH(ptr, frontend_layout, cls, miss)
/* The same, or a jump to foreign when the id this thread runs on is not
 * in local_ids (the fast entry's: core/superblock.h, sb_set_cutter). */
#define FRONTEND_PUSH_LOCAL(ptr, cls, local_ids, miss, foreign) \
    ARCH_SLAB_PUSH_LOCAL(ptr, frontend_layout, cls, local_ids, miss, foreign)

#endif

#endif
