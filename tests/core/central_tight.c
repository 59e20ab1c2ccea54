/* COREALLOC_TIGHT=1 (seed 001's guarantee): after blocks are freed in any
 * order, new ones come from the lowest free addresses, so the heap fills
 * from the bottom and no needless superblock is taken. Run without the
 * option too, where the test is expected to fail. With "trim", malloc_trim
 * runs between the frees and the new blocks: the caches' blocks go back,
 * every superblock is empty, and the lowest empty one must be reused first
 * (the purge thread's drain of an idle cache does the same). With "held",
 * under per-thread caches, the highest block stays allocated and a second
 * thread frees the others and exits (its cache goes back with it): the
 * superblocks below are empty, the highest one partly free, and the new
 * blocks must still come from the lowest free addresses, below it (as
 * when a cache of another CPU holds the only blocks out of a higher
 * superblock). */
#include <malloc.h>
#include <pthread.h>
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

static uintptr_t blocks[COUNT];

/* Frees the first count blocks in random order. */
static void *free_shuffled(void *count)
{
    int n = (int)(intptr_t)count;
    struct rng rng = rng_seeded(7);
    for (int i = n - 1; i > 0; i--) {
        int j = (int)rng_below(&rng, (uint64_t)i + 1);
        uintptr_t t = blocks[i];
        blocks[i] = blocks[j];
        blocks[j] = t;
    }
    for (int i = 0; i < n; i++)
        free((void *)blocks[i]);
    return NULL;
}

int main(int argc, char **argv)
{
    if (!corealloc_active()) {
        puts("corealloc is not loaded: nothing to check");
        return 0;
    }
    const char *mode = argc > 1 ? argv[1] : "";
    for (int i = 0; i < COUNT; i++)
        REQUIRE((blocks[i] = (uintptr_t)malloc(64)) != 0);
    int freed = COUNT;
    if (!strcmp(mode, "held")) {
        qsort(blocks, COUNT, sizeof blocks[0], by_address);
        freed = COUNT - 1; /* the highest stays */
        pthread_t other;
        REQUIRE(pthread_create(&other, NULL, free_shuffled, (void *)(intptr_t)freed) == 0);
        REQUIRE(pthread_join(other, NULL) == 0);
    } else
        free_shuffled((void *)(intptr_t)freed);
    if (!strcmp(mode, "trim"))
        malloc_trim(0);
    qsort(blocks, (size_t)freed, sizeof blocks[0], by_address);
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
