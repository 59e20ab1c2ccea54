/* Found before src/arch/sections.h by the broken-commit builds (the rseq
 * stress test's and the whole allocator's): the x86-64 sections, with a pop
 * whose section ends after reading the object and whose top is committed
 * by a plain store after it, in a window widened by a short spin. A
 * preemption in the window lets another thread on this CPU pop the same
 * object; the stress tests must notice. */
#ifndef COREALLOC_TEST_BROKEN_SECTIONS_H
#define COREALLOC_TEST_BROKEN_SECTIONS_H

#if !defined(__x86_64__)
#error "the broken-commit sections exist for x86-64 only"
#endif

#include "arch/x86_64/rseq_sections.h"

#undef ARCH_SLAB_POP
#define ARCH_SLAB_POP(item_, layout_sym, cls_, miss)                                  \
    do {                                                                              \
        uintptr_t slab_, top_;                                                        \
        __asm__ __volatile__ goto(CA_RSEQ_CS_DESC CA_ARM(CA_AT_SYMBOL(layout_sym))        \
                     "movl (%[slab],%[cls],8), %k[top]\n\t"                           \
                     "cmpl " CA_STR(SLAB_BASE_OFFSET) "(%[slab],%[cls],8), %k[top]\n\t" \
                     "jbe %l[" #miss "]\n\t"                                          \
                     "movq -8(%[slab],%[top],8), %[item]\n"                           \
                     "2:\n\t" CA_RSEQ_ABORT                                           \
                     : [slab] "=&r"(slab_), [top] "=&r"(top_), [item] "=&r"(item_)    \
                     : [cls] "r"((uintptr_t)(cls_))                                   \
                     : "memory", "cc"                                                 \
                     : miss);                                                         \
        for (int spin_ = 0; spin_ < 64; spin_++)                                      \
            __asm__ __volatile__("pause" ::: "memory");                               \
        ((volatile struct cache_hdr *)(slab_ + (uintptr_t)(cls_) * 8))->top =         \
            (uint32_t)(top_ - 1);                                                     \
    } while (0)

#endif
