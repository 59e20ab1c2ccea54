#include "bench_mailbox.h"

#include <stdlib.h>

#include "bench_report.h"

void bench_mailbox_init(struct bench_mailbox *box, size_t capacity, enum bench_mailbox_order order)
{
    box->order = order;
    box->items = bench_check_alloc(malloc(capacity * sizeof *box->items), "mailbox");
    box->capacity = capacity;
    pthread_mutex_init(&box->lock, NULL);
    pthread_cond_init(&box->not_empty, NULL);
    pthread_cond_init(&box->not_full, NULL);
    box->head = 0;
    box->count = 0;
    box->closed = false;
}

void bench_mailbox_destroy(struct bench_mailbox *box)
{
    pthread_cond_destroy(&box->not_full);
    pthread_cond_destroy(&box->not_empty);
    pthread_mutex_destroy(&box->lock);
    free(box->items);
}

void bench_mailbox_put(struct bench_mailbox *box, void *item)
{
    pthread_mutex_lock(&box->lock);
    while (box->count == box->capacity)
        pthread_cond_wait(&box->not_full, &box->lock);
    box->items[(box->head + box->count) % box->capacity] = item;
    box->count++;
    pthread_cond_signal(&box->not_empty);
    pthread_mutex_unlock(&box->lock);
}

void *bench_mailbox_take(struct bench_mailbox *box)
{
    pthread_mutex_lock(&box->lock);
    while (box->count == 0 && !box->closed)
        pthread_cond_wait(&box->not_empty, &box->lock);
    void *item = NULL;
    if (box->count > 0) {
        if (box->order == BENCH_MAILBOX_NEWEST_FIRST) {
            item = box->items[(box->head + box->count - 1) % box->capacity];
        } else {
            item = box->items[box->head];
            box->head = (box->head + 1) % box->capacity;
        }
        box->count--;
        pthread_cond_signal(&box->not_full);
    }
    pthread_mutex_unlock(&box->lock);
    return item;
}

void bench_mailbox_close(struct bench_mailbox *box)
{
    pthread_mutex_lock(&box->lock);
    box->closed = true;
    pthread_cond_broadcast(&box->not_empty);
    pthread_mutex_unlock(&box->lock);
}
