/* The per-CPU slab critical sections for x86-64 (the contract is in
 * arch/slab.h), inline so the allocation fast path pays no call.
 *
 * Each asm statement emits its own struct rseq_cs into section __rseq_cs
 * (32-byte aligned), stores its address into area->rseq_cs, reads the id
 * from %fs:idoff, computes slab = base + (id << shift) and the class header
 * at slab + cls * 8, and ends with one 16-bit store to `top` (the commit).
 * The abort handler lives in section __rseq_failure, preceded by the 4-byte
 * signature (glibc's RSEQ_SIG on x86, encoded as glibc and librseq do:
 * ud1 0x53053053(%rip),%edi); it counts the abort with a relaxed `lock add`
 * (off the fast path) and jumps back to re-arm and restart the section.
 * Inputs are never modified inside a section, so a restart recomputes
 * everything from them. */
#ifndef COREALLOC_ARCH_X86_64_RSEQ_SECTIONS_H
#define COREALLOC_ARCH_X86_64_RSEQ_SECTIONS_H

#include <stdbool.h>
#include <stdint.h>

#include "arch/slab.h"
#include "platform/rseq.h"

#define ARCH_HAS_RSEQ_SECTIONS 1
#define CA_RSEQ_SIG_LIT 0x53053053 /* glibc RSEQ_SIG on x86 */
#define ARCH_RSEQ_SIGNATURE ((uint32_t)CA_RSEQ_SIG_LIT)

/* ---- critical sections ------------------------------------------------- */

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

/* Arm: label 9 is the restart point. Uses %[slab] before it is needed.
 * The result operand starts at zero, so a thread whose area holds no valid
 * id (our own area not yet registered, or glibc's registration failed: the
 * id is negative) leaves at label 2 with "miss" instead of using a wild
 * slab; the caller's slow path then registers or does without rseq. */
#define CA_RSEQ_ARM(result)                                                    \
    "xorl %k[" #result "], %k[" #result "]\n"                                    \
    "9:\n\t"                                                                   \
    "leaq 3b(%%rip), %[slab]\n\t"                                              \
    "movq %[slab], %%fs:" CA_STR(RSEQ_AREA_RSEQ_CS) "(%[off])\n"             \
    "1:\n\t"                                                                   \
    "movl %%fs:(%[idoff]), %k[slab]\n\t"                                       \
    "testl %k[slab], %k[slab]\n\t"                                             \
    "js 2f\n\t"                                                                \
    "shlq %%cl, %[slab]\n\t"                                                   \
    "addq %[base], %[slab]\n\t"

/* Signature, then the abort label 4: count and restart at 9. */
#define CA_RSEQ_ABORT                                                          \
    ".pushsection __rseq_failure, \"ax\"\n\t"                                  \
    ".byte 0x0f, 0xb9, 0x3d\n\t"                                               \
    ".long " CA_STR(CA_RSEQ_SIG_LIT) "\n"                                      \
    "4:\n\t"                                                                   \
    "lock addq $1, %[aborts]\n\t"                                              \
    "jmp 9b\n\t"                                                               \
    ".popsection\n\t"

#define CA_RSEQ_COMMON_IN                                                      \
    [off] "r"(rseq_layout.area_off), [idoff] "r"(rseq_layout.id_off), [base] "rm"(base),  \
        "c"(shift), [cls] "r"((uintptr_t)cls)

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
                         "movq -8(%[slab],%[top],8), %[item]\n\t"
                         "subl $1, %k[top]\n\t"
                         "movw %w[top], (%[slab],%[cls],8)\n"
                         "2:\n\t" CA_RSEQ_ABORT
                         : [slab] "=&r"(slab), [top] "=&r"(top), [item] "=&r"(item),
                           [aborts] "+m"(rseq_aborts)
                         : CA_RSEQ_COMMON_IN
                         : "memory", "cc");
    return item;
}

static inline bool rseq_cache_push(uintptr_t base, unsigned shift, unsigned cls, void *ptr)
{
    uintptr_t slab, top;
    unsigned ok;
    __asm__ __volatile__(CA_RSEQ_CS_DESC CA_RSEQ_ARM(ok)
                         "movzwl 4(%[slab],%[cls],8), %[ok]\n\t"
                         "movzwl (%[slab],%[cls],8), %k[top]\n\t"
                         "cmpl %[ok], %k[top]\n\t"
                         "movl $0, %[ok]\n\t"
                         "jae 2f\n\t"
                         "movq %[ptr], (%[slab],%[top],8)\n\t"
                         "addl $1, %k[top]\n\t"
                         "movl $1, %[ok]\n\t"
                         "movw %w[top], (%[slab],%[cls],8)\n"
                         "2:\n\t" CA_RSEQ_ABORT
                         : [slab] "=&r"(slab), [top] "=&r"(top), [ok] "=&r"(ok),
                           [aborts] "+m"(rseq_aborts)
                         : CA_RSEQ_COMMON_IN, [ptr] "r"(ptr)
                         : "memory", "cc");
    return ok != 0;
}

/* Pops k = min(n, top - begin) objects: out[0..k) = slots [top-k, top), then
 * one committing store of top - k. */
static inline unsigned rseq_cache_pop_batch(uintptr_t base, unsigned shift, unsigned cls, void **out,
                              unsigned n)
{
    uintptr_t slab, top, k, src, i, tmp;
    if (n == 0)
        return 0;
    __asm__ __volatile__(CA_RSEQ_CS_DESC CA_RSEQ_ARM(k)
                         "movzwl 2(%[slab],%[cls],8), %k[src]\n\t"
                         "movzwl (%[slab],%[cls],8), %k[top]\n\t"
                         "xorl %k[k], %k[k]\n\t"
                         "cmpl %k[src], %k[top]\n\t"
                         "jbe 2f\n\t"
                         "movl %k[top], %k[k]\n\t"
                         "subl %k[src], %k[k]\n\t"
                         "cmpl %[n], %k[k]\n\t"
                         "cmova %[n], %k[k]\n\t"
                         "subl %k[k], %k[top]\n\t"
                         "leaq (%[slab],%[top],8), %[src]\n\t"
                         "xorl %k[i], %k[i]\n"
                         "5:\n\t"
                         "movq (%[src],%[i],8), %[tmp]\n\t"
                         "movq %[tmp], (%[out],%[i],8)\n\t"
                         "addl $1, %k[i]\n\t"
                         "cmpl %k[k], %k[i]\n\t"
                         "jb 5b\n\t"
                         "movw %w[top], (%[slab],%[cls],8)\n"
                         "2:\n\t" CA_RSEQ_ABORT
                         : [slab] "=&r"(slab), [top] "=&r"(top), [k] "=&r"(k), [src] "=&r"(src),
                           [i] "=&r"(i), [tmp] "=&r"(tmp), [aborts] "+m"(rseq_aborts)
                         : CA_RSEQ_COMMON_IN, [out] "r"(out), [n] "rm"(n)
                         : "memory", "cc");
    return (unsigned)k;
}

/* Pushes k = min(n, end - top) objects in[0..k) to slots [top, top+k), then
 * one committing store of top + k. */
static inline unsigned rseq_cache_push_batch(uintptr_t base, unsigned shift, unsigned cls,
                               void *const *in, unsigned n)
{
    uintptr_t slab, top, k, dst, i, tmp;
    if (n == 0)
        return 0;
    __asm__ __volatile__(CA_RSEQ_CS_DESC CA_RSEQ_ARM(k)
                         "movzwl 4(%[slab],%[cls],8), %k[dst]\n\t"
                         "movzwl (%[slab],%[cls],8), %k[top]\n\t"
                         "xorl %k[k], %k[k]\n\t"
                         "cmpl %k[dst], %k[top]\n\t"
                         "jae 2f\n\t"
                         "movl %k[dst], %k[k]\n\t"
                         "subl %k[top], %k[k]\n\t"
                         "cmpl %[n], %k[k]\n\t"
                         "cmova %[n], %k[k]\n\t"
                         "leaq (%[slab],%[top],8), %[dst]\n\t"
                         "xorl %k[i], %k[i]\n"
                         "5:\n\t"
                         "movq (%[in],%[i],8), %[tmp]\n\t"
                         "movq %[tmp], (%[dst],%[i],8)\n\t"
                         "addl $1, %k[i]\n\t"
                         "cmpl %k[k], %k[i]\n\t"
                         "jb 5b\n\t"
                         "addl %k[k], %k[top]\n\t"
                         "movw %w[top], (%[slab],%[cls],8)\n"
                         "2:\n\t" CA_RSEQ_ABORT
                         : [slab] "=&r"(slab), [top] "=&r"(top), [k] "=&r"(k), [dst] "=&r"(dst),
                           [i] "=&r"(i), [tmp] "=&r"(tmp), [aborts] "+m"(rseq_aborts)
                         : CA_RSEQ_COMMON_IN, [in] "r"(in), [n] "rm"(n)
                         : "memory", "cc");
    return (unsigned)k;
}

#endif
