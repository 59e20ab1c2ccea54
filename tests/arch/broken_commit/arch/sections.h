/* Found before src/arch/sections.h by the broken-commit builds (the rseq
 * stress test's and the whole allocator's): the x86-64 sections, with a pop
 * whose section ends after reading the object and whose `top` is committed
 * by a plain store after it, in a window widened by a short spin. A
 * preemption in the window lets another thread on this CPU pop the same
 * object; the stress tests must notice. */
#ifndef COREALLOC_TEST_BROKEN_SECTIONS_H
#define COREALLOC_TEST_BROKEN_SECTIONS_H

#if !defined(__x86_64__)
#error "the broken-commit sections exist for x86-64 only"
#endif

#define rseq_cache_pop rseq_cache_pop_correct
#include "arch/x86_64/rseq_sections.h"
#undef rseq_cache_pop

static inline void *rseq_cache_pop(uintptr_t base, unsigned shift, unsigned cls)
{
    uintptr_t slab, top;
    void *item;
    __asm__ __volatile__(CA_RSEQ_CS_DESC CA_RSEQ_ARM(item)
                         "movzwl 2(%[slab],%[cls],8), %k[item]\n\t"
                         "movzwl (%[slab],%[cls],8), %k[top]\n\t"
                         "cmpl %k[item], %k[top]\n\t"
                         "movl $0, %k[item]\n\t"
                         "jbe 2f\n\t"
                         "movq -8(%[slab],%[top],8), %[item]\n"
                         "2:\n\t" CA_RSEQ_ABORT
                         : [slab] "=&r"(slab), [top] "=&r"(top), [item] "=&r"(item),
                           [aborts] "+m"(rseq_aborts)
                         : CA_RSEQ_COMMON_IN
                         : "memory", "cc");
    if (item) {
        for (int i = 0; i < 64; i++)
            __asm__ __volatile__("pause" ::: "memory");
        ((volatile struct cache_hdr *)(slab + (uintptr_t)cls * 8))->top = (uint16_t)(top - 1);
    }
    return item;
}

#endif
