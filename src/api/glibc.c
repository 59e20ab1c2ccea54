/* glibc's malloc introspection and tuning calls, answered with corealloc's
 * real figures. */
#include <errno.h>
#include <malloc.h>
#include <stdio.h>

#include "api/alloc.h"
#include "api/init.h"
#include "api/report.h"
#include "core/large.h"
#include "core/superblock.h"
#include "platform/options.h"

#define EXPORT __attribute__((visibility("default")))

EXPORT struct mallinfo2 mallinfo2(void)
{
    init_ensure();
    struct report r;
    report_collect(&r);
    struct mallinfo2 mi = {0};
    mi.arena = r.mapped_bytes;
    mi.hblks = r.large_blocks;
    mi.hblkhd = r.large_bytes;
    mi.uordblks = r.in_use_bytes;
    mi.fordblks = r.mapped_bytes > r.in_use_bytes ? r.mapped_bytes - r.in_use_bytes : 0;
    mi.fsmblks = r.cached_bytes;
    mi.keepcost = r.retained_empty_bytes + r.large_free_unpurged_bytes;
    mi.usmblks = r.peak_mapped_bytes;
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
    init_ensure();
    report_write(2, false);
}

EXPORT int malloc_info(int options, FILE *fp)
{
    if (options != 0 || !fp) {
        errno = EINVAL;
        return -1;
    }
    init_ensure();
    struct report r;
    report_collect(&r);
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
            r.in_use_bytes, (unsigned)r.caches, r.cached_bytes, (size_t)r.large_blocks, r.large_bytes,
            r.retained_empty_bytes + r.large_free_unpurged_bytes, r.mapped_bytes, r.peak_mapped_bytes,
            r.purged_bytes);
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
    init_ensure();
    switch (param) {
    case M_TRIM_THRESHOLD:
        if (value < 0)
            return 0;
        opt.retain_bytes = (size_t)value;
        sb_set_retain_limit(opt.retain_bytes);
        return 1;
    case M_MMAP_THRESHOLD:
        /* glibc maps such blocks on their own: moved by mremap, unmapped when freed. */
        if (value <= 0)
            return 0;
        opt.huge_threshold = (size_t)value;
        large_set_release_threshold((size_t)value);
        return 1;
    case M_MXFAST: /* glibc's bound: 80 * sizeof(size_t) / 4 */
        return value >= 0 && value <= 160;
    /* glibc's other parameters, accepted as glibc accepts them, mean
     * nothing here: a program that checks the result goes on. */
    case M_TOP_PAD:
    case M_MMAP_MAX:
    case M_CHECK_ACTION:
    case M_PERTURB:
    case M_ARENA_TEST:
    case M_ARENA_MAX:
        return 1;
    default:
        return 0;
    }
}
