/* A CPU's stack of a class grows only while the class misses often: a
 * class whose stack runs empty, then full a millisecond later, keeps the
 * room of a batch and goes on refilling (a refill that rare costs less
 * than the memory more room would keep resident), while one whose stack
 * runs empty and full within microseconds grows until its working set
 * cycles through the cache. Pinned to one CPU, the purger off (it would
 * drain the cache). */
#include <stdio.h>
#include <stdlib.h>
#include <time.h>

#include "check.h"
#include "memory.h"
#include "pinning.h"

static void pause_ms(void)
{
    struct timespec ms = {0, 1000000};
    nanosleep(&ms, NULL);
}

/* Rounds of allocating `count` blocks of `size` and freeing them, with a
 * millisecond's pause after each half when `slowly`. */
static void rounds(size_t size, unsigned count, unsigned n, int slowly)
{
    static void *blocks[1024];
    REQUIRE(count <= sizeof blocks / sizeof blocks[0]);
    for (unsigned r = 0; r < n; r++) {
        for (unsigned i = 0; i < count; i++)
            REQUIRE((blocks[i] = malloc(size)) != NULL);
        if (slowly)
            pause_ms();
        for (unsigned i = 0; i < count; i++)
            free(blocks[i]);
        if (slowly)
            pause_ms();
    }
}

int main(void)
{
    skip_without_cpu_caches();
    REQUIRE(pin_to_this_cpu());
    /* Four batches of each class (at most 64 objects a batch): past its
     * first room whichever way the stack starts. */
    const unsigned count = 256;
    rounds(96, count, 10, 1);
    long long before = class_transfers(96, "refills");
    rounds(96, count, 10, 1);
    long long slow = class_transfers(96, "refills") - before;
    rounds(112, count, 10, 0);
    before = class_transfers(112, "refills");
    rounds(112, count, 10, 0);
    long long fast = class_transfers(112, "refills") - before;
    printf("refills in 10 rounds of %u blocks: missing a millisecond apart %lld, back to back %lld\n", count, slow,
           fast);
    CHECK_MSG(slow >= 10, "a class that missed a millisecond apart grew: %lld refills in 10 rounds", slow);
    CHECK_MSG(fast <= 2, "a class that missed back to back did not grow: %lld refills in 10 rounds", fast);
    return check_status();
}
