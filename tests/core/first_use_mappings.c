/* What a short process asks the kernel to map: start-up maps the zones'
 * fast entries and descriptors, every class's first tile (one mapping for
 * all), the metadata's first chunk and the CPU caches' slabs; the first
 * blocks of many classes then map nothing more, and the first large block
 * maps its area alone: the page map's first tables are the library's own,
 * in place. Counted as corealloc's mmap calls (os_fault.h), start-up
 * included. An mmap costs a few microseconds, and a mapping to tear down
 * at exit: before, a process made one for each class it touched and two
 * for the page map's first tables (31 here). Zones only (skipped
 * without). */
#include <stdio.h>
#include <stdlib.h>

#include "check.h"
#include "memory.h"
#include "os_fault.h"

/* Start-up's four, and the large area's first mapping. */
#define MOST_MAPS 5u

int main(void)
{
    skip_without_zones();
    enum { SMALL = 32, SMALL_STEP = 1000 };
    void *small[SMALL];
    for (unsigned i = 0; i < SMALL; i++) {
        small[i] = malloc(8 + (size_t)i * SMALL_STEP); /* a class apart each, 8 B to 31 KiB */
        REQUIRE_MSG(small[i], "malloc(%u)", 8 + i * SMALL_STEP);
    }
    void *large = malloc((size_t)1 << 20);
    REQUIRE(large);
    struct os_fault_counts counts;
    os_fault_counts(&counts);
    printf("%lu mmap calls\n", counts.calls[OS_CALL_MMAP]);
    CHECK_MSG(counts.calls[OS_CALL_MMAP] <= MOST_MAPS,
              "start-up, %d classes' first blocks and a large block: %lu mmap calls, at most %u expected", SMALL,
              counts.calls[OS_CALL_MMAP], MOST_MAPS);
    free(large);
    for (unsigned i = 0; i < SMALL; i++)
        free(small[i]);
    return check_status();
}
