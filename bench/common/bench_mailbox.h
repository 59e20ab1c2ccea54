/* A bounded blocking queue of pointers between threads. The benchmarks move
 * whole batches of blocks through it, so its lock is taken once per batch
 * and the allocator's own synchronisation dominates. A waiter polls for a
 * while before it sleeps (BENCH_MAILBOX_POLL): were it to sleep at once, a
 * side that runs ahead by a batch would wait on a futex every batch, and
 * the row would time the kernel's wake-ups (half the run asleep on two
 * cores) rather than the allocator. Sleeping after that keeps
 * oversubscribed runs (256 threads on 2 cores) from burning CPU. A shape
 * copied from a benchmark whose waiters sleep at once (xmalloc-test) asks
 * for BENCH_MAILBOX_SLEEP, so that it behaves as that benchmark does. */
#ifndef BENCH_MAILBOX_H
#define BENCH_MAILBOX_H

#include <pthread.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stddef.h>

#include "bench_layout.h"

/* Which item a take gets: the oldest (a queue) or the newest (a stack,
 * as xmalloc-test's list of batches). */
enum bench_mailbox_order { BENCH_MAILBOX_OLDEST_FIRST, BENCH_MAILBOX_NEWEST_FIRST };

/* How a taker of an empty mailbox, or a putter into a full one, waits. */
enum bench_mailbox_wait { BENCH_MAILBOX_POLL, BENCH_MAILBOX_SLEEP };

struct bench_mailbox {
    _Alignas(BENCH_CACHE_LINE) pthread_mutex_t lock;
    pthread_cond_t not_empty;
    pthread_cond_t not_full;
    void **items;
    size_t capacity;
    size_t head;
    atomic_size_t count; /* written under the lock, polled without it */
    enum bench_mailbox_order order;
    enum bench_mailbox_wait wait;
    atomic_bool closed;
};

void bench_mailbox_init(struct bench_mailbox *box, size_t capacity, enum bench_mailbox_order order,
                        enum bench_mailbox_wait wait);
void bench_mailbox_destroy(struct bench_mailbox *box);

/* Blocks while the mailbox is full. */
void bench_mailbox_put(struct bench_mailbox *box, void *item);

/* Blocks while the mailbox is empty and open; returns NULL once it is
 * closed and drained. */
void *bench_mailbox_take(struct bench_mailbox *box);

/* No more puts will come; takers drain what is left and then get NULL. */
void bench_mailbox_close(struct bench_mailbox *box);

#endif
