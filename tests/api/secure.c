/* Secure mode (COREALLOC_SECURE=1), as a program meets it: a write of one
 * byte past the requested size of a small block (any size, the canary or
 * the trailer) is reported when the block is freed; a write into a freed
 * block is reported when the block is handed out again; double, interior
 * and never-allocated frees are reported and not obeyed; usable size is the
 * requested size; blocks come out in random order; a superblock's last page
 * and the page after every large block are guards that fault; and a busy
 * heap run clean reports nothing. Large blocks (over 32 KiB) have the same
 * canary and trailer as small ones.
 * Run with LD_PRELOAD of libcorealloc.so and COREALLOC_SECURE=1; the
 * reports are read back from stderr. */
#include <malloc.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "capture.h"
#include "check.h"
#include "memory.h"
#include "pattern.h"
#include "probe.h"
#include "rng.h"

#define SUPERBLOCK ((uintptr_t)256 << 10) /* src/core/sizeclass.h, SB_SIZE */

static void test_overflow_by_one(void)
{
    static const size_t sizes[] = {1,      7,      8,          9,         24,       100,     1000, 4000,
                                   30000,  32760,  32768,      40000,     81920,    1 << 20, (20 << 20) + 5};
    for (size_t i = 0; i < sizeof sizes / sizeof sizes[0]; i++) {
        unsigned char *p = malloc(sizes[i]);
        REQUIRE(p != NULL);
        CHECK_EQ(malloc_usable_size(p), sizes[i]);
        memset(p, 0x11, sizes[i]); /* the whole block the program asked for: fine */
        check_overflow_by_one_reported(p, sizes[i]);
    }
}

static void test_write_after_free(void)
{
    unsigned char *p = malloc(48);
    REQUIRE(p != NULL);
    free(p);
    ((volatile unsigned char *)p)[20] = 0x5a;
    capture_stderr_begin();
    void *blocks[512];
    bool again = false;
    for (int i = 0; i < 512; i++) {
        blocks[i] = malloc(48);
        again |= blocks[i] == (void *)p;
    }
    const char *log = capture_stderr_end();
    CHECK_MSG(again, "the freed block never came out again");
    CHECK_MSG(capture_reported(log, p, "written after it was freed"), "a write after free went unseen: %s", log);
    for (int i = 0; i < 512; i++)
        free(blocks[i]);
}

static void test_bad_frees(void)
{
    char *p = malloc(64), *q = malloc(64);
    REQUIRE(p && q);
    free(p);
    capture_stderr_begin();
    free(p);
    free(q + 16);
    const char *log = capture_stderr_end();
    CHECK_MSG(capture_reported(log, p, "double free"), "double free unreported: %s", log);
    CHECK_MSG(capture_reported(log, q + 16, "not the start of a block"), "interior free unreported: %s", log);
    /* Nothing was obeyed: p comes out once, q is intact. */
    memset(q, 0x33, 64);
    char *a = malloc(64), *b = malloc(64);
    CHECK(a != b);
    CHECK(block_filled_with(q, 64, 0x33));
    free(a);
    free(b);
    free(q);
}

/* Of n blocks of one size taken in a row, about half are above the one
 * before (lowest-address-first order would put nearly all of them above). */
static void test_random_order(void)
{
    enum { N = 1000 };
    static void *blocks[N];
    unsigned rising = 0;
    for (int i = 0; i < N; i++) {
        blocks[i] = malloc(80);
        REQUIRE(blocks[i] != NULL);
        rising += i > 0 && (uintptr_t)blocks[i] > (uintptr_t)blocks[i - 1];
    }
    CHECK_MSG(rising > N / 4 && rising < 3 * N / 4, "%u of %d blocks above the one before", rising, N);
    for (int i = 0; i < N; i++)
        free(blocks[i]);
}

/* The last page of a block's superblock faults, and so does the page
 * after a large block (at every alignment); a freed large block's guard is
 * lifted: its pages serve the next blocks whole. */
static void test_guard_page(void)
{
    unsigned char *p = malloc(20000);
    REQUIRE(p != NULL);
    volatile unsigned char *guard = (unsigned char *)(((uintptr_t)p & ~(SUPERBLOCK - 1)) + SUPERBLOCK - 4096);
    CHECK_MSG((uintptr_t)guard >= (uintptr_t)p + 20000, "a block reaches into the guard page");
    CHECK_MSG(memory_write_faults(guard + 100), "a write to a superblock's guard page did not fault");
    free(p);

    static const size_t sizes[] = {40000, 100000, 4096 * 30, 3 << 20};
    static const size_t alignments[] = {16, 4096, 65536};
    for (size_t a = 0; a < sizeof alignments / sizeof alignments[0]; a++)
        for (size_t i = 0; i < sizeof sizes / sizeof sizes[0]; i++) {
            unsigned char *q = aligned_alloc(alignments[a], sizes[i]);
            REQUIRE(q != NULL);
            CHECK_EQ((uintptr_t)q % alignments[a], 0);
            memset(q, 0x22, sizes[i]);
            size_t room = (sizes[i] + 8 + 4095) & ~(size_t)4095; /* the block and its trailer, in pages */
            CHECK_MSG(memory_write_faults(q + room), "size %zu: the page after a large block is not a guard", sizes[i]);
            free(q);
        }
    /* The heap reuses what those blocks and their guards were. */
    unsigned char *big = malloc(8 << 20);
    REQUIRE(big != NULL);
    memset(big, 0x33, 8 << 20);
    CHECK_EQ(malloc_usable_size(big), (size_t)8 << 20);
    free(big);
}

/* calloc of a large block reads zero, also where a freed block's bytes
 * were; realloc of one keeps its bytes and seals the new size. */
static void test_large_contents(void)
{
    for (int round = 0; round < 3; round++) {
        unsigned char *p = malloc(300000);
        REQUIRE(p != NULL);
        memset(p, 0x5a, 300000);
        free(p);
        unsigned char *z = calloc(3, 100000);
        REQUIRE(z != NULL);
        size_t nonzero = 0;
        for (size_t i = 0; i < 300000; i++)
            nonzero += z[i] != 0;
        CHECK_EQ(nonzero, 0);
        free(z);
    }
    unsigned char *p = malloc(50000);
    REQUIRE(p != NULL);
    pattern_fill(p, 50000, 9);
    static const size_t resized[] = {200000, 60000, 33000, 1000, 90000};
    size_t kept = 50000;
    for (size_t i = 0; i < sizeof resized / sizeof resized[0]; i++) {
        p = realloc(p, resized[i]);
        REQUIRE(p != NULL);
        CHECK_EQ(malloc_usable_size(p), resized[i]);
        kept = kept < resized[i] ? kept : resized[i];
        CHECK_EQ(pattern_mismatch(p, kept, 9), PATTERN_OK);
    }
    capture_stderr_begin();
    free(p);
    const char *log = capture_stderr_end();
    CHECK_MSG(log[0] == 0, "a resized block reported: %s", log);
}

/* A busy heap (every entry point that resizes, many sizes) reports
 * nothing, and keeps every byte. */
static void test_clean_run(void)
{
    enum { LIVE = 400 };
    static unsigned char *blocks[LIVE];
    static size_t sizes[LIVE];
    struct rng rng = rng_seeded(7);
    capture_stderr_begin();
    for (uint64_t n = 0; n < 40000; n++) {
        size_t i = (size_t)rng_below(&rng, LIVE);
        if (blocks[i] && pattern_mismatch(blocks[i], sizes[i], i) != PATTERN_OK) {
            capture_stderr_end();
            CHECK_MSG(0, "block %zu lost its contents", i);
            return;
        }
        size_t size = 1 + (size_t)rng_below(&rng, n % 8 == 0 ? 40000 : 600);
        switch (rng_below(&rng, 3)) {
        case 0:
            free(blocks[i]);
            blocks[i] = malloc(size);
            break;
        case 1:
            blocks[i] = realloc(blocks[i], size);
            break;
        default:
            free(blocks[i]);
            blocks[i] = calloc(1, size);
            break;
        }
        REQUIRE(blocks[i] != NULL);
        sizes[i] = size;
        pattern_fill(blocks[i], size, i);
    }
    for (size_t i = 0; i < LIVE; i++)
        free(blocks[i]);
    const char *log = capture_stderr_end();
    CHECK_MSG(log[0] == 0, "a clean run reported: %.300s", log);
}

int main(void)
{
    if (!corealloc_active())
        return 77;
    const char *secure = getenv("COREALLOC_SECURE");
    REQUIRE_MSG(secure && strcmp(secure, "1") == 0, "run with COREALLOC_SECURE=1");
    test_overflow_by_one();
    test_write_after_free();
    test_bad_frees();
    test_random_order();
    test_guard_page();
    test_large_contents();
    test_clean_run();
    return check_status();
}
