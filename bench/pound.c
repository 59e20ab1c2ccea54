/* pound (seed 003's realloc-heavy scalability test): each pound() iteration
 * allocates blocks of growing sizes and fills them, frees the odd ones,
 * allocates smaller odd ones, grows those with realloc, grows one block by
 * a hundred successive reallocs, and frees everything. The single-threaded
 * run calls pound() T times in sequence; the multithreaded run calls it in T
 * threads at once. Speedup = ST time / MT time; scalability = speedup as a
 * percentage of the perfect speedup, min(T, online CPUs), as the article
 * defines them. Every fill is checked before the block is reused or freed,
 * and realloc must carry the old contents over. */
#include "bench_args.h"
#include "bench_clock.h"
#include "bench_gate.h"
#include "bench_layout.h"
#include "bench_report.h"
#include "bench_threads.h"

#include <stdlib.h>
#include <string.h>

#define BLOCK_COUNT 80
#define BASE_SIZE 80
#define BIG_BLOCK_STEPS 100
#define FIRST_FILL '!'
#define SECOND_FILL ('!' + BLOCK_COUNT - 1)

struct worker {
    _Alignas(BENCH_CACHE_LINE) pthread_t thread;
};

static struct bench_gate gate;
static long iterations = 100;

static void expect_filled(const char *block, size_t size, char fill, const char *stage)
{
    for (size_t i = 0; i < size; i++)
        if (block[i] != fill)
            bench_check_failed("pound: byte %zu of a %zu-byte block lost its contents (%s)", i, size, stage);
}

static char *fill(char *block, size_t size, char value)
{
    memset(block, value, size);
    return block;
}

static void pound(void)
{
    char *blocks[BLOCK_COUNT];
    for (long round = 0; round < iterations; round++) {
        for (int i = 0; i < BLOCK_COUNT; i++) {
            size_t size = (size_t)(BASE_SIZE + i);
            blocks[i] = fill(bench_check_alloc(malloc(size), "pound block"), size, (char)(FIRST_FILL + i));
        }
        for (int i = 1; i < BLOCK_COUNT; i += 2) {
            expect_filled(blocks[i], (size_t)(BASE_SIZE + i), (char)(FIRST_FILL + i), "before free");
            free(blocks[i]);
        }
        for (int i = BLOCK_COUNT - 1; i > 0; i -= 2) {
            size_t size = (size_t)(BASE_SIZE - i);
            blocks[i] = fill(bench_check_alloc(malloc(size), "pound block"), size, (char)(SECOND_FILL - i));
        }
        for (int i = BLOCK_COUNT - 1; i > 0; i -= 2) {
            size_t old_size = (size_t)(BASE_SIZE - i), new_size = (size_t)(BASE_SIZE + i);
            blocks[i] = bench_check_alloc(realloc(blocks[i], new_size), "pound realloc");
            expect_filled(blocks[i], old_size, (char)(SECOND_FILL - i), "after growing realloc");
            fill(blocks[i], new_size, (char)(FIRST_FILL + i));
        }
        size_t big_size = (size_t)(BASE_SIZE + BLOCK_COUNT - 1);
        char big_fill = (char)(FIRST_FILL + BLOCK_COUNT - 1);
        for (int step = 1; step <= BIG_BLOCK_STEPS; step++) {
            size_t new_size = (size_t)(BASE_SIZE * step);
            char *big = bench_check_alloc(realloc(blocks[BLOCK_COUNT - 1], new_size), "pound big realloc");
            expect_filled(big, big_size < new_size ? big_size : new_size, big_fill, "after big realloc");
            blocks[BLOCK_COUNT - 1] = fill(big, new_size, SECOND_FILL);
            big_size = new_size;
            big_fill = SECOND_FILL;
        }
        for (int i = 0; i < BLOCK_COUNT; i++) {
            free(blocks[i]);
            blocks[i] = NULL;
        }
        /* The article frees the NULLs too: free(NULL) must be a no-op. */
        for (int i = 0; i < BLOCK_COUNT; i++)
            free(blocks[i]);
    }
}

static void *worker_body(void *arg)
{
    (void)arg;
    bench_gate_pass(&gate);
    pound();
    return NULL;
}

int main(int argc, char **argv)
{
    long threads = 2;
    const struct bench_option options[] = {
        BENCH_THREADS(&threads),
        BENCH_LONG('i', "iterations", &iterations, 1, 1L << 40),
        BENCH_OPTIONS_END,
    };
    const struct bench_command command = { "pound", options, NULL, 0, 0 };
    bench_parse_command(&command, argc, argv);

    /* One untimed iteration first, so the single-threaded run does not
     * alone pay for the heap's first growth. */
    long timed_iterations = iterations;
    iterations = 1;
    pound();
    iterations = timed_iterations;

    double st_start = bench_now_seconds();
    for (long t = 0; t < threads; t++)
        pound();
    double st_seconds = bench_now_seconds() - st_start;

    struct worker *workers = bench_alloc_lines((size_t)threads, sizeof *workers);
    bench_gate_init(&gate, (int)threads);
    for (long t = 0; t < threads; t++)
        workers[t].thread = bench_thread_start(worker_body, NULL);
    double mt_start = bench_gate_open_when_ready(&gate);
    for (long t = 0; t < threads; t++)
        bench_thread_join(workers[t].thread);
    double mt_seconds = bench_now_seconds() - mt_start;
    free(workers);

    double speedup = st_seconds / mt_seconds;
    int perfect = threads < bench_online_cpus() ? (int)threads : bench_online_cpus();
    bench_result("pound",
                 "threads=%ld iterations=%ld st_seconds=%.6f mt_seconds=%.6f speedup=%.3f perfect_speedup=%d "
                 "scalability_pct=%.1f iterations_per_sec=%.1f",
                 threads, iterations, st_seconds, mt_seconds, speedup, perfect, 100.0 * speedup / perfect,
                 (double)(threads * iterations) / mt_seconds);
    return 0;
}
