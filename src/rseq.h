/* Restartable sequences: the thread's rseq area and the per-CPU cache
 * critical sections (seed 000's MP-RCS on Linux rseq).
 *
 * Per-CPU caches are "slabs": slab k (one per CPU id, or per concurrency id
 * when mm_cid is used) is (1 << shift) bytes at base + (k << shift). The
 * first nclasses 8-byte words of a slab are struct cache_hdr, one per size
 * class; the slab seen as void *[] holds each class's pointer stack in slot
 * indices [begin, limit). Slots [begin, top) hold cached objects.
 * Critical sections only ever store `top` (the committing store) and slots
 * at index >= top; `begin` and `end` are written only by a thread that
 * drains or resizes a slab from outside, followed by rseq_fence().
 * Sections load the bound (begin or end) before top, so a drain must be:
 * end = 0, begin = 0xFFFF (sections now miss); rseq_fence(id); take slots
 * [begin, top); top = begin; then restore end, then begin (release stores,
 * in this order: a section that sees a restored bound also sees the new top).
 */
#ifndef COREALLOC_RSEQ_H
#define COREALLOC_RSEQ_H

#include <stdbool.h>
#include <stdint.h>

struct cache_hdr {
    uint16_t top;   /* one past the last cached object */
    uint16_t begin; /* pop fails when top <= begin */
    uint16_t end;   /* push fails when top >= end (current capacity) */
    uint16_t limit; /* end may grow up to limit */
};

enum rseq_source {
    RSEQ_SOURCE_NONE,  /* kernel refused (ENOSYS, valgrind) or disabled */
    RSEQ_SOURCE_GLIBC, /* glibc registered the area (__rseq_size != 0) */
    RSEQ_SOURCE_OWN,   /* we registered our own area per thread */
};

/* Process-wide detection, once, before any other call. prefer_mm_cid selects
 * the concurrency id where the kernel offers it. Returns the source found. */
enum rseq_source rseq_init(bool prefer_mm_cid);
enum rseq_source rseq_source(void);
bool rseq_uses_mm_cid(void);
/* Upper bound (exclusive) of ids the sections can observe. */
unsigned rseq_id_count(void);

/* Makes sure the calling thread has a registered area (registers our own
 * when the source is RSEQ_SOURCE_OWN). Cheap after the first call. */
bool rseq_thread_ready(void);
/* The id the calling thread ran on a moment ago (a hint, outside sections). */
unsigned rseq_current_id(void);

/* The critical sections (pop, push, batch pop/push) are inline, in
 * rseq_sections.h. Each reads the id inside the section, finds the slab and
 * commits with one store to top. */
/* After rseq_fence(id) returns, no critical section that started before the
 * call is still running on id (id < 0: on any id). */
void rseq_fence(int id);
/* Critical sections restarted by the kernel so far (seed 000 Table 2). */
uint64_t rseq_abort_count(void);

#include "rseq_sections.h"

#endif
