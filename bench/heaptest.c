/* heaptest (seed 001's shape): T threads repeatedly allocate a batch of
 * fixed-size chunks and free them, never touching their contents, so an
 * allocator that keeps its metadata out of the blocks need not fault in the
 * pages at all. Reports malloc-free pairs per second. */
#include "bench_args.h"
#include "bench_gate.h"
#include "bench_report.h"
#include "bench_threads.h"

#include <stdalign.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>

static struct bench_gate gate;
static long chunks_per_thread = 1000000;
static long chunk_size = 100;
static long batch = 100;

/* The only checks that need no access to the contents: a chunk exists and
 * is aligned as malloc promises for its size. */
static void check_chunk(const void *chunk)
{
    if (chunk == NULL)
        bench_check_failed("heaptest chunk allocation returned NULL");
    size_t alignment = (size_t)chunk_size >= alignof(max_align_t) ? alignof(max_align_t) : 1;
    if ((uintptr_t)chunk % alignment != 0)
        bench_check_failed("heaptest chunk %p is not %zu-byte aligned", chunk, alignment);
}

static void *worker_body(void *arg)
{
    (void)arg;
    void **chunks = bench_check_alloc(malloc((size_t)batch * sizeof *chunks), "chunk table");
    bench_gate_pass(&gate);
    for (long done = 0; done < chunks_per_thread; done += batch) {
        long count = chunks_per_thread - done < batch ? chunks_per_thread - done : batch;
        for (long i = 0; i < count; i++) {
            chunks[i] = malloc((size_t)chunk_size);
            check_chunk(chunks[i]);
        }
        for (long i = 0; i < count; i++)
            free(chunks[i]);
    }
    free(chunks);
    return NULL;
}

int main(int argc, char **argv)
{
    long threads = 1;
    const struct bench_option options[] = {
        BENCH_THREADS(&threads),
        BENCH_LONG('n', "chunks-per-thread", &chunks_per_thread, 1, 1L << 40),
        BENCH_LONG('s', "size", &chunk_size, 1, 1L << 34),
        BENCH_LONG('b', "batch", &batch, 1, 100000000),
        BENCH_OPTIONS_END,
    };
    const struct bench_command command = { "heaptest", options, NULL, 0, 0 };
    bench_parse_command(&command, argc, argv);

    double elapsed = bench_run_gated(&gate, threads, worker_body, NULL, 0);
    double pairs = (double)chunks_per_thread * (double)threads;
    bench_result("heaptest", "threads=%ld chunks_per_thread=%ld size=%ld batch=%ld seconds=%.6f pairs_per_sec=%.1f",
                 threads, chunks_per_thread, chunk_size, batch, elapsed, pairs / elapsed);
    return 0;
}
