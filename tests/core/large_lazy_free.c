/* COREALLOC_PURGE=free: freed memory is given back with MADV_FREE and
 * reported apart from memory in use; calloc still returns zeros over pages
 * that may keep their old contents; malloc_trim gives the lazy pages back
 * for good and says so. */
#include <malloc.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "check.h"
#include "memory.h"
#include "pattern.h"
#include "probe.h"

#define BLOCKS 64
#define BLOCK (1 * MIB)

int main(void)
{
    if (!corealloc_active()) {
        puts("corealloc is not loaded: nothing to check");
        return 0;
    }
    void *blocks[BLOCKS];
    for (int i = 0; i < BLOCKS; i++) {
        blocks[i] = malloc(BLOCK);
        REQUIRE(blocks[i] != NULL);
        memset(blocks[i], 0xab, BLOCK);
    }
    long long resident_full = stats_number("resident_bytes");
    for (int i = 0; i < BLOCKS; i++)
        free(blocks[i]);
    long long lazy = stats_number("lazy_bytes"), resident = stats_number("resident_bytes");
    printf("resident %lld MiB in use, %lld MiB after freeing, %lld MiB freed lazily\n",
           resident_full >> 20, resident >> 20, lazy >> 20);
    CHECK(lazy >= (long long)(BLOCKS * BLOCK / 2));
    CHECK(resident <= resident_full - (long long)(BLOCKS * BLOCK / 2));

    /* The same pages again, through calloc: zeros, whatever the kernel did. */
    for (int i = 0; i < BLOCKS; i++) {
        blocks[i] = calloc(1, BLOCK);
        REQUIRE(blocks[i] != NULL);
        CHECK(block_filled_with(blocks[i], BLOCK, 0));
    }
    CHECK(stats_number("lazy_bytes") < lazy);
    for (int i = 0; i < BLOCKS; i++)
        free(blocks[i]);
    CHECK(stats_number("lazy_bytes") > 0);
    CHECK(malloc_trim(0) == 1);
    CHECK_EQ(stats_number("lazy_bytes"), 0);
    return check_status();
}
