/* xmalloc (the xmalloc-test shape): half the threads only allocate and the
 * other half only free. Producers fill batches with blocks of random sizes
 * (or of one size, -z) and publish them on one shared queue; consumers take
 * batches and free every block, so every free is of memory another thread
 * allocated. Runs for a fixed time, then drains. Reports blocks freed per
 * second. Consumers take the oldest batch (-o fifo) or the newest (-o
 * lifo); a thread that finds the queue empty or full polls it a while
 * before it sleeps (-a poll), or sleeps at once (-a sleep). The standard
 * "xmalloc-test -w N -t 5 -s 64" is "-w N -d 5 -z 64 -b 4096 -q 100 -o
 * lifo -a sleep": N producers and N consumers, batches of 4096 blocks of
 * 64 bytes, at most 100 batches on its list, a list is a stack, and its
 * threads wait on a condition variable. The order decides what the row
 * measures: taken oldest first, a full queue is 25 MiB of blocks written
 * long ago, and every consumer reads and frees cold memory. */
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

/* Default queue bound: producers wait when consumers fall this far behind. */
#define QUEUED_BATCHES_PER_CONSUMER 4

/* A batch is an array of blocks_per_batch items. */
struct item {
    void *block;
    size_t size;
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
static long fixed_size = 0; /* 0: random sizes in [16, max_size] */
static long blocks_per_batch = 64;
static const char *const order_names[] = { "fifo", "lifo", NULL };
static long order = BENCH_MAILBOX_OLDEST_FIRST; /* an enum bench_mailbox_order */
static const char *const wait_names[] = { "poll", "sleep", NULL };
static long wait_mode = BENCH_MAILBOX_POLL; /* an enum bench_mailbox_wait */

static void *producer_body(void *arg)
{
    struct worker *self = arg;
    struct rng rng = rng_seeded((uint64_t)self->index + 1);
    bench_gate_pass(&gate);
    while (!atomic_load_explicit(&stop_requested, memory_order_relaxed)) {
        struct item *batch = bench_check_alloc(malloc((size_t)blocks_per_batch * sizeof *batch), "batch");
        for (long i = 0; i < blocks_per_batch; i++) {
            size_t size = fixed_size ? (size_t)fixed_size : 16 + (size_t)rng_below(&rng, (uint64_t)(max_size - 15));
            batch[i].block = bench_check_alloc(malloc(size), "xmalloc block");
            batch[i].size = size;
            bench_tag_write(batch[i].block, size, rng_next(&rng));
        }
        bench_mailbox_put(&queue, batch);
        self->count += (uint64_t)blocks_per_batch;
    }
    if (atomic_fetch_sub(&producers_running, 1) == 1)
        bench_mailbox_close(&queue);
    return NULL;
}

static void *consumer_body(void *arg)
{
    struct worker *self = arg;
    bench_gate_pass(&gate);
    struct item *batch;
    while ((batch = bench_mailbox_take(&queue)) != NULL) {
        for (long i = 0; i < blocks_per_batch; i++) {
            if (!bench_tag_intact(batch[i].block, batch[i].size))
                bench_check_failed("xmalloc block was overwritten between producer and consumer");
            free(batch[i].block);
        }
        free(batch);
        self->count += (uint64_t)blocks_per_batch;
    }
    return NULL;
}

int main(int argc, char **argv)
{
    long threads = 2, pairs = 0, queued = 0;
    double seconds = 1.0;
    const struct bench_option options[] = {
        BENCH_THREADS(&threads),
        BENCH_LONG('w', "producer-consumer-pairs (overrides -t)", &pairs, 1, 2048),
        BENCH_SECONDS(&seconds),
        BENCH_LONG('s', "max-size", &max_size, 16, 1L << 30),
        BENCH_LONG('z', "fixed-size", &fixed_size, 16, 1L << 30),
        BENCH_LONG('b', "blocks-per-batch", &blocks_per_batch, 1, 1L << 20),
        BENCH_LONG('q', "queued-batches (default 4 per consumer)", &queued, 1, 1L << 20),
        BENCH_CHOICE('o', "order batches are taken in", &order, order_names),
        BENCH_CHOICE('a', "how a thread awaits the queue", &wait_mode, wait_names),
        BENCH_OPTIONS_END,
    };
    const struct bench_command command = { "xmalloc", options, NULL, 0, 0 };
    bench_parse_command(&command, argc, argv);

    /* One thread still needs a partner: -t 1 runs one of each. */
    long producers = pairs ? pairs : threads / 2 > 0 ? threads / 2 : 1;
    long consumers = pairs ? pairs : threads - producers > 0 ? threads - producers : 1;
    long total = producers + consumers;
    struct worker *workers = bench_alloc_lines((size_t)total, sizeof *workers);
    bench_mailbox_init(&queue, (size_t)(queued ? queued : consumers * QUEUED_BATCHES_PER_CONSUMER),
                       (enum bench_mailbox_order)order, (enum bench_mailbox_wait)wait_mode);
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
    bench_result("xmalloc",
                 "threads=%ld producers=%ld consumers=%ld max_size=%ld fixed_size=%ld blocks_per_batch=%ld "
                 "order=%s wait=%s seconds=%.6f frees_per_sec=%.1f",
                 total, producers, consumers, max_size, fixed_size, blocks_per_batch, order_names[order],
                 wait_names[wait_mode], elapsed,
                 (double)freed / elapsed);
    return 0;
}
