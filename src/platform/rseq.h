/* Restartable sequences, the kernel side (seed 000's MP-RCS on Linux rseq):
 * finding or registering the thread's rseq area, the id a critical section
 * reads (cpu_id), and the membarrier
 * fence that lets another thread change what sections use. The sections
 * themselves are assembly, per architecture, in arch/.
 *
 * Every area is at thread pointer + a constant (glibc's __rseq_offset, or
 * our own initial-exec TLS area's offset, the same in every thread), so a
 * section finds it and its id with two offsets from the thread pointer. */
#ifndef COREALLOC_RSEQ_H
#define COREALLOC_RSEQ_H

#include <stdbool.h>
#include <stdint.h>

#include "platform/compiler.h"

/* Offsets of the kernel's struct rseq (uapi linux/rseq.h). */
#define RSEQ_AREA_CPU_ID 4
#define RSEQ_AREA_RSEQ_CS 8

enum rseq_source {
    RSEQ_SOURCE_NONE,  /* kernel refused (ENOSYS, valgrind), disabled, or no sections here */
    RSEQ_SOURCE_GLIBC, /* glibc registered the area (__rseq_size != 0) */
    RSEQ_SOURCE_OWN,   /* we registered our own area per thread */
};

/* Sections restarted by the kernel so far (seed 000 Table 2), counted by
 * the sections' abort handlers. */
extern INTERNAL_DATA uint64_t rseq_aborts;

/* Process-wide detection, once, before any other call. signature: the
 * architecture's abort signature (for our own registration); without
 * use_membarrier, fences take their sched_setaffinity fallback. Returns
 * the source found. */
enum rseq_source rseq_init(uint32_t signature, bool use_membarrier);
enum rseq_source rseq_source(void);
/* Upper bound (exclusive) of ids the sections can observe. */
unsigned rseq_id_count(void);
/* From the thread pointer: the area in use (its cpu_id is what sections
 * read). Meaningful once rseq_init found a source. */
long rseq_area_offset(void);
/* From the thread pointer: an area that is never registered, whose ids
 * read as -1 in every thread (for sections that must always miss). */
long rseq_idle_area_offset(void);
/* From the thread pointer: an area that is never registered, whose id each
 * thread sets for itself (-1 until then): sections that read it run on a
 * slab the thread owns, with nothing to restart them (so nothing but its
 * thread may use that slab). */
long rseq_thread_area_offset(void);
void rseq_thread_area_set_id(int id);

/* Makes sure the calling thread has a registered area (registers our own
 * when the source is RSEQ_SOURCE_OWN). Cheap after the first call. */
bool rseq_thread_ready(void);
/* The id the calling thread ran on a moment ago (a hint, outside sections). */
unsigned rseq_current_id(void);
/* A value no other live thread has: the calling thread's thread pointer. */
static inline uintptr_t rseq_thread_token(void)
{
    return (uintptr_t)__builtin_thread_pointer();
}

/* After rseq_fence(id) returns, no critical section that started before the
 * call is still running on id (id < 0: on any id). */
void rseq_fence(int id);
uint64_t rseq_abort_count(void);

#endif
