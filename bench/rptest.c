/* rptest (rpmalloc's benchmark shape, written from its description): each
 * of T threads keeps -a slots of live blocks and runs -l loops; a loop
 * frees a varying number of its blocks and allocates a varying number of
 * new ones (around -o each, walking the slots with a stride so neighbours
 * in memory are not neighbours in time), with sizes in [-m, -M] drawn with
 * a linear drop-off (small blocks common, large ones rare), every page of a
 * block written. Every -c loops a thread also allocates a packet of -o
 * blocks and hands it to the next thread, which frees them: cross-thread
 * frees of whole batches. One block in three under 4 KiB asks for an
 * explicit small alignment (8 or 16, through posix_memalign), as rpmalloc's
 * benchmark does. The standard "rptest N 0 1 2 500 1000 100 8 16000" is
 * "-t N -c 2 -l 500 -a 1000 -o 100 -m 8 -M 16000". Reports memory
 * operations (mallocs + frees) per second. */
#include "bench_args.h"
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

#define PAGE 4096

struct packet {
    struct packet *next;
    long count;
    void *blocks[]; /* count of them */
};

struct worker {
    _Alignas(BENCH_CACHE_LINE) _Atomic(struct packet *) inbox;
    long index;
    uint64_t operations;
};

static struct bench_gate gate;
static struct worker *workers;
static long thread_count = 1;
static long loops = 500, slots = 1000, ops = 100, min_size = 8, max_size = 16000, cross_rate = 2;
static atomic_long threads_looping;

/* Linear drop-off: the density falls linearly from min_size to max_size. */
static size_t random_size(struct rng *rng)
{
    double u = (double)rng_next(rng) / 18446744073709551616.0;
    return (size_t)min_size + (size_t)((double)(max_size - min_size) * (1.0 - sqrt(1.0 - u)) * (1.0 - 1e-9));
}

/* The block's size goes in its first word and a mark in its last byte
 * (both checked at the free), and every page of it is touched, so the
 * memory is really committed. */
static void *allocate(struct rng *rng, uint64_t *operations)
{
    size_t size = random_size(rng);
    void *block;
    uint64_t pick = rng_below(rng, 3);
    if (size < PAGE && pick != 0) {
        if (posix_memalign(&block, pick == 1 ? 8 : 16, size) != 0)
            block = NULL;
    } else {
        block = malloc(size);
    }
    bench_check_alloc(block, "rptest block");
    memcpy(block, &size, sizeof size);
    for (size_t page = PAGE; page < size; page += PAGE)
        ((volatile char *)block)[page] = 1;
    if (size > sizeof size)
        ((volatile char *)block)[size - 1] = 1;
    ++*operations;
    return block;
}

static void release(void *block, uint64_t *operations)
{
    size_t size;
    memcpy(&size, block, sizeof size);
    if (size < (size_t)min_size || size > (size_t)max_size || (size > sizeof size && ((volatile char *)block)[size - 1] != 1))
        bench_check_failed("rptest block %p was overwritten while live", block);
    free(block);
    ++*operations;
}

static void drain_inbox(struct worker *self)
{
    struct packet *packet = atomic_exchange(&self->inbox, NULL);
    while (packet) {
        struct packet *next = packet->next;
        for (long i = 0; i < packet->count; i++)
            release(packet->blocks[i], &self->operations);
        free(packet);
        self->operations++;
        packet = next;
    }
}

static void send_packet(struct worker *to, struct rng *rng, uint64_t *operations)
{
    struct packet *packet = bench_check_alloc(malloc(sizeof *packet + (size_t)ops * sizeof(void *)), "packet");
    ++*operations;
    packet->count = ops;
    for (long i = 0; i < ops; i++)
        packet->blocks[i] = allocate(rng, operations);
    packet->next = atomic_load(&to->inbox);
    while (!atomic_compare_exchange_weak(&to->inbox, &packet->next, packet))
        ;
}

static void *worker_body(void *arg)
{
    struct worker *self = arg;
    struct rng rng = rng_seeded((uint64_t)self->index + 1);
    void **blocks = bench_check_alloc(calloc((size_t)slots, sizeof *blocks), "slot table");
    /* Strides coprime with the slot count visit every slot. */
    long alloc_stride = 7, free_stride = 13;
    while (slots % alloc_stride == 0 || slots % free_stride == 0)
        alloc_stride += 2, free_stride += 2;
    long alloc_at = 0, free_at = 0;
    struct worker *next = &workers[(self->index + 1) % thread_count];
    bench_gate_pass(&gate);
    for (long loop = 0; loop < loops; loop++) {
        drain_inbox(self);
        long frees = (long)rng_below(&rng, (uint64_t)ops) * 4 / 5 + ops / 5;
        for (long i = 0; i < frees; i++, free_at = (free_at + free_stride) % slots) {
            if (blocks[free_at]) {
                release(blocks[free_at], &self->operations);
                blocks[free_at] = NULL;
            }
        }
        long allocations = ops / 2 + (long)rng_below(&rng, (uint64_t)ops);
        for (long i = 0; i < allocations; i++, alloc_at = (alloc_at + alloc_stride) % slots) {
            if (blocks[alloc_at])
                release(blocks[alloc_at], &self->operations);
            blocks[alloc_at] = allocate(&rng, &self->operations);
        }
        if (cross_rate && thread_count > 1 && loop % cross_rate == 0)
            send_packet(next, &rng, &self->operations);
    }
    /* Packets may still come until every thread has stopped sending. */
    atomic_fetch_sub(&threads_looping, 1);
    while (atomic_load(&threads_looping) > 0) {
        drain_inbox(self);
        bench_sleep_seconds(0.0001);
    }
    drain_inbox(self);
    for (long i = 0; i < slots; i++)
        if (blocks[i])
            release(blocks[i], &self->operations);
    free(blocks);
    return NULL;
}

int main(int argc, char **argv)
{
    const struct bench_option options[] = {
        BENCH_THREADS(&thread_count),
        BENCH_LONG('l', "loops", &loops, 1, 1L << 40),
        BENCH_LONG('a', "live-slots-per-thread", &slots, 1, 1L << 30),
        BENCH_LONG('o', "operations-per-loop", &ops, 2, 1L << 30),
        BENCH_LONG('m', "min-size", &min_size, (long)sizeof(size_t), 1L << 30),
        BENCH_LONG('M', "max-size", &max_size, (long)sizeof(size_t), 1L << 30),
        BENCH_LONG('c', "cross-rate (every c loops; 0: none)", &cross_rate, 0, 1L << 30),
        BENCH_OPTIONS_END,
    };
    const struct bench_command command = { "rptest", options, NULL, 0, 0 };
    bench_parse_command(&command, argc, argv);
    if (max_size < min_size)
        bench_usage(&command);

    workers = bench_alloc_lines((size_t)thread_count, sizeof *workers);
    for (long t = 0; t < thread_count; t++)
        workers[t].index = t;
    atomic_store(&threads_looping, thread_count);
    double elapsed = bench_run_gated(&gate, thread_count, worker_body, workers, sizeof *workers);
    uint64_t operations = 0;
    for (long t = 0; t < thread_count; t++)
        operations += workers[t].operations;
    free(workers);
    bench_result("rptest", "threads=%ld loops=%ld slots=%ld ops=%ld min_size=%ld max_size=%ld cross_rate=%ld "
                 "seconds=%.6f operations=%llu ops_per_sec=%.1f",
                 thread_count, loops, slots, ops, min_size, max_size, cross_rate, elapsed,
                 (unsigned long long)operations, (double)operations / elapsed);
    return 0;
}
