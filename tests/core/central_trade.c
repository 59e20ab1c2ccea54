/* Memory moves between classes: a program fills one class, frees it, and
 * fills another as large. With zones, the first class's empty superblocks
 * stay resident for its own reuse; once they have lain unused for an
 * eighth of the purge delay, the second class's fresh pages trade them
 * away, so the process does not hold both ("old"). Emptied just before, they
 * are kept: a program that cycles its classes faster refaults nothing
 * ("young", zones only: without them the classes share one pool of
 * superblocks and the second reuses the first's). The purge delay is long
 * enough that the purger's own passes return nothing meanwhile. */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "check.h"
#include "clock.h"
#include "memory.h"
#include "pattern.h"
#include "probe.h"

#define FILL (16 * MIB)
#define FIRST_SIZE 1000  /* the 1024-byte class */
#define SECOND_SIZE 3000 /* the 3072-byte class */
#define PURGE_DELAY_MS 4000
#define TRADE_AGE_MS (PURGE_DELAY_MS / 8)

static void *blocks[FILL / FIRST_SIZE];

static size_t fill(size_t size, uint64_t seed)
{
    size_t n = FILL / size;
    for (size_t i = 0; i < n; i++) {
        REQUIRE((blocks[i] = malloc(size)) != NULL);
        pattern_fill(blocks[i], size, seed + i);
    }
    return n;
}

static void check_and_free(size_t n, size_t size, uint64_t seed)
{
    for (size_t i = 0; i < n; i++) {
        CHECK_EQ(pattern_mismatch(blocks[i], size, seed + i), PATTERN_OK);
        free(blocks[i]);
    }
}

int main(int argc, char **argv)
{
    if (!corealloc_active()) {
        puts("corealloc is not loaded: nothing to check");
        return 0;
    }
    bool old = argc > 1 && strcmp(argv[1], "old") == 0;
    REQUIRE(stats_number("purge_delay_ms") == PURGE_DELAY_MS);
    if (!old && !stats_number("zones")) {
        puts("young empties are kept only with zones");
        return 77;
    }
    size_t baseline = rss_bytes();
    size_t n = fill(FIRST_SIZE, 1);
    check_and_free(n, FIRST_SIZE, 1);
    long long retained = stats_number("retained_empty_bytes");
    printf("first class freed: %zu MiB resident, %lld MiB of empty superblocks kept\n", (rss_bytes() - baseline) / MIB,
           retained >> 20);
    if (old)
        nanosleep(&(struct timespec){.tv_nsec = (TRADE_AGE_MS + 100) * 1000000L}, NULL);

    uint64_t freed_ms = monotonic_ms();
    n = fill(SECOND_SIZE, 2);
    uint64_t fill_ms = monotonic_ms() - freed_ms;
    if (!old && fill_ms >= TRADE_AGE_MS) {
        printf("the fill took %llu ms: the empties grew old meanwhile, nothing to check\n", (unsigned long long)fill_ms);
        check_and_free(n, SECOND_SIZE, 2);
        return 77;
    }
    size_t grown = rss_bytes() - baseline;
    long long kept = stats_number("retained_empty_bytes");
    printf("second class filled: %zu MiB resident, %lld MiB of empty superblocks kept\n", grown / MIB, kept >> 20);
    if (old) {
        /* 16 MiB in use, the first class's parked batches (2 MiB a CPU)
         * and slack; both classes held would be over 28 MiB. */
        CHECK(grown <= 24 * MIB);
        CHECK(kept <= (long long)(2 * MIB));
    } else {
        CHECK(grown >= 26 * MIB);
        CHECK(kept >= retained - (long long)(2 * MIB));
    }
    check_and_free(n, SECOND_SIZE, 2);
    return check_status();
}
