/* The contract between the per-CPU slabs and the critical sections that
 * operate on them, on every architecture.
 *
 * Slab k (one per CPU id) is SLAB_BYTES at slabs + (k << SLAB_SHIFT). The first SC_COUNT 8-byte words
 * of a slab are struct cache_hdr, one per size class; the slab seen as
 * void *[] holds each class's two stacks at slot indices given by the
 * header:
 *   - the allocation stack [alloc_begin, alloc_top): objects known to be
 *     free, which malloc pops;
 *   - the free stack [?, free_top), below free_end: what free pushed, not
 *     yet verified (a double or wild free lands here, and is caught when
 *     the slow path verifies the stack in batches).
 *
 * Ids are read as 16 bits, so an unregistered area (cpu_id -1, or -2 when
 * registration failed) reads 0xFFFF or 0xFFFE: those two slabs are zero
 * pages, and a zero header stops both stacks. A thread without a
 * registered area therefore always misses, and the slow path decides.
 *
 * Sections only ever store a top (the committing store) and slots at or
 * above it; alloc_begin and free_end are written only by a thread that
 * drains a slab from outside, followed by rseq_fence(). Sections load the
 * bound before the top, so a drain must be: free_end = 0, alloc_begin =
 * 0xFFFF (sections now miss); rseq_fence(id); take both stacks; reset the
 * tops; then restore free_end, then alloc_begin (release stores, in this
 * order: a section that sees a restored bound also sees the new top). */
#ifndef COREALLOC_ARCH_SLAB_H
#define COREALLOC_ARCH_SLAB_H

#include <stddef.h>
#include <stdint.h>

struct cache_hdr {
    uint16_t alloc_top;   /* one past the last verified object */
    uint16_t alloc_begin; /* pop misses when alloc_top <= alloc_begin */
    uint16_t free_top;    /* one past the last pushed object */
    uint16_t free_end;    /* push misses when free_top >= free_end */
};
_Static_assert(sizeof(struct cache_hdr) == 8, "cache_hdr is one slot");

/* Slots [0, SLAB_HEADER_SLOTS) hold the headers (one per class, the rest
 * unused), slots [SLAB_HEADER_SLOTS, 2 * SLAB_HEADER_SLOTS) the bounds of
 * each class's stacks, which only the slow paths (and their batch sections)
 * read; the stacks follow. */
#define SLAB_HEADER_SLOTS 128
struct cache_bounds {
    uint16_t free_begin;  /* the free stack's first slot */
    uint16_t alloc_end;   /* the allocation stack holds at most up to here */
    uint16_t alloc_limit; /* alloc_end grows up to here */
    uint16_t unused;
};
_Static_assert(sizeof(struct cache_bounds) == 8, "cache_bounds is one slot");

/* Where sections find the rseq area (as an offset from the thread pointer:
 * the id that picks the slab is its cpu_id, at +4, and rseq_cs at +8) and
 * slab 0: the first fields of one cache line that the fast paths read by
 * the symbol's name, RIP-relative. slabs is read last, so a new layout is
 * published by writing it last. */
struct slab_layout {
    long area_off;
    uintptr_t slabs; /* slab k is at slabs + (k << SLAB_SHIFT) */
};
#define SLAB_LAYOUT_AREA_OFF 0
#define SLAB_LAYOUT_SLABS 8
_Static_assert(offsetof(struct slab_layout, area_off) == SLAB_LAYOUT_AREA_OFF &&
                   offsetof(struct slab_layout, slabs) == SLAB_LAYOUT_SLABS,
               "the sections' offsets into struct slab_layout");

/* Slabs are this large, at most (their layout is computed at start-up and
 * checked against it): a constant, so sections shift by an immediate. */
#define SLAB_SHIFT 17
#define SLAB_BYTES ((uintptr_t)1 << SLAB_SHIFT)
/* What an alloc_begin of a stopped stack holds. */
#define SLAB_STOPPED_BEGIN 0xffff
/* Ids an unregistered area reads as (16-bit -1 and -2): their slabs stay
 * zero (stopped). */
#define SLAB_ID_UNREGISTERED 0xffffu
#define SLAB_ID_FAILED 0xfffeu
/* Real ids stay below these. */
#define SLAB_ID_LIMIT SLAB_ID_FAILED

#endif
