/* xmalloc (the xmalloc-test shape): half the threads only allocate and the
 * other half only free. Producers fill batches with blocks of random sizes
 * and publish them on one shared queue; consumers take batches and free
 * every block, so nearly every free is of memory another thread allocated.
 * Runs for a fixed time, then drains. Reports blocks freed per second. */
#include "bench_args.h"
#include "bench_clock.h"
#include "bench_gate.h"
#include "bench_layout.h"
#include "bench_mailbox.h"
#include "bench_report.h"
#include "rng.h"
#include "bench_tag.h"
#include "bench_threads.h"

#include <stdatomic.h>
#include <stdint.h>
#include <stdlib.h>


#define BLOCKS_PER_BATCH 64
/* Queue bound: producers wait when consumers fall this far behind. */
#define QUEUED_BATCHES_PER_CONSUMER 4

struct batch {
    void *blocks[BLOCKS_PER_BATCH];
    size_t sizes[BLOCKS_PER_BATCH];
};

struct worker {
    _Alignas(BENCH_CACHE_LINE) pthread_t thread;
    long index;
    uint64_t count; /* blocks allocated (producer) or freed (consumer) */
};

static struct bench_gate gate;
static struct bench_mailbox queue;
static atomic_bool stop_requested;
static atomic_long producers_running;
static long max_size = 512;

static void *producer_body(void *arg)
{
    struct worker *self = arg;
    struct rng rng = rng_seeded((uint64_t)self->index + 1);
    bench_gate_pass(&gate);
    while (!atomic_load_explicit(&stop_requested, memory_order_relaxed)) {
        struct batch *batch = bench_check_alloc(malloc(sizeof *batch), "batch");
        for (int i = 0; i < BLOCKS_PER_BATCH; i++) {
            size_t size = 16 + (size_t)rng_below(&rng, (uint64_t)(max_size - 15));
            batch->blocks[i] = bench_check_alloc(malloc(size), "xmalloc block");
            batch->sizes[i] = size;
            bench_tag_write(batch->blocks[i], size, rng_next(&rng));
        }
        bench_mailbox_put(&queue, batch);
        self->count += BLOCKS_PER_BATCH;
    }
    if (atomic_fetch_sub(&producers_running, 1) == 1)
        bench_mailbox_close(&queue);
    return NULL;
}

static void *consumer_body(void *arg)
{
    struct worker *self = arg;
    bench_gate_pass(&gate);
    struct batch *batch;
    while ((batch = bench_mailbox_take(&queue)) != NULL) {
        for (int i = 0; i < BLOCKS_PER_BATCH; i++) {
            if (!bench_tag_intact(batch->blocks[i], batch->sizes[i]))
                bench_check_failed("xmalloc block was overwritten between producer and consumer");
            free(batch->blocks[i]);
        }
        free(batch);
        self->count += BLOCKS_PER_BATCH;
    }
    return NULL;
}

int main(int argc, char **argv)
{
    long threads = 2;
    double seconds = 1.0;
    const struct bench_option options[] = {
        BENCH_THREADS(&threads),
        BENCH_SECONDS(&seconds),
        BENCH_LONG('s', "max-size", &max_size, 16, 1L << 30),
        BENCH_OPTIONS_END,
    };
    const struct bench_command command = { "xmalloc", options, NULL, 0, 0 };
    bench_parse_command(&command, argc, argv);

    /* One thread still needs a partner: -t 1 runs one of each. */
    long producers = threads / 2 > 0 ? threads / 2 : 1;
    long consumers = threads - producers > 0 ? threads - producers : 1;
    long total = producers + consumers;
    struct worker *workers = bench_alloc_lines((size_t)total, sizeof *workers);
    bench_mailbox_init(&queue, (size_t)(consumers * QUEUED_BATCHES_PER_CONSUMER));
    atomic_store(&producers_running, producers);
    bench_gate_init(&gate, (int)total);
    for (long w = 0; w < total; w++) {
        workers[w].index = w;
        workers[w].thread = bench_thread_start(w < producers ? producer_body : consumer_body, &workers[w]);
    }
    double start = bench_gate_open_when_ready(&gate);
    bench_sleep_seconds(seconds);
    atomic_store(&stop_requested, true);
    uint64_t allocated = 0, freed = 0;
    for (long w = 0; w < total; w++) {
        bench_thread_join(workers[w].thread);
        if (w < producers)
            allocated += workers[w].count;
        else
            freed += workers[w].count;
    }
    double elapsed = bench_now_seconds() - start;
    bench_mailbox_destroy(&queue);
    free(workers);
    if (freed != allocated)
        bench_check_failed("xmalloc freed %llu blocks of %llu allocated", (unsigned long long)freed,
                           (unsigned long long)allocated);
    bench_result("xmalloc", "threads=%ld producers=%ld consumers=%ld max_size=%ld seconds=%.6f frees_per_sec=%.1f",
                 threads, producers, consumers, max_size, elapsed, (double)freed / elapsed);
    return 0;
}
