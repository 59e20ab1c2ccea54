/* The per-thread front end: a slab per thread, in the shape of the per-CPU
 * caches. Used where rseq is unavailable (or by option). A thread's slab
 * goes back to the central layer when the thread exits. */
#ifndef COREALLOC_THREADCACHE_H
#define COREALLOC_THREADCACHE_H

#include <stdbool.h>
#include <stddef.h>

#include "frontend/cache.h"

void tcache_init(void);
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
