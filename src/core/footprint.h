/* Resident memory accounting: an estimate of the bytes corealloc keeps
 * resident (memory handed out, or freed but not yet returned to the OS),
 * checked against a limit (COREALLOC_LIMIT_BYTES, or the cgroup's
 * memory.max by option) so allocation fails with ENOMEM before the kernel
 * kills the process; and near the container's limits, a signal to purge at
 * once rather than after the purge delay. */
#ifndef COREALLOC_FOOTPRINT_H
#define COREALLOC_FOOTPRINT_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "platform/container.h"
#include "platform/options.h"

/* Reads the options (start-up, no allocation), and the container's limits
 * only if COREALLOC_CGROUP_LIMIT makes memory.max a limit: reading the
 * cgroup files costs a short process a third of a millisecond. */
void footprint_init(void);
/* Reads the container's limits, once (the purge thread as it starts, the
 * statistics); until then, pressure comes from COREALLOC_LIMIT_BYTES alone.
 * No allocation. */
void footprint_read_container(void);
/* In a child after fork: a read the parent had under way starts over. */
void footprint_fork_child(void);
/* Counts bytes about to become resident. False, with nothing counted, when
 * that would pass the limit. */
bool footprint_charge(size_t bytes);
/* Bytes coming back that were counted before (pages of a superblock
 * formatted under the limit): counted again, never refused. */
void footprint_recharge(size_t bytes);
/* Bytes returned to the OS (or freed lazily, which the kernel may reclaim). */
void footprint_uncharge(size_t bytes);
/* Bytes freed with MADV_FREE and not reused since: resident until the kernel
 * needs them, not counted as in use. Negative deltas when reused. */
void footprint_add_lazy(ptrdiff_t bytes);

struct footprint_stats {
    size_t resident, resident_peak, lazy, metadata;
    size_t limit;     /* allocation fails past this; 0 none */
    size_t pressure;  /* past this, free memory is purged at once; 0 none */
    struct container_limits container;
};
void footprint_stats(struct footprint_stats *out);
/* The bytes counted resident now (the cheap part of footprint_stats). */
size_t footprint_resident_bytes(void);
/* Whether allocation can fail at a limit (so trimming may make room). */
bool footprint_limited(void);
/* Near the memory limits: purge now instead of after the delay. */
bool footprint_under_pressure(void);
/* Memory freed now goes back at once: a zero purge delay, or near the limits. */
static inline bool footprint_purge_at_once(void)
{
    return opt.purge_delay_ms == 0 || footprint_under_pressure();
}

/* The purge thread sleeps, without waking, while nothing is left to purge
 * (policy/purger.c). The paths that leave free memory behind wake it: a
 * free that reaches the central layer or the page heap, and allocation
 * slow paths (they grow the caches that frees then fill). While it is
 * awake, a wake is one load. */
extern INTERNAL_DATA uint32_t footprint_purger_asleep;
void footprint_wake_purger_now(void);
static inline void footprint_wake_purger(void)
{
    if (__builtin_expect(__atomic_load_n(&footprint_purger_asleep, __ATOMIC_SEQ_CST) != 0, 0))
        footprint_wake_purger_now();
}
/* For the purge thread: says it is about to sleep (so a wake from now on
 * is not lost; it then looks for work once more), sleeps until woken, or
 * takes the saying back. */
void footprint_purger_will_sleep(void);
void footprint_purger_sleep(void);
void footprint_purger_stays_awake(void);

#endif
