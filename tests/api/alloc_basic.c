/* malloc, calloc, free, cfree, reallocarray: results, alignment, zeroing,
 * and the errno contract for impossible sizes. */
#include "check.h"
#include "pattern.h"
#include "probe.h"
#include "rng.h"

#include <errno.h>
#include <malloc.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* Sizes the compiler cannot see, so it neither warns nor folds the calls. */
static volatile size_t huge_sizes[] = {
    SIZE_MAX, SIZE_MAX - 1, SIZE_MAX - 4095, SIZE_MAX / 2, (size_t)PTRDIFF_MAX + 1,
    (size_t)PTRDIFF_MAX,
};

static void test_malloc_zero(void)
{
    enum { N = 64 };
    void *blocks[N];
    for (int i = 0; i < N; i++) {
        blocks[i] = malloc(0);
        REQUIRE(blocks[i] != NULL);
        CHECK_EQ((uintptr_t)blocks[i] % MALLOC_ALIGNMENT_OF(0), 0);
        for (int j = 0; j < i; j++)
            CHECK(blocks[j] != blocks[i]);
        if (corealloc_active())
            CHECK(probe_object_start(blocks[i]) == blocks[i]);
    }
    for (int i = 0; i < N; i++)
        free(blocks[i]);
}

static void test_alignment_and_sizes(void)
{
    for (size_t size = 1; size <= (size_t)8 << 20; size = size < 4096 ? size + 1 : size * 5 / 4) {
        unsigned char *p = malloc(size);
        REQUIRE(p != NULL);
        CHECK_EQ((uintptr_t)p % MALLOC_ALIGNMENT_OF(size), 0);
        CHECK(malloc_usable_size(p) >= size);
        memset(p, 0x5A, size);
        CHECK_EQ(p[0], 0x5A);
        CHECK_EQ(p[size - 1], 0x5A);
        free(p);
    }
}

static void test_free_null(void)
{
    free(NULL);
    /* glibc keeps cfree for old binaries only; corealloc exports it */
    void (*cfree)(void *) = (void (*)(void *))corealloc_symbol("cfree");
    if (!cfree)
        return;
    cfree(NULL);
    void *p = malloc(100);
    REQUIRE(p != NULL);
    cfree(p);
}

/* calloc must zero blocks that earlier owners dirtied, at every size. */
static void test_calloc_zeroes_reused_blocks(void)
{
    static const size_t sizes[] = {1,    8,    16,    24,     100,    512,     1000,
                                   4096, 5000, 32768, 100000, 300000, 2 << 20, 40 << 20};
    enum { BLOCKS = 16 };
    for (size_t s = 0; s < sizeof sizes / sizeof sizes[0]; s++) {
        int blocks = sizes[s] < (1 << 20) ? BLOCKS : 2; /* bounded work */
        for (int round = 0; round < 4; round++) {
            unsigned char *dirty[BLOCKS];
            for (int i = 0; i < blocks; i++) {
                dirty[i] = malloc(sizes[s]);
                REQUIRE(dirty[i] != NULL);
                memset(dirty[i], 0xFF, malloc_usable_size(dirty[i]));
            }
            for (int i = 0; i < blocks; i++)
                free(dirty[i]);
            for (int i = 0; i < blocks; i++) {
                dirty[i] = calloc(1, sizes[s]);
                REQUIRE(dirty[i] != NULL);
                CHECK(block_filled_with(dirty[i], sizes[s], 0));
            }
            for (int i = 0; i < blocks; i++)
                free(dirty[i]);
        }
        unsigned char *p = calloc(sizes[s], 1);
        REQUIRE(p != NULL);
        CHECK(block_filled_with(p, sizes[s], 0));
        free(p);
    }
    void *z = calloc(0, 0);
    CHECK(z != NULL);
    free(z);
}

/* calloc of large blocks carved from freed, dirty spans of other sizes
 * (split and coalesced page runs) must still return zeroes. */
static void test_calloc_after_mixed_large_frees(void)
{
    enum { LIVE = 64 };
    unsigned char *live[LIVE] = {0};
    struct rng rng = rng_seeded(0);
    for (int n = 0; n < 4000; n++) {
        uint64_t x = rng_next(&rng);
        size_t i = x % LIVE;
        if (live[i]) {
            free(live[i]);
            live[i] = NULL;
            continue;
        }
        size_t size = 32768 + (size_t)(x >> 8) % (1 << 20);
        if ((x >> 40) % 3 == 0) {
            live[i] = calloc(1, size);
            REQUIRE(live[i] != NULL);
            bool zero = block_filled_with(live[i], size, 0);
            CHECK_MSG(zero, "calloc(1, %zu) = %p after %d operations is dirty", size,
                      (void *)live[i], n);
            if (!zero)
                break;
        } else {
            live[i] = malloc(size);
            REQUIRE(live[i] != NULL);
            memset(live[i], 0xAB, size);
        }
    }
    for (size_t i = 0; i < LIVE; i++)
        free(live[i]);
}

static void test_calloc_overflow(void)
{
    static volatile size_t pairs[][2] = {
        {SIZE_MAX, 2}, {2, SIZE_MAX}, {(SIZE_MAX >> 1) + 1, 2}, {(size_t)1 << 32, (size_t)1 << 32},
        {SIZE_MAX, SIZE_MAX}, {((size_t)1 << 33) + 1, (size_t)1 << 31},
    };
    for (size_t i = 0; i < sizeof pairs / sizeof pairs[0]; i++) {
        errno = 0;
        void *p = calloc(pairs[i][0], pairs[i][1]);
        CHECK(p == NULL);
        CHECK_EQ(errno, ENOMEM);
    }
}

static void test_huge_sizes(void)
{
    for (size_t i = 0; i < sizeof huge_sizes / sizeof huge_sizes[0]; i++) {
        errno = 0;
        void *p = malloc(huge_sizes[i]);
        CHECK(p == NULL);
        CHECK_EQ(errno, ENOMEM);
        errno = 0;
        p = calloc(1, huge_sizes[i]);
        CHECK(p == NULL);
        CHECK_EQ(errno, ENOMEM);
    }
}

/* Called through a pointer: the compiler must not assume that a failed
 * call's argument was freed (it was not). */
static void *(*volatile reallocarray_fn)(void *, size_t, size_t) = reallocarray;

static void test_reallocarray(void)
{
    unsigned char *p = reallocarray(NULL, 10, 10);
    REQUIRE(p != NULL);
    CHECK(malloc_usable_size(p) >= 100);
    memset(p, 0x11, 100);
    volatile size_t big = SIZE_MAX / 4 + 1;
    errno = 0;
    CHECK(reallocarray_fn(p, big, 8) == NULL);
    CHECK_EQ(errno, ENOMEM);
    CHECK_EQ(p[99], 0x11); /* the block is untouched */
    p = reallocarray(p, 1000, 3);
    REQUIRE(p != NULL);
    CHECK(malloc_usable_size(p) >= 3000);
    CHECK_EQ(p[0], 0x11);
    CHECK_EQ(p[99], 0x11);
    free(p);
    errno = 0;
    CHECK(reallocarray(NULL, big, 8) == NULL);
    CHECK_EQ(errno, ENOMEM);
}

/* Many live blocks at once never overlap. */
static void test_no_overlap(void)
{
    enum { N = 4000 };
    static unsigned char *blocks[N];
    for (int i = 0; i < N; i++) {
        size_t size = 1 + (size_t)(i * 37) % 3000;
        blocks[i] = malloc(size);
        REQUIRE(blocks[i] != NULL);
        memset(blocks[i], i & 0xFF, size);
    }
    for (int i = 0; i < N; i++) {
        size_t size = 1 + (size_t)(i * 37) % 3000;
        size_t k = 0;
        while (k < size && blocks[i][k] == (i & 0xFF))
            k++;
        CHECK_MSG(k == size, "block %d overwritten by another block at offset %zu", i, k);
        free(blocks[i]);
    }
}

int main(void)
{
    test_calloc_after_mixed_large_frees(); /* first: it replays a sequence on a fresh heap */
    test_malloc_zero();
    test_alignment_and_sizes();
    test_free_null();
    test_calloc_zeroes_reused_blocks();
    test_calloc_overflow();
    test_huge_sizes();
    test_reallocarray();
    test_no_overlap();
    return check_status();
}
