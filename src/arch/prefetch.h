/* A prefetch for a line about to be written: the line comes in owned, so
 * the store that follows needs no second trip to take it from the cache
 * that wrote it last (a read prefetch, or a load, brings it in shared).
 * Never faults, whatever the address. */
#ifndef COREALLOC_ARCH_PREFETCH_H
#define COREALLOC_ARCH_PREFETCH_H

#define ARCH_CACHE_LINE 64 /* what one prefetch brings */

static inline void arch_prefetch_for_write(const void *p)
{
#if defined(__x86_64__)
    /* PREFETCHW: a hint (a no-op where unsupported); gcc emits it for
     * __builtin_prefetch only when the target enables PRFCHW. */
    __asm__ volatile("prefetchw %0" ::"m"(*(const char *)p));
#else
    __builtin_prefetch(p, 1, 3);
#endif
}

#endif
