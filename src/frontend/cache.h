/* The shape shared by every cache, per-CPU or per-thread: a slab holding,
 * per size class, an allocation stack that malloc pops and a free stack
 * that free pushes (the contract is in arch/slab.h). What free pushes is
 * not trusted: the slow path verifies the free stack a batch at a time
 * (cache_verify) before its objects can be handed out again, so a double,
 * wild or interior free is reported instead of obeyed. Plain operations
 * here are for a slab with a single owner (a thread, or a lock). */
#ifndef COREALLOC_CACHE_H
#define COREALLOC_CACHE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "arch/slab.h"
#include "core/sizeclass.h"

_Static_assert(SC_COUNT <= SLAB_HEADER_SLOTS, "a header slot per class");

/* Whether p is free in some cache or central batch of cls (racy: for
 * telling a double free from a first word that happens to hold the mark). */
typedef bool cache_holds_fn(const void *p, unsigned cls);
/* Computes where each class's stacks live in a slab; holds: the front
 * end's search of every cache. Start-up, no allocation. */
void cache_layout_init(cache_holds_fn *holds);
/* Bytes a slab's layout uses (at most SLAB_BYTES). */
size_t cache_slab_bytes(void);
/* Empty stacks at their initial capacity. free_capacity: how many objects
 * a free stack holds before it is verified (0: every free is verified at
 * once, as in secure mode). */
void cache_slab_format(void **slab, unsigned free_capacity);

static inline struct cache_hdr *cache_hdr(void **slab, unsigned cls)
{
    return (struct cache_hdr *)&slab[cls];
}

static inline struct cache_bounds *cache_bounds(void **slab, unsigned cls)
{
    return (struct cache_bounds *)&slab[SLAB_HEADER_SLOTS + cls];
}

/* Every object a cache or a central batch holds carries this mark in its
 * first word, and it is wiped when the object is handed out: free finds
 * the mark on a block that is free already (one compare with an immediate;
 * a block whose first word the program set to the mark only costs a search
 * that finds it in no cache). Not a pointer, and an unlikely integer. */
#define CACHE_FREE_MARK ((uintptr_t)(intptr_t)(int32_t)0xA110C8ED)
static inline bool cache_marked_free(const void *p)
{
    return *(const uintptr_t *)p == CACHE_FREE_MARK;
}
static inline void cache_mark_free(void *p)
{
    *(uintptr_t *)p = CACHE_FREE_MARK;
}
/* An object leaving the allocator for the program. */
static inline void cache_handing_out(void *p)
{
    *(uintptr_t *)p = 0;
}

/* Keeps those of objs[0..n), freed as objects of cls, that are blocks the
 * program holds, marks them free and packs them at the front; reports the
 * others (double, wild and interior frees) and drops them. `call` names
 * the API function for the report. Returns how many were kept. */
unsigned cache_verify(unsigned cls, void **objs, unsigned n, const char *call);
/* Marks objects just taken from the central layer for a cache. */
void cache_mark_all(void *const *objs, unsigned n);

/* Single-owner fast operations. */
static inline void *cache_pop(void **slab, unsigned cls)
{
    struct cache_hdr *h = cache_hdr(slab, cls);
    if (__builtin_expect(h->alloc_top <= h->alloc_begin, 0))
        return NULL;
    return slab[--h->alloc_top];
}

static inline bool cache_push(void **slab, unsigned cls, void *p)
{
    struct cache_hdr *h = cache_hdr(slab, cls);
    if (__builtin_expect(h->free_top >= h->free_end, 0))
        return false;
    slab[h->free_top++] = p;
    return true;
}

/* Slots the allocation stack gains when it grows: a batch, short of its
 * limit. */
static inline unsigned cache_growth(void **slab, unsigned cls)
{
    const struct cache_bounds *b = cache_bounds(slab, cls);
    unsigned more = sc_info[cls].batch;
    return b->alloc_end + more > b->alloc_limit ? (unsigned)(b->alloc_limit - b->alloc_end) : more;
}

/* Objects of cls held by each stack (racy reads are fine for statistics). */
static inline unsigned cache_alloc_count(void **slab, unsigned cls)
{
    struct cache_hdr *h = cache_hdr(slab, cls);
    return h->alloc_top > h->alloc_begin ? (unsigned)(h->alloc_top - h->alloc_begin) : 0;
}
static inline unsigned cache_free_count(void **slab, unsigned cls)
{
    unsigned begin = cache_bounds(slab, cls)->free_begin, top = cache_hdr(slab, cls)->free_top;
    return top > begin ? top - begin : 0;
}

/* Slow paths of a single-owner slab holding about budget bytes at most:
 * on an empty allocation stack, verify what the free stack holds and move
 * it there, or refill from the central layer (growing the stack's capacity
 * while the slab holds less than budget), and pop (NULL when out of
 * memory); on a full free stack, verify it and move it to the allocation
 * stack or the central layer, and push. */
void *cache_refill_pop(void **slab, unsigned cls, size_t budget);
void cache_verify_push(void **slab, unsigned cls, void *p, size_t budget);

/* Draining a slab shared with critical sections: stop its stacks (they
 * miss from now on), then, once rseq_fence() has let every section that
 * saw them running end, take everything back to the central layer, shrink
 * the allocation stacks to a batch, and restart them. Returns the bytes
 * taken. The caller serialises drains. */
void cache_slab_stop(void **slab);
size_t cache_slab_drain_stopped(void **slab, unsigned free_capacity);

/* Returns every object the slab holds to the central layer (the free
 * stacks verified first). Single owner. */
void cache_slab_flush(void **slab);
/* Whether either stack of cls holds p (racy reads are fine). */
bool cache_slab_holds(void **slab, unsigned cls, const void *p);
/* Bytes of objects held by the slab (racy read: for statistics). */
size_t cache_slab_bytes_held(void **slab);

#endif
