#include "core/footprint.h"

#include "core/batchpool.h"
#include "core/counters.h"
#include "core/meta.h"
#include "core/pagemap.h"
#include "platform/options.h"
#include "platform/os.h"

uint32_t footprint_purger_asleep;

static size_t resident, resident_peak, lazy;
static size_t limit, pressure;
static struct container_limits container;

static size_t smaller_nonzero(size_t a, size_t b)
{
    return !a ? b : !b ? a : a < b ? a : b;
}

void footprint_init(void)
{
    container_read(opt.cgroup_root, &container);
    limit = smaller_nonzero(opt.limit_bytes, opt.cgroup_limit ? container.memory_max : 0);
    /* The kernel throttles at memory.high and kills at memory.max: purge
     * hard from 7/8 of the nearest. */
    size_t nearest = smaller_nonzero(limit, smaller_nonzero(container.memory_max, container.memory_high));
    pressure = nearest - nearest / 8;
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

bool footprint_limited(void) { return limit != 0; }

bool footprint_under_pressure(void)
{
    return pressure && __atomic_load_n(&resident, __ATOMIC_RELAXED) + metadata_bytes() > pressure;
}

void footprint_stats(struct footprint_stats *out)
{
    out->resident = __atomic_load_n(&resident, __ATOMIC_RELAXED);
    out->resident_peak = __atomic_load_n(&resident_peak, __ATOMIC_RELAXED);
    out->lazy = __atomic_load_n(&lazy, __ATOMIC_RELAXED);
    out->metadata = metadata_bytes();
    out->limit = limit;
    out->pressure = pressure;
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
