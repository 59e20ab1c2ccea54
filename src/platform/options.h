/* The options: every tunable, read once from COREALLOC_* environment
 * variables at start-up, declared once in options_table.h. */
#ifndef COREALLOC_OPTIONS_H
#define COREALLOC_OPTIONS_H

#include <stdbool.h>
#include <stddef.h>

#include "platform/compiler.h"
#include "platform/options_table.h"
#include "platform/os.h"

/* Values of the CHOICE options, in the order of their choices. */
enum stats_mode { STATS_OFF, STATS_TEXT, STATS_JSON };
enum frontend_choice { FRONTEND_AUTO, FRONTEND_RSEQ, FRONTEND_THREAD };
enum purge_choice { PURGE_DONTNEED, PURGE_FREE };
enum thp_choice { THP_NEVER, THP_LARGE, THP_ALWAYS };
enum profile_signal_choice { PROFILE_SIGNAL_USR2, PROFILE_SIGNAL_USR1, PROFILE_SIGNAL_NONE };
enum profile_stack_choice { PROFILE_STACK_AUTO, PROFILE_STACK_FP, PROFILE_STACK_UNWIND };

#define OPTION_TYPE_BOOL bool
#define OPTION_TYPE_SIZE size_t
#define OPTION_TYPE_MS long
#define OPTION_TYPE_CHOICE int
#define OPTION_TYPE_STRING const char * /* NULL when unset */

struct options {
#define OPTION_FIELD(name, field, kind, def, choices, meaning) OPTION_TYPE_##kind field;
    COREALLOC_OPTION_TABLE(OPTION_FIELD)
#undef OPTION_FIELD
};

extern INTERNAL_DATA struct options opt;

/* How memory goes back: as COREALLOC_PURGE says, or with its address space
 * once that is short (os_address_space_short). */
static inline enum os_purge_kind opt_purge_kind(void)
{
    if (os_address_space_short())
        return OS_PURGE_UNMAP;
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

/* 1 in the profiling library (libcorealloc-prof.so, built with
 * COREALLOC_PROFILE_FASTPATH): malloc's fast path counts allocations for
 * the heap profiler, so COREALLOC_PROFILE keeps the per-CPU caches; 0 in
 * the default library, whose profiler counts in the slow paths and so
 * runs per-thread caches (api/profile.h). */
#if defined(COREALLOC_PROFILE_FASTPATH)
#define PROFILE_IN_FAST_PATH 1
#else
#define PROFILE_IN_FAST_PATH 0
#endif

/* Sets the defaults, then reads the environment: each COREALLOC_<NAME>,
 * then COREALLOC_OPTIONS (help, or NAME=VALUE pairs); warns about values
 * that do not parse and about COREALLOC_ names that are no option. No
 * allocation. Safe to call more than once. */
void options_init(void);

#endif
