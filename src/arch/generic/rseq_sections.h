/* No critical sections written for this architecture: every section
 * misses, so the front end uses per-thread caches. */
#ifndef COREALLOC_ARCH_GENERIC_RSEQ_SECTIONS_H
#define COREALLOC_ARCH_GENERIC_RSEQ_SECTIONS_H

#include <stdbool.h>
#include <stdint.h>

#include "arch/slab.h"

#define ARCH_HAS_RSEQ_SECTIONS 0
#define ARCH_RSEQ_SIGNATURE 0u

static inline void *rseq_cache_pop(uintptr_t base, unsigned shift, unsigned cls)
{
    (void)base, (void)shift, (void)cls;
    return NULL;
}
static inline bool rseq_cache_push(uintptr_t base, unsigned shift, unsigned cls, void *ptr)
{
    (void)base, (void)shift, (void)cls, (void)ptr;
    return false;
}
static inline unsigned rseq_cache_pop_batch(uintptr_t base, unsigned shift, unsigned cls,
                                            void **out, unsigned n)
{
    (void)base, (void)shift, (void)cls, (void)out, (void)n;
    return 0;
}
static inline unsigned rseq_cache_push_batch(uintptr_t base, unsigned shift, unsigned cls,
                                             void *const *in, unsigned n)
{
    (void)base, (void)shift, (void)cls, (void)in, (void)n;
    return 0;
}

#endif
