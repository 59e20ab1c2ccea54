/* The front end the fast paths go through: per-CPU rseq caches when the
 * kernel provides rseq, per-thread caches otherwise; or, in the ablation
 * libraries only, locked caches. try_* never leave the fast path:
 * NULL/false means "take the slow path". */
#ifndef COREALLOC_FRONTEND_H
#define COREALLOC_FRONTEND_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "purger.h"

#if defined(COREALLOC_ABLATION)
#include "lockedcache.h"
#else
#include "cpucache.h"
#include "threadcache.h"
#endif

/* Chooses and starts the front end (start-up, no allocation). */
void frontend_init(void);
const char *frontend_name(void);
/* Empties what caches can be emptied from here into the central layer. */
void frontend_drain(void);
/* Empties the cache of one id (of frontend_misses) into the central layer. */
size_t frontend_drain_id(unsigned id);
/* Bytes held in caches (approximate) and how many caches there are. */
size_t frontend_bytes_held(unsigned *caches);
/* Per-CPU cache misses (empty, full) for up to max_ids ids; returns the
 * number of ids reported (0 for front ends without per-CPU caches). */
unsigned frontend_misses(uint64_t *empty, uint64_t *full, unsigned max_ids);

#if defined(COREALLOC_ABLATION)

/* The purger starts outside the cache locks (see purger_kick). */
static inline void *frontend_try_alloc(unsigned cls)
{
    if (!__atomic_load_n(&lockedcache_active, __ATOMIC_ACQUIRE))
        return NULL;
    void *p = lockedcache_alloc(cls);
    purger_kick();
    return p;
}
static inline bool frontend_try_free(void *p, unsigned cls)
{
    lockedcache_free(p, cls);
    return true;
}
static inline void *frontend_alloc_slow(unsigned cls) { return lockedcache_alloc(cls); }
static inline void frontend_free_slow(void *p, unsigned cls) { lockedcache_free(p, cls); }

#else

static inline void *frontend_try_alloc(unsigned cls)
{
    uintptr_t base = cpucache_base;
    if (__builtin_expect(base != 0, 1))
        return cpucache_try_alloc(base, cls);
    void **slab = tcache_slab;
    return __builtin_expect(slab != NULL, 1) ? cache_pop(slab, cls) : NULL;
}

static inline bool frontend_try_free(void *p, unsigned cls)
{
    uintptr_t base = cpucache_base;
    if (__builtin_expect(base != 0, 1))
        return cpucache_try_free(base, p, cls);
    void **slab = tcache_slab;
    return __builtin_expect(slab != NULL, 1) && cache_push(slab, cls, p);
}

/* The purger is started here if it is not running (see purger_kick). */
static inline void *frontend_alloc_slow(unsigned cls)
{
    void *p = cpucache_base ? cpucache_alloc_slow(cls) : tcache_alloc_slow(cls);
    purger_kick();
    return p;
}

static inline void frontend_free_slow(void *p, unsigned cls)
{
    if (cpucache_base)
        cpucache_free_slow(p, cls);
    else
        tcache_free_slow(p, cls);
}

#endif
#endif
