/* larson (Larson & Krishnan's server simulation, with seed 000's start
 * barrier). The main thread allocates every lane's blocks, deals them to
 * the lanes in a random order and replaces four times as many at random, so
 * a lane starts with blocks the main thread allocated next to other lanes'.
 * Each of T lanes is then worked by a thread that repeatedly frees a random
 * block of its lane and allocates a random-sized replacement. After a fixed
 * number of replacements the thread hands its lane to a newly created
 * thread and exits, as server threads come and go, so blocks are freed by
 * threads other than their allocator. Only the first generation waits at the
 * gate, so no thread works before the clock starts.
 *
 * The standard invocation "larson SECONDS MIN MAX BLOCKS ROUNDS SEED THREADS"
 * (e.g. 5 8 1000 5000 100 4141 N) is accepted as it is: sizes in [MIN, MAX),
 * BLOCKS blocks per lane, ROUNDS x BLOCKS replacements per thread lifetime.
 * Reports operations (free + malloc) per second, and allocations per second
 * (the standard's "throughput"). */
#include "bench_args.h"
#include "bench_clock.h"
#include "bench_gate.h"
#include "bench_layout.h"
#include "bench_report.h"
#include "bench_threads.h"
#include "rng.h"

#include <semaphore.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

struct lane {
    _Alignas(BENCH_CACHE_LINE) void **blocks;
    struct rng rng;
    uint64_t replacements;
    uint64_t generations;
};

static struct bench_gate gate;
static sem_t lanes_finished;
static atomic_bool stop_requested;
static long blocks_per_lane = 1000;
static long min_size = 10;
static long max_size = 500;
static long replacements_per_lifetime = 10000;

/* A block's first word holds its own address, scrambled: written on
 * allocation and checked before the free, it catches blocks handed out
 * twice at the cost of the one cache line the standard program touches
 * (blocks are at least 8 bytes, MIN_SIZE). */
#define MIN_SIZE ((long)sizeof(uint64_t))
#define TAG_KEY 0x5bd1e9955bd1e995ull

static void *allocate(struct rng *rng)
{
    size_t size = (size_t)(min_size + (long)rng_below(rng, (uint64_t)(max_size - min_size + 1)));
    void *block = bench_check_alloc(malloc(size), "larson block");
    uint64_t tag = (uint64_t)(uintptr_t)block ^ TAG_KEY;
    memcpy(block, &tag, sizeof tag);
    return block;
}

static void release(void *block)
{
    uint64_t tag;
    memcpy(&tag, block, sizeof tag);
    if (tag != ((uint64_t)(uintptr_t)block ^ TAG_KEY))
        bench_check_failed("larson block %p was overwritten while live", block);
    free(block);
}

static void replace(void **blocks, long count, struct rng *rng)
{
    long slot = (long)rng_below(rng, (uint64_t)count);
    release(blocks[slot]);
    blocks[slot] = allocate(rng);
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
    for (long i = 0; i < replacements_per_lifetime; i++) {
        if (atomic_load_explicit(&stop_requested, memory_order_relaxed)) {
            sem_post(&lanes_finished);
            return NULL;
        }
        replace(lane->blocks, blocks_per_lane, &lane->rng);
        lane->replacements++;
    }
    hand_over(lane);
    return NULL;
}

/* The main thread's warm-up: every block allocated here, dealt to the lanes
 * in a random permutation, then 4 x all of them replaced at random. */
static void **warm_up(long total, struct rng *rng)
{
    void **blocks = bench_check_alloc(malloc((size_t)total * sizeof *blocks), "larson block table");
    for (long i = 0; i < total; i++)
        blocks[i] = allocate(rng);
    for (long i = total; i > 1; i--) {
        long j = (long)rng_below(rng, (uint64_t)i);
        void *swap = blocks[j];
        blocks[j] = blocks[i - 1];
        blocks[i - 1] = swap;
    }
    for (long i = 0; i < 4 * total; i++)
        replace(blocks, total, rng);
    return blocks;
}

int main(int argc, char **argv)
{
    long threads = 1;
    double seconds = 1.0;
    long seed = 1;
    const struct bench_option options[] = {
        BENCH_THREADS(&threads),
        BENCH_SECONDS(&seconds),
        BENCH_LONG('n', "blocks-per-thread", &blocks_per_lane, 1, 100000000),
        BENCH_LONG('m', "min-size", &min_size, MIN_SIZE, 1L << 30),
        BENCH_LONG('M', "max-size", &max_size, 1, 1L << 30),
        BENCH_LONG('r', "replacements-per-thread-lifetime", &replacements_per_lifetime, 1, 1L << 40),
        BENCH_SEED('s', &seed),
        BENCH_OPTIONS_END,
    };
    const struct bench_command command = { "larson", options, "[SECONDS MIN MAX BLOCKS ROUNDS SEED THREADS]", 0, 7 };
    int first = bench_parse_command(&command, argc, argv);
    if (first < argc) {
        if (argc - first != 7)
            bench_usage(&command);
        seconds = bench_arg_double("SECONDS", argv[first], 0.001, 3600);
        min_size = bench_arg_long("MIN", argv[first + 1], MIN_SIZE, 1L << 30);
        max_size = bench_arg_long("MAX", argv[first + 2], min_size + 1, 1L << 30) - 1;
        blocks_per_lane = bench_arg_long("BLOCKS", argv[first + 3], 1, 100000000);
        replacements_per_lifetime = bench_arg_long("ROUNDS", argv[first + 4], 1, 1L << 30) * blocks_per_lane;
        seed = bench_arg_long("SEED", argv[first + 5], 0, 1L << 62);
        threads = bench_arg_long("THREADS", argv[first + 6], 1, 4096);
    }
    if (max_size < min_size)
        bench_usage(&command);

    struct rng main_rng = rng_seeded((uint64_t)seed);
    void **blocks = warm_up(threads * blocks_per_lane, &main_rng);
    struct lane *lanes = bench_alloc_lines((size_t)threads, sizeof *lanes);
    for (long t = 0; t < threads; t++) {
        lanes[t].blocks = blocks + t * blocks_per_lane;
        lanes[t].rng = rng_seeded(rng_next(&main_rng));
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

    uint64_t replacements = 0;
    uint64_t generations = 0;
    for (long t = 0; t < threads; t++) {
        replacements += lanes[t].replacements;
        generations += lanes[t].generations;
    }
    for (long i = 0; i < threads * blocks_per_lane; i++)
        release(blocks[i]);
    free(blocks);
    free(lanes);
    bench_result("larson",
                 "threads=%ld seconds=%.6f blocks_per_thread=%ld min_size=%ld max_size=%ld "
                 "replacements_per_lifetime=%ld operations=%llu thread_generations=%llu allocs_per_sec=%.1f "
                 "ops_per_sec=%.1f",
                 threads, elapsed, blocks_per_lane, min_size, max_size, replacements_per_lifetime,
                 (unsigned long long)(2 * replacements), (unsigned long long)generations,
                 (double)replacements / elapsed, 2.0 * (double)replacements / elapsed);
    return 0;
}
