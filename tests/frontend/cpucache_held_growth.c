/* A CPU's cache grows past its first 256 KiB of growth for a class the
 * program holds that many blocks of: rounds of allocating 40,000 64-byte
 * blocks (2.5 MiB) and freeing them all cycle through the cache once it
 * has grown, with a refill or two a round (the last blocks of a round: a
 * class that misses that rarely does not grow), where a cache held to 1
 * MiB of growth refilled about 90 times a round. Pinned to one CPU, the
 * purger off (it would drain the cache between rounds). */
#include <stdio.h>
#include <stdlib.h>

#include "check.h"
#include "memory.h"
#include "pinning.h"

#define COUNT 40000u
#define SIZE 64u

static void *blocks[COUNT];

static void rounds(unsigned n)
{
    for (unsigned r = 0; r < n; r++) {
        for (unsigned i = 0; i < COUNT; i++)
            REQUIRE((blocks[i] = malloc(SIZE)) != NULL);
        for (unsigned i = 0; i < COUNT; i++)
            free(blocks[i]);
    }
}

int main(void)
{
    skip_without_cpu_caches();
    REQUIRE(pin_to_this_cpu());
    rounds(20);
    long long settled = class_transfers(SIZE, "refills");
    rounds(5);
    long long late = class_transfers(SIZE, "refills") - settled;
    long long cached = stats_number("cached_bytes");
    printf("refills in the last 5 rounds: %lld; cached after them: %lld KiB\n", late, cached >> 10);
    CHECK_MSG(late <= 10, "the working set of %u blocks still refills: %lld", COUNT, late);
    CHECK(cached >= (long long)COUNT * SIZE * 9 / 10);
    return check_status();
}
