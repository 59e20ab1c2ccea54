/* Returning free memory to the OS after COREALLOC_PURGE_DELAY_MS unused,
 * whether or not the program still allocates: a background thread wakes a
 * few times per delay, purges empty superblocks and free spans that have
 * aged past the delay, and empties caches and central batches that saw no
 * traffic for that long. When a pass leaves nothing (every cache and class
 * idle for the delay, nothing retained) it sleeps without waking until a
 * free or an allocation that reaches a slow path wakes it (core/footprint.h),
 * so an idle program is not woken several times a second. It does not end:
 * a free cannot start a thread again (see purger_kick), and once a thread
 * was created glibc treats the process as threaded for good anyway. Nothing
 * on the fast path knows about it. */
#ifndef COREALLOC_PURGER_H
#define COREALLOC_PURGER_H

#include <stdbool.h>

/* Starts the background thread when a delay is set, it is not running, and
 * the process holds more than 4 MiB or has lived a quarter of the delay.
 * Call only from allocation paths that reached the central layer (a hit in
 * a per-thread cache cannot have made the process grow, and reading the
 * clock would cost it more than the hit), with no allocator lock held: creating a
 * thread allocates, and glibc calls free (never malloc) while holding the
 * thread-stack lock that pthread_create takes: started from a free, the
 * thread could deadlock its creator. */
void purger_kick(void);
/* Has the thread created through run(start) (by the layer above: the heap
 * profiler keeps what pthread_create allocates, in the program's call,
 * from counting as the program's), not by a plain start(). */
void purger_start_through(void (*run)(void (*start)(void)));
/* In a forked child: the parent's thread is gone; start the child's own
 * (on demand, after a fork from a signal handler that interrupted us). */
void purger_fork_child(void);
/* Whether the background thread runs (for statistics and tests). */
bool purger_running(void);

#endif
