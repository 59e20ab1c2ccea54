#include "frontend/cpucache.h"

#include "core/central.h"
#include "core/meta.h"
#include "core/sizeclass.h"
#include "frontend/cache.h"
#include "platform/lock.h"
#include "platform/options.h"
#include "platform/os.h"

uintptr_t cpucache_base;
unsigned cpucache_shift;
static unsigned slab_count;
/* Per id: slow-path entries (the cache was empty / full). Counted off the
 * fast path only, so a hit costs nothing; hits are not counted. */
struct id_counters {
    uint64_t misses_empty, misses_full;
    uint64_t grown_bytes; /* capacity added past a batch per class (drain lock) */
} __attribute__((aligned(64)));
static struct id_counters *counters;
static lock_t drain_lock = LOCK_INIT;

/* Stops pops (begin past any top) and pushes (end at zero) on a stack. */
#define STOPPED_BEGIN 0xffff
#define STOPPED_END 0

bool cpucache_init(bool prefer_mm_cid)
{
    lock_register_for_fork(&drain_lock);
    if (!ARCH_HAS_RSEQ_SECTIONS || rseq_init(ARCH_RSEQ_SIGNATURE, prefer_mm_cid, true) == RSEQ_SOURCE_NONE)
        return false;
    unsigned shift = cache_slab_shift();
    unsigned count = rseq_id_count();
    char *slabs = os_map_aligned((size_t)count << shift, (size_t)1 << shift);
    if (!slabs)
        return false;
    for (unsigned id = 0; id < count; id++) {
        void **slab = (void **)(slabs + ((size_t)id << shift));
        cache_slab_format(slab);
    }
    counters = meta_alloc(count * sizeof *counters);
    if (!counters)
        return false;
    slab_count = count;
    cpucache_shift = shift;
    __atomic_store_n(&cpucache_base, (uintptr_t)slabs, __ATOMIC_RELEASE);
    return true;
}

static void count_miss(uint64_t *counter)
{
    __atomic_fetch_add(counter, 1, __ATOMIC_RELAXED);
}

/* A stack that runs empty grows by a batch, up to its limit and within the
 * CPU's growth budget: room for what this CPU allocates, not for what it
 * only frees (a consumer's frees would just be parked here). Growing needs
 * no fence (a section that read the old end just saw less room) but must
 * not race a drain, hence the lock; taken only if free, so no path waits
 * for it. */
static void grow_capacity(unsigned cls)
{
    if (!opt_free_blocks_wait() || !lock_try(&drain_lock))
        return;
    unsigned id = rseq_current_id();
    void **slab = (void **)(cpucache_base + ((uintptr_t)id << cpucache_shift));
    struct cache_hdr *h = cache_hdr(slab, cls);
    uint64_t *grown = &counters[id % slab_count].grown_bytes;
    unsigned more = cache_growth(h, cls);
    uint64_t bytes = (uint64_t)more * sc_info[cls].size;
    if (more && h->begin != STOPPED_BEGIN && *grown + bytes <= opt.cpu_cache_bytes) {
        *grown += bytes;
        __atomic_store_n(&h->end, (uint16_t)(h->end + more), __ATOMIC_RELEASE);
    }
    lock_release(&drain_lock);
}

void *cpucache_alloc_slow(unsigned cls)
{
    void *p;
    if (!rseq_thread_ready()) /* cannot happen with glibc's registration */
        return central_alloc(cls, &p, 1) ? p : NULL;
    p = rseq_cache_pop(cpucache_base, cpucache_shift, cls);
    if (p)
        return p;
    count_miss(&counters[rseq_current_id() % slab_count].misses_empty);
    grow_capacity(cls);
    void *batch[SC_BATCH_MAX];
    unsigned n = sc_info[cls].batch;
    unsigned got = central_alloc(cls, batch, n);
    if (!got)
        return NULL;
    /* One object for the caller, the rest into this CPU's cache (whatever
     * CPU the thread runs on by now); what does not fit goes back. */
    unsigned kept = rseq_cache_push_batch(cpucache_base, cpucache_shift, cls, batch + 1, got - 1);
    if (kept < got - 1)
        central_free(cls, batch + 1 + kept, got - 1 - kept);
    return batch[0];
}

void cpucache_free_slow(void *p, unsigned cls)
{
    if (!rseq_thread_ready()) {
        central_free(cls, &p, 1);
        return;
    }
    count_miss(&counters[rseq_current_id() % slab_count].misses_full);
    void *batch[SC_BATCH_MAX];
    unsigned n = sc_info[cls].batch;
    unsigned got = rseq_cache_pop_batch(cpucache_base, cpucache_shift, cls, batch, n);
    if (got)
        central_free(cls, batch, got);
    if (!rseq_cache_push(cpucache_base, cpucache_shift, cls, p))
        central_free(cls, &p, 1);
}

/* Empties every stack of the slab into the central layer, and shrinks it
 * back to a batch per class: an idle cache gives its growth budget back.
 * Drain lock held. */
static size_t drain_slab(void **slab, unsigned id)
{
    uint16_t begin[SC_COUNT];
    for (unsigned c = 0; c < SC_COUNT; c++) {
        struct cache_hdr *h = cache_hdr(slab, c);
        begin[c] = h->begin;
        __atomic_store_n(&h->begin, STOPPED_BEGIN, __ATOMIC_RELAXED);
        __atomic_store_n(&h->end, STOPPED_END, __ATOMIC_RELAXED);
    }
    /* After the fence no section on this id still uses the old bounds. */
    rseq_fence(rseq_uses_mm_cid() ? -1 : (int)id);
    size_t bytes = 0;
    for (unsigned c = 0; c < SC_COUNT; c++) {
        struct cache_hdr *h = cache_hdr(slab, c);
        unsigned top = __atomic_load_n(&h->top, __ATOMIC_ACQUIRE);
        unsigned batch = sc_info[c].batch;
        for (unsigned i = begin[c]; i < top; i += batch) {
            unsigned n = top - i < batch ? top - i : batch;
            central_free(c, &slab[i], n);
        }
        if (top > begin[c])
            bytes += (size_t)(top - begin[c]) * sc_info[c].size;
        __atomic_store_n(&h->top, begin[c], __ATOMIC_RELEASE);
        __atomic_store_n(&h->end, (uint16_t)(begin[c] + batch), __ATOMIC_RELEASE);
        __atomic_store_n(&h->begin, begin[c], __ATOMIC_RELEASE);
    }
    counters[id % slab_count].grown_bytes = 0;
    return bytes;
}

size_t cpucache_drain_all(void)
{
    uintptr_t base = __atomic_load_n(&cpucache_base, __ATOMIC_ACQUIRE);
    if (!base)
        return 0;
    size_t bytes = 0;
    lock_acquire(&drain_lock);
    for (unsigned id = 0; id < slab_count; id++)
        bytes += drain_slab((void **)(base + ((uintptr_t)id << cpucache_shift)), id);
    lock_release(&drain_lock);
    return bytes;
}

size_t cpucache_drain_id(unsigned id)
{
    uintptr_t base = __atomic_load_n(&cpucache_base, __ATOMIC_ACQUIRE);
    if (!base || id >= slab_count)
        return 0;
    void **slab = (void **)(base + ((uintptr_t)id << cpucache_shift));
    if (!cache_slab_bytes_held(slab)) /* nothing to take: spare the fence */
        return 0;
    lock_acquire(&drain_lock);
    size_t bytes = drain_slab(slab, id);
    lock_release(&drain_lock);
    return bytes;
}

size_t cpucache_bytes_held(unsigned *slabs)
{
    uintptr_t base = __atomic_load_n(&cpucache_base, __ATOMIC_ACQUIRE);
    size_t bytes = 0;
    if (base)
        for (unsigned id = 0; id < slab_count; id++)
            bytes += cache_slab_bytes_held((void **)(base + ((uintptr_t)id << cpucache_shift)));
    if (slabs)
        *slabs = base ? slab_count : 0;
    return bytes;
}

unsigned cpucache_id_count(void)
{
    return __atomic_load_n(&cpucache_base, __ATOMIC_ACQUIRE) ? slab_count : 0;
}

void cpucache_id_misses(unsigned id, uint64_t *empty, uint64_t *full)
{
    *empty = *full = 0;
    if (id < cpucache_id_count()) {
        *empty = __atomic_load_n(&counters[id].misses_empty, __ATOMIC_RELAXED);
        *full = __atomic_load_n(&counters[id].misses_full, __ATOMIC_RELAXED);
    }
}
