/* consume (Hoard's producer-consumer, seed 001): one producer thread
 * allocates every block; T consumer threads free them. For each iteration
 * the producer fills one batch per consumer and hands it over. Reports
 * blocks allocated and freed per second. */
#include "bench_args.h"
#include "bench_clock.h"
#include "bench_gate.h"
#include "bench_mailbox.h"
#include "bench_report.h"
#include "bench_tag.h"
#include "bench_threads.h"

#include <stdint.h>
#include <stdlib.h>

/* A few batches in flight per consumer let the producer run ahead a little
 * without letting memory grow with the consumers' lag. */
#define CONSUMER_INBOX_BATCHES 4

struct batch {
    long count;
    void *blocks[];
};

struct consumer {
    struct bench_mailbox inbox;
    pthread_t thread;
    uint64_t freed;
};

static struct bench_gate gate;
static long consumer_count = 1;
static long iterations = 1000;
static long batch_size = 100;
static long block_size = 64;
static struct consumer *consumers;

static void *producer_body(void *arg)
{
    (void)arg;
    bench_gate_pass(&gate);
    for (long round = 0; round < iterations; round++) {
        for (long c = 0; c < consumer_count; c++) {
            struct batch *batch = bench_check_alloc(
                malloc(sizeof *batch + (size_t)batch_size * sizeof batch->blocks[0]), "batch");
            batch->count = batch_size;
            for (long i = 0; i < batch_size; i++) {
                batch->blocks[i] = bench_check_alloc(malloc((size_t)block_size), "consume block");
                bench_tag_write(batch->blocks[i], (size_t)block_size, (uint64_t)(round * batch_size + i));
            }
            bench_mailbox_put(&consumers[c].inbox, batch);
        }
    }
    for (long c = 0; c < consumer_count; c++)
        bench_mailbox_close(&consumers[c].inbox);
    return NULL;
}

static void *consumer_body(void *arg)
{
    struct consumer *self = arg;
    bench_gate_pass(&gate);
    struct batch *batch;
    while ((batch = bench_mailbox_take(&self->inbox)) != NULL) {
        for (long i = 0; i < batch->count; i++) {
            if (!bench_tag_intact(batch->blocks[i], (size_t)block_size))
                bench_check_failed("consume block was overwritten between producer and consumer");
            free(batch->blocks[i]);
        }
        self->freed += (uint64_t)batch->count;
        free(batch);
    }
    return NULL;
}

int main(int argc, char **argv)
{
    const struct bench_option options[] = {
        BENCH_LONG('t', "consumer-threads", &consumer_count, 1, 4096),
        BENCH_LONG('i', "iterations", &iterations, 1, 1L << 40),
        BENCH_LONG('n', "batch", &batch_size, 1, 100000000),
        BENCH_LONG('s', "size", &block_size, 1, 1L << 30),
        BENCH_OPTIONS_END,
    };
    const struct bench_command command = { "consume", options, NULL, 0, 0 };
    bench_parse_command(&command, argc, argv);

    consumers = bench_alloc_lines((size_t)consumer_count, sizeof *consumers);
    bench_gate_init(&gate, (int)consumer_count + 1);
    for (long c = 0; c < consumer_count; c++) {
        bench_mailbox_init(&consumers[c].inbox, CONSUMER_INBOX_BATCHES, BENCH_MAILBOX_OLDEST_FIRST,
                           BENCH_MAILBOX_POLL);
        consumers[c].thread = bench_thread_start(consumer_body, &consumers[c]);
    }
    pthread_t producer = bench_thread_start(producer_body, NULL);
    double start = bench_gate_open_when_ready(&gate);
    bench_thread_join(producer);
    uint64_t freed = 0;
    for (long c = 0; c < consumer_count; c++) {
        bench_thread_join(consumers[c].thread);
        freed += consumers[c].freed;
        bench_mailbox_destroy(&consumers[c].inbox);
    }
    double elapsed = bench_now_seconds() - start;
    free(consumers);
    uint64_t allocated = (uint64_t)iterations * (uint64_t)consumer_count * (uint64_t)batch_size;
    if (freed != allocated)
        bench_check_failed("consume freed %llu blocks of %llu allocated", (unsigned long long)freed,
                           (unsigned long long)allocated);
    bench_result("consume", "threads=%ld iterations=%ld batch=%ld size=%ld seconds=%.6f blocks_per_sec=%.1f",
                 consumer_count, iterations, batch_size, block_size, elapsed, (double)freed / elapsed);
    return 0;
}
