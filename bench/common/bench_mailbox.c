#include "bench_mailbox.h"

#include <sched.h>
#include <stdlib.h>

#include "bench_clock.h"
#include "bench_report.h"
#include "cpu_relax.h"

/* How long a waiter polls before it sleeps: several batches' worth of work,
 * well under a scheduler tick. */
#define POLL_SECONDS 50e-6
#define POLLS_PER_CLOCK_READ 64

void bench_mailbox_init(struct bench_mailbox *box, size_t capacity, enum bench_mailbox_order order,
                        enum bench_mailbox_wait wait)
{
    box->order = order;
    box->wait = wait;
    box->items = bench_check_alloc(malloc(capacity * sizeof *box->items), "mailbox");
    box->capacity = capacity;
    pthread_mutex_init(&box->lock, NULL);
    pthread_cond_init(&box->not_empty, NULL);
    pthread_cond_init(&box->not_full, NULL);
    box->head = 0;
    atomic_init(&box->count, 0);
    atomic_init(&box->closed, false);
}

void bench_mailbox_destroy(struct bench_mailbox *box)
{
    pthread_cond_destroy(&box->not_full);
    pthread_cond_destroy(&box->not_empty);
    pthread_mutex_destroy(&box->lock);
    free(box->items);
}

static size_t count_of(const struct bench_mailbox *box)
{
    return atomic_load_explicit(&box->count, memory_order_relaxed);
}

static void set_count(struct bench_mailbox *box, size_t count)
{
    atomic_store_explicit(&box->count, count, memory_order_relaxed);
}

static bool has_room(const struct bench_mailbox *box)
{
    return count_of(box) < box->capacity;
}

static bool has_item_or_closed(const struct bench_mailbox *box)
{
    return count_of(box) > 0 || atomic_load_explicit(&box->closed, memory_order_relaxed);
}

/* Polls, without the lock, until `ready` holds or POLL_SECONDS pass (for a
 * mailbox whose waiters poll). */
static void poll_briefly(const struct bench_mailbox *box, bool (*ready)(const struct bench_mailbox *))
{
    if (box->wait != BENCH_MAILBOX_POLL || ready(box))
        return; /* the common case reads no clock */
    double deadline = bench_now_seconds() + POLL_SECONDS;
    for (unsigned polls = 1; !ready(box); polls++) {
        cpu_relax();
        if (polls % POLLS_PER_CLOCK_READ != 0)
            continue;
        if (bench_now_seconds() > deadline)
            return;
        sched_yield(); /* an oversubscribed run's producer may need this CPU */
    }
}

void bench_mailbox_put(struct bench_mailbox *box, void *item)
{
    poll_briefly(box, has_room);
    pthread_mutex_lock(&box->lock);
    while (!has_room(box))
        pthread_cond_wait(&box->not_full, &box->lock);
    size_t count = count_of(box);
    box->items[(box->head + count) % box->capacity] = item;
    set_count(box, count + 1);
    pthread_cond_signal(&box->not_empty);
    pthread_mutex_unlock(&box->lock);
}

void *bench_mailbox_take(struct bench_mailbox *box)
{
    poll_briefly(box, has_item_or_closed);
    pthread_mutex_lock(&box->lock);
    while (!has_item_or_closed(box))
        pthread_cond_wait(&box->not_empty, &box->lock);
    void *item = NULL;
    size_t count = count_of(box);
    if (count > 0) {
        if (box->order == BENCH_MAILBOX_NEWEST_FIRST) {
            item = box->items[(box->head + count - 1) % box->capacity];
        } else {
            item = box->items[box->head];
            box->head = (box->head + 1) % box->capacity;
        }
        set_count(box, count - 1);
        pthread_cond_signal(&box->not_full);
    }
    pthread_mutex_unlock(&box->lock);
    return item;
}

void bench_mailbox_close(struct bench_mailbox *box)
{
    pthread_mutex_lock(&box->lock);
    atomic_store_explicit(&box->closed, true, memory_order_relaxed);
    pthread_cond_broadcast(&box->not_empty);
    pthread_mutex_unlock(&box->lock);
}
