/* The per-CPU front end (seed 000's per-processor heaps): one slab per CPU
 * operated on only inside rseq critical sections, so
 * the fast path takes no lock and no atomic read-modify-write. Memory held
 * in caches is bounded by the number of ids, not of threads. */
#ifndef COREALLOC_CPUCACHE_H
#define COREALLOC_CPUCACHE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "arch/sections.h"
#include "platform/rseq.h"

/* Turns the front end on when rseq works, and points the fast paths'
 * layout at its slabs. Returns whether it is on. */
bool cpucache_init(void);
bool cpucache_on(void);

void *cpucache_alloc_slow(unsigned cls);
void cpucache_free_slow(void *p, unsigned cls);
/* p (checked and marked free), freed on a CPU that does not cut its
 * superblock: kept apart from the class's stack, on its way back. */
void cpucache_free_foreign(void *p, unsigned cls);
/* Empties every CPU's slab into the central layer, safely against the
 * owners (membarrier fence). Returns the bytes moved. */
size_t cpucache_drain_all(void);
/* The same for one id's slab (nothing, and no fence, when it is empty). */
size_t cpucache_drain_id(unsigned id);
/* In a forked child: restarts the slabs of a drain the fork cut short. */
void cpucache_fork_child(void);
/* Slabs (ids) while the front end is on, else 0. */
unsigned cpucache_id_count(void);
/* Slow-path entries of one id, from an empty cache and a full one. */
void cpucache_id_misses(unsigned id, uint64_t *empty, uint64_t *full);
/* What changes whenever one id's cache is used (see frontend.h). */
uint64_t cpucache_id_activity(unsigned id);
/* Whether some slab holds p in its stack of cls (racy reads). */
bool cpucache_holds(const void *p, unsigned cls);
/* Bytes held in all slabs (racy read, for statistics) and the slab count. */
size_t cpucache_bytes_held(unsigned *slabs);

#endif
