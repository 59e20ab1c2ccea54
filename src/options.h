/* The options table: every tunable, read once from COREALLOC_* environment
 * variables at start-up (documented in README.md, "Options"). */
#ifndef COREALLOC_OPTIONS_H
#define COREALLOC_OPTIONS_H

#include <stdbool.h>
#include <stddef.h>

#include "os.h"

enum stats_mode { STATS_OFF, STATS_TEXT, STATS_JSON };
enum frontend_choice { FRONTEND_AUTO, FRONTEND_RSEQ, FRONTEND_THREAD };
enum purge_choice { PURGE_DONTNEED, PURGE_FREE };
enum thp_choice { THP_NEVER, THP_LARGE, THP_ALWAYS };

struct options {
    int stats;               /* enum stats_mode: report at exit */
    const char *stats_file;  /* where the report goes (default stderr) */
    bool abort_on_error;     /* abort on an invalid free instead of reporting */
    bool zones;              /* reserve address-space zones (else page map only) */
    int frontend;            /* enum frontend_choice */
    bool rseq_mm_cid;        /* per-CPU caches indexed by concurrency id */
    size_t retain_bytes;     /* empty superblock bytes kept before purging */
    int purge;               /* enum purge_choice */
    size_t huge_threshold;   /* large blocks from this size: purged at free, moved by mremap */
    long purge_delay_ms;     /* free memory goes back after this long unused; 0 at once, -1 never */
    size_t limit_bytes;      /* resident bytes past which allocation fails; 0 none */
    bool cgroup_limit;       /* the cgroup's memory.max is such a limit too */
    const char *cgroup_root; /* where cgroup v2 is mounted (found when NULL) */
    int thp;                 /* enum thp_choice: where transparent huge pages may back us */
    bool tight;              /* seed 001's guarantee: lowest address first, no needless superblock */
    size_t thread_caches_bytes; /* per-thread front end: what all thread caches may hold together */
    size_t cpu_cache_bytes;     /* per-CPU front end: growth of one CPU's cache past a batch per class */
};

extern struct options opt;

static inline enum os_purge_kind opt_purge_kind(void)
{
    return opt.purge == PURGE_FREE ? OS_PURGE_FREE : OS_PURGE_DONTNEED;
}

/* Whether free blocks may wait above their superblocks: in caches grown
 * for them and in batches parked centrally. Not in tight mode (they wait in
 * superblocks, where lowest-address-first finds them), nor with a zero
 * purge delay (superblocks empty, and are purged, as the frees arrive). */
static inline bool opt_free_blocks_wait(void)
{
    return !opt.tight && opt.purge_delay_ms != 0;
}

/* Parses the environment (no allocation). Safe to call more than once. */
void options_init(void);

#endif
