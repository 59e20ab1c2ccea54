/* rss-return: does memory go back to the operating system once a program
 * has freed it, while the program itself does nothing more?
 *
 * After a warm-up (the same threads allocating and freeing a little, so the
 * allocator's per-thread and per-arena fixed costs are in the baseline), the
 * baseline RSS is read from /proc/self/statm. Then T threads together
 * allocate M MiB: half of the bytes in small blocks (16..1024 bytes), half in
 * large blocks (64 KiB..4 MiB), every byte written. At a barrier the main
 * thread reads the peak RSS; then every thread frees the blocks of its
 * neighbour, so every free is a cross-thread free. The threads then park,
 * blocked, as a thread pool's would (-x: they exit and are joined instead),
 * and the main thread sleeps, reading RSS every interval for the window.
 *
 * Returned means RSS <= baseline x 1.05 + 1 MiB: within 5% of the baseline,
 * plus 1 MiB of slack so that a small program's few-MiB baseline does not
 * turn the test into one about a handful of pages (thread stacks, the
 * sampling buffer). return_ms is the time from the end of the frees to the
 * first sample under that threshold (-1: never within the window);
 * returned_pct is the share of the peak's excess over the baseline that is
 * gone at the last sample. The blocks are chained through their own first
 * bytes, so the benchmark keeps no bookkeeping of its own in the heap. */
#include "bench_args.h"
#include "bench_clock.h"
#include "bench_layout.h"
#include "bench_report.h"
#include "rng.h"
#include "bench_rss.h"
#include "bench_threads.h"

#include <errno.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#define SMALL_MIN 16
#define SMALL_MAX 1024
#define LARGE_MIN ((size_t)64 << 10)
#define LARGE_MAX ((size_t)4 << 20)
#define RETURN_TOLERANCE 0.05
#define RETURN_SLACK_BYTES ((size_t)1 << 20)
#define BLOCK_MAGIC 0x5253535265747572ull
/* Warm-up per thread: a few small blocks and one large one. */
#define WARMUP_BYTES ((size_t)256 << 10)

/* The start of every block: the chain to the next block of the same
 * thread, and a check word from which the block's size is recovered. */
struct block {
    struct block *next;
    uint64_t check;
};

struct worker {
    _Alignas(BENCH_CACHE_LINE) pthread_t thread;
    long index;
    size_t share;          /* bytes this worker allocates */
    struct block *blocks;  /* what it allocated, freed by its neighbour */
    long allocated;
    long freed;
};

struct sample {
    double seconds;  /* since the end of the frees */
    size_t rss;
};

static long thread_count = 8;
static long seed = 1;
static struct worker *workers;
static pthread_barrier_t phase;
static pthread_mutex_t park_lock = PTHREAD_MUTEX_INITIALIZER;
static pthread_cond_t park_changed = PTHREAD_COND_INITIALIZER;
static bool parked_may_leave;
static bool workers_park;

static uint64_t check_word(const struct block *block, size_t size)
{
    return (uint64_t)size ^ BLOCK_MAGIC ^ (uint64_t)(uintptr_t)block;
}

static struct block *allocate_block(size_t size, struct block *next, unsigned char fill)
{
    struct block *block = bench_check_alloc(malloc(size), "rss-return block");
    memset(block, fill, size);  /* every page resident */
    block->next = next;
    block->check = check_word(block, size);
    if (size >= sizeof *block + sizeof(uint64_t)) {
        uint64_t tail = ~block->check;
        memcpy((char *)block + size - sizeof tail, &tail, sizeof tail);
    }
    return block;
}

static void free_block(struct block *block)
{
    size_t size = (size_t)(block->check ^ BLOCK_MAGIC ^ (uint64_t)(uintptr_t)block);
    if (size < SMALL_MIN || size > LARGE_MAX)
        bench_check_failed("rss-return: block %p lost its header (size reads as %zu)", (void *)block, size);
    if (size >= sizeof *block + sizeof(uint64_t)) {
        uint64_t tail;
        memcpy(&tail, (char *)block + size - sizeof tail, sizeof tail);
        if (tail != ~block->check)
            bench_check_failed("rss-return: the end of a %zu-byte block at %p was overwritten", size, (void *)block);
    }
    free(block);
}

static void wait_phase(void)
{
    int rc = pthread_barrier_wait(&phase);
    if (rc != 0 && rc != PTHREAD_BARRIER_SERIAL_THREAD)
        bench_check_failed("pthread_barrier_wait: %s", strerror(rc));
}

/* Half of the share in small blocks, half in large ones, the last large
 * block cut to what is left (but never under the large minimum). */
static void allocate_share(struct worker *self)
{
    struct rng rng = rng_seeded((uint64_t)seed * 1000003u + (uint64_t)self->index);
    unsigned char fill = (unsigned char)(0x40 + self->index % 64);
    size_t small_budget = self->share / 2, large_budget = self->share - small_budget;
    struct block *chain = NULL;
    for (size_t done = 0; done < small_budget; self->allocated++) {
        size_t size = SMALL_MIN + (size_t)rng_below(&rng, SMALL_MAX - SMALL_MIN + 1);
        chain = allocate_block(size, chain, fill);
        done += size;
    }
    for (size_t done = 0; done < large_budget; self->allocated++) {
        size_t size = LARGE_MIN + (size_t)rng_below(&rng, LARGE_MAX - LARGE_MIN + 1);
        size_t left = large_budget - done;
        if (size > left)
            size = left > LARGE_MIN ? left : LARGE_MIN;
        chain = allocate_block(size, chain, fill);
        done += size;
    }
    self->blocks = chain;
}

static void free_neighbours_blocks(struct worker *self)
{
    struct worker *owner = &workers[(self->index + 1) % thread_count];
    struct block *block = owner->blocks;
    owner->blocks = NULL;
    while (block != NULL) {
        struct block *next = block->next;
        free_block(block);
        self->freed++;
        block = next;
    }
}

/* Phases, each ended by the barrier the main thread also waits at:
 * allocate | (main reads the peak) | free the neighbour's blocks | park. */
static void *worker_body(void *arg)
{
    struct worker *self = arg;
    allocate_share(self);
    wait_phase();
    wait_phase();
    free_neighbours_blocks(self);
    wait_phase();
    if (workers_park) {
        pthread_mutex_lock(&park_lock);
        while (!parked_may_leave)
            pthread_cond_wait(&park_changed, &park_lock);
        pthread_mutex_unlock(&park_lock);
    }
    return NULL;
}

struct round {
    size_t peak_rss;
    double allocate_seconds;
    double free_seconds;
    double frees_end;  /* bench_now_seconds() when the last free returned */
    long blocks;
};

/* One allocate-free round of every worker with `bytes` in total. The
 * workers are still parked on return when `with_parking` is set. */
static struct round run_round(size_t bytes, bool with_parking)
{
    struct round result = { 0 };
    workers_park = with_parking;
    parked_may_leave = false;
    for (long i = 0; i < thread_count; i++) {
        workers[i].index = i;
        workers[i].share = bytes / (size_t)thread_count;
        workers[i].blocks = NULL;
        workers[i].allocated = workers[i].freed = 0;
    }
    double start = bench_now_seconds();
    for (long i = 0; i < thread_count; i++)
        workers[i].thread = bench_thread_start(worker_body, &workers[i]);
    wait_phase();
    double allocated = bench_now_seconds();
    result.peak_rss = bench_rss_bytes();
    wait_phase();
    double frees_start = bench_now_seconds();
    wait_phase();
    result.frees_end = bench_now_seconds();
    result.allocate_seconds = allocated - start;
    result.free_seconds = result.frees_end - frees_start;
    for (long i = 0; i < thread_count; i++) {
        long owner = (i + 1) % thread_count;
        if (workers[i].freed != workers[owner].allocated)
            bench_check_failed("rss-return: thread %ld freed %ld blocks of thread %ld, which allocated %ld", i,
                               workers[i].freed, owner, workers[owner].allocated);
        result.blocks += workers[owner].allocated;
    }
    if (!with_parking)
        for (long i = 0; i < thread_count; i++)
            bench_thread_join(workers[i].thread);
    return result;
}

static void release_parked_workers(void)
{
    pthread_mutex_lock(&park_lock);
    parked_may_leave = true;
    pthread_cond_broadcast(&park_changed);
    pthread_mutex_unlock(&park_lock);
    for (long i = 0; i < thread_count; i++)
        bench_thread_join(workers[i].thread);
}

static void sleep_until(double when)
{
    struct timespec deadline;
    deadline.tv_sec = (time_t)when;
    deadline.tv_nsec = (long)((when - (double)deadline.tv_sec) * 1e9);
    while (clock_nanosleep(CLOCK_MONOTONIC, TIMER_ABSTIME, &deadline, NULL) == EINTR)
        ;
}

int main(int argc, char **argv)
{
    long total_mib = 1024;
    double window = 5.0, interval_ms = 10.0;
    bool verbose = false, exit_threads = false;
    const struct bench_option options[] = {
        BENCH_LONG('t', "threads", &thread_count, 1, 1024),
        BENCH_LONG('m', "total-MiB", &total_mib, 1, 1L << 20),
        BENCH_DOUBLE('w', "window-seconds", &window, 0.0, 3600.0),
        BENCH_DOUBLE('i', "interval-ms", &interval_ms, 0.1, 10000.0),
        BENCH_FLAG('x', "threads exit instead of parking", &exit_threads),
        BENCH_SEED('s', &seed),
        BENCH_FLAG('v', "verbose", &verbose),
        BENCH_OPTIONS_END,
    };
    const struct bench_command command = { "rss-return", options, NULL, 0, 0 };
    bench_parse_command(&command, argc, argv);
    bool park = !exit_threads;

    workers = bench_alloc_lines((size_t)thread_count, sizeof *workers);
    int rc = pthread_barrier_init(&phase, NULL, (unsigned)thread_count + 1);
    if (rc != 0)
        bench_check_failed("pthread_barrier_init: %s", strerror(rc));
    double interval = interval_ms / 1000.0;
    size_t sample_capacity = (size_t)(window / interval) + 2;
    struct sample *samples = bench_alloc_lines(1, (sample_capacity * sizeof *samples + BENCH_CACHE_LINE - 1)
                                                      / BENCH_CACHE_LINE * BENCH_CACHE_LINE);

    run_round(WARMUP_BYTES * (size_t)thread_count, false);
    size_t baseline = bench_rss_bytes();
    size_t threshold = (size_t)((double)baseline * (1.0 + RETURN_TOLERANCE)) + RETURN_SLACK_BYTES;

    struct round measured = run_round((size_t)total_mib << 20, park);
    double frees_end = measured.frees_end;
    size_t count = 0;
    samples[count++] = (struct sample){ bench_now_seconds() - frees_end, bench_rss_bytes() };
    for (size_t k = 1; k < sample_capacity && (double)k * interval <= window + 1e-9; k++) {
        sleep_until(frees_end + (double)k * interval);
        samples[count++] = (struct sample){ bench_now_seconds() - frees_end, bench_rss_bytes() };
    }
    if (park)
        release_parked_workers();

    double return_ms = -1.0;
    for (size_t k = 0; k < count; k++) {
        if (verbose)
            fprintf(stderr, "rss-return: %8.1f ms %10.2f MiB\n", samples[k].seconds * 1000.0,
                    bench_mib(samples[k].rss));
        if (return_ms < 0 && samples[k].rss <= threshold)
            return_ms = samples[k].seconds * 1000.0;
    }
    size_t peak = measured.peak_rss, after = samples[count - 1].rss;
    double returned_pct = 100.0;
    if (peak > baseline) {
        returned_pct = 100.0 * ((double)peak - (double)after) / ((double)peak - (double)baseline);
        returned_pct = returned_pct < 0.0 ? 0.0 : returned_pct > 100.0 ? 100.0 : returned_pct;
    }
    bench_result("rss-return",
                 "threads=%ld requested_mib=%ld blocks=%ld parked=%d window_s=%g interval_ms=%g "
                 "allocate_seconds=%.3f free_seconds=%.3f baseline_mib=%.2f peak_mib=%.2f end_of_frees_mib=%.2f "
                 "after_mib=%.2f threshold_mib=%.2f return_ms=%.0f returned_pct=%.2f",
                 thread_count, total_mib, measured.blocks, park ? 1 : 0, window, interval_ms,
                 measured.allocate_seconds, measured.free_seconds, bench_mib(baseline), bench_mib(peak),
                 bench_mib(samples[0].rss), bench_mib(after), bench_mib(threshold), return_ms, returned_pct);
    free(samples);
    free(workers);
    pthread_barrier_destroy(&phase);
    return 0;
}
