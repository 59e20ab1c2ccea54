/* The one lock type of the library, for slow paths only, and fork safety.
 *
 * Every lock has a rank, and the ranks are the one order in which locks
 * nest: a thread holding a lock waits only for locks of a later rank
 * (the debug build checks it on every wait). The fork handlers take every
 * registered lock in that order, so they wait for a holder the way every
 * other path does, never against it; and first the C library's stream list
 * lock, which fork takes after the handlers and whose holder may wait for
 * ours. */
#ifndef COREALLOC_LOCK_H
#define COREALLOC_LOCK_H

#include <pthread.h>
#include <stdbool.h>
#include <stdint.h>

/* Outermost first. */
enum lock_rank {
    LOCK_RANK_NONE,    /* never registered for fork, never checked */
    LOCK_RANK_CACHE,   /* a shared cache of an ablation build: waits for central */
    LOCK_RANK_DRAIN,   /* draining per-CPU caches: waits for central */
    LOCK_RANK_THREADS, /* the list of per-thread caches: waits for nothing */
    LOCK_RANK_PROFILE, /* the heap profile's tables: waits for metadata */
    LOCK_RANK_CLASS,   /* a size class's central layer, one at a time: waits for superblocks */
    LOCK_RANK_HEAP,    /* the page heap: waits for the page map and metadata */
    LOCK_RANK_NODES,   /* the pool of batch nodes: waits for nothing */
    LOCK_RANK_CHUNKS,  /* superblocks mapped outside the zones: waits for the page map, metadata */
    LOCK_RANK_PAGEMAP, /* growing the page map: waits for nothing */
    LOCK_RANK_META,    /* metadata memory: waits for nothing */
};

typedef struct lock {
    pthread_mutex_t mutex;
    uint8_t rank; /* enum lock_rank */
} lock_t;
#define LOCK_INIT {PTHREAD_MUTEX_INITIALIZER, LOCK_RANK_NONE}

void lock_acquire(lock_t *l);
bool lock_try(lock_t *l);
void lock_release(lock_t *l);
/* After fork() the child is single-threaded: a lock held by a thread that
 * no longer exists is re-created (free, its rank kept) rather than released. */
void lock_reset(lock_t *l);

/* fork() safety: every lock is registered once, with its rank; before fork
 * all are taken in rank order, after it released (parent) or re-created
 * (child). */
void lock_register_for_fork(lock_t *l, enum lock_rank rank);
void lock_fork_prepare(void);
void lock_fork_parent(void);
void lock_fork_child(void);

#endif
