/* The shape shared by every cache, per-CPU or per-thread: a slab of
 * pointer stacks, one per size class (see struct cache_hdr in rseq.h).
 * Plain operations here are for a slab with a single owner. */
#ifndef COREALLOC_CACHE_H
#define COREALLOC_CACHE_H

#include <stdbool.h>
#include <stddef.h>

#include "arch/slab.h"
#include "core/sizeclass.h"

/* Computes where each class's stack lives in a slab. */
void cache_layout_init(void);
/* Bytes of one slab (a power of two, so slabs can be indexed by shift). */
size_t cache_slab_bytes(void);
unsigned cache_slab_shift(void);
/* Empty stacks with their initial capacity. */
void cache_slab_format(void **slab);

static inline struct cache_hdr *cache_hdr(void **slab, unsigned cls)
{
    return (struct cache_hdr *)&slab[cls];
}

/* Slots a stack gains when it grows: a batch, short of its limit. */
static inline unsigned cache_growth(const struct cache_hdr *h, unsigned cls)
{
    unsigned more = sc_info[cls].batch;
    return h->end + more > h->limit ? (unsigned)(h->limit - h->end) : more;
}

static inline void *cache_pop(void **slab, unsigned cls)
{
    struct cache_hdr *h = cache_hdr(slab, cls);
    if (__builtin_expect(h->top <= h->begin, 0))
        return NULL;
    return slab[--h->top];
}

static inline bool cache_push(void **slab, unsigned cls, void *p)
{
    struct cache_hdr *h = cache_hdr(slab, cls);
    if (__builtin_expect(h->top >= h->end, 0))
        return false;
    slab[h->top++] = p;
    return true;
}

/* Objects of cls held by the slab. */
static inline unsigned cache_count(void **slab, unsigned cls)
{
    struct cache_hdr *h = cache_hdr(slab, cls);
    return h->top > h->begin ? (unsigned)(h->top - h->begin) : 0;
}

/* Slow paths of a single-owner slab holding about budget bytes at most:
 * refill an empty stack from the central layer (growing its capacity while
 * the slab holds less than budget bytes) and pop (NULL when out of memory);
 * spill a batch to make room and push. */
void *cache_refill_pop(void **slab, unsigned cls, size_t budget);
void cache_spill_push(void **slab, unsigned cls, void *p, size_t budget);

/* Returns every object the slab holds to the central layer. Single owner. */
void cache_slab_flush(void **slab);
/* Bytes of objects held by the slab (racy read: for statistics). */
size_t cache_slab_bytes_held(void **slab);

#endif
