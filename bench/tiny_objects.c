/* tiny-objects (seed 003, Listing One): a million malloc(8) calls, every
 * block kept live, and the resident memory it costs. The article measured
 * 16 MB of heap for 8 MB requested on Solaris, the price of an 8-byte
 * header per block; this program reports the same ratio for the allocator
 * underneath: RSS after minus RSS before, per byte requested and per object.
 *
 * Single-threaded. The blocks are chained through their own 8 bytes (each
 * holds the address of the previous one), so the program keeps no array of
 * pointers that would be counted against the allocator; walking the chain
 * at the end checks that every block kept its contents, then frees them all
 * and reports the RSS left after the frees as well. */
#include "bench_args.h"
#include "bench_clock.h"
#include "bench_report.h"
#include "bench_rss.h"

#include <stdint.h>
#include <stdlib.h>
#include <string.h>

static void *load_link(const void *block)
{
    void *link;
    memcpy(&link, block, sizeof link);
    return link;
}

int main(int argc, char **argv)
{
    long objects = 1000000;
    long size = 8;
    const struct bench_option options[] = {
        BENCH_LONG('n', "objects", &objects, 1, 1L << 34),
        BENCH_LONG('s', "size", &size, (long)sizeof(void *), 1L << 20),
        BENCH_OPTIONS_END,
    };
    const struct bench_command command = { "tiny-objects", options, NULL, 0, 0 };
    bench_parse_command(&command, argc, argv);

    /* Warm-up: the allocator's first call sets it up, outside the measurement. */
    free(bench_check_alloc(malloc((size_t)size), "warm-up block"));
    size_t before = bench_rss_bytes();
    double start = bench_now_seconds();
    void *last = NULL;
    for (long i = 0; i < objects; i++) {
        void *block = bench_check_alloc(malloc((size_t)size), "tiny object");
        if ((uintptr_t)block % sizeof(void *) != 0)
            bench_check_failed("tiny-objects: block %p is not %zu-byte aligned", block, sizeof(void *));
        memcpy(block, &last, sizeof last);
        last = block;
    }
    double elapsed = bench_now_seconds() - start;
    size_t after = bench_rss_bytes();

    long walked = 0;
    for (void *block = last; block != NULL; walked++) {
        if (walked == objects)
            bench_check_failed("tiny-objects: the chain of blocks is longer than the %ld allocated", objects);
        void *previous = load_link(block);
        free(block);
        block = previous;
    }
    if (walked != objects)
        bench_check_failed("tiny-objects: the chain of blocks broke after %ld of %ld", walked, objects);
    size_t after_free = bench_rss_bytes();

    double requested = (double)objects * (double)size;
    double grown = (double)after - (double)before;
    bench_result("tiny-objects",
                 "objects=%ld size=%ld requested_mib=%.2f rss_before_mib=%.2f rss_after_mib=%.2f "
                 "rss_after_free_mib=%.2f bytes_per_object=%.2f rss_per_requested_byte=%.3f seconds=%.6f",
                 objects, size, requested / (1024.0 * 1024.0), bench_mib(before), bench_mib(after),
                 bench_mib(after_free), grown / (double)objects, grown / requested, elapsed);
    return 0;
}
