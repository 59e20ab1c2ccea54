/* COREALLOC_TIGHT=1 (seed 001's guarantee): after blocks are freed in any
 * order, new ones come from the lowest free addresses, so the heap fills
 * from the bottom and no needless superblock is taken. Run without the
 * option too, where the test is expected to fail. With "trim", malloc_trim
 * runs between the frees and the new blocks: the caches' blocks go back,
 * every superblock is empty, and the lowest empty one must be reused first
 * (the purge thread's drain of an idle cache does the same). */
#include <malloc.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "check.h"
#include "probe.h"
#include "rng.h"

#define COUNT 20000
#define AGAIN 5000
/* Blocks a cache may hold in tight mode (one batch) and hand out first. */
#define CACHED 64

static int by_address(const void *a, const void *b)
{
    uintptr_t x = *(const uintptr_t *)a, y = *(const uintptr_t *)b;
    return x < y ? -1 : x > y;
}

int main(int argc, char **argv)
{
    if (!corealloc_active()) {
        puts("corealloc is not loaded: nothing to check");
        return 0;
    }
    static uintptr_t blocks[COUNT];
    for (int i = 0; i < COUNT; i++)
        REQUIRE((blocks[i] = (uintptr_t)malloc(64)) != 0);
    struct rng rng = rng_seeded(7);
    for (int i = COUNT - 1; i > 0; i--) { /* free in random order */
        int j = (int)rng_below(&rng, (uint64_t)i + 1);
        uintptr_t t = blocks[i];
        blocks[i] = blocks[j];
        blocks[j] = t;
    }
    for (int i = 0; i < COUNT; i++)
        free((void *)blocks[i]);
    if (argc > 1 && !strcmp(argv[1], "trim"))
        malloc_trim(0);
    qsort(blocks, COUNT, sizeof blocks[0], by_address);
    uintptr_t bound = blocks[AGAIN + CACHED - 1]; /* the lowest AGAIN, and some slack */
    unsigned above = 0;
    for (int i = 0; i < AGAIN; i++) {
        uintptr_t p = (uintptr_t)malloc(64);
        above += p > bound;
    }
    printf("%u of %d new blocks above the %d lowest free addresses\n", above, AGAIN, AGAIN + CACHED);
    CHECK(above <= CACHED);
    return check_status();
}
