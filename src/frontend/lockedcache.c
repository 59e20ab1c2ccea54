#include "frontend/lockedcache.h"

#include <pthread.h>
#include <sched.h>

#include "core/meta.h"
#include "frontend/cache.h"
#include "platform/lock.h"
#include "platform/os.h"

/* A shared slab may hold as much as a per-CPU one. */
#define LOCKED_SLAB_BUDGET ((size_t)4 << 20)

struct locked_slab {
    lock_t lock;
    void **slab;
} __attribute__((aligned(64)));

static struct locked_slab *slabs;
static bool lockedcache_active;
static unsigned slab_count;

#if defined(COREALLOC_ABLATION_CPUMUTEX)
#define SLABS_FOR(cpus) (cpus)
static unsigned pick(void)
{
    int cpu = sched_getcpu(); /* the CPU is a hint: it may change before the lock */
    return cpu < 0 ? 0 : (unsigned)cpu % slab_count;
}
const char *lockedcache_name(void) { return "cpumutex"; }
#elif defined(COREALLOC_ABLATION_THREADHASH)
#define SLABS_FOR(cpus) (2 * (cpus)) /* Hoard's and mt_hot_malloc's 2P pools */
static unsigned pick(void)
{
    uintptr_t t = (uintptr_t)pthread_self();
    t ^= t >> 17;
    t *= 0x9e3779b97f4a7c15ull;
    return (unsigned)(t >> 40) % slab_count;
}
const char *lockedcache_name(void) { return "threadhash"; }
#elif defined(COREALLOC_ABLATION_GLOBALLOCK)
#define SLABS_FOR(cpus) ((void)(cpus), 1u)
static unsigned pick(void) { return 0; }
const char *lockedcache_name(void) { return "globallock"; }
#else
#error "lockedcache.c is built only with an ablation switch"
#endif

void lockedcache_init(void)
{
    unsigned count = SLABS_FOR(os_cpu_count());
    if (count > 512)
        count = 512;
    slabs = meta_alloc(count * sizeof *slabs);
    for (unsigned i = 0; slabs && i < count; i++) {
        lock_reset(&slabs[i].lock);
        lock_register_for_fork(&slabs[i].lock, LOCK_RANK_CACHE);
        slabs[i].slab = meta_alloc(cache_slab_bytes(CACHE_SHAPE_CPU));
        if (!slabs[i].slab) {
            slabs = NULL;
            break;
        }
        cache_slab_format(slabs[i].slab, CACHE_SHAPE_CPU);
    }
    if (!slabs)
        os_abort(); /* an ablation build without its caches measures nothing */
    slab_count = count;
    __atomic_store_n(&lockedcache_active, true, __ATOMIC_RELEASE);
}

void *lockedcache_try_alloc(unsigned cls)
{
    if (!__atomic_load_n(&lockedcache_active, __ATOMIC_ACQUIRE))
        return NULL;
    struct locked_slab *s = &slabs[pick()];
    lock_acquire(&s->lock);
    void *p = cache_pop(s->slab, cls);
    lock_release(&s->lock);
    return p;
}

void *lockedcache_alloc(unsigned cls)
{
    struct locked_slab *s = &slabs[pick()];
    lock_acquire(&s->lock);
    void *p = cache_pop(s->slab, cls);
    if (!p)
        p = cache_refill_pop(s->slab, cls, LOCKED_SLAB_BUDGET);
    lock_release(&s->lock);
    return p;
}

bool lockedcache_try_free(void *p, unsigned cls)
{
    if (!__atomic_load_n(&lockedcache_active, __ATOMIC_ACQUIRE))
        return false;
    struct locked_slab *s = &slabs[pick()];
    lock_acquire(&s->lock);
    bool pushed = cache_push(s->slab, cls, p);
    lock_release(&s->lock);
    return pushed;
}

void lockedcache_free(void *p, unsigned cls)
{
    struct locked_slab *s = &slabs[pick()];
    lock_acquire(&s->lock);
    if (!cache_push(s->slab, cls, p))
        cache_spill_push(s->slab, cls, p, LOCKED_SLAB_BUDGET);
    lock_release(&s->lock);
}

size_t lockedcache_bytes_held(unsigned *count)
{
    size_t bytes = 0;
    for (unsigned i = 0; i < slab_count; i++)
        bytes += cache_slab_bytes_held(slabs[i].slab);
    *count = slab_count;
    return bytes;
}

bool lockedcache_holds(const void *p, unsigned cls)
{
    /* No locks: the search may run under one of them. */
    for (unsigned i = 0; i < slab_count; i++)
        if (cache_slab_holds(slabs[i].slab, cls, p))
            return true;
    return false;
}

size_t lockedcache_drain_all(void)
{
    size_t bytes = 0;
    for (unsigned i = 0; i < slab_count; i++) {
        lock_acquire(&slabs[i].lock);
        bytes += cache_slab_bytes_held(slabs[i].slab);
        cache_slab_flush(slabs[i].slab);
        lock_release(&slabs[i].lock);
    }
    return bytes;
}
