#include "frontend/frontend.h"

#include "platform/options.h"

#if defined(COREALLOC_ABLATION)

void frontend_init(void) { lockedcache_init(); }
const char *frontend_name(void) { return lockedcache_name(); }
void frontend_drain(void) { lockedcache_drain_all(); }
size_t frontend_drain_id(unsigned id)
{
    (void)id; /* no ids: frontend_id_count is 0 */
    return 0;
}
size_t frontend_bytes_held(unsigned *caches) { return lockedcache_bytes_held(caches); }
void frontend_fork_child(void) {}
unsigned frontend_id_count(void) { return 0; }
void frontend_id_misses(unsigned id, uint64_t *empty, uint64_t *full)
{
    (void)id;
    *empty = *full = 0;
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

void frontend_fork_child(void)
{
    tcache_fork_child();
}

unsigned frontend_id_count(void)
{
    return cpucache_id_count();
}

void frontend_id_misses(unsigned id, uint64_t *empty, uint64_t *full)
{
    cpucache_id_misses(id, empty, full);
}

#endif
