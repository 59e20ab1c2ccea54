/* alloc-test (the standard allocation-heavy test, written from its
 * description): each of T threads first fills a live set of -l blocks,
 * then runs -n steps; a step frees a random block of the set, allocates a
 * replacement whose size is skewed towards the small end of [-m, -M]
 * (u^3 of the range: half the blocks are under an eighth of it), writes
 * its first and last words, and reads the first word of another random
 * live block, as a program that uses what it allocates does. The standard
 * "alloc-test 1" and "alloc-test N" are "-t 1" and "-t N". Reports steps
 * per second. */
#include "bench_args.h"
#include "bench_gate.h"
#include "bench_layout.h"
#include "bench_report.h"
#include "bench_tag.h"
#include "bench_threads.h"
#include "rng.h"

#include <stdint.h>
#include <stdlib.h>

struct worker {
    _Alignas(BENCH_CACHE_LINE) long index;
    uint64_t checksum;
};

static struct bench_gate gate;
static long steps = 2000000, live = 65536, min_size = 8, max_size = 512;

static size_t skewed_size(struct rng *rng)
{
    double u = (double)rng_next(rng) / 18446744073709551616.0;
    return (size_t)min_size + (size_t)((double)(max_size - min_size + 1) * u * u * u);
}

struct slot {
    void *block;
    size_t size;
};

static void fill(struct slot *slot, struct rng *rng)
{
    slot->size = skewed_size(rng);
    slot->block = bench_check_alloc(malloc(slot->size), "alloc-test block");
    bench_tag_write(slot->block, slot->size, (uint64_t)(uintptr_t)slot);
}

static void *worker_body(void *arg)
{
    struct worker *self = arg;
    struct rng rng = rng_seeded((uint64_t)self->index * 104729u + 3);
    struct slot *slots = bench_check_alloc(malloc((size_t)live * sizeof *slots), "live set");
    bench_gate_pass(&gate);
    for (long i = 0; i < live; i++)
        fill(&slots[i], &rng);
    uint64_t checksum = 0;
    for (long step = 0; step < steps; step++) {
        struct slot *slot = &slots[rng_below(&rng, (uint64_t)live)];
        if (!bench_tag_intact(slot->block, slot->size))
            bench_check_failed("alloc-test block of %zu bytes was overwritten while live", slot->size);
        free(slot->block);
        fill(slot, &rng);
        checksum += *(volatile unsigned char *)slots[rng_below(&rng, (uint64_t)live)].block;
    }
    for (long i = 0; i < live; i++)
        free(slots[i].block);
    free(slots);
    self->checksum = checksum;
    return NULL;
}

int main(int argc, char **argv)
{
    long threads = 1;
    const struct bench_option options[] = {
        BENCH_THREADS(&threads),
        BENCH_LONG('n', "steps-per-thread", &steps, 1, 1L << 40),
        BENCH_LONG('l', "live-blocks-per-thread", &live, 1, 1L << 30),
        BENCH_LONG('m', "min-size", &min_size, 1, 1L << 30),
        BENCH_LONG('M', "max-size", &max_size, 1, 1L << 30),
        BENCH_OPTIONS_END,
    };
    const struct bench_command command = { "alloc-test", options, NULL, 0, 0 };
    bench_parse_command(&command, argc, argv);
    if (max_size < min_size)
        bench_usage(&command);

    struct worker *workers = bench_alloc_lines((size_t)threads, sizeof *workers);
    for (long t = 0; t < threads; t++)
        workers[t].index = t;
    double elapsed = bench_run_gated(&gate, threads, worker_body, workers, sizeof *workers);
    uint64_t checksum = 0;
    for (long t = 0; t < threads; t++)
        checksum += workers[t].checksum;
    free(workers);
    double total = (double)threads * (double)(steps + live);
    bench_result("alloc-test", "threads=%ld steps_per_thread=%ld live=%ld min_size=%ld max_size=%ld seconds=%.6f "
                 "checksum=%llu steps_per_sec=%.1f",
                 threads, steps, live, min_size, max_size, elapsed, (unsigned long long)checksum, total / elapsed);
    return 0;
}
