/* The per-CPU slab critical sections for x86-64 (the contract is in
 * arch/slab.h): the two fast ones as asm goto macros that jump straight to
 * the caller's miss label, and the batch ones for the slow paths.
 *
 * Each asm statement emits its own struct rseq_cs into section __rseq_cs
 * (32-byte aligned), stores its address into area->rseq_cs, reads the id
 * (cpu_id, sign-extended), computes slab = slabs + (id << SLAB_SHIFT) and
 * the class header at slab + cls * 8, and ends with one 32-bit store of a
 * top (the commit). The abort handler lives in section __rseq_failure,
 * preceded by the 4-byte signature (glibc's RSEQ_SIG on x86, encoded as
 * glibc and librseq do: ud1 0x53053053(%rip),%edi); it counts the abort
 * with a relaxed `lock add` (off the fast path) and jumps back to re-arm and
 * restart the section. Inputs are never modified inside a section, so a
 * restart recomputes everything from them. */
#ifndef COREALLOC_ARCH_X86_64_RSEQ_SECTIONS_H
#define COREALLOC_ARCH_X86_64_RSEQ_SECTIONS_H

#include <stdint.h>

#include "arch/slab.h"
#include "platform/rseq.h"

#define ARCH_HAS_RSEQ_SECTIONS 1
#define CA_RSEQ_SIG_LIT 0x53053053 /* glibc RSEQ_SIG on x86 */
#define ARCH_RSEQ_SIGNATURE ((uint32_t)CA_RSEQ_SIG_LIT)

/* Before start-up the fast paths must miss without any state of ours (the
 * first allocation may come before our constructor, even from the dynamic
 * loader), and the offset of any TLS of ours is only known at run time.
 * So the layout they start with arms and reads inside glibc's thread
 * control block (tcbhead_t), in __glibc_unused2: padding glibc keeps for the
 * size programs like AddressSanitizer expect, and has not used since 2.26.
 * The id read there (at +4) is padding nobody writes: 0, a stopped slab. The first slow path starts the allocator up and replaces
 * the layout. */
#define ARCH_PREINIT_AREA_OFFSET 0x100

#define CA_STR_(x) #x
#define CA_STR(x) CA_STR_(x)

/* The descriptor (label 3) for the section [1, 2) with abort label 4. */
#define CA_RSEQ_CS_DESC                                                        \
    ".pushsection __rseq_cs, \"aw\"\n\t"                                       \
    ".balign 32\n"                                                             \
    "3:\n\t"                                                                   \
    ".long 0, 0\n\t"                                                           \
    ".quad 1f, (2f - 1f), 4f\n\t"                                              \
    ".popsection\n"

/* Arm (label 9 is the restart point), then, inside the section, the id
 * this thread runs on now, then its slab, in %[slab]. The struct slab_layout's
 * fields are read here, at pre FIELD post: a symbol's name RIP-relative
 * (the fast paths: no register spent on its address), or an operand
 * holding its address (the slow paths). %[top] and %[slab] are scratch. */
#define CA_RSEQ_ARM_AND_READ_ID(pre, post)                                     \
    "9:\n\t"                                                                   \
    "movq " pre CA_STR(SLAB_LAYOUT_AREA_OFF) post ", %[slab]\n\t"             \
    "leaq 3b(%%rip), %[top]\n\t"                                              \
    "movq %[top], %%fs:" CA_STR(RSEQ_AREA_RSEQ_CS) "(%[slab])\n"               \
    "1:\n\t"                                                                   \
    "movslq %%fs:" CA_STR(RSEQ_AREA_CPU_ID) "(%[slab]), %[slab]\n\t"
#define CA_RSEQ_SLAB_OF_ID(pre, post)                                          \
    "shlq $" CA_STR(SLAB_SHIFT) ", %[slab]\n\t"                               \
    "addq " pre CA_STR(SLAB_LAYOUT_SLABS) post ", %[slab]\n\t"
#define CA_RSEQ_ARM_AND_FIND_SLAB(pre, post) CA_RSEQ_ARM_AND_READ_ID(pre, post) CA_RSEQ_SLAB_OF_ID(pre, post)
#define CA_AT_SYMBOL(sym) CA_STR(sym) "+", "(%%rip)"
#define CA_AT_OPERAND "", "(%[layout])"
#define CA_ARM(where) CA_ARM_(where)
#define CA_ARM_(pre, post) CA_RSEQ_ARM_AND_FIND_SLAB(pre, post)
#define CA_ARM_READ_ID(where) CA_ARM_READ_ID_(where)
#define CA_ARM_READ_ID_(pre, post) CA_RSEQ_ARM_AND_READ_ID(pre, post)
#define CA_SLAB_OF_ID(where) CA_SLAB_OF_ID_(where)
#define CA_SLAB_OF_ID_(pre, post) CA_RSEQ_SLAB_OF_ID(pre, post)

/* Signature, then the abort label 4: count and restart at 9. */
#define CA_RSEQ_ABORT                                                          \
    ".pushsection __rseq_failure, \"ax\"\n\t"                                  \
    ".byte 0x0f, 0xb9, 0x3d\n\t"                                               \
    ".long " CA_STR(CA_RSEQ_SIG_LIT) "\n"                                      \
    "4:\n\t"                                                                   \
    "lock addq $1, rseq_aborts(%%rip)\n\t"                                     \
    "jmp 9b\n\t"                                                               \
    ".popsection\n\t"


/* Pops the top of the class's stack into item (a void *), or jumps to
 * miss when it is empty (or stopped). item is loaded into %rax, where
 * malloc returns it: no move after the section. */
#define ARCH_SLAB_POP(item_, layout_sym, cls_, miss)                           \
    do {                                                                       \
        uintptr_t slab_, top_;                                                 \
        __asm__ __volatile__ goto(CA_RSEQ_CS_DESC CA_ARM(CA_AT_SYMBOL(layout_sym)) \
                     "movl (%[slab],%[cls],8), %k[top]\n\t"                    \
                     "cmpl " CA_STR(SLAB_BASE_OFFSET) "(%[slab],%[cls],8), %k[top]\n\t" \
                     "jbe %l[" #miss "]\n\t"                                   \
                     "movq -8(%[slab],%[top],8), %[item]\n\t"                  \
                     "subl $1, %k[top]\n\t"                                    \
                     "movl %k[top], (%[slab],%[cls],8)\n"                      \
                     "2:\n\t" CA_RSEQ_ABORT                                    \
                     : [slab] "=&r"(slab_), [top] "=&r"(top_), [item] "=&a"(item_) \
                     : [cls] "r"((uintptr_t)(cls_))                            \
                     : "memory", "cc"                                          \
                     : miss);                                                  \
    } while (0)

/* The push once %[slab] is found: the commit, or a jump to miss. */
#define CA_PUSH_ON_SLAB(miss)                                                  \
    "movl (%[slab],%[cls],8), %k[top]\n\t"                                    \
    "cmpl 4(%[slab],%[cls],8), %k[top]\n\t"                                   \
    "jae %l[" #miss "]\n\t"                                                   \
    "movq %[ptr], (%[slab],%[top],8)\n\t"                                     \
    "addl $1, %k[top]\n\t"                                                    \
    "movl %k[top], (%[slab],%[cls],8)\n"
/* Pushes ptr on the class's stack, or jumps to miss when it is full (or
 * stopped). */
#define ARCH_SLAB_PUSH(ptr_, layout_sym, cls_, miss)                           \
    do {                                                                       \
        uintptr_t slab_, top_;                                                 \
        __asm__ __volatile__ goto(CA_RSEQ_CS_DESC CA_ARM(CA_AT_SYMBOL(layout_sym)) \
                     CA_PUSH_ON_SLAB(miss)                                     \
                     "2:\n\t" CA_RSEQ_ABORT                                    \
                     : [slab] "=&r"(slab_), [top] "=&r"(top_)                  \
                     : [cls] "r"((uintptr_t)(cls_)), [ptr] "r"(ptr_)          \
                     : "memory", "cc"                                          \
                     : miss);                                                  \
        (void)slab_, (void)top_;                                               \
    } while (0)
/* The same where bit id % 32 of local_ids (a uint32_t) says the id this
 * thread runs on keeps the block; otherwise jumps to foreign, with one bit
 * test on the id the section reads anyway. */
#define ARCH_SLAB_PUSH_LOCAL(ptr_, layout_sym, cls_, local_ids_, miss, foreign) \
    do {                                                                       \
        uintptr_t slab_, top_;                                                 \
        __asm__ __volatile__ goto(CA_RSEQ_CS_DESC CA_ARM_READ_ID(CA_AT_SYMBOL(layout_sym)) \
                     "btl %k[slab], %k[ids]\n\t"                               \
                     "jnc %l[" #foreign "]\n\t"                                \
                     CA_SLAB_OF_ID(CA_AT_SYMBOL(layout_sym))                   \
                     CA_PUSH_ON_SLAB(miss)                                     \
                     "2:\n\t" CA_RSEQ_ABORT                                    \
                     : [slab] "=&r"(slab_), [top] "=&r"(top_)                  \
                     : [cls] "r"((uintptr_t)(cls_)), [ptr] "r"(ptr_),         \
                       [ids] "r"((uint32_t)(local_ids_))                        \
                     : "memory", "cc"                                          \
                     : miss, foreign);                                         \
        (void)slab_, (void)top_;                                               \
    } while (0)

/* Copies k (at least 1) pointers from [from] to [to] inside a section:
 * an odd one first, then two at a time (a batch is up to 64 pointers,
 * moved on every refill and spill). Uses i, tmp and xmm0. */
#define CA_COPY_POINTERS(from, to)                                   \
    "xorl %k[i], %k[i]\n\t"                                          \
    "testl $1, %k[k]\n\t"                                            \
    "jz 5f\n\t"                                                      \
    "movq (%[" from "]), %[tmp]\n\t"                                 \
    "movq %[tmp], (%[" to "])\n\t"                                   \
    "movl $1, %k[i]\n\t"                                             \
    "cmpl %k[k], %k[i]\n\t"                                          \
    "jae 6f\n"                                                        \
    "5:\n\t"                                                         \
    "movdqu (%[" from "],%[i],8), %%xmm0\n\t"                        \
    "movdqu %%xmm0, (%[" to "],%[i],8)\n\t"                          \
    "addl $2, %k[i]\n\t"                                             \
    "cmpl %k[k], %k[i]\n\t"                                          \
    "jb 5b\n"                                                         \
    "6:\n\t"

/* Pops up to n objects off the class's stack into out[] (the top last, at
 * out[k-1]): k = min(n, top - begin), then one committing store of
 * top - k. 0 when empty or stopped. */
static inline unsigned arch_slab_pop_batch(const struct slab_layout *layout, unsigned cls,
                                           void **out, unsigned n)
{
    uintptr_t slab, top, k, src, i, tmp;
    if (n == 0)
        return 0;
    __asm__ __volatile__(CA_RSEQ_CS_DESC CA_ARM(CA_AT_OPERAND)
                         "xorl %k[k], %k[k]\n\t"
                         "movl " CA_STR(SLAB_BASE_OFFSET) "(%[slab],%[cls],8), %k[src]\n\t"
                         "movl (%[slab],%[cls],8), %k[top]\n\t"
                         "cmpl %k[src], %k[top]\n\t"
                         "jbe 2f\n\t"
                         "movl %k[top], %k[k]\n\t"
                         "subl %k[src], %k[k]\n\t"
                         "cmpl %[n], %k[k]\n\t"
                         "cmova %[n], %k[k]\n\t"
                         "subl %k[k], %k[top]\n\t"
                         "leaq (%[slab],%[top],8), %[src]\n\t"
                         CA_COPY_POINTERS("src", "out")
                         "movl %k[top], (%[slab],%[cls],8)\n"
                         "2:\n\t" CA_RSEQ_ABORT
                         : [slab] "=&r"(slab), [top] "=&r"(top), [k] "=&r"(k), [src] "=&r"(src),
                           [i] "=&r"(i), [tmp] "=&r"(tmp)
                         : [layout] "r"(layout), [cls] "r"((uintptr_t)cls), [out] "r"(out), [n] "rm"(n)
                         : "memory", "cc", "xmm0");
    return (unsigned)k;
}

/* Pushes in[0..n) on the class's stack if all n fit below end, then one
 * committing store of top + n: n, or 0 when they do not fit or the stack
 * is stopped (objects move between a cache and the central layer in whole
 * batches). */
static inline unsigned arch_slab_push_batch(const struct slab_layout *layout, unsigned cls,
                                            void *const *in, unsigned n)
{
    uintptr_t slab, top, k, dst, i, tmp;
    if (n == 0)
        return 0;
    __asm__ __volatile__(CA_RSEQ_CS_DESC CA_ARM(CA_AT_OPERAND)
                         "xorl %k[k], %k[k]\n\t"
                         "movl 4(%[slab],%[cls],8), %k[dst]\n\t"
                         "movl (%[slab],%[cls],8), %k[top]\n\t"
                         "subl %k[top], %k[dst]\n\t"
                         "cmpl %[n], %k[dst]\n\t"
                         "jl 2f\n\t"
                         "movl %[n], %k[k]\n\t"
                         "leaq (%[slab],%[top],8), %[dst]\n\t"
                         CA_COPY_POINTERS("in", "dst")
                         "addl %k[k], %k[top]\n\t"
                         "movl %k[top], (%[slab],%[cls],8)\n"
                         "2:\n\t" CA_RSEQ_ABORT
                         : [slab] "=&r"(slab), [top] "=&r"(top), [k] "=&r"(k), [dst] "=&r"(dst),
                           [i] "=&r"(i), [tmp] "=&r"(tmp)
                         : [layout] "r"(layout), [cls] "r"((uintptr_t)cls), [in] "r"(in), [n] "rm"(n)
                         : "memory", "cc", "xmm0");
    return (unsigned)k;
}

#endif
