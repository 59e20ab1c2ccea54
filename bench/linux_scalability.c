/* linux-scalability (Lever & Boreham's shape): each of T threads runs a
 * tight loop of malloc and immediate free of one fixed size, the
 * "malloc/free pair loop". Reports pairs per second. */
#include "bench_args.h"
#include "bench_gate.h"
#include "bench_report.h"
#include "bench_threads.h"

#include <stdint.h>
#include <stdlib.h>

static struct bench_gate gate;
static long pairs_per_thread = 1000000;
static long block_size = 64;

static void *worker_body(void *arg)
{
    (void)arg;
    bench_gate_pass(&gate);
    for (long i = 0; i < pairs_per_thread; i++) {
        volatile unsigned char *block = bench_check_alloc(malloc((size_t)block_size), "block");
        block[0] = (unsigned char)i;
        if (block[0] != (unsigned char)i)
            bench_check_failed("a fresh block did not hold a written byte");
        free((void *)block);
    }
    return NULL;
}

int main(int argc, char **argv)
{
    long threads = 1;
    const struct bench_option options[] = {
        BENCH_THREADS(&threads),
        BENCH_LONG('n', "pairs-per-thread", &pairs_per_thread, 1, 1L << 40),
        BENCH_LONG('s', "size", &block_size, 1, 1L << 30),
        BENCH_OPTIONS_END,
    };
    const struct bench_command command = { "linux-scalability", options, NULL, 0, 0 };
    bench_parse_command(&command, argc, argv);

    double elapsed = bench_run_gated(&gate, threads, worker_body, NULL, 0);
    double pairs = (double)pairs_per_thread * (double)threads;
    bench_result("linux-scalability", "threads=%ld pairs_per_thread=%ld size=%ld seconds=%.6f pairs_per_sec=%.1f",
                 threads, pairs_per_thread, block_size, elapsed, pairs / elapsed);
    return 0;
}
