/* Every class's first tile is mapped at start-up, the tiles of all of them
 * side by side in one mmap: a class's first use maps nothing. The calls
 * corealloc makes are counted (os_fault.h) around the first malloc of
 * classes nothing used before; each of those took an mmap of its own
 * before (a few microseconds, and a mapping to tear down, for every class
 * a short process touches). And a class that outgrows the bitmaps kept in
 * the first slot of its first tile (the 8-byte class: 64 superblocks,
 * 16 MiB, nine rows) goes on with bitmaps in its bitmap area: blocks freed
 * into partly used superblocks, rows apart, and taken again, none handed
 * out twice, none reported. Zones only (skipped without). */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>

#include "check.h"
#include "corealloc.h"
#include "liveset.h"
#include "memory.h"
#include "os_fault.h"

/* 70 superblocks of 8-byte blocks (32768 each): past the 64 whose bitmaps
 * sit before the first. */
#define SMALL_BLOCKS (70u * 32768u)

static void first_uses(void)
{
    /* Sizes of classes a test program's start-up does not use. */
    static const size_t sizes[] = {2900, 3300, 5900, 6900, 9900, 12900, 14900, 19900, 27000};
    for (size_t i = 0; i < sizeof sizes / sizeof sizes[0]; i++) {
        struct os_fault_counts before, after;
        os_fault_counts(&before);
        void *p = malloc(sizes[i]);
        os_fault_counts(&after);
        REQUIRE_MSG(p, "malloc(%zu)", sizes[i]);
        unsigned long maps = after.calls[OS_CALL_MMAP] - before.calls[OS_CALL_MMAP];
        unsigned long advice = after.calls[OS_CALL_MADVISE] - before.calls[OS_CALL_MADVISE];
        CHECK_MSG(maps == 0 && advice == 0, "malloc(%zu), its class's first use: %lu mmap and %lu madvise calls",
                  sizes[i], maps, advice);
        free(p);
    }
}

/* Every superblock keeps a few survivors, so the blocks freed go back to
 * its bitmap (not to an empty superblock) and are taken from there again. */
#define KEEP_EVERY 4096u

static void past_near_bitmaps(void)
{
    uintptr_t *blocks = malloc(SMALL_BLOCKS * sizeof *blocks);
    REQUIRE(blocks);
    for (unsigned i = 0; i < SMALL_BLOCKS; i++) {
        uintptr_t *p = malloc(8);
        REQUIRE_MSG(p, "malloc(8) #%u", i);
        *p = i;
        blocks[i] = (uintptr_t)p;
    }
    for (unsigned i = 0; i < SMALL_BLOCKS; i++)
        if (i % KEEP_EVERY)
            free((void *)blocks[i]);
    corealloc_trim(); /* every free block back in its superblock's bitmap */
    for (unsigned i = 0; i < SMALL_BLOCKS; i++) {
        if (i % KEEP_EVERY == 0)
            continue;
        uintptr_t *p = malloc(8);
        REQUIRE_MSG(p, "malloc(8) again #%u", i);
        *p = i;
        blocks[i] = (uintptr_t)p;
    }
    struct liveset *live = liveset_create(SMALL_BLOCKS);
    REQUIRE(live);
    for (unsigned i = 0; i < SMALL_BLOCKS; i++) {
        CHECK_MSG(*(uintptr_t *)blocks[i] == i, "block %u overwritten", i);
        CHECK_MSG(liveset_insert(live, (void *)blocks[i]), "block %#lx handed out twice", (unsigned long)blocks[i]);
    }
    liveset_destroy(live);
    for (unsigned i = 0; i < SMALL_BLOCKS; i++)
        free((void *)blocks[i]);
    free(blocks);
    CHECK_MSG(stats_number("invalid_frees") == 0, "%lld frees reported invalid", stats_number("invalid_frees"));
}

int main(void)
{
    skip_without_zones();
    first_uses();
    past_near_bitmaps();
    return check_status();
}
