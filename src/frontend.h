/* The front end the fast paths go through: per-thread caches here; the
 * per-CPU rseq caches will stand beside them. try_* never leave the fast
 * path: NULL/false means "take the slow path". */
#ifndef COREALLOC_FRONTEND_H
#define COREALLOC_FRONTEND_H

#include <stdbool.h>

#include "threadcache.h"

static inline void *frontend_try_alloc(unsigned cls)
{
    void **slab = tcache_slab;
    return __builtin_expect(slab != NULL, 1) ? cache_pop(slab, cls) : NULL;
}

static inline bool frontend_try_free(void *p, unsigned cls)
{
    void **slab = tcache_slab;
    return __builtin_expect(slab != NULL, 1) && cache_push(slab, cls, p);
}

static inline void *frontend_alloc_slow(unsigned cls) { return tcache_alloc_slow(cls); }
static inline void frontend_free_slow(void *p, unsigned cls) { tcache_free_slow(p, cls); }

#endif
