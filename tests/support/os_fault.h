/* The OS refusing memory, for fault-injection tests. The shared library
 * corealloc_test_os_fault, linked into a test program, interposes mmap,
 * mprotect, mremap and madvise: the calls corealloc makes (every request of
 * src/platform/os.c, from a libcorealloc*.so) are counted and, when chosen,
 * refused with ENOMEM without reaching the kernel, as the kernel refuses
 * them when memory or mappings run out; calls from anywhere else pass
 * through untouched. Nothing is refused until a test asks, or until the
 * environment does for the whole process, start-up included:
 *
 *   OS_FAULT_EVERY=N[:MASK]   refuse every N-th call of the kinds in MASK
 *                             (a number, bits as below; default all)
 */
#ifndef COREALLOC_TEST_OS_FAULT_H
#define COREALLOC_TEST_OS_FAULT_H

#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

/* What corealloc asks of the kernel: address space (reserve, map), commit
 * (reserved pages made writable), moving pages, advice (purging, huge
 * pages, core dumps). */
enum os_call { OS_CALL_MMAP, OS_CALL_MPROTECT, OS_CALL_MREMAP, OS_CALL_MADVISE, OS_CALL_KINDS };
#define OS_CALL_BIT(kind) (1u << (kind))
#define OS_CALL_ALL ((1u << OS_CALL_KINDS) - 1)

/* From the next call on, refuse every n-th call of corealloc's whose kind
 * is in mask (n = 1: all of them). */
void os_fault_every(unsigned long n, unsigned mask);
/* From the next call on, refuse each call of a kind in mask with
 * probability 1/odds, chosen by seed and the call's number: the same
 * seed refuses the same calls of the same sequence. */
void os_fault_random(uint64_t seed, unsigned odds, unsigned mask);
/* Nothing refused from now on. */
void os_fault_off(void);

struct os_fault_counts {
    unsigned long calls[OS_CALL_KINDS];   /* corealloc's calls of each kind so far */
    unsigned long refused[OS_CALL_KINDS]; /* of which refused */
};
void os_fault_counts(struct os_fault_counts *out);
const char *os_call_name(enum os_call kind);

#ifdef __cplusplus
}
#endif

#endif
