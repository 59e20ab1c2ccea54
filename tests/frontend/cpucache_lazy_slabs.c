/* A CPU's slab gets its stacks on the first miss there, so a process
 * touches the slabs of the CPUs it runs on, not a page per possible CPU at
 * start-up (256 pages on a 256-CPU machine, for every short process). The
 * test re-runs itself pinned to one CPU, so nothing allocates before the
 * pin; the other slabs must have no page resident. Then it moves to a
 * second CPU (when it may): that slab comes to life and serves blocks, and
 * malloc_trim, which drains every slab, leaves the untouched ones alone.
 * And within a slab, a class used a little keeps its stack in the nursery
 * that such stacks share: a few blocks of every class touch a few pages of
 * it, not a page per class (about 60 before the nursery). */
#define _GNU_SOURCE
#include <malloc.h>
#include <sched.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "arch/slab.h"
#include "check.h"
#include "memory.h"
#include "pinning.h"

#define PINNED_ENV "CPUCACHE_LAZY_SLABS_SECOND_CPU"

/* Whether slab `id` of the slabs at `slabs` holds the value of `mark` (a
 * block just freed on that CPU, on its class's stack). */
static bool slab_holds(uintptr_t slabs, unsigned id, const void *mark)
{
    const uintptr_t *slab = (const uintptr_t *)(slabs + ((uintptr_t)id << SLAB_SHIFT));
    for (size_t i = 0; i < SLAB_BYTES / sizeof *slab; i++)
        if (slab[i] == (uintptr_t)mark)
            return true;
    return false;
}

/* The per-CPU slabs' mapping: the two stopped slabs, then one per id. The
 * kernel may have merged it with a neighbouring mapping of the same kind:
 * then the slabs lie at the start or at the end of a larger one, and theirs
 * is where the slab of `id` (the CPU this runs on) holds `mark`. */
static uintptr_t find_slabs(unsigned ids, unsigned id, const void *mark)
{
    size_t want = (size_t)(SLAB_IDS_STOPPED + ids) << SLAB_SHIFT;
    FILE *maps = fopen("/proc/self/maps", "r");
    REQUIRE(maps != NULL);
    char line[512];
    uintptr_t found = 0, merged = 0;
    while (!found && fgets(line, sizeof line, maps)) {
        unsigned long start, end;
        char perms[5];
        if (sscanf(line, "%lx-%lx %4s", &start, &end, perms) != 3 || end - start < want || strncmp(perms, "rw", 2))
            continue;
        if (end - start == want) {
            found = start + ((uintptr_t)SLAB_IDS_STOPPED << SLAB_SHIFT);
            break;
        }
        uintptr_t ends[2] = { start, end - want };
        for (unsigned e = 0; e < 2 && !merged; e++) {
            uintptr_t slabs = ends[e] + ((uintptr_t)SLAB_IDS_STOPPED << SLAB_SHIFT);
            if (slab_holds(slabs, id, mark))
                merged = slabs;
        }
    }
    fclose(maps);
    if (!found)
        found = merged;
    REQUIRE_MSG(found, "no mapping of %u per-CPU slabs", ids);
    REQUIRE_MSG(slab_holds(found, id, mark), "the slab of CPU %u does not hold the block just freed there", id);
    return found;
}

/* Pages of slab `id` the process has written (present and its own, from
 * /proc/self/pagemap: a slab only read, by the statistics say, maps the
 * shared zero page, which costs no memory). */
static unsigned written_pages(uintptr_t slabs, unsigned id)
{
    long page = sysconf(_SC_PAGESIZE);
    FILE *pagemap = fopen("/proc/self/pagemap", "rb");
    REQUIRE(pagemap != NULL);
    uintptr_t start = slabs + ((uintptr_t)id << SLAB_SHIFT);
    REQUIRE(fseek(pagemap, (long)(start / (uintptr_t)page * 8), SEEK_SET) == 0);
    unsigned written = 0;
    for (size_t i = 0; i < SLAB_BYTES / (size_t)page; i++) {
        uint64_t entry;
        REQUIRE(fread(&entry, sizeof entry, 1, pagemap) == 1);
        written += (entry >> 63 & 1) && (entry >> 56 & 1); /* present, exclusively mapped */
    }
    fclose(pagemap);
    return written;
}

/* Blocks of a few classes, written, checked and freed. */
static void use_blocks(void)
{
    static const size_t sizes[] = { 16, 100, 1000 };
    enum { COUNT = 3000 };
    static unsigned char *blocks[COUNT];
    for (unsigned i = 0; i < COUNT; i++) {
        size_t size = sizes[i % 3];
        REQUIRE((blocks[i] = malloc(size)) != NULL);
        memset(blocks[i], (int)(i & 0xff), size);
    }
    for (unsigned i = 0; i < COUNT; i++) {
        CHECK_MSG(blocks[i][0] == (i & 0xff) && blocks[i][sizes[i % 3] - 1] == (i & 0xff),
                  "block %u lost its contents", i);
        free(blocks[i]);
    }
}

/* A few blocks of (nearly) every class, freed: a stack each that neither
 * runs empty twice nor fills. */
static void use_every_class_a_little(void)
{
    enum { EACH = 2, MOST = 200 };
    static void *blocks[MOST];
    unsigned n = 0;
    for (size_t size = 8; size <= 32768 && n + EACH <= MOST; size += size / 8)
        for (unsigned i = 0; i < EACH; i++)
            REQUIRE((blocks[n++] = malloc(size)) != NULL);
    for (unsigned i = 0; i < n; i++)
        free(blocks[i]);
}

static void check_only_touched(uintptr_t slabs, unsigned ids, int a, int b)
{
    for (unsigned id = 0; id < ids; id++) {
        unsigned written = written_pages(slabs, id);
        if ((int)id == a || (int)id == b)
            CHECK_MSG(written > 0, "the slab of CPU %u, which allocated, has no page", id);
        else
            CHECK_MSG(written == 0, "the slab of CPU %u, never run on, has %u pages written", id, written);
    }
}

int main(int argc, char **argv)
{
    (void)argc;
    if (!getenv(PINNED_ENV)) {
        int two[2] = {-1, -1}; /* the second stays -1 on one CPU */
        first_two_cpus(two);
        char value[16];
        snprintf(value, sizeof value, "%d", two[1]);
        REQUIRE(setenv(PINNED_ENV, value, 1) == 0);
        REQUIRE(pin_to_cpu(two[0]));
        execv("/proc/self/exe", argv);
        REQUIRE_MSG(false, "cannot re-run pinned");
    }
    skip_without_cpu_caches();
    unsigned ids = (unsigned)stats_number("caches");
    int first = sched_getcpu(), second = atoi(getenv(PINNED_ENV));
    void *volatile mark = malloc(16); /* freed on this CPU: its slab holds the pointer */
    REQUIRE(mark != NULL);
    free(mark);
    uintptr_t slabs = find_slabs(ids, (unsigned)first, mark);
    use_blocks();
    check_only_touched(slabs, ids, first, first);
    unsigned before = written_pages(slabs, (unsigned)first);
    use_every_class_a_little();
    unsigned added = written_pages(slabs, (unsigned)first) - before;
    printf("every class a little: %u pages added to the slab\n", added);
    CHECK_MSG(added <= 10, "a few blocks of every class wrote %u more pages of the slab (of %u)", added, before);
    if (second >= 0 && (unsigned)second < ids) {
        REQUIRE(pin_to_cpu(second));
        use_blocks();
        malloc_trim(0);
        use_blocks();
        check_only_touched(slabs, ids, first, second);
    }
    printf("%u slabs, run on CPUs %d and %d: the others untouched\n", ids, first, second);
    return check_status();
}
