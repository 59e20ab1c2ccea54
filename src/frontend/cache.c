#include "frontend/cache.h"

#include <string.h>

#include "core/central.h"
#include "core/superblock.h"
#include "platform/diag.h"
#include "platform/options.h"
#include "platform/os.h"

/* After the headers and the bases, a row of where each class's stack
 * lies now: its first slot (home) and one past the last it may use there
 * (limit), in one 8-byte word, so that a stack moves with one store (a
 * fork may cut a move short: see cpucache_fork_child). The stacks follow.
 * A base's spare word holds the stack's own home while it is still in its
 * nursery, 0 otherwise. */
struct cache_room {
    uint32_t home, limit;
} __attribute__((aligned(8)));
#define ROOM_SLOT (2 * SLAB_HEADER_SLOTS)
#define STACKS_SLOT (3 * SLAB_HEADER_SLOTS)
_Static_assert(CACHE_STACKS * sizeof(struct cache_room) <= SLAB_HEADER_SLOTS * sizeof(void *), "a room per stack");

/* Per shape, where each class's stack starts ([first_home, first_limit))
 * and its own home, where it may grow to its full capacity (up to the
 * next class's own home). A CPU's stacks start in a nursery, a largest
 * batch's room each side by side, so a class that a CPU uses a little
 * touches a part of a page there, not a page of its own (a program using
 * 70 classes held 57 pages of stacks per CPU); one that grows past it
 * moves to its own home (cpucache.c). A thread's start at their own.
 * Foreign stacks hold a largest batch where they start, for good: in a
 * CPU's nursery, after a thread's own homes. The slab ends at slab_end. */
static uint32_t first_home[2][CACHE_STACKS], first_limit[2][CACHE_STACKS], own_home[2][SC_COUNT + 1];
static uint32_t slab_end[2];
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
        uint32_t next = STACKS_SLOT;
        unsigned nursery = shape == CACHE_SHAPE_CPU ? CACHE_STACKS : 0;
        for (unsigned s = 0; s < nursery; s++) {
            first_home[shape][s] = next;
            next += sizeclass_batch_at_most(cache_stack_class(s), SC_BATCH_MAX);
            first_limit[shape][s] = next;
        }
        for (unsigned c = 0; c < SC_COUNT; c++) {
            own_home[shape][c] = next;
            next += class_capacity(shape, c);
        }
        own_home[shape][SC_COUNT] = next;
        if (shape == CACHE_SHAPE_THREAD) {
            for (unsigned c = 0; c < SC_COUNT; c++) {
                first_home[shape][c] = own_home[shape][c];
                first_limit[shape][c] = own_home[shape][c + 1];
            }
            for (unsigned s = SC_COUNT; s < CACHE_STACKS; s++) {
                first_home[shape][s] = next;
                next += sizeclass_batch_at_most(cache_stack_class(s), SC_BATCH_MAX);
                first_limit[shape][s] = next;
            }
        }
        slab_end[shape] = next;
        if ((size_t)next * sizeof(void *) > SLAB_BYTES)
            diag_fatal("cache slab layout does not fit SLAB_BYTES"); /* a build-time bound */
    }
}

size_t cache_slab_bytes(enum cache_shape shape)
{
    return (size_t)slab_end[shape] * sizeof(void *);
}

char *cache_map_slabs(unsigned count)
{
    char *lowest = os_map((size_t)(SLAB_IDS_STOPPED + count) << SLAB_SHIFT, 0);
    return lowest ? lowest + ((size_t)SLAB_IDS_STOPPED << SLAB_SHIFT) : NULL;
}

static struct cache_room *room(void **slab, unsigned cls)
{
    return (struct cache_room *)&slab[ROOM_SLOT] + cls;
}

static uint32_t home(void **slab, unsigned cls)
{
    return __atomic_load_n(&room(slab, cls)->home, __ATOMIC_RELAXED);
}

/* One past the last slot the stack of cls may use where it lies. */
static uint32_t limit(void **slab, unsigned cls)
{
    return __atomic_load_n(&room(slab, cls)->limit, __ATOMIC_RELAXED);
}

/* One past the last slot a CPU's stack of cls may use at its own home. */
static uint32_t own_limit(unsigned cls)
{
    return own_home[CACHE_SHAPE_CPU][cls + 1];
}

/* The stack's own home while it is in its nursery, else 0. */
static uint32_t own_home_ahead(void **slab, unsigned cls)
{
    return __atomic_load_n(&cache_base(slab, cls)->spare, __ATOMIC_RELAXED);
}

static void set_room(void **slab, unsigned cls, uint32_t home_slot, uint32_t limit_slot)
{
    struct cache_room r = {home_slot, limit_slot};
    __atomic_store(room(slab, cls), &r, __ATOMIC_RELEASE);
}

void cache_slab_format_stopped(void **slab, enum cache_shape shape)
{
    for (unsigned c = 0; c < CACHE_STACKS; c++) { /* class 0's first: see cache_slab_formatted */
        set_room(slab, c, first_home[shape][c], first_limit[shape][c]);
        uint32_t ahead = c < SC_COUNT && first_home[shape][c] != own_home[shape][c] ? own_home[shape][c] : 0;
        __atomic_store_n(&cache_base(slab, c)->spare, ahead, __ATOMIC_RELAXED);
    }
    cache_slab_stop(slab);
    /* Each top released after every stopped begin: a section that reads a
     * new top reads a stopped begin. */
    for (unsigned c = 0; c < CACHE_STACKS; c++)
        __atomic_store_n(&cache_hdr(slab, c)->top, home(slab, c), __ATOMIC_RELEASE);
}

bool cache_slab_formatted(void **slab)
{
    return home(slab, 0) != 0;
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
    if (*cache_begin(slab, cls) == SLAB_STOPPED_BEGIN)
        return 0;
    uint32_t ahead = own_home_ahead(slab, cls);
    /* Only CPU slabs have nurseries. */
    uint32_t most = ahead ? own_limit(cls) - ahead : limit(slab, cls) - home(slab, cls);
    unsigned more = sc_info[cls].batch, room = most - cache_capacity(slab, cls);
    return more < room ? more : room;
}

unsigned cache_capacity(void **slab, unsigned cls)
{
    return cache_hdr(slab, cls)->end - home(slab, cls);
}

bool cache_stack_in_nursery(void **slab, unsigned cls)
{
    return own_home_ahead(slab, cls) != 0;
}

bool cache_stack_must_move(void **slab, unsigned cls, unsigned more)
{
    return own_home_ahead(slab, cls) && cache_hdr(slab, cls)->end + more > limit(slab, cls);
}

void cache_stack_move_stopped(void **slab, unsigned cls)
{
    struct cache_hdr *h = cache_hdr(slab, cls);
    uint32_t from = home(slab, cls), to = own_home_ahead(slab, cls), top = h->top;
    memmove(&slab[to], &slab[from], (size_t)(top - from) * sizeof(void *));
    __atomic_store_n(&h->top, to + (top - from), __ATOMIC_RELEASE);
    set_room(slab, cls, to, own_limit(cls));
    __atomic_store_n(&cache_base(slab, cls)->spare, 0, __ATOMIC_RELAXED);
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
    for (unsigned c = 0; c < CACHE_STACKS; c++)
        bytes += (size_t)(cache_hdr(slab, c)->end - home(slab, c)) * sc_info[cache_stack_class(c)].size;
    return bytes;
}

/* The move of cache.h for a single owner's slab (the ablation libraries
 * lock CPU-shaped ones): no section reads it, so neither stop nor fences. */
static void move_owned(void **slab, unsigned cls)
{
    unsigned capacity = cache_capacity(slab, cls);
    cache_stack_move_stopped(slab, cls);
    cache_stack_restart(slab, cls, capacity);
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
    if (more && opt_free_blocks_wait() && slab_bytes_room(slab) + (size_t)more * size <= budget) {
        if (cache_stack_must_move(slab, cls, more))
            move_owned(slab, cls);
        h->end += more;
    }
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

void cache_stack_stop(void **slab, unsigned cls)
{
    __atomic_store_n(&cache_hdr(slab, cls)->end, 0, __ATOMIC_RELAXED);
    __atomic_store_n(cache_begin(slab, cls), SLAB_STOPPED_BEGIN, __ATOMIC_RELAXED);
}

void cache_stack_restart(void **slab, unsigned cls, unsigned capacity)
{
    __atomic_store_n(&cache_hdr(slab, cls)->end, home(slab, cls) + capacity, __ATOMIC_RELEASE);
    __atomic_store_n(cache_begin(slab, cls), home(slab, cls), __ATOMIC_RELEASE);
}

void cache_slab_stop(void **slab)
{
    for (unsigned c = 0; c < CACHE_STACKS; c++)
        cache_stack_stop(slab, c);
}

/* Hands slab[from, to) of a stack to the central layer, a batch at a time. */
static void free_range(void **slab, unsigned stack, unsigned from, unsigned to)
{
    unsigned cls = cache_stack_class(stack), batch = sc_info[cls].batch;
    for (unsigned i = from; i < to; i += batch)
        central_free(cls, &slab[i], to - i < batch ? to - i : batch);
}

size_t cache_slab_take_stopped(void **slab)
{
    size_t bytes = 0;
    for (unsigned c = 0; c < CACHE_STACKS; c++) {
        struct cache_hdr *h = cache_hdr(slab, c);
        unsigned top = __atomic_load_n(&h->top, __ATOMIC_ACQUIRE);
        bytes += (size_t)(top - home(slab, c)) * sc_info[cache_stack_class(c)].size;
        free_range(slab, c, home(slab, c), top);
        __atomic_store_n(&h->top, home(slab, c), __ATOMIC_RELAXED);
    }
    return bytes;
}

void cache_slab_restart(void **slab)
{
    for (unsigned c = 0; c < CACHE_STACKS; c++)
        cache_stack_restart(slab, c, sc_info[cache_stack_class(c)].batch);
}

bool cache_slab_stopped(void **slab)
{
    for (unsigned c = 0; c < CACHE_STACKS; c++)
        if (*cache_begin(slab, c) == SLAB_STOPPED_BEGIN)
            return true;
    return false;
}

void cache_slab_forget(void **slab)
{
    for (unsigned c = 0; c < CACHE_STACKS; c++)
        cache_hdr(slab, c)->top = home(slab, c);
}

void cache_slab_flush(void **slab)
{
    for (unsigned c = 0; c < CACHE_STACKS; c++) {
        struct cache_hdr *h = cache_hdr(slab, c);
        unsigned top = h->top;
        h->top = home(slab, c); /* emptied first: a nested search must not find these */
        free_range(slab, c, home(slab, c), top);
    }
}

static bool stack_holds(void **slab, unsigned stack, const void *p)
{
    unsigned top = __atomic_load_n(&cache_hdr(slab, stack)->top, __ATOMIC_RELAXED);
    for (unsigned i = home(slab, stack); i < top && i < limit(slab, stack); i++)
        if (__atomic_load_n(&slab[i], __ATOMIC_RELAXED) == p)
            return true;
    return false;
}

unsigned cache_class_count(void **slab, unsigned cls)
{
    return cache_count(slab, cls) + (cls < SC_LINE_SHARING ? cache_count(slab, cache_foreign_stack(cls)) : 0);
}

bool cache_slab_holds(void **slab, unsigned cls, const void *p)
{
    return stack_holds(slab, cls, p) || (cls < SC_LINE_SHARING && stack_holds(slab, cache_foreign_stack(cls), p));
}

size_t cache_slab_bytes_held(void **slab)
{
    size_t bytes = 0;
    for (unsigned c = 0; c < CACHE_STACKS; c++)
        bytes += (size_t)cache_count(slab, c) * sc_info[cache_stack_class(c)].size;
    return bytes;
}

uint64_t cache_slab_tops_digest(void **slab)
{
    uint64_t digest = 0;
    for (unsigned c = 0; c < CACHE_STACKS; c++)
        digest = digest * 0x9E3779B97F4A7C15u + __atomic_load_n(&cache_hdr(slab, c)->top, __ATOMIC_RELAXED);
    return digest;
}
