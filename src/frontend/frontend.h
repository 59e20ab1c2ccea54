/* The front end the fast paths go through: per-CPU rseq caches when the
 * kernel provides rseq, per-thread caches otherwise; or, in the ablation
 * libraries only, locked caches. try_* never leave the fast path:
 * NULL/false means "take the slow path". */
#ifndef COREALLOC_FRONTEND_H
#define COREALLOC_FRONTEND_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#if defined(COREALLOC_ABLATION)
#include "frontend/lockedcache.h"
#else
#include "frontend/cpucache.h"
#include "frontend/threadcache.h"
#endif

/* Chooses and starts the front end (start-up, no allocation). */
void frontend_init(void);
const char *frontend_name(void);
/* Empties what caches can be emptied from here into the central layer. */
void frontend_drain(void);
/* Empties the cache of one id (< frontend_id_count()) into the central layer. */
size_t frontend_drain_id(unsigned id);
/* Bytes held in caches (approximate) and how many caches there are. */
size_t frontend_bytes_held(unsigned *caches);
/* In a forked child: forget the caches of threads that do not exist there. */
void frontend_fork_child(void);
/* Ids of per-CPU caches (0 for front ends without them). */
unsigned frontend_id_count(void);
/* Slow-path entries of one id's cache so far: from an empty stack (refills)
 * and a full one (spills). */
void frontend_id_misses(unsigned id, uint64_t *empty, uint64_t *full);

#if defined(COREALLOC_ABLATION)

static inline void *frontend_try_alloc(unsigned cls)
{
    if (!__atomic_load_n(&lockedcache_active, __ATOMIC_ACQUIRE))
        return NULL;
    return lockedcache_try_alloc(cls);
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

static inline void *frontend_alloc_slow(unsigned cls)
{
    return cpucache_base ? cpucache_alloc_slow(cls) : tcache_alloc_slow(cls);
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
