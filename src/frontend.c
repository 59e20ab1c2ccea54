#include "frontend.h"

#include "options.h"

#if defined(COREALLOC_ABLATION)

void frontend_init(void) { lockedcache_init(); }
const char *frontend_name(void) { return lockedcache_name(); }
void frontend_drain(void) { lockedcache_drain_all(); }
size_t frontend_drain_id(unsigned id)
{
    (void)id; /* no ids: frontend_misses reports none */
    return 0;
}
size_t frontend_bytes_held(unsigned *caches) { return lockedcache_bytes_held(caches); }
unsigned frontend_misses(uint64_t *empty, uint64_t *full, unsigned max_ids)
{
    (void)empty, (void)full, (void)max_ids;
    return 0;
}

#else

void frontend_init(void)
{
    tcache_init();
    if (opt.frontend != FRONTEND_THREAD)
        cpucache_init(opt.rseq_mm_cid);
}

const char *frontend_name(void)
{
    return cpucache_base ? "rseq" : "per-thread";
}

void frontend_drain(void)
{
    tcache_flush_current(); /* other threads' caches empty when they exit */
    cpucache_drain_all();
}

size_t frontend_drain_id(unsigned id)
{
    return cpucache_drain_id(id);
}

size_t frontend_bytes_held(unsigned *caches)
{
    unsigned threads, cpus;
    size_t bytes = tcache_bytes_held(&threads) + cpucache_bytes_held(&cpus);
    *caches = threads + cpus;
    return bytes;
}

unsigned frontend_misses(uint64_t *empty, uint64_t *full, unsigned max_ids)
{
    return cpucache_misses(empty, full, max_ids);
}

#endif
