/* The contract between the per-CPU slabs and the critical sections that
 * operate on them, on every architecture.
 *
 * Slab k (one per CPU id) is SLAB_BYTES at slabs + (k << SLAB_SHIFT). The
 * first 8-byte words of a slab are struct cache_hdr (top and end), one
 * per stack (a size class's, or one the cache keeps beside them), and
 * SLAB_HEADER_SLOTS words further, struct cache_base (begin); the slab
 * seen as void *[] holds each stack of free objects in slots [begin,
 * top), below end. Where the stacks lie
 * is the cache's business (frontend/cache.h): sections read no more. 32-bit indices: a
 * class may cache tens of thousands of small objects. malloc pops, free
 * pushes: free has checked the object (and marked it free) before it
 * pushes.
 *
 * Ids are read as signed 32 bits, so an unregistered area (cpu_id -1, or
 * -2 when registration failed) finds the slab one or two below slab 0:
 * those stay zero, and a zero header stops its stack. A thread without a
 * registered area therefore always misses, and the slow path decides (a
 * zero page holds both rows). The per-CPU slabs are one mapping from
 * slab -2 up.
 *
 * Sections only ever store top (the committing store) and slots at or
 * above it; begin and end are written only by a thread that resizes or
 * drains a slab from outside. A section may read top before the bounds,
 * so it may pair a top from before a store to the header with bounds from
 * after it: a drain is therefore end = 0, begin = ~0 (sections now
 * miss); rseq_fence(id); take the stack; reset top; rseq_fence(id) again
 * (no section still holds the old top); then restore end and begin.
 * Growing end needs no fence: a section that read the old end saw less
 * room. */
#ifndef COREALLOC_ARCH_SLAB_H
#define COREALLOC_ARCH_SLAB_H

#include <stddef.h>
#include <stdint.h>

struct cache_hdr {
    uint32_t top; /* one past the last object */
    uint32_t end; /* push misses when top >= end (the current capacity) */
};
_Static_assert(sizeof(struct cache_hdr) == 8, "cache_hdr is one slot");
struct cache_base {
    uint32_t begin; /* pop misses when top <= begin */
    uint32_t spare; /* the cache's own (frontend/cache.c) */
};
_Static_assert(sizeof(struct cache_base) == 8, "cache_base is one slot");

/* Slots [0, SLAB_HEADER_SLOTS) hold the headers (one per class, the rest
 * unused), the next SLAB_HEADER_SLOTS the bases; the cache's own rows and
 * the stacks follow. */
#define SLAB_HEADER_SLOTS 128
#define SLAB_BASE_OFFSET (SLAB_HEADER_SLOTS * 8) /* bytes from a header to its base */

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
#define SLAB_SHIFT 24
#define SLAB_BYTES ((uintptr_t)1 << SLAB_SHIFT)
/* What the begin of a stopped stack holds. */
#define SLAB_STOPPED_BEGIN 0xffffffffu
/* The slabs below slab 0 that an unregistered area's ids (-1 and -2)
 * find: they stay zero (stopped). */
#define SLAB_IDS_STOPPED 2u
/* Real ids stay below this (16 MiB of address space each). */
#define SLAB_ID_LIMIT 0x10000u

#endif
