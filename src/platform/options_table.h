/* Every environment variable of corealloc, declared once. The options
 * struct, the defaults, the parser, COREALLOC_OPTIONS=help, the warning for
 * unknown names, the README's options table (compared by a test) and the
 * manual all come from these lines.
 *
 * OPTION(NAME, field, KIND, "default", "choices", "meaning"): read from
 * COREALLOC_<NAME>. KIND is BOOL, SIZE (bytes, K/M/G suffixes), MS
 * (milliseconds, -1 for never), CHOICE (one of the |-separated choices,
 * stored as its index: the matching enum in options.h lists them in the
 * same order) or STRING. The default is parsed like a value from the
 * environment.
 *
 * VARIABLE(NAME, "meaning"): a COREALLOC_<NAME> variable that is not an
 * option: COREALLOC_OPTIONS itself, and those the corealloc tool's
 * interposers and the tests read (known, so none is reported as a misspelt
 * option). */
#ifndef COREALLOC_OPTIONS_TABLE_H
#define COREALLOC_OPTIONS_TABLE_H

#define COREALLOC_OPTION_TABLE(OPTION)                                                            \
    OPTION(STATS, stats, CHOICE, "0", "0|1|json",                                                 \
           "report at exit: `0` none, `1` text, `json` one JSON object")                          \
    OPTION(STATS_FILE, stats_file, STRING, "", "",                                                \
           "write the exit report to this file instead of stderr; `%p` in the name becomes the "  \
           "process id")                                                                          \
    OPTION(ABORT_ON_ERROR, abort_on_error, BOOL, "0", "",                                         \
           "abort on an invalid `free` instead of reporting it and going on")                     \
    OPTION(ZONES, zones, BOOL, "1", "",                                                           \
           "place small blocks in size-class zones; `0` forces the page-map fallback (zones are " \
           "also off under valgrind and under an address-space limit below 1 GiB)")               \
    OPTION(FRONTEND, frontend, CHOICE, "auto", "auto|rseq|thread",                                \
           "`auto`/`rseq`: per-CPU caches where the kernel has rseq; `thread`: per-thread caches") \
    OPTION(RETAIN_BYTES, retain_bytes, SIZE, "32M", "",                                           \
           "empty memory kept for reuse before it is returned to the OS: empty superblocks "      \
           "up to this; free large blocks up to this plus the most large blocks held during "     \
           "the last one to two purge delays (this alone with `PURGE_DELAY_MS=-1`)")              \
    OPTION(PURGE, purge, CHOICE, "dontneed", "dontneed|free",                                     \
           "how memory goes back: `dontneed` (RSS drops at once) or `free` (`MADV_FREE`)")        \
    OPTION(HUGE_THRESHOLD, huge_threshold, SIZE, "16M", "",                                       \
           "blocks this large move with `mremap` when `realloc` grows them; freed, they are "     \
           "kept for reuse as other large blocks are (`mallopt(M_MMAP_THRESHOLD)` sets this "     \
           "and sends blocks past it back to the OS as they are freed, as glibc does)")           \
    OPTION(PURGE_DELAY_MS, purge_delay_ms, MS, "1000", "",                                        \
           "free memory unused this long goes back to the OS, by a background thread (started "   \
           "once the process holds over 4 MiB or has lived a quarter of the delay), also "        \
           "while the program sleeps: empty superblocks, free spans, and the contents of caches " \
           "and central batches that saw no traffic (with nothing left, the thread sleeps until " \
           "a free or an allocation wakes it); a class's empty superblocks unused for an eighth " \
           "of it go back as soon as another class brings pages in; `0` at once (no thread; "     \
           "caches stay at one batch per class and nothing is parked centrally, as in `TIGHT`), " \
           "`-1` never (only `RETAIN_BYTES` and `malloc_trim`)")                                  \
    OPTION(LIMIT_BYTES, limit_bytes, SIZE, "0", "",                                               \
           "resident bytes (corealloc's estimate, metadata included) past which allocation fails " \
           "with `ENOMEM` after trimming; `0` no limit")                                          \
    OPTION(CGROUP_LIMIT, cgroup_limit, BOOL, "0", "",                                             \
           "use the cgroup's `memory.max` as such a limit: `NULL` instead of the OOM killer. "    \
           "Either way, past 7/8 of `memory.max`/`memory.high` free memory is purged at once")    \
    OPTION(CGROUP_ROOT, cgroup_root, STRING, "", "",                                              \
           "where the cgroup v2 hierarchy is mounted (default: from `/proc/self/mountinfo`; "     \
           "cgroup v1's memory controller is read too)")                                          \
    OPTION(THP, thp, CHOICE, "never", "never|large|always",                                       \
           "transparent huge pages: `never`, `large` (blocks from `HUGE_THRESHOLD` only: first "  \
           "touch of a 64 MiB block about 4x faster, but a sparsely used one costs up to 2 MiB "  \
           "per touched page), `always`")                                                         \
    OPTION(SECURE, secure, BOOL, "0", "",                                                         \
           "hardened mode, no rebuild: every call takes a slow path with per-thread caches; a "   \
           "guard page after every superblock and large block, blocks handed out in random "      \
           "order, freed blocks filled and checked when reused (a write after free is reported), " \
           "every free checked against its superblock, and a canary past the requested size "     \
           "checked at free (a write past it is reported)")                                       \
    OPTION(TIGHT, tight, BOOL, "0", "",                                                           \
           "seed 001's guarantee: blocks handed out lowest address first, no new superblock "     \
           "while a partly free one exists, nothing parked centrally")                            \
    OPTION(THREAD_CACHES_BYTES, thread_caches_bytes, SIZE, "64M", "",                             \
           "per-thread front end: what all threads' caches may hold together (each at most 256 "  \
           "KiB)")                                                                                \
    OPTION(CPU_CACHE_BYTES, cpu_cache_bytes, SIZE, "8M", "",                                      \
           "per-CPU front end: how far one CPU's cache may grow past a batch per class, with "    \
           "allocation demand (past its first 256 KiB, only for a class the program holds at "    \
           "least as many blocks of as the stack may take); an idle cache drained by the purger " \
           "shrinks back")                                                                        \
    OPTION(PROFILE, profile, BOOL, "0", "",                                                       \
           "heap profiling: about one allocation per `PROFILE_RATE` bytes is sampled with its "   \
           "call stack; profiles are written at exit, on `PROFILE_SIGNAL` and by "                \
           "`corealloc_profile_dump()`. The profiling library `libcorealloc-prof.so` (what "      \
           "`corealloc prof` runs) keeps the per-CPU caches; `libcorealloc.so` runs per-thread "  \
           "caches (see Profiling for the costs)")                                                \
    OPTION(PROFILE_RATE, profile_rate, SIZE, "512K", "",                                          \
           "mean bytes allocated between two samples")                                            \
    OPTION(PROFILE_PREFIX, profile_prefix, STRING, "corealloc", "",                               \
           "profiles are written to `PREFIX.<pid>.<n>.heap`, `n` counting the process's "         \
           "profiles from 1 (`corealloc prof` reads them)")                                       \
    OPTION(PROFILE_SIGNAL, profile_signal, CHOICE, "usr2", "usr2|usr1|none",                      \
           "the signal that makes a profiled process write a profile")                            \
    OPTION(PROFILE_STACK, profile_stack, CHOICE, "auto", "auto|fp|unwind",                        \
           "how call stacks are taken: `unwind` by the objects' unwind tables (glibc's "          \
           "`backtrace()` for frames they do not cover), `fp` by frame "                          \
           "pointers (the allocator's own frames unwound), `auto` frame pointers when the first "  \
           "samples' frame-pointer stacks equal the unwound ones, else `unwind`")

#define COREALLOC_VARIABLE_TABLE(VARIABLE)                                                          \
    VARIABLE(OPTIONS, "`help` prints every option with its value, default and meaning; "           \
                     "`NAME=VALUE` pairs separated by commas set options as their own variables " \
                     "would (a variable of its own wins)")                                        \
    VARIABLE(HIST_DIR, "set by `corealloc hist`: where its interposer writes")                      \
    VARIABLE(HIST_CHILDREN, "set by `corealloc hist`: whether child processes are followed")        \
    VARIABLE(TRACE_FILE, "set by `corealloc trace record`: the trace being written")                \
    VARIABLE(TRACE_CHILDREN, "set by `corealloc trace record`: whether child processes are "        \
                            "followed")                                                           \
    VARIABLE(TOOL_PID, "set by the `corealloc` tool: the process it started")                       \
    VARIABLE(PYTHON, "set by `make test`: the virtualenv python for tests that draw plots")

#endif
