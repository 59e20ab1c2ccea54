/* A CPU's cache budget moves to where allocation demand is: once one class
 * has grown to the whole of COREALLOC_CPU_CACHE_BYTES and gone idle, a
 * second class that keeps missing takes the capacity over, so its working
 * set cycles through the cache without refills from the central layer.
 * Pinned to one CPU, with the budget given on the command line (KiB) and
 * the purger off (it would drain the idle cache and blur the picture). */
#include <stdio.h>
#include <stdlib.h>

#include "check.h"
#include "memory.h"
#include "pinning.h"

/* Rounds of allocating `count` blocks of `size`, then freeing them. */
static void cycle(size_t size, unsigned count, unsigned rounds)
{
    static void *blocks[8192];
    REQUIRE(count <= sizeof blocks / sizeof blocks[0]);
    for (unsigned r = 0; r < rounds; r++) {
        for (unsigned i = 0; i < count; i++)
            REQUIRE((blocks[i] = malloc(size)) != NULL);
        for (unsigned i = 0; i < count; i++)
            free(blocks[i]);
    }
}

int main(int argc, char **argv)
{
    skip_without_cpu_caches();
    REQUIRE(pin_to_this_cpu());
    size_t budget = (size_t)(argc > 1 ? atoi(argv[1]) : 256) << 10;
    /* Three quarters of the budget in 64-byte blocks, then in 128-byte
     * ones: either fits alone, not both. */
    unsigned small = (unsigned)(budget * 3 / 4 / 64), large = (unsigned)(budget * 3 / 4 / 128);
    cycle(64, small, 20);
    long long settled = class_transfers(64, "refills");
    cycle(64, small, 5);
    long long again = class_transfers(64, "refills") - settled;
    CHECK_MSG(again <= 5, "64-byte blocks still refill: %lld", again);
    cycle(128, large, 40);
    long long before = class_transfers(128, "refills");
    cycle(128, large, 5);
    long long late = class_transfers(128, "refills") - before;
    printf("budget %zu KiB: 128-byte refills in the last 5 rounds of %u blocks: %lld\n", budget >> 10, large,
           late);
    CHECK_MSG(late <= 5, "the second class never got the idle class's capacity: %lld refills", late);
    return check_status();
}
