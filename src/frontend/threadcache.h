/* The per-thread front end: a slab per thread, in the shape of the per-CPU
 * caches, which the same fast paths reach (see tcache_map_id_slabs). Used
 * where rseq is unavailable (or by option). A thread's slab goes back to
 * the central layer when the thread exits. */
#ifndef COREALLOC_THREADCACHE_H
#define COREALLOC_THREADCACHE_H

#include <stdbool.h>
#include <stddef.h>

#include "frontend/cache.h"

void tcache_init(void);
/* Maps the slabs the fast paths reach through each thread's own area (one
 * per thread, for as many threads alive at once as there are such slabs;
 * later ones get slabs the slow paths reach): slab 0's address, for the
 * layout's slabs, or NULL when they cannot be had (every thread's slab is
 * then reached by the slow paths only). Start-up, when the per-thread
 * caches are to take the fast paths. */
char *tcache_map_id_slabs(void);
/* *refilled: see frontend_alloc_slow. */
void *tcache_alloc_slow(unsigned cls, bool *refilled);
void tcache_free_slow(void *p, unsigned cls);

/* Returns the calling thread's cached objects to the central layer. */
void tcache_flush_current(void);
/* Bytes held by all live thread caches (approximate) and their number. */
size_t tcache_bytes_held(unsigned *threads);
void tcache_fork_child(void);
/* Whether some thread's cache holds p in a stack of cls. */
bool tcache_holds(const void *p, unsigned cls);

#endif
