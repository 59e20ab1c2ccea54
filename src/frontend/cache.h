/* The shape shared by every cache, per-CPU or per-thread: a slab holding,
 * per size class, a stack of free objects that malloc pops and free
 * pushes (the contract is in arch/slab.h). Every object a cache holds is
 * a block the program freed or never had, marked free (core/block_mark.h): free
 * checks a block before it pushes it (the fast check of the superblock,
 * and the mark), so a double, wild or interior free is reported instead
 * of obeyed. Plain operations here are for a slab with a single owner (a
 * thread, or a lock). */
#ifndef COREALLOC_CACHE_H
#define COREALLOC_CACHE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "arch/slab.h"
#include "core/block_mark.h"
#include "core/sizeclass.h"
#include "platform/random.h"

/* Besides a stack per class, a slab has a foreign stack per class whose
 * blocks share cache lines (SC_LINE_SHARING): blocks freed on this CPU
 * that another CPU cut, on their way back to that CPU's lane a batch at a
 * time (cpucache.c). Pops never take from them. A slab's stacks are its
 * classes' stacks, then their foreign stacks. */
#define CACHE_STACKS (SC_COUNT + SC_LINE_SHARING)
static inline unsigned cache_foreign_stack(unsigned cls)
{
    return SC_COUNT + cls;
}
static inline unsigned cache_stack_class(unsigned stack)
{
    return stack < SC_COUNT ? stack : stack - SC_COUNT;
}
_Static_assert(CACHE_STACKS < SLAB_HEADER_SLOTS, "a header slot per stack, and a base past the last");

/* Whether p is free in some cache or central batch of cls (racy: for
 * telling a double free from a first word that happens to hold the mark). */
typedef bool cache_holds_fn(const void *p, unsigned cls);
/* Two shapes of slab: a CPU's holds up to CACHE_CPU_CLASS_BYTES of a class
 * (at most CACHE_CPU_CLASS_OBJECTS objects), so a working set of thousands
 * of small objects cycles through one CPU's cache without the central
 * layer, within the CPU's growth budget; a thread's (or a lock's) holds up
 * to sc_info[].limit objects, as many threads may each have one. A slab
 * records its own shape (each stack's home slot), so the operations below
 * work on either. */
enum cache_shape { CACHE_SHAPE_CPU, CACHE_SHAPE_THREAD };
#define CACHE_CPU_CLASS_BYTES ((size_t)8 << 20)
#define CACHE_CPU_CLASS_OBJECTS 131072u

/* Computes where each class's stack lives in each shape of slab; holds:
 * the front end's search of every cache. Start-up, no allocation. */
void cache_layout_init(cache_holds_fn *holds);
/* Bytes a slab of the shape uses (at most SLAB_BYTES). */
size_t cache_slab_bytes(enum cache_shape shape);
/* Slab 0 of the slabs of ids [0, count), each SLAB_BYTES at slab 0 + (id
 * << SLAB_SHIFT) as the sections find them, mapped with the two stopped
 * slabs below it (an unregistered area's ids, -1 and -2: zero, never
 * written, so read as zero pages) in one mapping whose pages are touched
 * only as stacks fill. NULL when it cannot be had. A zero slab is a
 * stopped one to the sections (top 0 is at begin 0 and at end 0). */
char *cache_map_slabs(unsigned count);
/* Slab id of those cache_map_slabs returned as slabs. */
static inline void **cache_slab_of(char *slabs, unsigned id)
{
    return (void **)(slabs + ((uintptr_t)id << SLAB_SHIFT));
}
/* Empty stacks of the shape, each with room for a batch, on a slab no
 * section uses yet. */
void cache_slab_format(void **slab, enum cache_shape shape);
/* The same, stopped, on a zero slab that sections may be reading (they
 * miss on it): once rseq_fence() has retired every section that read a
 * zero top, cache_slab_restart() starts it. */
void cache_slab_format_stopped(void **slab, enum cache_shape shape);
/* Whether the slab was formatted (its homes are written first: a slab
 * being formatted counts, so formatting must be serialised with whatever
 * asks). */
bool cache_slab_formatted(void **slab);

/* Below, cls names a stack: a class's, or (where said) a foreign one. */
static inline struct cache_hdr *cache_hdr(void **slab, unsigned cls)
{
    return (struct cache_hdr *)&slab[cls];
}

static inline struct cache_base *cache_base(void **slab, unsigned cls)
{
    return (struct cache_base *)&slab[SLAB_HEADER_SLOTS + cls];
}

static inline uint32_t *cache_begin(void **slab, unsigned cls)
{
    return &cache_base(slab, cls)->begin;
}

/* The closer look at a free of p (as an object of cls) that the fast
 * check could not vouch for: true when it is a block the program holds
 * (the caller marks it free); otherwise reported (a double, wild or
 * interior free, `call` naming the API function) and false. */
bool cache_verify_free(void *p, unsigned cls, const char *call);
/* Single-owner fast operations. */
static inline void *cache_pop(void **slab, unsigned cls)
{
    struct cache_hdr *h = cache_hdr(slab, cls);
    if (__builtin_expect(h->top <= *cache_begin(slab, cls), 0))
        return NULL;
    return slab[--h->top];
}

/* Secure mode's pop: any of the stack's objects, at random (the one just
 * freed is not the next one out). */
static inline void *cache_pop_random(void **slab, unsigned cls, uint64_t *rng)
{
    struct cache_hdr *h = cache_hdr(slab, cls);
    uint32_t begin = *cache_begin(slab, cls);
    if (h->top <= begin)
        return NULL;
    uint32_t pick = begin + random_below(rng, h->top - begin);
    void *p = slab[pick];
    slab[pick] = slab[--h->top];
    return p;
}

static inline bool cache_push(void **slab, unsigned cls, void *p)
{
    struct cache_hdr *h = cache_hdr(slab, cls);
    if (__builtin_expect(h->top >= h->end, 0))
        return false;
    slab[h->top++] = p;
    return true;
}

/* Slots the stack of cls gains when it grows: a batch, short of its limit
 * at its own home (0 when stopped). */
unsigned cache_growth(void **slab, unsigned cls);
/* Slots the stack of cls may hold now (end past its home). */
unsigned cache_capacity(void **slab, unsigned cls);
/* Whether the stack of cls must leave its nursery (see cache.c) to grow by
 * more slots. The move, by the slab's only writer from outside (as a
 * drain): cache_stack_stop; once rseq_fence() has let every section that
 * saw it running end, cache_stack_move_stopped; once a second fence has
 * retired every section that read the old top, cache_stack_restart with
 * the capacity it had. */
bool cache_stack_must_move(void **slab, unsigned cls, unsigned more);
bool cache_stack_in_nursery(void **slab, unsigned cls);
void cache_stack_stop(void **slab, unsigned cls);
void cache_stack_move_stopped(void **slab, unsigned cls);
void cache_stack_restart(void **slab, unsigned cls, unsigned capacity);
/* Objects of cls the slab holds (racy reads are fine for statistics). */
unsigned cache_count(void **slab, unsigned cls);
/* Slots the stack of cls could give up: its capacity past a batch. */
unsigned cache_surplus(void **slab, unsigned cls);

/* Slow paths of a single-owner slab holding about budget bytes at most:
 * on an empty stack, refill it from the central layer (growing its
 * capacity while the slab holds less than budget) and pop (NULL when out
 * of memory); on a full one, spill a batch to the central layer and push
 * p (checked and marked already). */
void *cache_refill_pop(void **slab, unsigned cls, size_t budget);
void cache_spill_push(void **slab, unsigned cls, void *p, size_t budget);

/* Draining a slab shared with critical sections (arch/slab.h): stop its
 * stacks (they miss from now on); once rseq_fence() has let every section
 * that saw them running end, take everything back to the central layer
 * and reset the tops (returns the bytes taken); once a second fence has
 * retired every section that read an old top, restart the stacks, shrunk
 * to a batch. The caller serialises drains. */
void cache_slab_stop(void **slab);
size_t cache_slab_take_stopped(void **slab);
void cache_slab_restart(void **slab);
/* For a drain or a move cut short by fork (see cpucache_fork_child):
 * whether a stack of the slab is stopped, and emptying the slab without
 * returning its objects. */
bool cache_slab_stopped(void **slab);
void cache_slab_forget(void **slab);

/* Returns every object the slab holds to the central layer. Single owner. */
void cache_slab_flush(void **slab);
/* Objects the stacks of cls hold, its foreign one included (racy reads:
 * an estimate). */
unsigned cache_class_count(void **slab, unsigned cls);
/* Whether the stacks of cls (its foreign one included) hold p (racy reads
 * are fine). */
bool cache_slab_holds(void **slab, unsigned cls, const void *p);
/* Bytes of objects held by the slab (racy read: for statistics). */
size_t cache_slab_bytes_held(void **slab);
/* A digest of where every stack's top is (racy read): hits move tops
 * without any counter, so a cache whose digest stays the same over a
 * while is one nobody used. */
uint64_t cache_slab_tops_digest(void **slab);

#endif
