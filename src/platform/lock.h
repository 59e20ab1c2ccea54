/* The one lock type of the library, for slow paths only, and fork safety.
 *
 * Every lock has a rank, and the ranks are the one order in which locks
 * nest: a thread holding a lock waits only for locks of a later rank
 * (the debug build checks it on every wait). The fork handlers take every
 * registered lock in that order, after the C library's stream list lock,
 * which fork takes after the handlers and whose holder may wait for ours.
 *
 * A lock's word names its holder, set by the instruction that takes it, so
 * a fork from a signal handler that interrupted the library knows exactly
 * which locks the interrupted call holds: the handlers do not wait for
 * those (they stay held, in both processes, for the call to release), nor
 * for a lock whose holder waits, directly or through other holders, for
 * one of those (that one is left alone in the parent and re-created in the
 * child: see lock_fork_interrupted). A thread that takes a lock it holds
 * already (the library re-entered from a signal handler) stops with a
 * message instead of waiting for ever. */
#ifndef COREALLOC_LOCK_H
#define COREALLOC_LOCK_H

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
    LOCK_RANK_ZONE_ROWS, /* mapping the zone rows' descriptors: waits for nothing */
    LOCK_RANK_PAGEMAP, /* growing the page map: waits for nothing */
    LOCK_RANK_META,    /* metadata memory: waits for nothing */
};

/* All zero is a free lock: locks in zeroed memory need no initialisation,
 * and registering one for fork does not write it (the fork list keeps its
 * rank), so a table of locks costs no page until a lock in it is used. */
typedef struct lock {
    uint32_t word;          /* 0 when free, else the holder's id (| LOCK_WAITERS) */
#ifdef COREALLOC_DEBUG
    uint8_t rank;           /* enum lock_rank, for the order check (set when registered) */
#endif
    struct lock *waits_for; /* what the holder waits for, while it waits */
} lock_t;
#define LOCK_INIT {0}

void lock_acquire(lock_t *l);
bool lock_try(lock_t *l);
void lock_release(lock_t *l);
/* Re-creates a lock, free (its rank kept). */
void lock_reset(lock_t *l);

/* fork() safety: every lock is registered once, with its rank; before fork
 * all are taken in rank order, after it released (parent) or re-created
 * (child), except as said above. */
void lock_register_for_fork(lock_t *l, enum lock_rank rank);
void lock_fork_prepare(void);
void lock_fork_parent(void);
void lock_fork_child(void);
/* Whether the last fork came from a signal handler that interrupted the
 * library in this thread (it held, or was taking, a lock). The child's
 * handlers then take no lock (the interrupted call may hold it). A lock
 * left to a waiting holder guards what that holder may have half done; the
 * child goes on with it as it is, but for a drain of per-CPU caches, which
 * it finishes (the purge thread's work, the likely case: glibc supports a
 * fork from a signal handler only in a program of one thread). */
bool lock_fork_interrupted(void);

#endif
