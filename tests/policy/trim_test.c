/* Trimming everything now (src/policy/trim.c, behind malloc_trim and a
 * limit about to refuse): after a burst of allocation and frees, one
 * trim_all leaves no object in any cache, no batch parked centrally, no
 * empty superblock or free span resident, and reports at least what the
 * free spans held; blocks still in use keep their contents; a second trim
 * finds nothing. */
#include <stdint.h>
#include <stdio.h>

#include "api/alloc.h"
#include "api/init.h"
#include "check.h"
#include "core/central.h"
#include "core/large.h"
#include "core/superblock.h"
#include "frontend/frontend.h"
#include "pattern.h"
#include "platform/options.h"
#include "policy/trim.h"

#define KIB ((size_t)1 << 10)
#define LIVE 256
#define BURST 4000
#define LARGE 16

/* Small classes, and a large size (spans of the page heap). */
static const size_t sizes[] = {64, 256, 1024, 4096, 16384, 512 * KIB};
#define SIZES (sizeof sizes / sizeof sizes[0])

static void *live[LIVE];
static void *burst[BURST];

/* Allocates count blocks of each of the first `kinds` sizes, then frees them. */
static void allocate_then_free(unsigned count, unsigned first, unsigned kinds)
{
    REQUIRE(count * kinds <= BURST);
    for (unsigned i = 0; i < count * kinds; i++)
        REQUIRE((burst[i] = alloc_malloc(sizes[first + i % kinds])) != NULL);
    for (unsigned i = 0; i < count * kinds; i++)
        alloc_free(burst[i]);
}

static size_t live_size(unsigned i) { return sizes[i % SIZES] + i; }

static uint64_t batches_parked(void)
{
    uint64_t batches = 0;
    for (unsigned c = 0; c < SC_COUNT; c++) {
        struct central_class_stats st;
        central_class_stats(c, &st);
        batches += st.batches_central;
    }
    return batches;
}

int main(void)
{
    init_ensure();
    opt.purge_delay_ms = -1; /* no purger thread: only trim_all gives memory back */
    for (unsigned i = 0; i < LIVE; i++) {
        REQUIRE((live[i] = alloc_malloc(live_size(i))) != NULL);
        pattern_fill(live[i], live_size(i), i);
    }
    allocate_then_free(BURST / (SIZES - 1), 0, SIZES - 1);
    allocate_then_free(LARGE, SIZES - 1, 1);
    unsigned caches;
    size_t cached = frontend_bytes_held(&caches);
    uint64_t parked = batches_parked();
    struct large_stats large;
    large_stats(&large);
    printf("before trimming: %zu KiB cached, %lu batches parked, %lu KiB of free spans resident\n",
           cached / KIB, (unsigned long)parked, (unsigned long)(large.bytes_free_resident / KIB));
    REQUIRE_MSG(cached + parked > 0 && large.bytes_free_resident > 0, "nothing to trim");

    size_t released = trim_all();
    CHECK_MSG(released >= large.bytes_free_resident, "released %zu KiB, free spans held %lu KiB",
              released / KIB, (unsigned long)(large.bytes_free_resident / KIB));
    CHECK_EQ(frontend_bytes_held(&caches), 0);
    CHECK_EQ(batches_parked(), 0);
    large_stats(&large);
    CHECK_EQ(large.bytes_free_resident, 0);
    CHECK_EQ(large.bytes_free_lazy, 0);
    CHECK_EQ(sb_bytes_retained(), 0);
    for (unsigned i = 0; i < LIVE; i++)
        CHECK_MSG(pattern_mismatch(live[i], live_size(i), i) == PATTERN_OK,
                  "live block %u (%zu bytes) changed by trimming", i, live_size(i));
    CHECK_EQ(trim_all(), 0);
    for (unsigned i = 0; i < LIVE; i++)
        alloc_free(live[i]);
    return check_status();
}
