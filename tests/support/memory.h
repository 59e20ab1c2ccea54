/* Memory measurements for the memory tests: the process's resident set
 * (from /proc/self/statm) and numbers from corealloc's JSON statistics, and
 * a workload that makes a known amount of memory resident and frees it. */
#ifndef COREALLOC_TEST_MEMORY_H
#define COREALLOC_TEST_MEMORY_H

#include <stdbool.h>
#include <stddef.h>

#define MIB ((size_t)1 << 20)

#ifdef __cplusplus
extern "C" {
#endif

/* Resident set size of this process, in bytes. It and thread_count read
 * /proc without allocating, so polling them is no traffic for the purger. */
size_t rss_bytes(void);
/* Whether a write of one byte at `at` faults (SIGSEGV or SIGBUS, caught):
 * for guard pages. */
bool memory_write_faults(volatile unsigned char *at);
/* The transparent huge page advice of the mapping holding addr, from the
 * VmFlags of /proc/self/smaps: "hg" (MADV_HUGEPAGE), "nh" (MADV_NOHUGEPAGE)
 * or "". */
const char *huge_page_flag(const void *addr);
/* The flag of a mapping corealloc keeps from huge pages without being asked
 * otherwise: "nh" where the system gives them to mappings advised neither
 * way (its setting "always", or unknown), "" where only to advised ones
 * (corealloc then spends no call on advice). */
const char *unadvised_huge_page_flag(void);
/* A number from corealloc_stats_snprint's JSON ("key":value); stops the
 * program with a failure when corealloc is not loaded or the key is absent.
 * Booleans read as 0 and 1. */
long long stats_number(const char *key);
/* The same, for the first key after the text object (an entry of a list,
 * say "{\"size\":64,"); NULL: anywhere. */
long long stats_number_in(const char *object, const char *key);
/* Exits with 77 (a skipped test) unless corealloc runs with per-CPU caches. */
void skip_without_cpu_caches(void);
/* Exits with 77 unless corealloc runs with its size-class zones. */
void skip_without_zones(void);
/* The central layer's refills (or spills) of the class of size bytes so
 * far: calls that moved objects, each a batch or more. */
long long class_transfers(size_t size, const char *direction);
/* Threads in this process (Threads: of /proc/self/status). */
unsigned thread_count(void);
/* Polls until rss_bytes() <= limit or timeout_ms passed; returns the last
 * reading. */
size_t wait_rss_at_most(size_t limit, unsigned timeout_ms);

/* `threads` threads allocate total bytes together, in small blocks (16 to
 * 1024 bytes) and large ones (64 KiB to 1 MiB), half each by bytes, touching
 * every page; then each thread frees another thread's blocks. Returns the
 * resident set size measured while everything was allocated. */
size_t churn_through(size_t total, unsigned threads, bool small, bool large);

/* Allocates per_size blocks of each of the count sizes, all live at once,
 * then frees them all: what caches keep of them is the front end's choice. */
void allocate_then_free(const size_t *sizes, unsigned count, unsigned per_size);

#ifdef __cplusplus
}
#endif

#endif
