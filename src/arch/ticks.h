/* A cheap clock for rough intervals on slow paths: the time-stamp counter
 * on x86-64 (a few nanoseconds a read, where the kernel's clock takes
 * twenty), microseconds of the monotonic clock elsewhere. ARCH_TICKS_PER_US
 * is a rough rate: the counter runs at the processor's nominal frequency,
 * 1 to 4 GHz on the machines of this decade, taken as 2.5. */
#ifndef COREALLOC_ARCH_TICKS_H
#define COREALLOC_ARCH_TICKS_H

#include <stdint.h>

#if defined(__x86_64__)
#define ARCH_TICKS_PER_US 2500u
static inline uint64_t arch_ticks(void)
{
    return __builtin_ia32_rdtsc();
}
#else
#include "platform/os.h"
#define ARCH_TICKS_PER_US 1u
static inline uint64_t arch_ticks(void)
{
    return os_monotonic_ns() / 1000;
}
#endif

#endif
