/* Metadata memory (src/core/meta.c): zeroed, 64-byte aligned blocks that
 * never overlap, bump-allocated from 1 MiB mappings (larger requests get
 * a mapping of their own size); a freed block is reused, zeroed again, by
 * the next request of the same rounded size and by no other; many threads
 * at once get disjoint blocks. */
#include <stdbool.h>
#include <stdint.h>
#include <string.h>

#include "check.h"
#include "pattern.h"
#include "threads.h"
#include "core/meta.h"

#define MIB ((size_t)1 << 20)
#define THREADS 4
#define ROUNDS 2000

static void *checked_alloc(size_t size)
{
    unsigned char *p = meta_alloc(size);
    REQUIRE_MSG(p != NULL, "meta_alloc(%zu)", size);
    CHECK_MSG((uintptr_t)p % 64 == 0, "meta_alloc(%zu) = %p is not 64-byte aligned", size, (void *)p);
    CHECK_MSG(block_filled_with(p, size, 0), "meta_alloc(%zu) = %p is not zeroed", size, (void *)p);
    memset(p, 0xee, size); /* dirty, so reuse must zero it again */
    return p;
}

static void test_bump_and_reuse(void)
{
    CHECK_EQ(meta_bytes_mapped(), 0);
    unsigned char *a = checked_alloc(100), *b = checked_alloc(100), *c = checked_alloc(1);
    CHECK_EQ(meta_bytes_mapped(), MIB);
    CHECK_MSG(b >= a + 128 && c >= b + 128, "blocks overlap: %p %p %p", (void *)a, (void *)b, (void *)c);
    meta_free(b, 100);
    CHECK(checked_alloc(64) != b);  /* another size class of reuse */
    CHECK(checked_alloc(128) == b); /* 100 and 128 round alike */
    /* Sizes past the recycling bins are reused only at their exact size. */
    unsigned char *big = checked_alloc(10000);
    meta_free(big, 10000);
    CHECK(checked_alloc(20000) != big);
    CHECK(checked_alloc(10000) == big);
    /* A request past the chunk size gets a mapping of its own. */
    size_t before = meta_bytes_mapped();
    checked_alloc(3 * MIB + 1);
    CHECK_MSG(meta_bytes_mapped() >= before + 3 * MIB + 1, "mapped %zu -> %zu for 3 MiB", before,
              meta_bytes_mapped());
}

/* Each slot holds a block of its own size, tagged with the thread's id. */
static void *churn(void *arg)
{
    uintptr_t id = thread_number(arg);
    uintptr_t *held[8] = {0};
    for (int r = 0; r < ROUNDS; r++) {
        size_t slot = (size_t)r % 8, size = 64 * (1 + slot), words = size / sizeof(uintptr_t);
        if (held[slot]) {
            for (size_t i = 0; i < words; i++)
                CHECK_MSG(held[slot][i] == id, "thread %lu: block %p overwritten", (unsigned long)id,
                          (void *)held[slot]);
            meta_free(held[slot], size);
        }
        held[slot] = meta_alloc(size);
        REQUIRE(held[slot] != NULL);
        CHECK_MSG(block_filled_with(held[slot], size, 0), "block %p not zeroed", (void *)held[slot]);
        for (size_t i = 0; i < words; i++)
            held[slot][i] = id;
    }
    return NULL;
}

int main(void)
{
    meta_init();
    test_bump_and_reuse();
    run_threads(THREADS, churn);
    return check_status();
}
