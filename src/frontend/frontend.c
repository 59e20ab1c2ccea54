#include "frontend/frontend.h"

#include "core/central.h"
#include "core/superblock.h"
#include "core/zone.h"
#include "platform/options.h"
#include "platform/rseq.h"

#if !defined(COREALLOC_ABLATION)
#include "frontend/cpucache.h"
#include "frontend/threadcache.h"
#endif

/* Zero headers and bases: every stack stopped. The slab the fast paths find before
 * start-up (id 0 of the pre-start-up layout) and, with per-thread caches,
 * for ever (the idle area's id, -1). */
static const uint64_t stopped_slab[2 * SLAB_HEADER_SLOTS] __attribute__((aligned(64)));

struct frontend_layout frontend_layout __attribute__((aligned(64))) = {
    .sections = {.area_off = ARCH_PREINIT_AREA_OFFSET, .slabs = (uintptr_t)stopped_slab},
    .zone_base = ZONE_NO_REGION,
};

bool frontend_verify_free(void *p, unsigned cls, const char *call)
{
    return cache_verify_free(p, cls, call);
}

void frontend_take_back(void *p, unsigned cls)
{
    FRONTEND_PUSH(p, cls, full);
    return;
full:
    frontend_free_slow(p, cls);
}

/* Starts what every front end shares; holds: its search of all caches. */
static void init_shared(cache_holds_fn *holds)
{
    cache_layout_init(holds);
    __atomic_store_n(&frontend_layout.zone_base, zone_region_base, __ATOMIC_RELAXED);
}

#if defined(COREALLOC_ABLATION)

static bool holds(const void *p, unsigned cls)
{
    return lockedcache_holds(p, cls) || central_holds(cls, p);
}

void frontend_init(void)
{
    init_shared(holds);
    lockedcache_init();
}
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
uint64_t frontend_id_activity(unsigned id)
{
    (void)id;
    return 0;
}

void *frontend_alloc_slow(unsigned cls, bool *refilled)
{
    *refilled = true;
    void *p = lockedcache_alloc(cls);
    if (p)
        block_handing_out(p);
    return p;
}

void frontend_free_slow(void *p, unsigned cls) { lockedcache_free(p, cls); }
/* The fast path's foreign label needs it; the locked caches' push never
 * jumps there (FRONTEND_PUSH_LOCAL keeps every free). */
void frontend_free_foreign(void *p, unsigned cls) { lockedcache_free(p, cls); }

#else

static bool holds(const void *p, unsigned cls)
{
    return cpucache_holds(p, cls) || tcache_holds(p, cls) || central_holds(cls, p);
}

void frontend_init(void)
{
    init_shared(holds);
    tcache_init();
    /* Secure mode's checks are on the slow paths, and the default
     * library's heap profiler counts every allocation there: both need the
     * fast paths to miss. The profiling library counts in its fast paths. */
    bool slow_paths_only = opt.secure || (opt.profile && !PROFILE_IN_FAST_PATH);
    if (opt.frontend != FRONTEND_THREAD && !slow_paths_only && cpucache_init()) {
        sb_route_foreign_frees();
        return;
    }
    /* Per-thread caches. Their fast paths: each thread's own area reads the
     * id of its slab (-1, a stopped slab, until its first slow-path call
     * gives it one). Slow paths only (secure mode, the default library's
     * profiler), or without those slabs: every thread reads the idle
     * area's id, whose slab is stopped, so every section misses into the
     * slow path (as every section does where the architecture has none).
     * The area first, the slabs last (see cpucache_init). */
    char *thread_slabs = slow_paths_only || !ARCH_HAS_RSEQ_SECTIONS ? NULL : tcache_map_id_slabs();
    __atomic_store_n(&frontend_layout.sections.area_off,
                     thread_slabs ? rseq_thread_area_offset() : rseq_idle_area_offset(), __ATOMIC_RELAXED);
    __atomic_store_n(&frontend_layout.sections.slabs,
                     thread_slabs ? (uintptr_t)thread_slabs
                                  : (uintptr_t)stopped_slab + SLAB_BYTES, /* id -1 reads it */
                     __ATOMIC_RELEASE);
}

const char *frontend_name(void)
{
    return cpucache_on() ? "rseq" : "per-thread";
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
    cpucache_fork_child();
}

unsigned frontend_id_count(void)
{
    return cpucache_id_count();
}

void frontend_id_misses(unsigned id, uint64_t *empty, uint64_t *full)
{
    cpucache_id_misses(id, empty, full);
}

uint64_t frontend_id_activity(unsigned id)
{
    return cpucache_id_activity(id);
}

void *frontend_alloc_slow(unsigned cls, bool *refilled)
{
    void *p;
    if (cpucache_on()) {
        *refilled = true; /* a per-CPU cache's slow path is a miss */
        p = cpucache_alloc_slow(cls);
    } else
        p = tcache_alloc_slow(cls, refilled);
    if (p)
        block_handing_out(p);
    return p;
}

void frontend_free_slow(void *p, unsigned cls)
{
    if (cpucache_on())
        cpucache_free_slow(p, cls);
    else
        tcache_free_slow(p, cls);
}

void frontend_free_foreign(void *p, unsigned cls)
{
    if (cpucache_on())
        cpucache_free_foreign(p, cls);
    else /* per-thread caches route no free (sb_route_foreign_frees) */
        tcache_free_slow(p, cls);
}

#endif
