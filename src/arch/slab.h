/* The contract between the per-CPU slabs and the critical sections that
 * operate on them, on every architecture.
 *
 * Slab k (one per CPU id, or per concurrency id when mm_cid is used) is
 * (1 << shift) bytes at base + (k << shift). The first nclasses 8-byte
 * words of a slab are struct cache_hdr, one per size class; the slab seen
 * as void *[] holds each class's pointer stack in slot indices
 * [begin, limit). Slots [begin, top) hold cached objects.
 *
 * Sections only ever store `top` (the committing store) and slots at index
 * >= top; `begin` and `end` are written only by a thread that drains or
 * resizes a slab from outside, followed by rseq_fence(). Sections load the
 * bound (begin or end) before top, so a drain must be: end = 0,
 * begin = 0xFFFF (sections now miss); rseq_fence(id); take slots
 * [begin, top); top = begin; then restore end, then begin (release stores,
 * in this order: a section that sees a restored bound also sees the new
 * top). */
#ifndef COREALLOC_ARCH_SLAB_H
#define COREALLOC_ARCH_SLAB_H

#include <stdint.h>

struct cache_hdr {
    uint16_t top;   /* one past the last cached object */
    uint16_t begin; /* pop fails when top <= begin */
    uint16_t end;   /* push fails when top >= end (current capacity) */
    uint16_t limit; /* end may grow up to limit */
};
_Static_assert(sizeof(struct cache_hdr) == 8, "cache_hdr is one slot");

#endif
