/* The per-CPU front end (seed 000's per-processor heaps): one slab per CPU
 * (or concurrency id), operated on only inside rseq critical sections, so
 * the fast path takes no lock and no atomic read-modify-write. Memory held
 * in caches is bounded by the number of ids, not of threads. */
#ifndef COREALLOC_CPUCACHE_H
#define COREALLOC_CPUCACHE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "arch/sections.h"
#include "platform/rseq.h"

/* Base of the slab array; 0 while the per-CPU front end is off. */
extern uintptr_t cpucache_base;
extern unsigned cpucache_shift;

/* Turns the front end on when rseq works. Returns whether it is on. */
bool cpucache_init(bool prefer_mm_cid);

static inline void *cpucache_try_alloc(uintptr_t base, unsigned cls)
{
    return rseq_cache_pop(base, cpucache_shift, cls);
}

static inline bool cpucache_try_free(uintptr_t base, void *p, unsigned cls)
{
    return rseq_cache_push(base, cpucache_shift, cls, p);
}

void *cpucache_alloc_slow(unsigned cls);
void cpucache_free_slow(void *p, unsigned cls);
/* Empties every CPU's slab into the central layer, safely against the
 * owners (membarrier fence). Returns the bytes moved. */
size_t cpucache_drain_all(void);
/* The same for one id's slab (nothing, and no fence, when it is empty). */
size_t cpucache_drain_id(unsigned id);
/* Slabs (ids) while the front end is on, else 0. */
unsigned cpucache_id_count(void);
/* Slow-path entries of one id, from an empty cache and a full one. */
void cpucache_id_misses(unsigned id, uint64_t *empty, uint64_t *full);
/* Bytes held in all slabs (racy read, for statistics) and the slab count. */
size_t cpucache_bytes_held(unsigned *slabs);

#endif
