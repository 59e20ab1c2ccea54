/* The slab shared by every cache (src/frontend/cache.c): each class's stack
 * laid out after the headers, starting at a batch of capacity and never
 * overlapping its neighbours; push and pop in LIFO order within the
 * capacity; growth by a batch up to the limit; refills from the central
 * layer that grow the stack with allocation demand within the budget and
 * take less under a small one; spills that keep all but a batch, or shrink
 * the stack to an eighth of the budget when the slab holds more; flushes
 * that return everything. No block is lost or returned twice. */
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
    size_t bytes = cache_slab_bytes();
    CHECK_EQ(bytes, (size_t)1 << cache_slab_shift());
    unsigned next = SC_COUNT; /* the headers come first */
    for (unsigned c = 0; c < SC_COUNT; c++) {
        struct cache_hdr *h = cache_hdr(slab, c);
        CHECK_MSG(h->begin == next && h->top == h->begin && h->end == h->begin + sc_info[c].batch &&
                      h->limit == h->begin + sc_info[c].limit,
                  "class %u: {top %u begin %u end %u limit %u}, stack expected at %u", c, h->top,
                  h->begin, h->end, h->limit, next);
        next = h->limit;
    }
    CHECK_MSG(next * sizeof(void *) <= bytes && (bytes == 4096 || bytes / 2 < next * sizeof(void *)),
              "%u slots in a slab of %zu bytes", next, bytes);
}

/* Fake pointers: the slab is formatted again afterwards, never flushed. */
static void test_push_pop(void **slab)
{
    struct cache_hdr *h = cache_hdr(slab, cls);
    unsigned capacity = h->end - h->begin;
    CHECK(cache_pop(slab, cls) == NULL);
    for (unsigned i = 1; i <= capacity; i++)
        CHECK(cache_push(slab, cls, (void *)(uintptr_t)(16 * i)));
    CHECK_MSG(!cache_push(slab, cls, (void *)16), "pushed past the capacity");
    CHECK_EQ(cache_count(slab, cls), capacity);
    CHECK_EQ(cache_slab_bytes_held(slab), (size_t)capacity * size);
    CHECK_EQ(cache_count(slab, cls - 1) + cache_count(slab, cls + 1), 0);
    for (unsigned i = capacity; i >= 1; i--)
        CHECK_EQ(cache_pop(slab, cls), (void *)(uintptr_t)(16 * i));
    CHECK(cache_pop(slab, cls) == NULL);

    CHECK_EQ(cache_growth(h, cls), batch);
    h->end = (uint16_t)(h->limit - 1);
    CHECK_EQ(cache_growth(h, cls), 1);
    h->end = h->limit;
    CHECK_EQ(cache_growth(h, cls), 0);
    cache_slab_format(slab);
}

static void test_refill(void **slab)
{
    struct cache_hdr *h = cache_hdr(slab, cls);
    void *p = cache_refill_pop(slab, cls, BIG_BUDGET);
    REQUIRE(p != NULL);
    struct superblock *sb = sb_of((uintptr_t)p);
    CHECK(sb && sb->cls == cls);
    CHECK_EQ(cache_count(slab, cls), batch - 1);
    CHECK_MSG(h->end == h->begin + 2 * batch, "allocation demand did not grow the stack: end %u",
              h->end - h->begin);
    /* With objects left, a refill is a pop. */
    void *top = slab[h->top - 1];
    CHECK(cache_refill_pop(slab, cls, BIG_BUDGET) == top);
    CHECK_EQ(cache_count(slab, cls), batch - 2);
    CHECK_EQ(h->end, h->begin + 2 * batch);
    cache_push(slab, cls, top);
    cache_push(slab, cls, p);
}

static void test_small_budget_refill(void **slab)
{
    struct cache_hdr *h = cache_hdr(slab, cls);
    void *p = cache_refill_pop(slab, cls, (size_t)8 * 2 * size); /* two objects an eighth */
    REQUIRE(p != NULL);
    CHECK_EQ(cache_count(slab, cls), 1);
    CHECK_EQ(h->end, h->begin + batch); /* no room to grow */
    cache_push(slab, cls, p);
}

/* Fills the stack to its capacity with blocks from the central layer. */
static void fill(void **slab)
{
    struct cache_hdr *h = cache_hdr(slab, cls);
    while (h->top < h->end) {
        void *p;
        REQUIRE(central_alloc(cls, &p, 1) == 1);
        cache_push(slab, cls, p);
    }
}

static void *one_block(void)
{
    void *p;
    REQUIRE(central_alloc(cls, &p, 1) == 1);
    return p;
}

static void test_spill(void **slab)
{
    struct cache_hdr *h = cache_hdr(slab, cls);
    unsigned capacity = h->end - h->begin;
    REQUIRE(capacity == 2 * batch);
    fill(slab);
    cache_spill_push(slab, cls, one_block(), BIG_BUDGET);
    CHECK_MSG(cache_count(slab, cls) == capacity - batch + 1, "a spill kept %u of %u",
              cache_count(slab, cls), capacity);
    CHECK_EQ(h->end, h->begin + capacity);

    /* Holding more than the budget: the stack shrinks to an eighth of it. */
    fill(slab);
    size_t budget = (size_t)8 * 3 * size;
    REQUIRE(cache_slab_bytes_held(slab) > budget);
    cache_spill_push(slab, cls, one_block(), budget);
    CHECK_EQ(h->end, h->begin + 3);
    CHECK_EQ(cache_count(slab, cls), 3);

    /* Over a budget whose eighth is less than an object: nothing stays. */
    cache_spill_push(slab, cls, one_block(), size);
    CHECK_EQ(h->end, h->begin);
    CHECK_EQ(cache_count(slab, cls), 0);
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
    cache_slab_format(slab);
    test_layout(slab);
    test_push_pop(slab);

    struct central_class_stats before, after;
    central_class_stats(cls, &before);
    uint64_t invalid = diag_invalid_pointer_count();
    test_refill(slab);
    cache_slab_flush(slab);
    cache_slab_format(slab);
    test_small_budget_refill(slab);
    cache_slab_flush(slab);
    cache_slab_format(slab);
    test_refill(slab);
    test_spill(slab);
    fill(slab);
    cache_slab_flush(slab);
    for (unsigned c = 0; c < SC_COUNT; c++)
        CHECK_MSG(cache_count(slab, c) == 0, "class %u not flushed", c);
    CHECK_EQ(cache_slab_bytes_held(slab), 0);
    /* Every block taken went back exactly once. */
    central_trim();
    central_class_stats(cls, &after);
    CHECK_EQ(after.blocks_out, before.blocks_out);
    CHECK_EQ(diag_invalid_pointer_count(), invalid);
    return check_status();
}
