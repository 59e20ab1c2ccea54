/* Survivors do not pin whole superblocks: after most blocks of a class are
 * freed, the pages whose blocks are all free go back to the OS while their
 * superblocks stay in use, also while the program keeps using a few blocks
 * of the class (so it never idles); the survivors keep their contents; blocks taken
 * from those pages again work and count as resident again; and the
 * resident estimate returns to where it began once everything is freed. */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "check.h"
#include "memory.h"
#include "pattern.h"
#include "probe.h"

#define SIZE 1000 /* the 1024-byte class: four blocks a page */
#define BLOCKS (64 * MIB / 1024)
#define KEEP_EVERY 64 /* one survivor every 64 KiB: one page in 16 pinned */
#define SLACK (16 * MIB)

#define CHURN 2048 /* blocks of the class the program keeps using: 2 MiB */

static unsigned char *blocks[BLOCKS];

/* Waits for the RSS to fall to at most limit while the class stays busy:
 * CHURN blocks allocated and freed every 10 ms, more than a CPU's cache
 * holds, so batches move through the central layer all along. */
static size_t wait_rss_while_busy(size_t limit, unsigned timeout_ms)
{
    static void *churn[CHURN];
    size_t rss = rss_bytes();
    for (unsigned waited = 0; rss > limit && waited < timeout_ms; waited += 10) {
        for (size_t i = 0; i < CHURN; i++)
            REQUIRE((churn[i] = malloc(SIZE)) != NULL);
        for (size_t i = 0; i < CHURN; i++)
            free(churn[i]);
        nanosleep(&(struct timespec){.tv_nsec = 10 * 1000 * 1000}, NULL);
        rss = rss_bytes();
    }
    return rss;
}

static void fill_all(uint64_t seed)
{
    for (size_t i = 0; i < BLOCKS; i++) {
        REQUIRE((blocks[i] = malloc(SIZE)) != NULL);
        pattern_fill(blocks[i], SIZE, seed + i);
    }
}

int main(int argc, char **argv)
{
    if (!corealloc_active()) {
        puts("corealloc is not loaded: nothing to check");
        return 0;
    }
    unsigned delay_ms = argc > 1 ? (unsigned)atoi(argv[1]) : 300;
    size_t baseline = rss_bytes();
    long long resident_before = stats_number("resident_bytes");

    fill_all(1);
    for (size_t i = 0; i < BLOCKS; i++)
        if (i % KEEP_EVERY)
            free(blocks[i]);
    size_t rss = wait_rss_while_busy(baseline + SLACK, 2 * delay_ms + 1000);
    long long resident_sparse = stats_number("resident_bytes");
    printf("baseline %zu MiB; with one block in %d left: %zu MiB (estimate %lld MiB)\n", baseline / MIB,
           KEEP_EVERY, rss / MIB, resident_sparse >> 20);
    CHECK(rss <= baseline + SLACK);
    CHECK(resident_sparse <= resident_before + (long long)SLACK);
    for (size_t i = 0; i < BLOCKS; i += KEEP_EVERY)
        CHECK_EQ(pattern_mismatch(blocks[i], SIZE, 1 + i), PATTERN_OK);

    /* The holes fill again: every block is written and read back. */
    for (size_t i = 0; i < BLOCKS; i++)
        if (i % KEEP_EVERY)
            REQUIRE((blocks[i] = malloc(SIZE)) != NULL);
    for (size_t i = 0; i < BLOCKS; i++)
        pattern_fill(blocks[i], SIZE, 2 + i);
    for (size_t i = 0; i < BLOCKS; i++)
        CHECK_EQ(pattern_mismatch(blocks[i], SIZE, 2 + i), PATTERN_OK);
    long long resident_full = stats_number("resident_bytes");
    printf("refilled: %zu MiB (estimate %lld MiB)\n", rss_bytes() / MIB, resident_full >> 20);
    CHECK(rss_bytes() >= baseline + 48 * MIB);
    CHECK(resident_full >= resident_before + (long long)(48 * MIB));

    for (size_t i = 0; i < BLOCKS; i++)
        free(blocks[i]);
    wait_rss_at_most(baseline + SLACK, 2 * delay_ms + 1000);
    long long resident_after = stats_number("resident_bytes");
    printf("all freed: %zu MiB (estimate %lld MiB, %lld at the start)\n", rss_bytes() / MIB,
           resident_after >> 20, resident_before >> 20);
    CHECK(resident_after <= resident_before + (long long)SLACK);
    CHECK(resident_after >= 0);
    return check_status();
}
