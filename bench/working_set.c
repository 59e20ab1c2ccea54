/* working-set: each of T threads keeps -n live blocks, and every round
 * frees them all, in the order they were allocated (-o seq) or shuffled
 * (-o rnd), then allocates them again in index order, writing the first
 * 16 bytes of each, as a program does that rebuilds a large structure.
 * Sizes are -s bytes, or (-m) drawn from [16, -m]. With more live bytes
 * than the caches hold, what decides the speed is where the blocks of a
 * pass lie, not the instructions of a call: the order a pass walks memory
 * in (prefetchers, TLB), and whether a free has to read the cold block it
 * frees. Reports malloc-free pairs per second, and the seconds spent in
 * the free and in the malloc passes. */
#include "bench_args.h"
#include "bench_clock.h"
#include "bench_gate.h"
#include "bench_layout.h"
#include "bench_report.h"
#include "bench_threads.h"
#include "rng.h"

#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#define WRITTEN 16

struct worker {
    _Alignas(BENCH_CACHE_LINE) long index;
    double free_seconds, malloc_seconds;
    unsigned char **blocks; /* left live for main to free after the clock stops */
};

static struct bench_gate gate;
static long live = 262144, rounds = 20, fixed_size = 64, max_size = 0;
static const char *const order_names[] = { "seq", "rnd", NULL };
static long order = 0;

static void write_block(unsigned char *block, size_t size, long i)
{
    memset(block, (unsigned char)i, size < WRITTEN ? size : WRITTEN);
}

static void *worker_body(void *arg)
{
    struct worker *self = arg;
    struct rng rng = rng_seeded((uint64_t)self->index + 1);
    unsigned char **blocks = bench_check_alloc(malloc((size_t)live * sizeof *blocks), "block table");
    size_t *sizes = bench_check_alloc(malloc((size_t)live * sizeof *sizes), "size table");
    long *frees = bench_check_alloc(malloc((size_t)live * sizeof *frees), "free order");
    for (long i = 0; i < live; i++) {
        sizes[i] = max_size ? 16 + (size_t)rng_below(&rng, (uint64_t)(max_size - 15)) : (size_t)fixed_size;
        frees[i] = i;
    }
    if (order == 1)
        for (long i = live - 1; i > 0; i--) {
            long j = (long)rng_below(&rng, (uint64_t)i + 1), swap = frees[i];
            frees[i] = frees[j];
            frees[j] = swap;
        }
    for (long i = 0; i < live; i++) {
        blocks[i] = bench_check_alloc(malloc(sizes[i]), "working-set block");
        write_block(blocks[i], sizes[i], i);
    }
    bench_gate_pass(&gate);
    for (long r = 0; r < rounds; r++) {
        double start = bench_now_seconds();
        for (long k = 0; k < live; k++) {
            long i = frees[k];
            if (blocks[i][0] != (unsigned char)i)
                bench_check_failed("a live block lost its first byte");
            free(blocks[i]);
        }
        double freed = bench_now_seconds();
        for (long i = 0; i < live; i++) {
            blocks[i] = bench_check_alloc(malloc(sizes[i]), "working-set block");
            write_block(blocks[i], sizes[i], i);
        }
        self->free_seconds += freed - start;
        self->malloc_seconds += bench_now_seconds() - freed;
    }
    free(frees);
    free(sizes);
    self->blocks = blocks;
    return NULL;
}

int main(int argc, char **argv)
{
    long threads = 1;
    const struct bench_option options[] = {
        BENCH_THREADS(&threads),
        BENCH_LONG('n', "live-blocks-per-thread", &live, 1, 1L << 30),
        BENCH_LONG('r', "rounds", &rounds, 1, 1L << 30),
        BENCH_LONG('s', "size", &fixed_size, 1, 1L << 30),
        BENCH_LONG('m', "max-size (sizes drawn from [16, max]; 0: -s)", &max_size, 0, 1L << 30),
        BENCH_CHOICE('o', "order a round frees in", &order, order_names),
        BENCH_OPTIONS_END,
    };
    const struct bench_command command = { "working-set", options, NULL, 0, 0 };
    bench_parse_command(&command, argc, argv);
    if (max_size && max_size < 16)
        bench_check_failed("-m must be 0 or at least 16");

    struct worker *workers = bench_alloc_lines((size_t)threads, sizeof *workers);
    for (long t = 0; t < threads; t++)
        workers[t].index = t;
    double elapsed = bench_run_gated(&gate, threads, worker_body, workers, sizeof *workers);
    double free_seconds = 0, malloc_seconds = 0;
    for (long t = 0; t < threads; t++) {
        free_seconds += workers[t].free_seconds;
        malloc_seconds += workers[t].malloc_seconds;
        for (long i = 0; i < live; i++)
            free(workers[t].blocks[i]);
        free(workers[t].blocks);
    }
    free(workers);
    double pairs = (double)live * (double)rounds * (double)threads;
    bench_result("working-set",
                 "threads=%ld live=%ld rounds=%ld size=%ld max_size=%ld order=%s seconds=%.6f free_seconds=%.6f "
                 "malloc_seconds=%.6f pairs_per_sec=%.1f",
                 threads, live, rounds, fixed_size, max_size, order_names[order], elapsed,
                 free_seconds / (double)threads, malloc_seconds / (double)threads, pairs / elapsed);
    return 0;
}
