/* Heap profiling in secure mode (COREALLOC_SECURE=1 COREALLOC_PROFILE=1
 * with a rate of one byte, so that every block is sampled): a sampled block
 * is a large block of secure mode, so its usable size is the requested
 * size, a write of one byte past it is reported at free, and the page after
 * it is a guard that faults; the profile counts the sampled blocks live
 * until they are freed. Run with LD_PRELOAD of libcorealloc.so. */
#include <malloc.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "capture.h"
#include "check.h"
#include "memory.h"
#include "corealloc.h"
#include "probe.h"

/* The live bytes of every site in a dump written now. */
static long long live_bytes(int (*dump)(const char *), const char *path)
{
    REQUIRE(dump(path) == 0);
    FILE *f = fopen(path, "r");
    REQUIRE(f != NULL);
    static char line[65536];
    long long total = 0, bytes;
    while (fgets(line, sizeof line, f))
        if (sscanf(line, "site %*s %*s %*s %*s %*s %lld", &bytes) == 1)
            total += bytes;
    fclose(f);
    unlink(path);
    return total;
}

int main(void)
{
    if (!corealloc_active())
        return 77;
    __typeof__(corealloc_profile_dump) *dump =
        (__typeof__(corealloc_profile_dump) *)corealloc_symbol("corealloc_profile_dump");
    char path[64];
    snprintf(path, sizeof path, "/tmp/corealloc-profile-secure-%d.heap", (int)getpid());

    static const size_t sizes[] = {24, 100, 1000, 4000, 30000, 40000};
    for (size_t i = 0; i < sizeof sizes / sizeof sizes[0]; i++) {
        unsigned char *p = malloc(sizes[i]);
        REQUIRE(p != NULL);
        CHECK_EQ(malloc_usable_size(p), sizes[i]);
        CHECK_EQ((uintptr_t)p % 4096, 0); /* sampled: a span of its own */
        size_t room = (sizes[i] + 8 + 4095) & ~(size_t)4095; /* the block and its trailer, in pages */
        CHECK_MSG(memory_write_faults(p + room), "size %zu: the page after a sampled block is not a guard", sizes[i]);
        memset(p, 0x11, sizes[i]);
        check_overflow_by_one_reported(p, sizes[i]);
    }

    /* Frees end their samples (secure mode's free path asks the profiler). */
    long long before = live_bytes(dump, path);
    void *kept[10];
    for (int i = 0; i < 10; i++) {
        kept[i] = malloc(1000);
        REQUIRE(kept[i] != NULL);
    }
    long long with = live_bytes(dump, path);
    CHECK_MSG(with - before >= 10000 && with - before < 11000, "live bytes %lld -> %lld with 10 x 1000 kept",
              before, with);
    for (int i = 0; i < 10; i++)
        free(kept[i]);
    long long after = live_bytes(dump, path);
    CHECK_MSG(with - after >= 10000, "live bytes %lld -> %lld with the 10 blocks freed", with, after);
    return check_status();
}
