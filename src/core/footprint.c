#include "core/footprint.h"

#include <string.h>

#include "core/batchpool.h"
#include "core/counters.h"
#include "core/meta.h"
#include "core/pagemap.h"
#include "platform/options.h"
#include "platform/os.h"

uint32_t footprint_purger_asleep;

static size_t resident, resident_peak, lazy;
static size_t limit, pressure;
/* Read once something needs it (see footprint_read_container). */
static struct container_limits container;
enum { CONTAINER_UNREAD, CONTAINER_READING, CONTAINER_READ };
static int container_state;

static size_t smaller_nonzero(size_t a, size_t b)
{
    return !a ? b : !b ? a : a < b ? a : b;
}

/* The nearest of the limits, read or not yet: the kernel throttles at
 * memory.high and kills at memory.max, so purge hard from 7/8 of it. */
static void set_pressure(void)
{
    size_t nearest = smaller_nonzero(limit, smaller_nonzero(container.memory_max, container.memory_high));
    __atomic_store_n(&pressure, nearest - nearest / 8, __ATOMIC_RELAXED);
}

void footprint_init(void)
{
    __atomic_store_n(&container_state, CONTAINER_UNREAD, __ATOMIC_RELAXED);
    memset(&container, 0, sizeof container);
    limit = opt.limit_bytes;
    if (opt.cgroup_limit) {
        footprint_read_container();
        limit = smaller_nonzero(limit, container.memory_max);
    }
    set_pressure();
}

void footprint_read_container(void)
{
    int state = CONTAINER_UNREAD;
    if (__atomic_compare_exchange_n(&container_state, &state, CONTAINER_READING, false, __ATOMIC_ACQUIRE,
                                    __ATOMIC_ACQUIRE)) {
        container_read(opt.cgroup_root, &container);
        set_pressure();
        __atomic_store_n(&container_state, CONTAINER_READ, __ATOMIC_RELEASE);
        return;
    }
    while (__atomic_load_n(&container_state, __ATOMIC_ACQUIRE) != CONTAINER_READ)
        os_sleep_ns(10000); /* another thread is reading it: rare, and short */
}

void footprint_fork_child(void)
{
    /* A thread of the parent was reading: the child reads again. */
    if (__atomic_load_n(&container_state, __ATOMIC_RELAXED) == CONTAINER_READING)
        __atomic_store_n(&container_state, CONTAINER_UNREAD, __ATOMIC_RELAXED);
}

/* Metadata is resident too, though it is never refused. */
static size_t metadata_bytes(void)
{
    return meta_bytes_mapped() + pagemap_bytes_mapped() + batchpool_bytes_resident();
}

bool footprint_charge(size_t bytes)
{
    size_t now = __atomic_add_fetch(&resident, bytes, __ATOMIC_RELAXED);
    if (limit && now + metadata_bytes() > limit) {
        __atomic_sub_fetch(&resident, bytes, __ATOMIC_RELAXED);
        return false;
    }
    counters_raise_peak(&resident_peak, now);
    return true;
}

void footprint_recharge(size_t bytes)
{
    counters_raise_peak(&resident_peak, __atomic_add_fetch(&resident, bytes, __ATOMIC_RELAXED));
}

void footprint_uncharge(size_t bytes)
{
    __atomic_sub_fetch(&resident, bytes, __ATOMIC_RELAXED);
}

void footprint_add_lazy(ptrdiff_t bytes)
{
    __atomic_add_fetch(&lazy, (size_t)bytes, __ATOMIC_RELAXED);
}

size_t footprint_resident_bytes(void)
{
    return __atomic_load_n(&resident, __ATOMIC_RELAXED);
}

bool footprint_limited(void) { return limit != 0; }

bool footprint_under_pressure(void)
{
    size_t at = __atomic_load_n(&pressure, __ATOMIC_RELAXED);
    return at && __atomic_load_n(&resident, __ATOMIC_RELAXED) + metadata_bytes() > at;
}

void footprint_stats(struct footprint_stats *out)
{
    footprint_read_container();
    out->resident = __atomic_load_n(&resident, __ATOMIC_RELAXED);
    out->resident_peak = __atomic_load_n(&resident_peak, __ATOMIC_RELAXED);
    out->lazy = __atomic_load_n(&lazy, __ATOMIC_RELAXED);
    out->metadata = metadata_bytes();
    out->limit = limit;
    out->pressure = __atomic_load_n(&pressure, __ATOMIC_RELAXED);
    out->container = container;
}

void footprint_wake_purger_now(void)
{
    if (__atomic_exchange_n(&footprint_purger_asleep, 0, __ATOMIC_SEQ_CST))
        os_futex_wake(&footprint_purger_asleep, 1);
}

void footprint_purger_will_sleep(void)
{
    __atomic_store_n(&footprint_purger_asleep, 1, __ATOMIC_SEQ_CST);
    __atomic_thread_fence(__ATOMIC_SEQ_CST); /* before the last look for work */
}

void footprint_purger_sleep(void)
{
    while (__atomic_load_n(&footprint_purger_asleep, __ATOMIC_ACQUIRE))
        os_futex_wait(&footprint_purger_asleep, 1);
}

void footprint_purger_stays_awake(void)
{
    __atomic_store_n(&footprint_purger_asleep, 0, __ATOMIC_RELAXED);
}
