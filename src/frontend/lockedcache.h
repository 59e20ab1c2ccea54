/* Ablation front ends (seed 000's Table 3): the same slabs, chosen by CPU
 * number, by a hash of the thread, or one for all, each behind a mutex.
 * Built only into the ablation libraries; the default library has none of it. */
#ifndef COREALLOC_LOCKEDCACHE_H
#define COREALLOC_LOCKEDCACHE_H

#include <stdbool.h>
#include <stddef.h>

void lockedcache_init(void);
/* A cached object, or NULL when the slab's stack is empty (or before
 * start-up). */
void *lockedcache_try_alloc(unsigned cls);
/* The same, refilling an empty stack from the central layer. */
void *lockedcache_alloc(unsigned cls);
/* Takes p back when the slab's stack has room (false otherwise, and
 * before start-up). */
bool lockedcache_try_free(void *p, unsigned cls);
/* The same, spilling a batch of a full stack to make room. */
void lockedcache_free(void *p, unsigned cls);
const char *lockedcache_name(void);
size_t lockedcache_bytes_held(unsigned *slabs);
size_t lockedcache_drain_all(void);
/* Whether some slab holds p in a stack of cls (racy reads). */
bool lockedcache_holds(const void *p, unsigned cls);

#endif
