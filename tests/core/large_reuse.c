/* Large blocks through the whole allocator: a freed huge block stays
 * resident and the next block of its size takes its pages without a page
 * fault; calloc clears them; the purger gives kept memory back within two
 * delays; and after mallopt(M_MMAP_THRESHOLD), blocks past it go back as
 * they are freed, as glibc's mapped blocks do.
 *
 *   large_reuse <delay_ms>
 */
#include <malloc.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>

#include "check.h"
#include "memory.h"
#include "pattern.h"
#include "probe.h"

#define HUGE (64 * MIB) /* past COREALLOC_HUGE_THRESHOLD */
#define PAGE 4096
#define SLACK (16 * MIB)

static long minor_faults(void)
{
    struct rusage usage;
    getrusage(RUSAGE_SELF, &usage);
    return usage.ru_minflt;
}

int main(int argc, char **argv)
{
    if (!corealloc_active()) {
        puts("corealloc is not loaded: nothing to check");
        return 0;
    }
    if (argc < 2) {
        fprintf(stderr, "usage: large_reuse <delay_ms>\n");
        return 2;
    }
    unsigned delay_ms = (unsigned)atoi(argv[1]);
    size_t baseline = rss_bytes();

    unsigned char *p = malloc(HUGE);
    REQUIRE(p != NULL);
    memset(p, 0xab, HUGE);
    size_t peak = rss_bytes();
    free(p);
    size_t after_free = rss_bytes();
    printf("baseline %zu MiB, block written %zu MiB, freed %zu MiB\n", baseline / MIB, peak / MIB,
           after_free / MIB);
    CHECK_MSG(after_free + SLACK >= peak, "the freed block went back at once");

    long faults = minor_faults();
    unsigned char *q = malloc(HUGE);
    REQUIRE(q != NULL);
    memset(q, 0x5a, HUGE);
    faults = minor_faults() - faults;
    printf("the next block of its size: %s, written with %ld page faults\n", q == p ? "the same" : "another",
           faults);
    CHECK(q == p);
    CHECK_MSG(faults < (long)(HUGE / PAGE / 16), "%ld page faults: fresh pages, not the kept ones", faults);
    free(q);
    unsigned char *r = calloc(1, HUGE);
    REQUIRE(r != NULL);
    CHECK(r == p);
    CHECK_MSG(block_filled_with(r, HUGE, 0), "calloc returned reused memory uncleared");
    free(r);

    size_t rss = wait_rss_at_most(baseline + SLACK, 2 * delay_ms + 1000);
    printf("after sleeping: %zu MiB\n", rss / MIB);
    CHECK(rss <= baseline + SLACK);
    CHECK_EQ(stats_number("large_free_unpurged_bytes"), 0);

    REQUIRE(mallopt(M_MMAP_THRESHOLD, (int)MIB) == 1);
    p = malloc(8 * MIB);
    REQUIRE(p != NULL);
    memset(p, 0xcd, 8 * MIB);
    long long kept = stats_number("large_free_unpurged_bytes");
    free(p);
    CHECK_MSG(stats_number("large_free_unpurged_bytes") == kept, "a block past M_MMAP_THRESHOLD was kept");
    return check_status();
}
