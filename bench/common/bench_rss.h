/* The process's resident memory, read the way the memory benchmarks need
 * it: without calling malloc (the allocator under test must not see the
 * measurement's own allocations), and in bytes. */
#ifndef BENCH_RSS_H
#define BENCH_RSS_H

#include <stddef.h>

/* Resident set size now: resident pages of /proc/self/statm x page size.
 * Ends the run (exit 1) if /proc cannot be read: every memory benchmark's
 * score depends on it. */
size_t bench_rss_bytes(void);

/* The process's high-water RSS so far (getrusage's ru_maxrss), in bytes. */
size_t bench_peak_rss_bytes(void);

static inline double bench_mib(size_t bytes)
{
    return (double)bytes / (1024.0 * 1024.0);
}

/* The difference a - b in MiB, negative when RSS fell. */
static inline double bench_mib_delta(size_t a, size_t b)
{
    return a >= b ? bench_mib(a - b) : -bench_mib(b - a);
}

#endif
