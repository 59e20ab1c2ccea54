/* The slab shared by every cache (src/frontend/cache.c): each class's free
 * stack and allocation stack laid out after the headers and bounds, never
 * overlapping their neighbours; pushes land on the free stack and pops come
 * from the allocation stack; a refill verifies the free stack into the
 * allocation stack before it takes from the central layer, grows the stack
 * with allocation demand within the budget and takes less under a small
 * one; a full free stack is verified (double, interior and never-allocated
 * frees reported and dropped) and moved on; flushes return everything. No
 * block is lost or returned twice. */
#include <stdint.h>

#include "api/init.h"
#include "check.h"
#include "core/central.h"
#include "core/meta.h"
#include "core/superblock.h"
#include "frontend/cache.h"
#include "platform/diag.h"

#define BIG_BUDGET ((size_t)64 << 20)

static unsigned cls, batch, size;

static void test_layout(void **slab)
{
    unsigned next = 2 * SLAB_HEADER_SLOTS; /* the headers and the bounds come first */
    for (unsigned c = 0; c < SC_COUNT; c++) {
        struct cache_hdr *h = cache_hdr(slab, c);
        struct cache_bounds *b = cache_bounds(slab, c);
        unsigned alloc = next + sc_info[c].batch;
        CHECK_MSG(b->free_begin == next && h->free_top == next && h->free_end == alloc &&
                      h->alloc_begin == alloc && h->alloc_top == alloc &&
                      b->alloc_end == alloc + sc_info[c].batch && b->alloc_limit == alloc + sc_info[c].limit,
                  "class %u: free %u..%u<%u, alloc %u..%u<%u<=%u, expected at %u", c, b->free_begin,
                  h->free_top, h->free_end, h->alloc_begin, h->alloc_top, b->alloc_end, b->alloc_limit,
                  next);
        next = b->alloc_limit;
    }
    CHECK_MSG(next * sizeof(void *) == cache_slab_bytes() && cache_slab_bytes() <= SLAB_BYTES,
              "%u slots, %zu bytes, at most %zu", next, cache_slab_bytes(), (size_t)SLAB_BYTES);
}

/* Fake pointers: the slab is formatted again afterwards, never flushed. */
static void test_push_pop(void **slab)
{
    struct cache_hdr *h = cache_hdr(slab, cls);
    unsigned capacity = h->free_end - cache_bounds(slab, cls)->free_begin;
    CHECK_EQ(capacity, batch);
    CHECK(cache_pop(slab, cls) == NULL);
    for (unsigned i = 1; i <= capacity; i++)
        CHECK(cache_push(slab, cls, (void *)(uintptr_t)(16 * i)));
    CHECK_MSG(!cache_push(slab, cls, (void *)16), "pushed past the capacity");
    CHECK_EQ(cache_free_count(slab, cls), capacity);
    CHECK_MSG(cache_pop(slab, cls) == NULL, "a pop took an unverified object");
    CHECK_EQ(cache_slab_bytes_held(slab), (size_t)capacity * size);
    CHECK_EQ(cache_free_count(slab, cls - 1) + cache_free_count(slab, cls + 1), 0);
    CHECK(cache_slab_holds(slab, cls, (void *)(uintptr_t)16));
    CHECK(!cache_slab_holds(slab, cls + 1, (void *)(uintptr_t)16));

    struct cache_bounds *b = cache_bounds(slab, cls);
    CHECK_EQ(cache_growth(slab, cls), batch);
    b->alloc_end = (uint16_t)(b->alloc_limit - 1);
    CHECK_EQ(cache_growth(slab, cls), 1);
    b->alloc_end = b->alloc_limit;
    CHECK_EQ(cache_growth(slab, cls), 0);
    cache_slab_format(slab, ~0u);
}

static void *one_block(void)
{
    void *p;
    REQUIRE(central_alloc(cls, &p, 1) == 1);
    cache_handing_out(p); /* as malloc hands it to the program */
    return p;
}

static void test_refill(void **slab)
{
    struct cache_hdr *h = cache_hdr(slab, cls);
    struct cache_bounds *b = cache_bounds(slab, cls);
    void *p = cache_refill_pop(slab, cls, BIG_BUDGET);
    REQUIRE(p != NULL);
    struct superblock *sb = sb_of((uintptr_t)p);
    CHECK(sb && sb->cls == cls);
    CHECK_EQ(cache_alloc_count(slab, cls), batch - 1);
    CHECK_MSG(b->alloc_end == h->alloc_begin + 2 * batch, "allocation demand did not grow the stack: %u",
              b->alloc_end - h->alloc_begin);
    CHECK_MSG(cache_marked_free(slab[h->alloc_top - 1]), "a refilled object is not marked free");
    /* With objects left, a refill is a pop. */
    void *top = slab[h->alloc_top - 1];
    CHECK(cache_refill_pop(slab, cls, BIG_BUDGET) == top);
    CHECK_EQ(cache_alloc_count(slab, cls), batch - 2);
    /* Frees wait on the free stack; a refill on an empty allocation stack
     * verifies them first, and pops the most recent. */
    cache_handing_out(p);
    cache_handing_out(top);
    while (cache_alloc_count(slab, cls)) {
        void *q = cache_refill_pop(slab, cls, BIG_BUDGET);
        central_free(cls, &q, 1);
    }
    CHECK(cache_push(slab, cls, p));
    CHECK(cache_push(slab, cls, top));
    CHECK(cache_refill_pop(slab, cls, BIG_BUDGET) == top);
    CHECK_EQ(cache_free_count(slab, cls), 0);
    CHECK_EQ(cache_alloc_count(slab, cls), 1);
    CHECK(cache_marked_free(p));
    cache_handing_out(top);
    CHECK(cache_push(slab, cls, top));
}

static void test_small_budget_refill(void **slab)
{
    struct cache_hdr *h = cache_hdr(slab, cls);
    void *p = cache_refill_pop(slab, cls, (size_t)8 * 2 * size); /* two objects an eighth */
    REQUIRE(p != NULL);
    CHECK_EQ(cache_alloc_count(slab, cls), 1);
    CHECK_EQ(cache_bounds(slab, cls)->alloc_end, h->alloc_begin + batch); /* no room to grow */
    cache_handing_out(p);
    CHECK(cache_push(slab, cls, p));
}

/* Fills the free stack to its capacity with blocks of the program's. */
static void fill_free_stack(void **slab)
{
    struct cache_hdr *h = cache_hdr(slab, cls);
    while (h->free_top < h->free_end)
        CHECK(cache_push(slab, cls, one_block()));
}

static void test_verify_push(void **slab)
{
    struct cache_hdr *h = cache_hdr(slab, cls);
    /* A full free stack moves, verified, to the allocation stack. */
    fill_free_stack(slab);
    unsigned capacity = cache_free_count(slab, cls);
    REQUIRE(capacity == batch);
    void *p = one_block();
    unsigned before = cache_alloc_count(slab, cls);
    cache_verify_push(slab, cls, p, BIG_BUDGET);
    CHECK_EQ(cache_free_count(slab, cls), 1);
    CHECK_MSG(cache_alloc_count(slab, cls) == before + capacity, "verified %u of %u onto %u",
              cache_alloc_count(slab, cls) - before, capacity, before);

    /* Misuse in the free stack is reported and dropped: a double free, an
     * interior pointer, a block never handed out. */
    uint64_t invalid = diag_invalid_pointer_count();
    void *q = one_block(), *last = one_block();
    CHECK(cache_push(slab, cls, q));
    CHECK(cache_push(slab, cls, q));
    CHECK(cache_push(slab, cls, (char *)q + 8));
    while (cache_free_count(slab, cls) + 1 < batch)
        CHECK(cache_push(slab, cls, one_block()));
    /* Found after the last block taken, so none of those is it. */
    void *never = q;
    while (sb_block_state((uintptr_t)never, cls) != BLOCK_IN_SUPERBLOCK)
        never = (char *)never + size;
    CHECK(cache_push(slab, cls, never));
    cache_verify_push(slab, cls, last, BIG_BUDGET);
    CHECK_MSG(diag_invalid_pointer_count() == invalid + 3, "%llu misuses reported, 3 expected",
              (unsigned long long)(diag_invalid_pointer_count() - invalid));
    CHECK_MSG(!cache_slab_holds(slab, cls, (char *)q + 8), "an interior pointer was kept");
    CHECK_MSG(!cache_slab_holds(slab, cls, never), "a block never handed out was kept");

    /* Holding more than the budget: the allocation stack shrinks to an
     * eighth of it, and so does the free stack. */
    fill_free_stack(slab);
    size_t budget = (size_t)8 * 3 * size;
    REQUIRE(cache_slab_bytes_held(slab) > budget);
    cache_verify_push(slab, cls, one_block(), budget);
    CHECK_EQ(cache_bounds(slab, cls)->alloc_end, h->alloc_begin + 3);
    CHECK(cache_alloc_count(slab, cls) <= 3);
    CHECK_EQ(h->free_end - cache_bounds(slab, cls)->free_begin, 3);

    /* Over a budget whose eighth is less than an object: nothing stays. */
    cache_verify_push(slab, cls, one_block(), size);
    CHECK_EQ(cache_bounds(slab, cls)->alloc_end, h->alloc_begin);
    CHECK_EQ(cache_slab_bytes_held(slab), 0);
}

int main(void)
{
    init_ensure();
    cls = sc_of(256);
    batch = sc_info[cls].batch;
    size = sc_info[cls].size;
    REQUIRE(cls > 0 && cls + 1 < SC_COUNT && 2 * batch <= sc_info[cls].limit);
    void **slab = meta_alloc(cache_slab_bytes());
    REQUIRE(slab != NULL);
    cache_slab_format(slab, ~0u);
    test_layout(slab);
    test_push_pop(slab);

    struct central_class_stats before, after;
    central_class_stats(cls, &before);
    test_refill(slab);
    cache_slab_flush(slab);
    cache_slab_format(slab, ~0u);
    test_small_budget_refill(slab);
    cache_slab_flush(slab);
    cache_slab_format(slab, ~0u);
    uint64_t invalid = diag_invalid_pointer_count();
    test_refill(slab);
    CHECK_EQ(diag_invalid_pointer_count(), invalid);
    test_verify_push(slab);
    fill_free_stack(slab);
    cache_slab_flush(slab);
    for (unsigned c = 0; c < SC_COUNT; c++)
        CHECK_MSG(cache_alloc_count(slab, c) + cache_free_count(slab, c) == 0, "class %u not flushed", c);
    CHECK_EQ(cache_slab_bytes_held(slab), 0);
    /* Every block taken went back exactly once. */
    central_trim();
    central_class_stats(cls, &after);
    CHECK_EQ(after.blocks_out, before.blocks_out);
    return check_status();
}
