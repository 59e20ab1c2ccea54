#include "core/counters.h"

#include <stdbool.h>

static size_t mapped, mapped_peak, held, held_peak;
static uint64_t purged_total;

void counters_raise_peak(size_t *peak, size_t now)
{
    size_t seen = __atomic_load_n(peak, __ATOMIC_RELAXED);
    while (now > seen &&
           !__atomic_compare_exchange_n(peak, &seen, now, true, __ATOMIC_RELAXED, __ATOMIC_RELAXED))
        ;
}

void counters_add_mapped(ptrdiff_t bytes)
{
    counters_raise_peak(&mapped_peak, __atomic_add_fetch(&mapped, (size_t)bytes, __ATOMIC_RELAXED));
}

void counters_add_held(ptrdiff_t bytes)
{
    size_t now = __atomic_add_fetch(&held, (size_t)bytes, __ATOMIC_RELAXED);
    if (bytes > 0)
        counters_raise_peak(&held_peak, now);
}

size_t counters_held_bytes(void) { return __atomic_load_n(&held, __ATOMIC_RELAXED); }

void counters_add_purged(size_t bytes) { __atomic_add_fetch(&purged_total, bytes, __ATOMIC_RELAXED); }

void counters_read(struct counters *out)
{
    out->mapped = __atomic_load_n(&mapped, __ATOMIC_RELAXED);
    out->mapped_peak = __atomic_load_n(&mapped_peak, __ATOMIC_RELAXED);
    out->held = __atomic_load_n(&held, __ATOMIC_RELAXED);
    out->held_peak = __atomic_load_n(&held_peak, __ATOMIC_RELAXED);
    out->purged_total = __atomic_load_n(&purged_total, __ATOMIC_RELAXED);
}
