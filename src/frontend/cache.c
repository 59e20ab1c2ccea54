#include "frontend/cache.h"

#include "core/central.h"
#include "core/superblock.h"
#include "platform/diag.h"
#include "platform/options.h"

/* Per class: where its free stack and its allocation stack begin, and how
 * far the allocation stack may grow. */
static uint16_t free_begin[SC_COUNT], alloc_begin[SC_COUNT], alloc_limit[SC_COUNT];
static unsigned slab_slots;
static cache_holds_fn *cache_holds;

void cache_layout_init(cache_holds_fn *holds)
{
    cache_holds = holds;
    unsigned next = 2 * SLAB_HEADER_SLOTS; /* headers, then bounds */
    for (unsigned c = 0; c < SC_COUNT; c++) {
        free_begin[c] = (uint16_t)next;
        next += sc_info[c].batch;
        alloc_begin[c] = (uint16_t)next;
        next += sc_info[c].limit;
        alloc_limit[c] = (uint16_t)next;
    }
    if ((size_t)next * sizeof(void *) > SLAB_BYTES || next >= SLAB_STOPPED_BEGIN)
        diag_fatal("cache slab layout does not fit SLAB_BYTES"); /* a build-time bound */
    slab_slots = next;
}

size_t cache_slab_bytes(void)
{
    return (size_t)slab_slots * sizeof(void *);
}

void cache_slab_format(void **slab, unsigned free_capacity)
{
    for (unsigned c = 0; c < SC_COUNT; c++) {
        unsigned capacity = free_capacity < sc_info[c].batch ? free_capacity : sc_info[c].batch;
        *cache_hdr(slab, c) = (struct cache_hdr){
            .alloc_top = alloc_begin[c],
            .alloc_begin = alloc_begin[c],
            .free_top = free_begin[c],
            .free_end = (uint16_t)(free_begin[c] + capacity),
        };
        *cache_bounds(slab, c) = (struct cache_bounds){
            .free_begin = free_begin[c],
            .alloc_end = (uint16_t)(alloc_begin[c] + sc_info[c].batch),
            .alloc_limit = alloc_limit[c],
        };
    }
}

/* Why a free of p (of cls) must not be obeyed, or NULL. kept: the objects
 * of the same batch verified before it, free now too. */
static const char *misuse(void *p, unsigned cls, void *const *kept, unsigned n_kept)
{
    switch (sb_block_state((uintptr_t)p, cls)) {
    case BLOCK_NOT_A_START: return "not the start of a block";
    case BLOCK_NO_SUPERBLOCK: return "outside any superblock";
    case BLOCK_IN_SUPERBLOCK: return cache_marked_free(p) ? "double free" : "never allocated";
    case BLOCK_HANDED_OUT: break;
    }
    if (!cache_marked_free(p))
        return NULL;
    for (unsigned i = 0; i < n_kept; i++)
        if (kept[i] == p)
            return "double free";
    return cache_holds(p, cls) ? "double free, or a block never handed out" : NULL;
}

unsigned cache_verify(unsigned cls, void **objs, unsigned n, const char *call)
{
    unsigned kept = 0;
    for (unsigned i = 0; i < n; i++) {
        void *p = objs[i];
        const char *why = misuse(p, cls, objs, kept);
        if (why) {
            diag_invalid_pointer(call, p, why);
            continue;
        }
        cache_mark_free(p);
        objs[kept++] = p;
    }
    return kept;
}

void cache_mark_all(void *const *objs, unsigned n)
{
    for (unsigned i = 0; i < n; i++)
        cache_mark_free(objs[i]);
}

/* Bytes the slab's allocation stacks may hold at their current capacities. */
static size_t slab_bytes_room(void **slab)
{
    size_t bytes = 0;
    for (unsigned c = 0; c < SC_COUNT; c++)
        bytes += (size_t)(cache_bounds(slab, c)->alloc_end - alloc_begin[c]) * sc_info[c].size;
    return bytes;
}

/* Verifies the free stack of cls and empties it: what survives lands at
 * free_begin. Returns how many survived. */
static unsigned free_capacity_within(unsigned cls, size_t budget)
{
    size_t within = budget / 8 / sc_info[cls].size;
    return within < sc_info[cls].batch ? (unsigned)within : sc_info[cls].batch;
}

static unsigned verify_free_stack(void **slab, unsigned cls, const char *call)
{
    struct cache_hdr *h = cache_hdr(slab, cls);
    unsigned begin = free_begin[cls], n = cache_free_count(slab, cls);
    /* Emptied first: the search for a second copy must not find these. */
    h->free_top = (uint16_t)begin;
    return cache_verify(cls, &slab[begin], n, call);
}

/* Moves verified objs[0..n) onto the allocation stack if they all fit, or
 * to the central layer, as one batch. */
static void stack_verified(void **slab, unsigned cls, void **objs, unsigned n)
{
    struct cache_hdr *h = cache_hdr(slab, cls);
    if (n > (unsigned)(cache_bounds(slab, cls)->alloc_end - h->alloc_top)) {
        central_free(cls, objs, n);
        return;
    }
    for (unsigned i = 0; i < n; i++)
        slab[h->alloc_top++] = objs[i];
}

void *cache_refill_pop(void **slab, unsigned cls, size_t budget)
{
    struct cache_hdr *h = cache_hdr(slab, cls);
    if (h->alloc_top > h->alloc_begin) /* filled meanwhile, e.g. by a nested allocation */
        return slab[--h->alloc_top];
    unsigned kept = verify_free_stack(slab, cls, "free");
    if (h->free_end != free_begin[cls]) /* a stack the budget shrank grows back with it */
        h->free_end = (uint16_t)(free_begin[cls] + free_capacity_within(cls, budget));
    if (kept) { /* the allocation stack is empty: a batch fits */
        stack_verified(slab, cls, &slab[free_begin[cls]], kept);
        return slab[--h->alloc_top];
    }
    unsigned batch = sc_info[cls].batch, size = sc_info[cls].size;
    /* Allocation demand lets the stack grow by a batch while all stacks
     * together could still hold no more than the budget: room for what this
     * thread allocates, not for what it only frees. */
    struct cache_bounds *b = cache_bounds(slab, cls);
    unsigned more = cache_growth(slab, cls);
    if (more && opt_free_blocks_wait() && slab_bytes_room(slab) + (size_t)more * size <= budget)
        b->alloc_end = (uint16_t)(b->alloc_end + more);
    /* A small budget (many threads sharing one) takes small refills: at
     * most an eighth of it per class. */
    unsigned n = batch;
    size_t most = budget / 8 / size;
    if (most < n)
        n = most ? (unsigned)most : 1;
    unsigned got = central_alloc(cls, &slab[h->alloc_top], n);
    if (!got)
        return NULL;
    cache_mark_all(&slab[h->alloc_top], got);
    h->alloc_top = (uint16_t)(h->alloc_top + got - 1);
    return slab[h->alloc_top];
}

/* Over the budget (a share that shrinks as threads multiply), the
 * allocation stack keeps at most an eighth of it. */
static void shrink_to_budget(void **slab, unsigned cls, size_t budget)
{
    if (cache_slab_bytes_held(slab) <= budget)
        return;
    struct cache_hdr *h = cache_hdr(slab, cls);
    struct cache_bounds *b = cache_bounds(slab, cls);
    unsigned keep = (unsigned)(budget / 8 / sc_info[cls].size), batch = sc_info[cls].batch;
    while (cache_alloc_count(slab, cls) > keep) {
        unsigned n = cache_alloc_count(slab, cls) - keep;
        n = n < batch ? n : batch;
        central_free(cls, &slab[h->alloc_top - n], n);
        h->alloc_top = (uint16_t)(h->alloc_top - n);
    }
    if ((unsigned)(b->alloc_end - h->alloc_begin) > keep)
        b->alloc_end = (uint16_t)(h->alloc_begin + keep);
}

void cache_verify_push(void **slab, unsigned cls, void *p, size_t budget)
{
    struct cache_hdr *h = cache_hdr(slab, cls);
    unsigned kept = verify_free_stack(slab, cls, "free");
    /* The free stack holds at most an eighth of the budget too (none at
     * all for a small budget: each free is then verified at once). */
    unsigned within = free_capacity_within(cls, budget);
    if (within < (unsigned)(h->free_end - free_begin[cls]))
        h->free_end = (uint16_t)(free_begin[cls] + within);
    shrink_to_budget(slab, cls, budget);
    stack_verified(slab, cls, &slab[free_begin[cls]], kept);
    /* p takes the free stack, unless that verification just marked the
     * block p is a second free of (or there is no free stack). */
    if (h->free_end != free_begin[cls] && !cache_marked_free(p)) {
        slab[h->free_top++] = p;
        return;
    }
    if (cache_verify(cls, &p, 1, "free"))
        stack_verified(slab, cls, &p, 1);
}

void cache_slab_stop(void **slab)
{
    for (unsigned c = 0; c < SC_COUNT; c++) {
        struct cache_hdr *h = cache_hdr(slab, c);
        __atomic_store_n(&h->free_end, 0, __ATOMIC_RELAXED);
        __atomic_store_n(&h->alloc_begin, SLAB_STOPPED_BEGIN, __ATOMIC_RELAXED);
    }
}

size_t cache_slab_drain_stopped(void **slab, unsigned free_capacity)
{
    size_t bytes = 0;
    for (unsigned c = 0; c < SC_COUNT; c++) {
        struct cache_hdr *h = cache_hdr(slab, c);
        unsigned batch = sc_info[c].batch, alloc_top = __atomic_load_n(&h->alloc_top, __ATOMIC_ACQUIRE);
        unsigned free_top = __atomic_load_n(&h->free_top, __ATOMIC_ACQUIRE);
        bytes += (size_t)(alloc_top - alloc_begin[c] + free_top - free_begin[c]) * sc_info[c].size;
        for (unsigned i = alloc_begin[c]; i < alloc_top; i += batch)
            central_free(c, &slab[i], alloc_top - i < batch ? alloc_top - i : batch);
        __atomic_store_n(&h->alloc_top, alloc_begin[c], __ATOMIC_RELAXED);
        /* Emptied before verifying: the search for a second copy must not
         * find these. */
        __atomic_store_n(&h->free_top, free_begin[c], __ATOMIC_RELAXED);
        unsigned kept = cache_verify(c, &slab[free_begin[c]], free_top - free_begin[c], "free");
        if (kept)
            central_free(c, &slab[free_begin[c]], kept);
        cache_bounds(slab, c)->alloc_end = (uint16_t)(alloc_begin[c] + batch);
        unsigned capacity = free_capacity < batch ? free_capacity : batch;
        __atomic_store_n(&h->free_end, (uint16_t)(free_begin[c] + capacity), __ATOMIC_RELEASE);
        __atomic_store_n(&h->alloc_begin, alloc_begin[c], __ATOMIC_RELEASE);
    }
    return bytes;
}

void cache_slab_flush(void **slab)
{
    for (unsigned c = 0; c < SC_COUNT; c++) {
        struct cache_hdr *h = cache_hdr(slab, c);
        unsigned kept = verify_free_stack(slab, c, "free");
        if (kept)
            central_free(c, &slab[free_begin[c]], kept);
        unsigned batch = sc_info[c].batch;
        while (cache_alloc_count(slab, c)) {
            unsigned n = cache_alloc_count(slab, c) < batch ? cache_alloc_count(slab, c) : batch;
            central_free(c, &slab[h->alloc_top - n], n);
            h->alloc_top = (uint16_t)(h->alloc_top - n);
        }
    }
}

bool cache_slab_holds(void **slab, unsigned cls, const void *p)
{
    const struct cache_hdr *h = cache_hdr(slab, cls);
    unsigned alloc_top = __atomic_load_n(&h->alloc_top, __ATOMIC_RELAXED);
    unsigned free_top = __atomic_load_n(&h->free_top, __ATOMIC_RELAXED);
    for (unsigned i = alloc_begin[cls]; i < alloc_top && i < alloc_limit[cls]; i++)
        if (__atomic_load_n(&slab[i], __ATOMIC_RELAXED) == p)
            return true;
    for (unsigned i = free_begin[cls]; i < free_top && i < alloc_begin[cls]; i++)
        if (__atomic_load_n(&slab[i], __ATOMIC_RELAXED) == p)
            return true;
    return false;
}

size_t cache_slab_bytes_held(void **slab)
{
    size_t bytes = 0;
    for (unsigned c = 0; c < SC_COUNT; c++)
        bytes += (size_t)(cache_alloc_count(slab, c) + cache_free_count(slab, c)) * sc_info[c].size;
    return bytes;
}
