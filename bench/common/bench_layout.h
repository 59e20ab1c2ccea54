/* Per-thread records are cache-line aligned so that one thread's counters
 * never share a line with another's: false sharing would be charged to the
 * allocator under test. */
#ifndef BENCH_LAYOUT_H
#define BENCH_LAYOUT_H

#include <stdlib.h>
#include <string.h>

#include "bench_report.h"

#define BENCH_CACHE_LINE 64

/* Zeroed array of `count` records of `size` bytes (a multiple of the line). */
static inline void *bench_alloc_lines(size_t count, size_t size)
{
    size_t bytes = count * size;
    void *records = bench_check_alloc(aligned_alloc(BENCH_CACHE_LINE, bytes), "per-thread records");
    memset(records, 0, bytes);
    return records;
}

#endif
