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
/* A value no other live thread has: the calling thread's thread pointer. */
static inline uintptr_t rseq_thread_token(void)
{
    return (uintptr_t)__builtin_thread_pointer();
}
/* What rseq_current_id reads in line, set once by rseq_init: the ids there
 * are, and, when it found a source, the area's offset from the thread
 * pointer (0: none, ask rseq_current_id_slow). */
struct rseq_id_reader {
    long area_off;
    unsigned id_count;
};
extern INTERNAL_DATA struct rseq_id_reader rseq_id_reader;
/* Upper bound (exclusive) of ids the sections can observe. */
static inline unsigned rseq_id_count(void)
{
    return rseq_id_reader.id_count;
}
unsigned rseq_current_id_slow(void);
/* The id the calling thread ran on a moment ago (a hint, outside sections):
 * in line, as every slow path asks it two or three times (its CPU's cache,
 * lane and node lane); a thread whose area is not registered reads an id
 * past id_count, and the slow way registers it or asks sched_getcpu. */
static inline unsigned rseq_current_id(void)
{
    long off = __atomic_load_n(&rseq_id_reader.area_off, __ATOMIC_RELAXED);
    if (__builtin_expect(off != 0, 1)) {
        uint32_t id = __atomic_load_n((const uint32_t *)(rseq_thread_token() + (uintptr_t)off + RSEQ_AREA_CPU_ID),
                                      __ATOMIC_RELAXED);
        if (__builtin_expect(id < rseq_id_reader.id_count, 1))
            return id;
    }
    return rseq_current_id_slow();
}

/* After rseq_fence(id) returns, no critical section that started before the
 * call is still running on id (id < 0: on any id). */
void rseq_fence(int id);
uint64_t rseq_abort_count(void);

#endif
