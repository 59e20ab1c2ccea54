/* The slab shared by every cache (src/frontend/cache.c): each class's
 * stack laid out after the headers and bases, never overlapping its
 * neighbours, in either shape (a CPU's, far larger, and a thread's); a
 * CPU's stack leaves its nursery for its own home as it grows;
 * pushes and pops are last in, first out, within the stack's capacity; a
 * refill takes from the central layer, marks what it takes, grows the
 * stack with allocation demand within the budget and takes less under a
 * small one; a full stack spills a batch and shrinks to the budget; the
 * closer look at a free reports double, interior, never-allocated and
 * outside-any-superblock frees and keeps the program's blocks; flushes
 * return everything. No block is lost or returned twice. */
#include <stdint.h>

#include "api/init.h"
#include "arch/prefetch.h"
#include "central_hold.h"
#include "check.h"
#include "core/central.h"
#include "core/meta.h"
#include "core/superblock.h"
#include "frontend/cache.h"
#include "platform/diag.h"

#define BIG_BUDGET ((size_t)64 << 20)

static unsigned cls, batch, size;

#define STACKS_SLOT (3 * SLAB_HEADER_SLOTS) /* after the headers, the bases and the rooms */

static unsigned cpu_capacity(unsigned c)
{
    size_t objects = CACHE_CPU_CLASS_BYTES / sc_info[c].size;
    return objects < 8 ? 8 : objects > CACHE_CPU_CLASS_OBJECTS ? CACHE_CPU_CLASS_OBJECTS : (unsigned)objects;
}

/* A foreign stack, formatted: a batch at first, where expected. */
static void check_foreign_stack(void **slab, unsigned shape, unsigned cls, unsigned first)
{
    unsigned stack = cache_foreign_stack(cls);
    struct cache_hdr *h = cache_hdr(slab, stack);
    CHECK_MSG(cache_stack_class(stack) == cls && *cache_begin(slab, stack) == first && h->top == first &&
                  h->end == first + sc_info[cls].batch,
              "shape %u foreign stack of class %u: %u..%u<%u, expected at %u", shape, cls,
              *cache_begin(slab, stack), h->top, h->end, first);
}

/* Both shapes: the headers, bases and rooms first, then each class's
 * stack at its own home, in order, at its capacity; a CPU's stacks start
 * in a nursery before those, a largest batch's room each, side by side,
 * the foreign stacks of the line-sharing classes after the classes'.
 * A thread's foreign stacks follow its classes' own homes. */
static void test_layout(void)
{
    for (unsigned shape = 0; shape < 2; shape++) {
        void **slab = meta_alloc(cache_slab_bytes(shape));
        REQUIRE(slab != NULL);
        cache_slab_format(slab, shape);
        unsigned nursery = STACKS_SLOT, next = STACKS_SLOT;
        if (shape == CACHE_SHAPE_CPU) {
            for (unsigned c = 0; c < SC_COUNT; c++)
                next += sizeclass_batch_at_most(c, SC_BATCH_MAX);
            for (unsigned c = 0; c < SC_LINE_SHARING; c++) {
                check_foreign_stack(slab, shape, c, next);
                next += sizeclass_batch_at_most(c, SC_BATCH_MAX);
            }
        }
        for (unsigned c = 0; c < SC_COUNT; c++) {
            struct cache_hdr *h = cache_hdr(slab, c);
            unsigned first = shape == CACHE_SHAPE_CPU ? nursery : next;
            CHECK_MSG(*cache_begin(slab, c) == first && h->top == first && h->end == first + sc_info[c].batch,
                      "shape %u class %u: %u..%u<%u, expected at %u", shape, c, *cache_begin(slab, c), h->top,
                      h->end, first);
            nursery += sizeclass_batch_at_most(c, SC_BATCH_MAX);
            next += shape == CACHE_SHAPE_THREAD ? sc_info[c].limit : cpu_capacity(c);
        }
        if (shape == CACHE_SHAPE_THREAD)
            for (unsigned c = 0; c < SC_LINE_SHARING; c++) {
                check_foreign_stack(slab, shape, c, next);
                next += sizeclass_batch_at_most(c, SC_BATCH_MAX);
            }
        CHECK_MSG(next * sizeof(void *) == cache_slab_bytes(shape) && cache_slab_bytes(shape) <= SLAB_BYTES,
                  "shape %u: %u slots, %zu bytes, at most %zu", shape, next, cache_slab_bytes(shape),
                  (size_t)SLAB_BYTES);
        meta_free(slab, cache_slab_bytes(shape));
    }
    CHECK_MSG(cache_slab_bytes(CACHE_SHAPE_CPU) > 8 * cache_slab_bytes(CACHE_SHAPE_THREAD),
              "a CPU's cache holds far more than a thread's");
}

/* A CPU's stack grows in its nursery no further than it is; past it, it
 * moves to its own home (the fences between the steps have nothing to
 * wait for here), keeping its objects in order, its capacity and its
 * neighbours' stacks, and grows there up to its full capacity. */
static void test_nursery_move(void)
{
    void **slab = meta_alloc(cache_slab_bytes(CACHE_SHAPE_CPU));
    REQUIRE(slab != NULL);
    cache_slab_format(slab, CACHE_SHAPE_CPU);
    struct cache_hdr *h = cache_hdr(slab, cls);
    unsigned nursery = *cache_begin(slab, cls);
    CHECK(cache_push(slab, cls - 1, (void *)(uintptr_t)8) && cache_push(slab, cls + 1, (void *)(uintptr_t)8));
    for (unsigned i = 1; i < batch; i++)
        CHECK(cache_push(slab, cls, (void *)(uintptr_t)(16 * i)));
    /* The nursery holds the largest batch; the batch in use may be less
     * (per-thread caches' batches, where there are no sections). */
    unsigned room = sizeclass_batch_at_most(cls, SC_BATCH_MAX);
    CHECK_EQ(cache_growth(slab, cls), batch);
    CHECK_MSG(!cache_stack_must_move(slab, cls, room - batch), "a stack moves while its nursery has room");
    CHECK_MSG(cache_stack_must_move(slab, cls, room - batch + 1), "a nursery stack grew in place past its room");

    unsigned capacity = cache_capacity(slab, cls);
    cache_stack_stop(slab, cls);
    CHECK(cache_pop(slab, cls) == NULL && !cache_push(slab, cls, (void *)16));
    cache_stack_move_stopped(slab, cls);
    cache_stack_restart(slab, cls, capacity);
    unsigned home = *cache_begin(slab, cls);
    CHECK_MSG(home > nursery + (SC_COUNT - cls) * SC_BATCH_MAX / 2 && h->end == home + capacity &&
                  h->top == home + batch - 1,
              "moved from %u to %u..%u<%u", nursery, home, h->top, h->end);
    CHECK_MSG(!cache_stack_must_move(slab, cls, batch), "a stack at its own home moves again");
    h->end += batch;
    CHECK_EQ(cache_count(slab, cls), batch - 1);
    CHECK(cache_slab_holds(slab, cls, (void *)(uintptr_t)16) && !cache_slab_holds(slab, cls, (void *)(uintptr_t)8));
    for (unsigned i = batch - 1; i >= 1; i--)
        CHECK_MSG(cache_pop(slab, cls) == (void *)(uintptr_t)(16 * i), "object %u lost its place in the move", i);
    CHECK(cache_pop(slab, cls - 1) == (void *)(uintptr_t)8 && cache_pop(slab, cls + 1) == (void *)(uintptr_t)8);
    while (cache_growth(slab, cls))
        h->end += cache_growth(slab, cls);
    CHECK_EQ(cache_capacity(slab, cls), cpu_capacity(cls));
    /* A drain restarts it at a batch, at its own home. */
    cache_slab_stop(slab);
    cache_slab_take_stopped(slab);
    cache_slab_restart(slab);
    CHECK(*cache_begin(slab, cls) == home && h->end == home + batch);

    /* A single owner's refills (the ablation libraries lock a CPU-shaped
     * slab) move the stack as they grow it, never over its neighbour. */
    cache_slab_format(slab, CACHE_SHAPE_CPU);
    CHECK(cache_push(slab, cls + 1, (void *)(uintptr_t)8));
    void *taken[3 * SC_BATCH_MAX], *q;
    unsigned n = 0;
    for (unsigned round = 0; round < 3; round++) { /* each empties the stack: a refill grows it */
        REQUIRE((taken[n++] = cache_refill_pop(slab, cls, BIG_BUDGET)) != NULL);
        while ((q = cache_pop(slab, cls)) != NULL)
            taken[n++] = q;
    }
    CHECK_MSG(*cache_begin(slab, cls) != nursery && cache_capacity(slab, cls) > batch,
              "refills grew the stack to %u in place", cache_capacity(slab, cls));
    CHECK_MSG(cache_pop(slab, cls + 1) == (void *)(uintptr_t)8, "a refill overwrote the next stack");
    for (unsigned i = 0; i < n; i++)
        central_free(cls, &taken[i], 1);
    cache_slab_flush(slab);
    meta_free(slab, cache_slab_bytes(CACHE_SHAPE_CPU));
}

/* Fake pointers: the slab is formatted again afterwards, never flushed. */
static void test_push_pop(void **slab)
{
    struct cache_hdr *h = cache_hdr(slab, cls);
    unsigned capacity = h->end - *cache_begin(slab, cls);
    CHECK_EQ(capacity, batch);
    CHECK(cache_pop(slab, cls) == NULL);
    for (unsigned i = 1; i <= capacity; i++)
        CHECK(cache_push(slab, cls, (void *)(uintptr_t)(16 * i)));
    CHECK_MSG(!cache_push(slab, cls, (void *)16), "pushed past the capacity");
    CHECK_EQ(cache_count(slab, cls), capacity);
    CHECK_EQ(cache_slab_bytes_held(slab), (size_t)capacity * size);
    CHECK_EQ(cache_count(slab, cls - 1) + cache_count(slab, cls + 1), 0);
    CHECK(cache_slab_holds(slab, cls, (void *)(uintptr_t)16));
    CHECK(!cache_slab_holds(slab, cls + 1, (void *)(uintptr_t)16));
    CHECK_MSG(cache_pop(slab, cls) == (void *)(uintptr_t)(16 * capacity), "not last in, first out");
    CHECK_EQ(cache_count(slab, cls), capacity - 1);

    unsigned limit = *cache_begin(slab, cls) + sc_info[cls].limit;
    CHECK_EQ(cache_growth(slab, cls), batch);
    h->end = limit - 1;
    CHECK_EQ(cache_growth(slab, cls), 1);
    h->end = limit;
    CHECK_EQ(cache_growth(slab, cls), 0);
    cache_slab_stop(slab);
    CHECK_MSG(cache_pop(slab, cls) == NULL && !cache_push(slab, cls, (void *)16) && cache_growth(slab, cls) == 0,
              "a stopped stack still works");
    cache_slab_format(slab, CACHE_SHAPE_THREAD);
}

/* A foreign stack (fake pointers again): its blocks are held for the
 * class's double-free search and counted, never popped as the class's. */
static void test_foreign_push(void **slab)
{
    unsigned small = sc_of(16), stack = cache_foreign_stack(small);
    REQUIRE(small < SC_LINE_SHARING && sc_of(ARCH_CACHE_LINE) >= SC_LINE_SHARING);
    CHECK(cache_push(slab, stack, (void *)(uintptr_t)32));
    CHECK(cache_slab_holds(slab, small, (void *)(uintptr_t)32));
    CHECK(!cache_slab_holds(slab, small + 1, (void *)(uintptr_t)32));
    CHECK_EQ(cache_slab_bytes_held(slab), (size_t)sc_info[small].size);
    CHECK_MSG(cache_pop(slab, small) == NULL, "a pop of the class took from its foreign stack");
    CHECK_EQ(cache_count(slab, stack), 1);
    cache_slab_format(slab, CACHE_SHAPE_THREAD);
}

static void *one_block(void)
{
    void *p;
    REQUIRE(central_alloc(cls, &p, 1) == 1);
    block_handing_out(p); /* as malloc hands it to the program */
    return p;
}

/* A free the fast path leaves for the closer look: checked, then (when it
 * is the program's block) pushed or spilled, as the front end does. */
static bool free_checked(void **slab, void *p, size_t budget)
{
    if (!cache_verify_free(p, cls, "free"))
        return false;
    block_mark_free(p);
    if (!cache_push(slab, cls, p))
        cache_spill_push(slab, cls, p, budget);
    return true;
}

static void test_refill(void **slab)
{
    struct cache_hdr *h = cache_hdr(slab, cls);
    void *p = cache_refill_pop(slab, cls, BIG_BUDGET);
    REQUIRE(p != NULL);
    struct superblock *sb = sb_of((uintptr_t)p);
    CHECK(sb && sb->cls == cls);
    CHECK_EQ(cache_count(slab, cls), batch - 1);
    CHECK_MSG(h->end == *cache_begin(slab, cls) + 2 * batch, "allocation demand did not grow the stack: %u",
              h->end - *cache_begin(slab, cls));
    CHECK_MSG(block_marked_free(slab[h->top - 1]), "a refilled object is not marked free");
    /* With objects left, a refill is a pop. */
    void *top = slab[h->top - 1];
    CHECK(cache_refill_pop(slab, cls, BIG_BUDGET) == top);
    CHECK_EQ(cache_count(slab, cls), batch - 2);
    /* The program's blocks come back, and the last freed is the next out. */
    block_handing_out(p);
    block_handing_out(top);
    CHECK(free_checked(slab, p, BIG_BUDGET));
    CHECK(free_checked(slab, top, BIG_BUDGET));
    CHECK(block_marked_free(p) && block_marked_free(top));
    CHECK(cache_refill_pop(slab, cls, BIG_BUDGET) == top);
    block_handing_out(top);
    CHECK(free_checked(slab, top, BIG_BUDGET));
}

static void test_small_budget_refill(void **slab)
{
    struct cache_hdr *h = cache_hdr(slab, cls);
    void *p = cache_refill_pop(slab, cls, (size_t)8 * 2 * size); /* two objects an eighth */
    REQUIRE(p != NULL);
    CHECK_EQ(cache_count(slab, cls), 1);
    CHECK_EQ(h->end, *cache_begin(slab, cls) + batch); /* no room to grow */
    block_handing_out(p);
    CHECK(free_checked(slab, p, BIG_BUDGET));
}

static void test_misuse(void **slab)
{
    uint64_t invalid = diag_invalid_pointer_count();
    void *q = one_block();
    /* An interior pointer; a block never handed out (found past the last
     * block taken); an address of the zone where no superblock is. */
    CHECK(!free_checked(slab, (char *)q + 8, BIG_BUDGET));
    void *never = q;
    while (sb_block_state((uintptr_t)never, cls) != BLOCK_IN_SUPERBLOCK || block_marked_free(never))
        never = (char *)never + size;
    CHECK(!free_checked(slab, never, BIG_BUDGET));
    CHECK(!block_marked_free(never));
    uintptr_t nowhere = ((uintptr_t)q & ~(uintptr_t)(SB_SIZE - 1)) + 1000 * SB_SIZE;
    if (zone_active())
        CHECK(!free_checked(slab, (void *)nowhere, BIG_BUDGET));
    unsigned expected = zone_active() ? 3 : 2;
    CHECK_MSG(diag_invalid_pointer_count() == invalid + expected, "%llu misuses reported, %u expected",
              (unsigned long long)(diag_invalid_pointer_count() - invalid), expected);
    CHECK_MSG(!cache_slab_holds(slab, cls, (char *)q + 8) && !cache_slab_holds(slab, cls, never),
              "a misused pointer was kept");
    /* A double free, with the first free's block in the central layer (the
     * front end's search finds it there). */
    CHECK(cache_verify_free(q, cls, "free"));
    block_mark_free(q);
    central_free(cls, &q, 1);
    invalid = diag_invalid_pointer_count();
    CHECK(!free_checked(slab, q, BIG_BUDGET));
    CHECK_EQ(diag_invalid_pointer_count(), invalid + 1);
    /* A block of the program's whose first word happens to be the mark
     * (held by no cache) is the program's. */
    void *r = one_block();
    block_mark_free(r);
    CHECK(free_checked(slab, r, BIG_BUDGET));
    CHECK_EQ(diag_invalid_pointer_count(), invalid + 1);
}

static void test_spill_push(void **slab)
{
    struct cache_hdr *h = cache_hdr(slab, cls);
    /* A full stack spills a batch off its top, then takes p. */
    while (h->top < h->end)
        CHECK(free_checked(slab, one_block(), BIG_BUDGET));
    unsigned full = cache_count(slab, cls);
    void *p = one_block();
    CHECK(cache_verify_free(p, cls, "free"));
    block_mark_free(p);
    cache_spill_push(slab, cls, p, BIG_BUDGET);
    CHECK_EQ(cache_count(slab, cls), full - batch + 1);
    CHECK(slab[h->top - 1] == p);

    /* Holding more than the budget: the stack shrinks to an eighth of it. */
    while (h->top < h->end)
        CHECK(free_checked(slab, one_block(), BIG_BUDGET));
    size_t budget = (size_t)8 * 3 * size;
    REQUIRE(cache_slab_bytes_held(slab) > budget);
    p = one_block();
    CHECK(cache_verify_free(p, cls, "free"));
    block_mark_free(p);
    cache_spill_push(slab, cls, p, budget);
    CHECK_EQ(h->end, *cache_begin(slab, cls) + 3);
    CHECK(cache_count(slab, cls) <= 3);

    /* Over a budget whose eighth is less than an object: nothing stays. */
    while (h->top < h->end)
        CHECK(free_checked(slab, one_block(), BIG_BUDGET));
    p = one_block();
    CHECK(cache_verify_free(p, cls, "free"));
    block_mark_free(p);
    cache_spill_push(slab, cls, p, size);
    CHECK_EQ(h->end, *cache_begin(slab, cls));
    CHECK_EQ(cache_slab_bytes_held(slab), 0);
}

int main(void)
{
    init_ensure();
    cls = sc_of(256);
    batch = sc_info[cls].batch;
    size = sc_info[cls].size;
    REQUIRE(cls > 0 && cls + 1 < SC_COUNT && 3 * batch <= sc_info[cls].limit);
    central_hold_until_whole_batches(cls); /* a refill cuts a whole batch */
    test_layout();
    test_nursery_move();
    void **slab = meta_alloc(cache_slab_bytes(CACHE_SHAPE_THREAD));
    REQUIRE(slab != NULL);
    cache_slab_format(slab, CACHE_SHAPE_THREAD);
    test_push_pop(slab);
    test_foreign_push(slab);

    struct central_class_stats before, after;
    central_class_stats(cls, &before);
    uint64_t invalid = diag_invalid_pointer_count();
    test_refill(slab);
    cache_slab_flush(slab);
    cache_slab_format(slab, CACHE_SHAPE_THREAD);
    test_small_budget_refill(slab);
    cache_slab_flush(slab);
    cache_slab_format(slab, CACHE_SHAPE_THREAD);
    test_refill(slab);
    CHECK_EQ(diag_invalid_pointer_count(), invalid);
    test_misuse(slab);
    test_spill_push(slab);
    cache_slab_flush(slab);
    for (unsigned c = 0; c < SC_COUNT; c++)
        CHECK_MSG(cache_count(slab, c) == 0, "class %u not flushed", c);
    CHECK_EQ(cache_slab_bytes_held(slab), 0);
    /* Every block taken went back exactly once. */
    central_trim();
    central_class_stats(cls, &after);
    CHECK_EQ(after.blocks_out, before.blocks_out);
    return check_status();
}
