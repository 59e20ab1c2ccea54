/* The heap profiler's dumps: a text file the corealloc tool turns into
 * pprof and flame-graph profiles (tools/cli/corealloc_cli/prof_dump.py
 * reads it). Written without allocating:
 *
 *   corealloc heap profile 1
 *   pid PID
 *   rate BYTES                 mean bytes between samples
 *   stacks fp|unwind           how stacks were taken
 *   time_ns NS                 CLOCK_MONOTONIC
 *   site ALLOC_SAMPLES ALLOC_COUNT ALLOC_BYTES LIVE_SAMPLES LIVE_COUNT LIVE_BYTES DEPTH PC...
 *   ...                        one line per call stack ever sampled; counts
 *                              and bytes are estimates; PCs in hex,
 *                              innermost first (return addresses)
 *   maps                       then /proc/self/maps as it is, to the end */
#ifndef COREALLOC_PROFILE_DUMP_H
#define COREALLOC_PROFILE_DUMP_H

#include <stddef.h>

/* Writes a dump to path. Returns 0, or an errno. */
int profile_dump_file(const char *path, size_t rate, const char *stacks);
/* Writes the process's next dump, PREFIX.<pid>.<n>.heap. Returns 0, or an
 * errno. */
int profile_dump_next(const char *prefix, size_t rate, const char *stacks);

#endif
