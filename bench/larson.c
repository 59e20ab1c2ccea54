/* larson (Larson & Krishnan's server simulation, with seed 000's start
 * barrier): each of T lanes owns an array of live blocks, first filled by
 * the main thread; a worker repeatedly frees a random block and allocates a
 * random-sized replacement. After a fixed number of operations the worker
 * hands its lane to a newly created thread and exits, as server threads come
 * and go, so blocks are freed by threads other than their allocator. Only
 * the first generation waits at the gate, so no thread works before the
 * clock starts. Reports operations (free + malloc) per second. */
#include "bench_args.h"
#include "bench_clock.h"
#include "bench_gate.h"
#include "bench_layout.h"
#include "bench_report.h"
#include "rng.h"
#include "bench_tag.h"
#include "bench_threads.h"

#include <semaphore.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdlib.h>


struct lane {
    _Alignas(BENCH_CACHE_LINE) void **blocks;
    size_t *sizes;
    struct rng rng;
    uint64_t operations;
    uint64_t generations;
};

static struct bench_gate gate;
static sem_t lanes_finished;
static atomic_bool stop_requested;
static long blocks_per_lane = 1000;
static long min_size = 10;
static long max_size = 500;
static long operations_per_lifetime = 10000;

static void *allocate_block(struct lane *lane, long slot)
{
    size_t size = (size_t)(min_size + (long)rng_below(&lane->rng, (uint64_t)(max_size - min_size + 1)));
    void *block = bench_check_alloc(malloc(size), "larson block");
    bench_tag_write(block, size, (uint64_t)slot ^ lane->rng.state);
    lane->blocks[slot] = block;
    lane->sizes[slot] = size;
    return block;
}

static void release_block(struct lane *lane, long slot)
{
    if (!bench_tag_intact(lane->blocks[slot], lane->sizes[slot]))
        bench_check_failed("larson block in slot %ld was overwritten while live", slot);
    free(lane->blocks[slot]);
}

static void *lane_worker(void *arg);

/* The next generation inherits the lane; it is detached because nobody
 * joins a thread of a server that simply went away. */
static void hand_over(struct lane *lane)
{
    bench_thread_start_detached(lane_worker, lane);
}

static void *lane_worker(void *arg)
{
    struct lane *lane = arg;
    if (lane->generations == 0)
        bench_gate_pass(&gate);
    lane->generations++;
    for (long op = 0; op < operations_per_lifetime; op++) {
        if (atomic_load_explicit(&stop_requested, memory_order_relaxed)) {
            sem_post(&lanes_finished);
            return NULL;
        }
        long slot = (long)rng_below(&lane->rng, (uint64_t)blocks_per_lane);
        release_block(lane, slot);
        allocate_block(lane, slot);
        lane->operations += 2;
    }
    hand_over(lane);
    return NULL;
}

int main(int argc, char **argv)
{
    long threads = 1;
    double seconds = 1.0;
    long seed = 1;
    const struct bench_option options[] = {
        BENCH_THREADS(&threads),
        BENCH_SECONDS(&seconds),
        BENCH_LONG('n', "blocks", &blocks_per_lane, 1, 100000000),
        BENCH_LONG('m', "min-size", &min_size, 1, 1L << 30),
        BENCH_LONG('M', "max-size", &max_size, 1, 1L << 30),
        BENCH_LONG('r', "operations", &operations_per_lifetime, 1, 1L << 40),
        BENCH_SEED('s', &seed),
        BENCH_OPTIONS_END,
    };
    const struct bench_command command = { "larson", options, NULL, 0, 0 };
    bench_parse_command(&command, argc, argv);
    if (max_size < min_size)
        bench_usage(&command);

    struct lane *lanes = bench_alloc_lines((size_t)threads, sizeof *lanes);
    for (long t = 0; t < threads; t++) {
        struct lane *lane = &lanes[t];
        lane->rng = rng_seeded((uint64_t)seed * 1000003u + (uint64_t)t);
        lane->blocks = bench_check_alloc(malloc((size_t)blocks_per_lane * sizeof *lane->blocks), "lane blocks");
        lane->sizes = bench_check_alloc(malloc((size_t)blocks_per_lane * sizeof *lane->sizes), "lane sizes");
        for (long slot = 0; slot < blocks_per_lane; slot++)
            allocate_block(lane, slot);
    }

    bench_gate_init(&gate, (int)threads);
    sem_init(&lanes_finished, 0, 0);
    for (long t = 0; t < threads; t++)
        hand_over(&lanes[t]);
    double start = bench_gate_open_when_ready(&gate);
    bench_sleep_seconds(seconds);
    atomic_store(&stop_requested, true);
    for (long t = 0; t < threads; t++)
        while (sem_wait(&lanes_finished) != 0)
            ;
    double elapsed = bench_now_seconds() - start;

    uint64_t operations = 0;
    uint64_t generations = 0;
    for (long t = 0; t < threads; t++) {
        struct lane *lane = &lanes[t];
        operations += lane->operations;
        generations += lane->generations;
        for (long slot = 0; slot < blocks_per_lane; slot++)
            release_block(lane, slot);
        free(lane->blocks);
        free(lane->sizes);
    }
    free(lanes);
    bench_result("larson", "threads=%ld seconds=%.6f operations=%llu thread_generations=%llu ops_per_sec=%.1f",
                 threads, elapsed, (unsigned long long)operations, (unsigned long long)generations,
                 (double)operations / elapsed);
    return 0;
}
