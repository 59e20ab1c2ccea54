/* free-contention (seed 002's test): blocks allocated by one thread are
 * freed by another while the allocating thread keeps allocating, which is
 * where a free that takes the owner's heap lock stalls. T threads form a
 * ring: each allocates blocks and passes them to its successor through a
 * single-producer single-consumer queue, and frees what its predecessor
 * passed to it. Runs for a fixed time, then drains. Reports frees/second. */
#include "bench_args.h"
#include "bench_clock.h"
#include "bench_gate.h"
#include "bench_layout.h"
#include "bench_report.h"
#include "bench_tag.h"
#include "bench_threads.h"

#include <sched.h>
#include <stdatomic.h>
#include <stdint.h>
#include <stdlib.h>

#define RING_SLOTS 256 /* a power of two */

/* Written by the predecessor (tail) and the owner (head) on separate lines. */
struct ring {
    _Alignas(BENCH_CACHE_LINE) atomic_size_t tail;
    _Alignas(BENCH_CACHE_LINE) atomic_size_t head;
    _Alignas(BENCH_CACHE_LINE) void *slots[RING_SLOTS];
};

struct worker {
    struct ring incoming;
    pthread_t thread;
    struct ring *outgoing;
    uint64_t allocated;
    uint64_t freed;
};

static struct bench_gate gate;
static pthread_barrier_t producing_stopped;
static atomic_bool stop_requested;
static long block_size = 64;

static long free_incoming(struct worker *self)
{
    struct ring *ring = &self->incoming;
    size_t head = atomic_load_explicit(&ring->head, memory_order_relaxed);
    size_t tail = atomic_load_explicit(&ring->tail, memory_order_acquire);
    for (size_t i = head; i != tail; i++) {
        void *block = ring->slots[i % RING_SLOTS];
        if (!bench_tag_intact(block, (size_t)block_size))
            bench_check_failed("free-contention block was overwritten in transit");
        free(block);
    }
    atomic_store_explicit(&ring->head, tail, memory_order_release);
    self->freed += tail - head;
    return (long)(tail - head);
}

static long pass_new_blocks(struct worker *self)
{
    struct ring *ring = self->outgoing;
    size_t tail = atomic_load_explicit(&ring->tail, memory_order_relaxed);
    size_t head = atomic_load_explicit(&ring->head, memory_order_acquire);
    size_t room = RING_SLOTS - (tail - head);
    for (size_t i = 0; i < room; i++) {
        void *block = bench_check_alloc(malloc((size_t)block_size), "free-contention block");
        bench_tag_write(block, (size_t)block_size, self->allocated + i);
        ring->slots[(tail + i) % RING_SLOTS] = block;
    }
    atomic_store_explicit(&ring->tail, tail + room, memory_order_release);
    self->allocated += room;
    return (long)room;
}

static void *worker_body(void *arg)
{
    struct worker *self = arg;
    bench_gate_pass(&gate);
    while (!atomic_load_explicit(&stop_requested, memory_order_relaxed)) {
        long progress = free_incoming(self);
        progress += pass_new_blocks(self);
        if (progress == 0)
            sched_yield(); /* the neighbours need the CPU to make room */
    }
    /* Once nobody produces any more, each ring holds its final contents. */
    pthread_barrier_wait(&producing_stopped);
    free_incoming(self);
    return NULL;
}

int main(int argc, char **argv)
{
    long threads = 2;
    double seconds = 1.0;
    const struct bench_option options[] = {
        BENCH_THREADS(&threads),
        BENCH_SECONDS(&seconds),
        BENCH_LONG('s', "size", &block_size, 1, 1L << 30),
        BENCH_OPTIONS_END,
    };
    const struct bench_command command = { "free-contention", options, NULL, 0, 0 };
    bench_parse_command(&command, argc, argv);

    struct worker *workers = bench_alloc_lines((size_t)threads, sizeof *workers);
    for (long t = 0; t < threads; t++)
        workers[t].outgoing = &workers[(t + 1) % threads].incoming;
    bench_gate_init(&gate, (int)threads);
    pthread_barrier_init(&producing_stopped, NULL, (unsigned)threads);
    for (long t = 0; t < threads; t++)
        workers[t].thread = bench_thread_start(worker_body, &workers[t]);
    double start = bench_gate_open_when_ready(&gate);
    bench_sleep_seconds(seconds);
    atomic_store(&stop_requested, true);
    uint64_t allocated = 0, freed = 0;
    for (long t = 0; t < threads; t++) {
        bench_thread_join(workers[t].thread);
        allocated += workers[t].allocated;
        freed += workers[t].freed;
    }
    double elapsed = bench_now_seconds() - start;
    pthread_barrier_destroy(&producing_stopped);
    free(workers);
    if (freed != allocated)
        bench_check_failed("free-contention freed %llu blocks of %llu allocated", (unsigned long long)freed,
                           (unsigned long long)allocated);
    bench_result("free-contention", "threads=%ld size=%ld seconds=%.6f frees=%llu frees_per_sec=%.1f", threads,
                 block_size, elapsed, (unsigned long long)freed, (double)freed / elapsed);
    return 0;
}
