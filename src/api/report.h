/* The statistics report, in text or JSON, from every layer's counters.
 * Every scalar statistic is declared once in COREALLOC_STAT_TABLE: its JSON
 * key, its kind and what it means; the text and JSON reports, and the
 * struct they are read into, come from it. Per-CPU caches and size classes
 * follow as tables. Reports are streamed, never truncated. */
#ifndef COREALLOC_REPORT_H
#define COREALLOC_REPORT_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/* Bumped when a key changes meaning or disappears (adding keys does not). */
#define REPORT_SCHEMA 2

/* STAT(key, KIND, "meaning"). KIND: BYTES and COUNT (unsigned), INT
 * (signed), FLAG (true/false), TEXT (a string). */
#define COREALLOC_STAT_TABLE(STAT)                                                                \
    STAT(frontend, TEXT, "front end: rseq (per-CPU), per-thread, or an ablation")                 \
    STAT(rseq_source, TEXT, "whose rseq area the per-CPU caches use")                             \
    STAT(rseq_aborts, COUNT, "critical sections restarted by the kernel")                         \
    STAT(zones, FLAG, "size-class zones reserved (else the page map only)")                       \
    STAT(in_use_bytes, BYTES, "held by the program")                                              \
    STAT(held_bytes, BYTES, "in use, plus in caches and central batches")                         \
    STAT(peak_held_bytes, BYTES, "peak of held_bytes")                                            \
    STAT(cached_bytes, BYTES, "in caches")                                                        \
    STAT(caches, COUNT, "caches (per-CPU slabs and live per-thread caches)")                      \
    STAT(central_bytes, BYTES, "in central batches")                                              \
    STAT(retained_empty_bytes, BYTES, "empty superblocks kept resident for reuse")                \
    STAT(large_bytes, BYTES, "large blocks in use")                                               \
    STAT(large_blocks, COUNT, "large blocks in use")                                              \
    STAT(large_free_unpurged_bytes, BYTES, "free large spans not yet purged")                     \
    STAT(mapped_bytes, BYTES, "address space mapped for blocks")                                  \
    STAT(peak_mapped_bytes, BYTES, "peak of mapped_bytes")                                        \
    STAT(metadata_bytes, BYTES, "the allocator's own metadata")                                   \
    STAT(resident_bytes, BYTES, "resident estimate: blocks, free memory not returned, metadata")  \
    STAT(peak_resident_bytes, BYTES, "peak of resident_bytes")                                    \
    STAT(lazy_bytes, BYTES, "freed with MADV_FREE, the kernel's to take")                         \
    STAT(purged_bytes, BYTES, "returned to the OS so far")                                        \
    STAT(rss_bytes, BYTES, "resident set size of the process")                                    \
    STAT(rss_peak_bytes, BYTES, "peak resident set size of the process")                          \
    STAT(limit_bytes, BYTES, "allocation fails past this resident estimate (0: no limit)")        \
    STAT(pressure_bytes, BYTES, "free memory is purged at once past this (0: never)")             \
    STAT(purge_delay_ms, INT, "free memory goes back after this long unused")                     \
    STAT(purger_running, FLAG, "the background purge thread runs")                                \
    STAT(cgroup_version, INT, "cgroup version found (0: none)")                                   \
    STAT(cgroup_memory_max, BYTES, "the cgroup's memory.max (0: none)")                           \
    STAT(cgroup_memory_high, BYTES, "the cgroup's memory.high (0: none)")                         \
    STAT(cpus_allowed, COUNT, "CPUs in the affinity mask")                                        \
    STAT(cpu_quota, COUNT, "CPUs' worth of cgroup CPU bandwidth (0: unlimited)")                  \
    STAT(invalid_frees, COUNT, "invalid pointers passed to free or realloc")                       \
    STAT(heap_corruptions, COUNT, "blocks found written after free or past their size (secure mode)")

#define REPORT_TYPE_BYTES size_t
#define REPORT_TYPE_COUNT uint64_t
#define REPORT_TYPE_INT long
#define REPORT_TYPE_FLAG bool
#define REPORT_TYPE_TEXT const char *

struct report {
#define REPORT_FIELD(key, kind, meaning) REPORT_TYPE_##kind key;
    COREALLOC_STAT_TABLE(REPORT_FIELD)
#undef REPORT_FIELD
};

/* Reads every scalar statistic. */
void report_collect(struct report *r);

/* Like snprintf: writes at most size bytes (NUL included) and returns the
 * length of the whole report. Never allocates. */
size_t report_snprint(char *buf, size_t size, bool json);
/* Streams the whole report to fd. Returns 0, or the errno of a failed write. */
int report_write(int fd, bool json);
/* The COREALLOC_STATS report at exit, when asked for. */
void report_at_exit(void);

#endif
