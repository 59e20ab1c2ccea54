/* A class streaming through a CPU's cache (a working set four times the
 * cache's budget, allocated whole and freed whole, round after round)
 * moves several batches in each call to the central layer once its stack
 * has grown: fewer than half as many refills and spills as batches pass
 * through. Pinned to one CPU, the purger off (it would drain the cache). */
#include <stdio.h>
#include <stdlib.h>

#include "check.h"
#include "memory.h"
#include "pinning.h"

#define SIZE 64
#define BATCH 64 /* objects a batch of 64-byte blocks holds */
#define ROUNDS 5

int main(int argc, char **argv)
{
    skip_without_cpu_caches();
    REQUIRE(pin_to_this_cpu());
    size_t budget = (size_t)(argc > 1 ? atoi(argv[1]) : 256) << 10;
    unsigned count = (unsigned)(4 * budget / SIZE);
    void **blocks = malloc(count * sizeof *blocks);
    REQUIRE(blocks != NULL);
    long long refills = 0, spills = 0;
    for (unsigned r = 0; r < 4 * ROUNDS; r++) {
        if (r == 3 * ROUNDS) { /* grown by now: the last rounds are counted */
            refills = class_transfers(SIZE, "refills");
            spills = class_transfers(SIZE, "spills");
        }
        for (unsigned i = 0; i < count; i++)
            REQUIRE((blocks[i] = malloc(SIZE)) != NULL);
        for (unsigned i = 0; i < count; i++)
            free(blocks[i]);
    }
    refills = class_transfers(SIZE, "refills") - refills;
    spills = class_transfers(SIZE, "spills") - spills;
    long long batches = (long long)ROUNDS * count / BATCH;
    printf("%u blocks of %d bytes a round, %d rounds: %lld batches through %lld refills and %lld spills\n", count,
           SIZE, ROUNDS, batches, refills, spills);
    CHECK_MSG(refills > 0 && spills > 0, "the working set never left the cache");
    CHECK_MSG(2 * refills <= batches, "a refill per batch or so: %lld for %lld batches", refills, batches);
    CHECK_MSG(2 * spills <= batches, "a spill per batch or so: %lld for %lld batches", spills, batches);
    free(blocks);
    return check_status();
}
