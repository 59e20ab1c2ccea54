/* Fresh blocks go out in ascending address order: a run of mallocs of one
 * class, served from new superblock memory, walks up through it block by
 * block, across the batches a cache refills with and the pages they span.
 * That is the order the hardware prefetcher follows (a program that fills
 * what it allocates in turn wrote 16 MiB of 64-byte blocks twice as fast
 * that way as with each batch handed out top down). The test pins itself
 * to one CPU, so one cache serves the whole run. */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>

#include "check.h"
#include "pinning.h"
#include "probe.h"

#define RUN 4096

static void *blocks[RUN];

/* Share of consecutive mallocs of size that land one block above the last. */
static double ascending_share(size_t size, unsigned count)
{
    for (unsigned i = 0; i < count; i++)
        REQUIRE((blocks[i] = malloc(size)) != NULL);
    unsigned up = 0;
    for (unsigned i = 1; i < count; i++)
        up += (uintptr_t)blocks[i] - (uintptr_t)blocks[i - 1] == size;
    for (unsigned i = 0; i < count; i++)
        free(blocks[i]);
    return (double)up / (count - 1);
}

int main(void)
{
    if (!corealloc_active()) {
        puts("corealloc is not loaded: nothing to check");
        return 0;
    }
    if (!pin_to_this_cpu())
        perror("sched_setaffinity (the run may move between caches)");
    /* Classes nothing in the test used before: every block comes fresh
     * (48 B: 64 a batch; 1536 B: batches of 42, blocks across pages). */
    static const struct {
        size_t size;
        unsigned count;
    } runs[] = {{48, RUN}, {1536, 1024}};
    for (unsigned r = 0; r < sizeof runs / sizeof runs[0]; r++) {
        double share = ascending_share(runs[r].size, runs[r].count);
        printf("%zu-byte blocks: %.1f%% of %u mallocs one block above the last\n", runs[r].size, 100 * share,
               runs[r].count);
        CHECK_MSG(share >= 0.9, "fresh %zu-byte blocks went out in ascending order %.1f%% of the time",
                  runs[r].size, 100 * share);
    }
    return check_status();
}
