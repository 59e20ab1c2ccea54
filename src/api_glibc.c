/* glibc's malloc introspection and tuning calls, answered with corealloc's
 * real figures. */
#include <errno.h>
#include <malloc.h>
#include <stdio.h>

#include "alloc.h"
#include "options.h"
#include "stats.h"
#include "superblock.h"

#define EXPORT __attribute__((visibility("default")))

EXPORT struct mallinfo2 mallinfo2(void)
{
    alloc_ensure_init();
    struct stats_totals t;
    stats_totals(&t);
    struct mallinfo2 mi = {0};
    mi.arena = t.mapped;
    mi.hblks = t.large_spans;
    mi.hblkhd = t.large_in_use;
    mi.uordblks = t.in_use;
    mi.fordblks = t.mapped > t.in_use ? t.mapped - t.in_use : 0;
    mi.fsmblks = t.cached_bytes;
    mi.keepcost = t.retained_empty + t.large_free_resident;
    mi.usmblks = t.mapped_peak;
    return mi;
}

static int clamp_int(size_t v) { return v > 0x7fffffff ? 0x7fffffff : (int)v; }

/* The old interface truncates to int, as glibc's does. */
EXPORT struct mallinfo mallinfo(void)
{
    struct mallinfo2 m2 = mallinfo2();
    struct mallinfo mi = {0};
    mi.arena = clamp_int(m2.arena);
    mi.hblks = clamp_int(m2.hblks);
    mi.hblkhd = clamp_int(m2.hblkhd);
    mi.uordblks = clamp_int(m2.uordblks);
    mi.fordblks = clamp_int(m2.fordblks);
    mi.fsmblks = clamp_int(m2.fsmblks);
    mi.keepcost = clamp_int(m2.keepcost);
    mi.usmblks = clamp_int(m2.usmblks);
    return mi;
}

EXPORT void malloc_stats(void)
{
    alloc_ensure_init();
    char buf[16384];
    size_t len = stats_snprint(buf, sizeof buf, false);
    os_write_all(2, buf, len < sizeof buf ? len : sizeof buf - 1);
}

EXPORT int malloc_info(int options, FILE *fp)
{
    if (options != 0 || !fp) {
        errno = EINVAL;
        return -1;
    }
    alloc_ensure_init();
    struct stats_totals t;
    stats_totals(&t);
    fprintf(fp,
            "<malloc version=\"corealloc-1\">\n"
            "<heap nr=\"0\">\n"
            "<total type=\"in_use\" size=\"%zu\"/>\n"
            "<total type=\"cached\" count=\"%u\" size=\"%zu\"/>\n"
            "<total type=\"large\" count=\"%zu\" size=\"%zu\"/>\n"
            "<total type=\"retained\" size=\"%zu\"/>\n"
            "<system type=\"current\" size=\"%zu\"/>\n"
            "<system type=\"max\" size=\"%zu\"/>\n"
            "<total type=\"purged\" size=\"%zu\"/>\n"
            "</heap>\n"
            "</malloc>\n",
            t.in_use, t.caches, t.cached_bytes, t.large_spans, t.large_in_use,
            t.retained_empty + t.large_free_resident, t.mapped, t.mapped_peak, t.purged_total);
    return 0;
}

EXPORT int malloc_trim(size_t pad)
{
    (void)pad; /* everything free is returned; keeping pad bytes would not help us */
    return alloc_trim() > 0;
}

/* Returns 1 only for the options corealloc honours. */
EXPORT int mallopt(int param, int value)
{
    alloc_ensure_init();
    switch (param) {
    case M_TRIM_THRESHOLD:
        if (value < 0)
            return 0;
        opt.retain_bytes = (size_t)value;
        sb_set_retain_limit(opt.retain_bytes);
        return 1;
    case M_MMAP_THRESHOLD:
        if (value <= 0)
            return 0;
        opt.huge_threshold = (size_t)value;
        return 1;
    default:
        return 0;
    }
}
