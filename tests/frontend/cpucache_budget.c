/* A CPU's cache grows with allocation demand only within
 * COREALLOC_CPU_CACHE_BYTES (past a batch per class): a thread that
 * allocates and frees thousands of blocks of several sizes leaves about that
 * much cached, not every class at its limit; and a drain (malloc_trim)
 * shrinks the caches back. (The per-thread front end, where rseq is
 * missing, has a smaller budget of its own and passes too.) */
#include <malloc.h>
#include <stdio.h>
#include <stdlib.h>

#include "check.h"
#include "memory.h"
#include "probe.h"

static const size_t sizes[] = {64, 256, 1024, 2048, 4096, 8192, 16384};
#define SIZES (sizeof sizes / sizeof sizes[0])
#define PER_SIZE 512

int main(int argc, char **argv)
{
    if (!corealloc_active()) {
        puts("corealloc is not loaded: nothing to check");
        return 0;
    }
    size_t budget = (size_t)(argc > 1 ? atoi(argv[1]) : 128) << 10;
    for (int round = 0; round < 4; round++)
        allocate_then_free(sizes, SIZES, PER_SIZE);
    /* A batch per class is there from the start: 64 KiB at most each for
     * these sizes. Two CPUs' caches at most, as the thread may move. */
    long long cached = stats_number("cached_bytes");
    long long bound = 2 * (long long)(budget + SIZES * (64 << 10));
    printf("caches hold %lld KiB (budget %zu KiB a CPU, bound %lld KiB)\n", cached >> 10, budget >> 10,
           bound >> 10);
    CHECK(cached <= bound);
    malloc_trim(0);
    CHECK_EQ(stats_number("cached_bytes"), 0);
    return check_status();
}
