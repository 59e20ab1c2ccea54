/* threadtest (Hoard's shape): a fixed total amount of work divided among T
 * independent threads; each repeatedly allocates its share of the objects
 * and then frees them all. Threads share nothing. Reports malloc-free pairs
 * per second over the whole run. */
#include "bench_args.h"
#include "bench_clock.h"
#include "bench_gate.h"
#include "bench_layout.h"
#include "bench_report.h"
#include "bench_tag.h"
#include "bench_threads.h"

#include <stdint.h>
#include <stdlib.h>

struct worker {
    _Alignas(BENCH_CACHE_LINE) pthread_t thread;
    long objects;
};

static struct bench_gate gate;
static long iterations = 50;
static long object_size = 64;

static void *worker_body(void *arg)
{
    struct worker *self = arg;
    void **objects = bench_check_alloc(malloc((size_t)self->objects * sizeof *objects), "object table");
    bench_gate_pass(&gate);
    for (long round = 0; round < iterations; round++) {
        for (long i = 0; i < self->objects; i++) {
            objects[i] = bench_check_alloc(malloc((size_t)object_size), "threadtest object");
            bench_tag_write(objects[i], (size_t)object_size, (uint64_t)i);
        }
        for (long i = 0; i < self->objects; i++) {
            if (!bench_tag_intact(objects[i], (size_t)object_size))
                bench_check_failed("threadtest object %ld was overwritten while live", i);
            free(objects[i]);
        }
    }
    free(objects);
    return NULL;
}

int main(int argc, char **argv)
{
    long threads = 1;
    long total_objects = 100000;
    const struct bench_option options[] = {
        BENCH_THREADS(&threads),
        BENCH_LONG('i', "iterations", &iterations, 1, 1L << 40),
        BENCH_LONG('n', "total-objects", &total_objects, 1, 1L << 40),
        BENCH_LONG('s', "size", &object_size, 1, 1L << 30),
        BENCH_OPTIONS_END,
    };
    const struct bench_command command = { "threadtest", options, NULL, 0, 0 };
    bench_parse_command(&command, argc, argv);

    struct worker *workers = bench_alloc_lines((size_t)threads, sizeof *workers);
    bench_gate_init(&gate, (int)threads);
    uint64_t pairs = 0;
    for (long t = 0; t < threads; t++) {
        /* Spread the remainder so the total is exactly what was asked. */
        workers[t].objects = total_objects / threads + (t < total_objects % threads ? 1 : 0);
        pairs += (uint64_t)workers[t].objects * (uint64_t)iterations;
        workers[t].thread = bench_thread_start(worker_body, &workers[t]);
    }
    double start = bench_gate_open_when_ready(&gate);
    for (long t = 0; t < threads; t++)
        bench_thread_join(workers[t].thread);
    double elapsed = bench_now_seconds() - start;
    free(workers);
    bench_result("threadtest", "threads=%ld iterations=%ld objects=%ld size=%ld seconds=%.6f pairs_per_sec=%.1f",
                 threads, iterations, total_objects, object_size, elapsed, (double)pairs / elapsed);
    return 0;
}
