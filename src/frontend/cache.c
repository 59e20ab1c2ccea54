#include "frontend/cache.h"

#include "core/central.h"
#include "core/superblock.h"
#include "platform/diag.h"
#include "platform/options.h"

_Static_assert(SC_COUNT < SLAB_HEADER_SLOTS, "a base past the last class marks the end of its stack");

/* Per shape, the home of each class's stack; the home of class SC_COUNT
 * is the end of the last stack. */
static uint32_t shape_home[2][SC_COUNT + 1];
static cache_holds_fn *cache_holds;

static unsigned class_capacity(enum cache_shape shape, unsigned cls)
{
    if (shape == CACHE_SHAPE_THREAD)
        return sc_info[cls].limit;
    size_t objects = CACHE_CPU_CLASS_BYTES / sc_info[cls].size;
    return objects < 8 ? 8 : objects > CACHE_CPU_CLASS_OBJECTS ? CACHE_CPU_CLASS_OBJECTS : (unsigned)objects;
}

void cache_layout_init(cache_holds_fn *holds)
{
    cache_holds = holds;
    for (unsigned shape = 0; shape < 2; shape++) {
        uint32_t next = 2 * SLAB_HEADER_SLOTS; /* the headers and the bases */
        for (unsigned c = 0; c < SC_COUNT; c++) {
            shape_home[shape][c] = next;
            next += class_capacity(shape, c);
        }
        shape_home[shape][SC_COUNT] = next;
        if ((size_t)next * sizeof(void *) > SLAB_BYTES)
            diag_fatal("cache slab layout does not fit SLAB_BYTES"); /* a build-time bound */
    }
}

size_t cache_slab_bytes(enum cache_shape shape)
{
    return (size_t)shape_home[shape][SC_COUNT] * sizeof(void *);
}

static uint32_t home(void **slab, unsigned cls)
{
    return cache_base(slab, cls)->home;
}

/* One past the last slot the stack of cls may ever use. */
static uint32_t limit(void **slab, unsigned cls)
{
    return cache_base(slab, cls + 1)->home;
}

/* The end of an empty stack of cls: room for a batch. */
static uint32_t initial_end(void **slab, unsigned cls)
{
    return home(slab, cls) + sc_info[cls].batch;
}

void cache_slab_format_stopped(void **slab, enum cache_shape shape)
{
    for (unsigned c = 0; c <= SC_COUNT; c++)
        __atomic_store_n(&cache_base(slab, c)->home, shape_home[shape][c], __ATOMIC_RELAXED);
    cache_slab_stop(slab);
    /* Each top released after every stopped begin: a section that reads a
     * new top reads a stopped begin. */
    for (unsigned c = 0; c < SC_COUNT; c++)
        __atomic_store_n(&cache_hdr(slab, c)->top, home(slab, c), __ATOMIC_RELEASE);
}

bool cache_slab_formatted(void **slab)
{
    return __atomic_load_n(&cache_base(slab, 0)->home, __ATOMIC_RELAXED) != 0;
}

void cache_slab_format(void **slab, enum cache_shape shape)
{
    cache_slab_format_stopped(slab, shape);
    cache_slab_restart(slab);
}

/* Why a free of p (of cls) must not be obeyed, or NULL. */
static const char *misuse(void *p, unsigned cls)
{
    switch (sb_block_state((uintptr_t)p, cls)) {
    case BLOCK_NOT_A_START: return "not the start of a block";
    case BLOCK_NO_SUPERBLOCK: return "outside any superblock";
    case BLOCK_IN_SUPERBLOCK: return block_marked_free(p) ? "double free" : "never allocated";
    case BLOCK_HANDED_OUT: break;
    }
    if (!block_marked_free(p))
        return NULL;
    return cache_holds(p, cls) ? "double free, or a block never handed out" : NULL;
}

bool cache_verify_free(void *p, unsigned cls, const char *call)
{
    const char *why = misuse(p, cls);
    if (why) {
        diag_invalid_pointer(call, p, why);
        return false;
    }
    return true;
}

unsigned cache_growth(void **slab, unsigned cls)
{
    const struct cache_hdr *h = cache_hdr(slab, cls);
    if (*cache_begin(slab, cls) == SLAB_STOPPED_BEGIN)
        return 0;
    unsigned more = sc_info[cls].batch, room = limit(slab, cls) - h->end;
    return more < room ? more : room;
}

unsigned cache_count(void **slab, unsigned cls)
{
    unsigned top = __atomic_load_n(&cache_hdr(slab, cls)->top, __ATOMIC_RELAXED);
    return top > home(slab, cls) ? top - home(slab, cls) : 0;
}

unsigned cache_surplus(void **slab, unsigned cls)
{
    uint32_t end = cache_hdr(slab, cls)->end, floor = home(slab, cls) + sc_info[cls].batch;
    return end > floor ? end - floor : 0;
}

/* Bytes the slab's stacks may hold at their current capacities. */
static size_t slab_bytes_room(void **slab)
{
    size_t bytes = 0;
    for (unsigned c = 0; c < SC_COUNT; c++)
        bytes += (size_t)(cache_hdr(slab, c)->end - home(slab, c)) * sc_info[c].size;
    return bytes;
}

void *cache_refill_pop(void **slab, unsigned cls, size_t budget)
{
    struct cache_hdr *h = cache_hdr(slab, cls);
    if (h->top > *cache_begin(slab, cls)) /* filled meanwhile, e.g. by a nested allocation */
        return slab[--h->top];
    unsigned size = sc_info[cls].size;
    /* Allocation demand lets the stack grow by a batch while all stacks
     * together could still hold no more than the budget: room for what this
     * thread allocates, not for what it only frees. */
    unsigned more = cache_growth(slab, cls);
    if (more && opt_free_blocks_wait() && slab_bytes_room(slab) + (size_t)more * size <= budget)
        h->end += more;
    /* A small budget (many threads sharing one) takes small refills: at
     * most an eighth of it per class. */
    unsigned n = sc_info[cls].batch, room = (unsigned)(h->end - h->top) + 1;
    size_t most = budget / 8 / size;
    if (most < n)
        n = most ? (unsigned)most : 1;
    if (room < n)
        n = room;
    unsigned got = central_alloc(cls, &slab[h->top], n);
    if (!got)
        return NULL;
    h->top += got - 1;
    return slab[h->top];
}

/* Over the budget (a share that shrinks as threads multiply), the stack
 * keeps at most an eighth of it. */
static void shrink_to_budget(void **slab, unsigned cls, size_t budget)
{
    if (cache_slab_bytes_held(slab) <= budget)
        return;
    struct cache_hdr *h = cache_hdr(slab, cls);
    unsigned keep = (unsigned)(budget / 8 / sc_info[cls].size), batch = sc_info[cls].batch;
    while (cache_count(slab, cls) > keep) {
        unsigned n = cache_count(slab, cls) - keep;
        n = n < batch ? n : batch;
        central_free(cls, &slab[h->top - n], n);
        h->top -= n;
    }
    if (h->end - home(slab, cls) > keep)
        h->end = home(slab, cls) + keep;
}

void cache_spill_push(void **slab, unsigned cls, void *p, size_t budget)
{
    struct cache_hdr *h = cache_hdr(slab, cls);
    shrink_to_budget(slab, cls, budget);
    if (h->top >= h->end) {
        unsigned n = cache_count(slab, cls) < sc_info[cls].batch ? cache_count(slab, cls) : sc_info[cls].batch;
        central_free(cls, &slab[h->top - n], n);
        h->top -= n;
    }
    if (!cache_push(slab, cls, p)) /* a stack the budget shrank to nothing */
        central_free(cls, &p, 1);
}

void cache_slab_stop(void **slab)
{
    for (unsigned c = 0; c < SC_COUNT; c++) {
        struct cache_hdr *h = cache_hdr(slab, c);
        __atomic_store_n(&h->end, 0, __ATOMIC_RELAXED);
        __atomic_store_n(cache_begin(slab, c), SLAB_STOPPED_BEGIN, __ATOMIC_RELAXED);
    }
}

/* Hands slab[from, to) of cls to the central layer, a batch at a time. */
static void free_range(void **slab, unsigned cls, unsigned from, unsigned to)
{
    unsigned batch = sc_info[cls].batch;
    for (unsigned i = from; i < to; i += batch)
        central_free(cls, &slab[i], to - i < batch ? to - i : batch);
}

size_t cache_slab_take_stopped(void **slab)
{
    size_t bytes = 0;
    for (unsigned c = 0; c < SC_COUNT; c++) {
        struct cache_hdr *h = cache_hdr(slab, c);
        unsigned top = __atomic_load_n(&h->top, __ATOMIC_ACQUIRE);
        bytes += (size_t)(top - home(slab, c)) * sc_info[c].size;
        free_range(slab, c, home(slab, c), top);
        __atomic_store_n(&h->top, home(slab, c), __ATOMIC_RELAXED);
    }
    return bytes;
}

void cache_slab_restart(void **slab)
{
    for (unsigned c = 0; c < SC_COUNT; c++) {
        __atomic_store_n(&cache_hdr(slab, c)->end, initial_end(slab, c), __ATOMIC_RELEASE);
        __atomic_store_n(cache_begin(slab, c), home(slab, c), __ATOMIC_RELEASE);
    }
}

bool cache_slab_stopped(void **slab)
{
    return *cache_begin(slab, 0) == SLAB_STOPPED_BEGIN;
}

void cache_slab_forget(void **slab)
{
    for (unsigned c = 0; c < SC_COUNT; c++)
        cache_hdr(slab, c)->top = home(slab, c);
}

void cache_slab_flush(void **slab)
{
    for (unsigned c = 0; c < SC_COUNT; c++) {
        struct cache_hdr *h = cache_hdr(slab, c);
        unsigned top = h->top;
        h->top = home(slab, c); /* emptied first: a nested search must not find these */
        free_range(slab, c, home(slab, c), top);
    }
}

bool cache_slab_holds(void **slab, unsigned cls, const void *p)
{
    unsigned top = __atomic_load_n(&cache_hdr(slab, cls)->top, __ATOMIC_RELAXED);
    for (unsigned i = home(slab, cls); i < top && i < limit(slab, cls); i++)
        if (__atomic_load_n(&slab[i], __ATOMIC_RELAXED) == p)
            return true;
    return false;
}

size_t cache_slab_bytes_held(void **slab)
{
    size_t bytes = 0;
    for (unsigned c = 0; c < SC_COUNT; c++)
        bytes += (size_t)cache_count(slab, c) * sc_info[c].size;
    return bytes;
}
