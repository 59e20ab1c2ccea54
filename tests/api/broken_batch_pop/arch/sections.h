/* Found before src/arch/sections.h by the broken-batch-pop build, which the
 * fuzzer (alloc_fuzz.cpp) must catch: the x86-64 sections with a batch pop
 * off by one, committing top - k + 1 while it hands out all k objects.
 * When a full stack spills a batch to the central layer, the first object
 * of the batch stays cached as well, and is handed out twice: once from
 * the cache, once from the central batch. */
#ifndef COREALLOC_TEST_BROKEN_BATCH_POP_H
#define COREALLOC_TEST_BROKEN_BATCH_POP_H

#if !defined(__x86_64__)
#error "the broken-batch-pop sections exist for x86-64 only"
#endif

#define arch_slab_pop_batch arch_slab_pop_batch_correct
#include "arch/x86_64/rseq_sections.h"
#undef arch_slab_pop_batch

/* The right pop, then its first object put back where it was: what the
 * wrong commit leaves (not in the same section, which the bug does not
 * need). */
static inline unsigned arch_slab_pop_batch(const struct slab_layout *layout, unsigned cls, void **out,
                                           unsigned n)
{
    unsigned k = arch_slab_pop_batch_correct(layout, cls, out, n);
    if (k > 1)
        arch_slab_push_batch(layout, cls, out, 1);
    return k;
}

#endif
