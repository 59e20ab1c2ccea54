/* No critical sections written for this architecture: every section
 * misses, so the front end uses per-thread caches. */
#ifndef COREALLOC_ARCH_GENERIC_RSEQ_SECTIONS_H
#define COREALLOC_ARCH_GENERIC_RSEQ_SECTIONS_H

#include <stdint.h>

#include "arch/slab.h"

#define ARCH_HAS_RSEQ_SECTIONS 0
#define ARCH_RSEQ_SIGNATURE 0u
/* Sections that always miss read nothing. */
#define ARCH_PREINIT_AREA_OFFSET 0

#define ARCH_SLAB_POP(item, layout_sym, cls, miss) \
    do {                                           \
        (void)(cls), (void)(item);                 \
        goto miss;                                 \
    } while (0)

#define ARCH_SLAB_PUSH(ptr, layout_sym, cls, miss) \
    do {                                           \
        (void)(cls), (void)(ptr);                  \
        goto miss;                                 \
    } while (0)

#define ARCH_SLAB_PUSH_LOCAL(ptr, layout_sym, cls, local_ids, miss, foreign) \
    do {                                                                   \
        (void)(local_ids);                                                 \
        if (0)                                                             \
            goto foreign;                                                  \
        ARCH_SLAB_PUSH(ptr, layout_sym, cls, miss);                        \
    } while (0)
static inline unsigned arch_slab_pop_batch(const struct slab_layout *layout, unsigned cls, void **out,
                                           unsigned n)
{
    (void)layout, (void)cls, (void)out, (void)n;
    return 0;
}

static inline unsigned arch_slab_push_batch(const struct slab_layout *layout, unsigned cls,
                                            void *const *in, unsigned n)
{
    (void)layout, (void)cls, (void)in, (void)n;
    return 0;
}

#endif
