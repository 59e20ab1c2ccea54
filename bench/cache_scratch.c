/* cache-scratch (Hoard's false-sharing tests, written from their
 * description). Each of T threads repeatedly allocates a small object,
 * writes it many times and frees it. An allocator that gives objects on one
 * cache line to threads on different CPUs makes the writes fight over the
 * line, and the run is many times slower than it needs to be.
 *   -p passive: the main thread first allocates T objects, one after the
 *      other, and hands one to each thread, which frees it before its loop:
 *      an allocator that hands a freed object back to the thread that freed
 *      it puts neighbours of one line on different CPUs (cache-scratch).
 *   -p active: no hand-over; threads only allocate their own objects
 *      (cache-thrash).
 * The work is fixed: -i objects per thread, each written -r / T times
 * (the standard "cache-scratch T 1000 1 2000000 T" is "-t T -i 1000 -s 1
 * -r 2000000"). Reports the seconds it took (lower is better). */
#include "bench_args.h"
#include "bench_gate.h"
#include "bench_layout.h"
#include "bench_report.h"
#include "bench_threads.h"

#include <stdlib.h>

enum mode { MODE_PASSIVE, MODE_ACTIVE };
static const char *const mode_names[] = { "passive", "active", NULL };

struct worker {
    _Alignas(BENCH_CACHE_LINE) char *handed; /* passive: the main thread's object to free first */
};

static struct bench_gate gate;
static long mode = MODE_PASSIVE; /* an enum mode */
static long iterations = 1000;
static long object_size = 8;
static long writes_per_object;

static void *worker_body(void *arg)
{
    struct worker *self = arg;
    bench_gate_pass(&gate);
    free(self->handed);
    for (long i = 0; i < iterations; i++) {
        volatile char *object = bench_check_alloc(malloc((size_t)object_size), "object");
        for (long w = 0; w < writes_per_object; w++)
            for (long k = 0; k < object_size; k++)
                object[k] = (char)(w + k);
        for (long k = 0; k < object_size; k++)
            if (object[k] != (char)(writes_per_object - 1 + k))
                bench_check_failed("cache-scratch object lost a write (byte %ld)", k);
        free((void *)object);
    }
    return NULL;
}

int main(int argc, char **argv)
{
    long threads = 1, repetitions = 2000000;
    const struct bench_option options[] = {
        BENCH_CHOICE('p', "sharing", &mode, mode_names),
        BENCH_THREADS(&threads),
        BENCH_LONG('i', "objects-per-thread", &iterations, 1, 1L << 40),
        BENCH_LONG('s', "size", &object_size, 1, 1L << 20),
        BENCH_LONG('r', "writes-per-object (divided among threads)", &repetitions, 1, 1L << 40),
        BENCH_OPTIONS_END,
    };
    const struct bench_command command = { "cache-scratch", options, NULL, 0, 0 };
    bench_parse_command(&command, argc, argv);
    writes_per_object = repetitions / threads > 0 ? repetitions / threads : 1;

    struct worker *workers = bench_alloc_lines((size_t)threads, sizeof *workers);
    if (mode == MODE_PASSIVE)
        for (long t = 0; t < threads; t++)
            workers[t].handed = bench_check_alloc(malloc((size_t)object_size), "handed object");
    double elapsed = bench_run_gated(&gate, threads, worker_body, workers, sizeof *workers);
    free(workers);
    bench_result("cache-scratch", "mode=%s threads=%ld objects_per_thread=%ld size=%ld writes_per_object=%ld "
                 "seconds=%.6f writes_per_sec=%.1f",
                 mode_names[mode], threads, iterations, object_size, writes_per_object, elapsed,
                 (double)threads * (double)iterations * (double)writes_per_object * (double)object_size / elapsed);
    return 0;
}
