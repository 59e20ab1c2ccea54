/* The one lock type of the library, for slow paths only. */
#ifndef COREALLOC_LOCK_H
#define COREALLOC_LOCK_H

#include <pthread.h>
#include <stdbool.h>

typedef pthread_mutex_t lock_t;
#define LOCK_INIT PTHREAD_MUTEX_INITIALIZER

static inline void lock_acquire(lock_t *l) { pthread_mutex_lock(l); }
static inline bool lock_try(lock_t *l) { return pthread_mutex_trylock(l) == 0; }
static inline void lock_release(lock_t *l) { pthread_mutex_unlock(l); }
/* After fork() the child is single-threaded: a lock held by a thread that
 * no longer exists is re-created rather than released. */
static inline void lock_reset(lock_t *l) { pthread_mutex_init(l, NULL); }

/* fork() safety: every lock is registered once; before fork all are taken
 * in registration order, after it released (parent) or reset (child). */
void lock_register_for_fork(lock_t *l);
void lock_fork_prepare(void);
void lock_fork_parent(void);
void lock_fork_child(void);

#endif
