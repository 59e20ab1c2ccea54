/* mmicro (seed 000): T threads each repeatedly allocate N blocks of S bytes
 * and free them in allocation order, for a fixed time. No thread is created
 * or destroyed inside the timed interval. Reports malloc-free pairs/second.
 * Usage mirrors the paper's "mmicro T :N S". */
#include "bench_args.h"
#include "bench_clock.h"
#include "bench_gate.h"
#include "bench_layout.h"
#include "bench_report.h"
#include "bench_threads.h"

#include <stdatomic.h>
#include <stdint.h>
#include <stdlib.h>

struct worker {
    _Alignas(BENCH_CACHE_LINE) uint64_t pairs;
};

static struct bench_gate gate;
static atomic_bool stop_requested;
static long block_count;
static long block_size;

static void *worker_body(void *arg)
{
    struct worker *self = arg;
    unsigned char **blocks = bench_check_alloc(malloc((size_t)block_count * sizeof *blocks), "block table");
    bench_gate_pass(&gate);
    uint64_t pairs = 0;
    while (!atomic_load_explicit(&stop_requested, memory_order_relaxed)) {
        for (long i = 0; i < block_count; i++) {
            blocks[i] = bench_check_alloc(malloc((size_t)block_size), "block");
            blocks[i][0] = (unsigned char)i;
        }
        for (long i = 0; i < block_count; i++) {
            if (blocks[i][0] != (unsigned char)i)
                bench_check_failed("block %ld was overwritten while live", i);
            free(blocks[i]);
        }
        pairs += (uint64_t)block_count;
    }
    free(blocks);
    self->pairs = pairs;
    return NULL;
}

int main(int argc, char **argv)
{
    double seconds = 1.0;
    const struct bench_option options[] = {
        BENCH_SECONDS(&seconds),
        BENCH_OPTIONS_END,
    };
    const struct bench_command command = { "mmicro", options, "THREADS :BLOCKS SIZE", 3, 3 };
    int first = bench_parse_command(&command, argc, argv);
    long threads = bench_arg_long("THREADS", argv[first], 1, 4096);
    const char *blocks_text = argv[first + 1];
    if (blocks_text[0] == ':')
        blocks_text++;
    block_count = bench_arg_long(":BLOCKS", blocks_text, 1, 100000000);
    block_size = bench_arg_long("SIZE", argv[first + 2], 1, 1L << 30);

    struct worker *workers = bench_alloc_lines((size_t)threads, sizeof *workers);
    double elapsed = bench_run_gated_for(&gate, threads, worker_body, workers, sizeof *workers, seconds,
                                         &stop_requested);
    uint64_t pairs = 0;
    for (long t = 0; t < threads; t++)
        pairs += workers[t].pairs;
    bench_gate_destroy(&gate);
    free(workers);
    bench_result("mmicro", "threads=%ld blocks=%ld size=%ld seconds=%.6f pairs=%llu pairs_per_sec=%.1f",
                 threads, block_count, block_size, elapsed, (unsigned long long)pairs, (double)pairs / elapsed);
    return 0;
}
