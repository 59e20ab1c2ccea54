/* realloc: NULL and zero-size cases, contents preserved on every shrink and
 * grow across small classes, large page runs and huge mappings, and the
 * original block left intact when a huge request fails. */
#include "check.h"
#include "pattern.h"
#include "probe.h"

#include <errno.h>
#include <malloc.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

static void test_null_and_zero(void)
{
    unsigned char *p = realloc(NULL, 100);
    REQUIRE(p != NULL);
    CHECK(malloc_usable_size(p) >= 100);
    if (corealloc_active())
        CHECK(probe_object_start(p) == p);
    memset(p, 1, 100);
    CHECK(realloc(p, 0) == NULL); /* frees, like glibc */
    p = realloc(NULL, 0);
    CHECK(p != NULL);
    free(p);
}

/* Walk one block through a sequence of sizes; after every step the common
 * prefix must hold the previous contents. */
static void walk(const size_t *sizes, size_t n, uint64_t seed)
{
    unsigned char *p = malloc(sizes[0]);
    REQUIRE(p != NULL);
    pattern_fill(p, sizes[0], seed);
    for (size_t i = 1; i < n; i++) {
        size_t keep = sizes[i] < sizes[i - 1] ? sizes[i] : sizes[i - 1];
        unsigned char *q = realloc(p, sizes[i]);
        REQUIRE(q != NULL);
        CHECK_EQ((uintptr_t)q % MALLOC_ALIGNMENT_OF(sizes[i]), 0);
        CHECK(malloc_usable_size(q) >= sizes[i]);
        CHECK_EQ(pattern_mismatch(q, keep, seed + i - 1), PATTERN_OK);
        if (corealloc_active()) {
            CHECK(probe_object_start(q) == q);
            CHECK(probe_object_start(q + sizes[i] - 1) == q);
        }
        pattern_fill(q, sizes[i], seed + i);
        p = q;
    }
    free(p);
}

static void test_contents_preserved(void)
{
    /* Every step size within and across the small classes. */
    size_t small[400];
    size_t n = 0;
    for (size_t s = 1; s <= 32768 && n < 200; s = s * 9 / 8 + 1)
        small[n++] = s;
    for (size_t i = n; i-- > 0 && n < 400;)
        small[n++] = small[i];
    walk(small, n, 1);

    static const size_t mixed[] = {
        10,       32768,    32769,    40000,     1 << 20,  (1 << 20) + 1, 3 << 20,  48 << 20,
        5 << 20,  200000,   4097,     1,         64 << 20, 16,            8 << 20,  100,
        20 << 20, 70 << 20, 33 << 20, 100 << 20, 9000,     150 << 20,     1 << 20,
    };
    walk(mixed, sizeof mixed / sizeof mixed[0], 1000);
}

/* A huge block grown step by step: contents move with it (mremap where the
 * library can; correctness is what is checked here). */
static void test_huge_growth(void)
{
    size_t size = 100 << 20;
    unsigned char *p = malloc(size);
    REQUIRE(p != NULL);
    pattern_fill(p, size, 77);
    for (int step = 0; step < 4; step++) {
        size_t next = size + (16 << 20) + 4096 * (size_t)step;
        unsigned char *q = realloc(p, next);
        REQUIRE(q != NULL);
        CHECK_EQ(pattern_mismatch(q, size, 77 + (uint64_t)step), PATTERN_OK);
        pattern_fill(q, next, 78 + (uint64_t)step);
        p = q;
        size = next;
    }
    unsigned char *q = realloc(p, 120 << 20);
    REQUIRE(q != NULL);
    CHECK_EQ(pattern_mismatch(q, 120 << 20, 81), PATTERN_OK);
    free(q);
}

/* Called through a pointer: the compiler must not assume that a failed
 * call's argument was freed (it was not). */
static void *(*volatile realloc_fn)(void *, size_t) = realloc;

static void test_failure_keeps_block(void)
{
    static volatile size_t huge[] = {SIZE_MAX, SIZE_MAX - 4095, SIZE_MAX / 2,
                                     (size_t)PTRDIFF_MAX + 1};
    static const size_t sizes[] = {24, 5000, 200000, 130 << 20};
    for (size_t s = 0; s < sizeof sizes / sizeof sizes[0]; s++) {
        unsigned char *p = malloc(sizes[s]);
        REQUIRE(p != NULL);
        pattern_fill(p, sizes[s], 5);
        for (size_t h = 0; h < sizeof huge / sizeof huge[0]; h++) {
            errno = 0;
            CHECK(realloc_fn(p, huge[h]) == NULL);
            CHECK_EQ(errno, ENOMEM);
        }
        CHECK_EQ(pattern_mismatch(p, sizes[s], 5), PATTERN_OK);
        if (corealloc_active())
            CHECK(probe_object_start(p) == p);
        free(p);
    }
}

int main(void)
{
    test_null_and_zero();
    test_contents_preserved();
    test_huge_growth();
    test_failure_keeps_block();
    return check_status();
}
