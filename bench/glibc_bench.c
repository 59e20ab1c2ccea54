/* glibc-bench (glibc's malloc benchmarks, written from their descriptions).
 *   -m simple: one size at a time (-s, then twice and four times it), in
 *      batches of 25, 100, 400 and 1600 blocks: allocate the batch, write
 *      every word of every block, free the batch; -n blocks per batch size.
 *      Three passes: the main thread before any other thread exists, a
 *      second thread, the main thread again once threads have existed
 *      (allocators often have a single-threaded fast path). Reports
 *      malloc-free pairs per second over all of it.
 *   -m thread: T threads for -d seconds, each with a working set of -w
 *      slots; a step frees a random slot and fills it with a new block of a
 *      size from an inverse-square distribution over [4, -M] (mostly small,
 *      sometimes up to 32 KiB), every byte written. Reports steps per
 *      second (the standard "glibc-thread N" is "-m thread -t N -d 2"). */
#include "bench_args.h"
#include "bench_clock.h"
#include "bench_gate.h"
#include "bench_layout.h"
#include "bench_report.h"
#include "bench_threads.h"
#include "rng.h"

#include <math.h>
#include <stdatomic.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

enum mode { MODE_SIMPLE, MODE_THREAD };
static const char *const mode_names[] = { "simple", "thread", NULL };

static long mode = MODE_SIMPLE; /* an enum mode */
static long block_size = 16, blocks_per_batch_size = 2000000;
static long working_set = 1024, max_size = 32768;
static struct bench_gate gate;
static atomic_bool stop_requested;

static const long batch_sizes[] = { 25, 100, 400, 1600 };
#define BATCH_SIZES (long)(sizeof batch_sizes / sizeof batch_sizes[0])

/* One pass of the simple mode over sizes -s, 2s and 4s; returns the pairs. */
static uint64_t simple_pass(void)
{
    uint64_t pairs = 0;
    int **blocks = bench_check_alloc(malloc(1600 * sizeof *blocks), "batch table");
    for (long size = block_size; size <= 4 * block_size; size *= 2) {
        long words = size / (long)sizeof(int);
        for (long b = 0; b < BATCH_SIZES; b++) {
            long batch = batch_sizes[b];
            for (long round = 0; round < blocks_per_batch_size / batch; round++) {
                for (long i = 0; i < batch; i++) {
                    blocks[i] = bench_check_alloc(malloc((size_t)size), "glibc-bench block");
                    for (long w = 0; w < words; w++)
                        blocks[i][w] = (int)(w + i);
                }
                for (long i = 0; i < batch; i++) {
                    if (words > 0 && blocks[i][words - 1] != (int)(words - 1 + i))
                        bench_check_failed("glibc-bench block %ld was overwritten while live", i);
                    free(blocks[i]);
                }
                pairs += (uint64_t)batch;
            }
        }
    }
    free(blocks);
    return pairs;
}

static void *simple_thread(void *arg)
{
    *(uint64_t *)arg = simple_pass();
    return NULL;
}

static void run_simple(void)
{
    double start = bench_now_seconds();
    uint64_t pairs = simple_pass();
    uint64_t thread_pairs = 0;
    bench_thread_join(bench_thread_start(simple_thread, &thread_pairs));
    pairs += thread_pairs + simple_pass();
    double elapsed = bench_now_seconds() - start;
    bench_result("glibc-bench", "mode=simple size=%ld blocks_per_batch_size=%ld seconds=%.6f pairs=%llu "
                 "pairs_per_sec=%.1f",
                 block_size, blocks_per_batch_size, elapsed, (unsigned long long)pairs, (double)pairs / elapsed);
}

struct worker {
    _Alignas(BENCH_CACHE_LINE) uint64_t steps;
};

/* Inverse-square density over [4, max_size]: the inverse of its
 * cumulative distribution applied to a uniform number. */
static size_t inverse_square_size(struct rng *rng)
{
    double u = (double)rng_next(rng) / 18446744073709551616.0;
    double low = 1.0 / 4.0, high = 1.0 / (double)max_size;
    return (size_t)(1.0 / (low - u * (low - high)));
}

static void *thread_body(void *arg)
{
    struct worker *self = arg;
    struct rng rng = rng_seeded((uint64_t)(uintptr_t)self);
    unsigned char **blocks = bench_check_alloc(calloc((size_t)working_set, sizeof *blocks), "working set");
    size_t *sizes = bench_check_alloc(calloc((size_t)working_set, sizeof *sizes), "working set sizes");
    bench_gate_pass(&gate);
    uint64_t steps = 0;
    while (!atomic_load_explicit(&stop_requested, memory_order_relaxed)) {
        size_t slot = (size_t)rng_below(&rng, (uint64_t)working_set);
        if (blocks[slot] && blocks[slot][sizes[slot] - 1] != (unsigned char)(sizes[slot] - 1))
            bench_check_failed("glibc-bench block of %zu bytes was overwritten while live", sizes[slot]);
        free(blocks[slot]);
        size_t size = inverse_square_size(&rng);
        blocks[slot] = bench_check_alloc(malloc(size), "glibc-bench block");
        sizes[slot] = size;
        for (size_t i = 0; i < size; i++)
            blocks[slot][i] = (unsigned char)i;
        steps++;
    }
    for (long slot = 0; slot < working_set; slot++)
        free(blocks[slot]);
    free(sizes);
    free(blocks);
    self->steps = steps;
    return NULL;
}

static void run_threads(long threads, double seconds)
{
    struct worker *workers = bench_alloc_lines((size_t)threads, sizeof *workers);
    double elapsed = bench_run_gated_for(&gate, threads, thread_body, workers, sizeof *workers, seconds,
                                         &stop_requested);
    uint64_t steps = 0;
    for (long t = 0; t < threads; t++)
        steps += workers[t].steps;
    free(workers);
    bench_result("glibc-bench", "mode=thread threads=%ld working_set=%ld max_size=%ld seconds=%.6f steps=%llu "
                 "steps_per_sec=%.1f",
                 threads, working_set, max_size, elapsed, (unsigned long long)steps, (double)steps / elapsed);
}

int main(int argc, char **argv)
{
    long threads = 1;
    double seconds = 2.0;
    const struct bench_option options[] = {
        BENCH_CHOICE('m', "mode", &mode, mode_names),
        BENCH_LONG('s', "size (simple)", &block_size, 1, 1L << 24),
        BENCH_LONG('n', "blocks-per-batch-size (simple)", &blocks_per_batch_size, 1600, 1L << 40),
        BENCH_THREADS(&threads),
        BENCH_SECONDS(&seconds),
        BENCH_LONG('w', "working-set (thread)", &working_set, 1, 1L << 24),
        BENCH_LONG('M', "max-size (thread)", &max_size, 4, 1L << 30),
        BENCH_OPTIONS_END,
    };
    const struct bench_command command = { "glibc-bench", options, NULL, 0, 0 };
    bench_parse_command(&command, argc, argv);
    if (mode == MODE_SIMPLE)
        run_simple();
    else
        run_threads(threads, seconds);
    return 0;
}
