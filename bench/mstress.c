/* mstress (the standard mixed stress, written from its description): -r
 * rounds; in each, T threads are created and each takes -n steps / T
 * steps (threads with an odd index take twice as many: some do more). A
 * step allocates an object of a skewed random size (mostly up to 1 KiB, 1
 * in 100 a hundred times larger), kept either in the thread's working set
 * or, one time in four, in a retained set that lives until the thread ends;
 * two steps in three free a random working-set object, and one in four
 * swaps a working-set object with one of -x shared transfer slots, so
 * objects move between threads and outlive the round that made them. Every
 * object is filled word by word with a pattern derived from its size and
 * checked whole at its free. Reports the seconds (lower is better). */
#include "bench_args.h"
#include "bench_clock.h"
#include "bench_report.h"
#include "bench_threads.h"
#include "rng.h"

#include <stdatomic.h>
#include <stdint.h>
#include <stdlib.h>

#define COOKIE 0x9e3779b97f4a7c15ull

static long thread_count = 4, steps_per_round = 20000, rounds = 10, transfer_count = 1000;
static _Atomic(uint64_t *) *transfers;

static uint64_t *allocate(struct rng *rng, size_t max_words)
{
    size_t words = 1 + (size_t)rng_below(rng, max_words);
    if (rng_below(rng, 100) == 0)
        words *= 100;
    uint64_t *object = bench_check_alloc(malloc(words * sizeof *object), "mstress object");
    for (size_t i = 0; i < words; i++)
        object[i] = (words - i) ^ COOKIE;
    return object;
}

static void release(uint64_t *object)
{
    if (object == NULL)
        return;
    size_t words = (size_t)(object[0] ^ COOKIE);
    for (size_t i = 0; i < words; i++)
        if ((object[i] ^ COOKIE) != words - i)
            bench_check_failed("mstress object %p was overwritten at word %zu", (void *)object, i);
    free(object);
}

/* A growing array of object pointers. */
struct objects {
    uint64_t **items;
    size_t count, capacity;
};

static void push(struct objects *set, uint64_t *object)
{
    if (set->count == set->capacity) {
        set->capacity = set->capacity ? 2 * set->capacity : 1024;
        set->items = bench_check_alloc(realloc(set->items, set->capacity * sizeof *set->items), "object set");
    }
    set->items[set->count++] = object;
}

static void release_all(struct objects *set)
{
    for (size_t i = 0; i < set->count; i++)
        release(set->items[i]);
    free(set->items);
}

static long steps_of(long index)
{
    return (steps_per_round / thread_count + 1) * (index % 2 + 1);
}

static void *worker_body(void *arg)
{
    long index = (long)(intptr_t)arg;
    struct rng rng = rng_seeded((uint64_t)index * 7919u + 42);
    long steps = steps_of(index);
    struct objects working = { 0 }, retained = { 0 };
    for (long step = 0; step < steps; step++) {
        if (rng_below(&rng, 4) == 0)
            push(&retained, allocate(&rng, 1280));
        else
            push(&working, allocate(&rng, 128));
        if (working.count > 0 && rng_below(&rng, 3) != 0) {
            size_t victim = (size_t)rng_below(&rng, working.count);
            release(working.items[victim]);
            working.items[victim] = NULL;
        }
        if (working.count > 0 && rng_below(&rng, 4) == 0) {
            size_t mine = (size_t)rng_below(&rng, working.count);
            size_t shared = (size_t)rng_below(&rng, (uint64_t)transfer_count);
            working.items[mine] = atomic_exchange(&transfers[shared], working.items[mine]);
        }
    }
    release_all(&retained);
    release_all(&working);
    return NULL;
}

int main(int argc, char **argv)
{
    const struct bench_option options[] = {
        BENCH_THREADS(&thread_count),
        BENCH_LONG('n', "steps-per-round (divided among threads)", &steps_per_round, 1, 1L << 40),
        BENCH_LONG('r', "rounds", &rounds, 1, 1L << 30),
        BENCH_LONG('x', "transfer-slots", &transfer_count, 1, 1L << 24),
        BENCH_OPTIONS_END,
    };
    const struct bench_command command = { "mstress", options, NULL, 0, 0 };
    bench_parse_command(&command, argc, argv);

    transfers = bench_check_alloc(calloc((size_t)transfer_count, sizeof *transfers), "transfer slots");
    pthread_t *handles = bench_check_alloc(malloc((size_t)thread_count * sizeof *handles), "thread table");
    double start = bench_now_seconds();
    for (long round = 0; round < rounds; round++) {
        for (long t = 0; t < thread_count; t++)
            handles[t] = bench_thread_start(worker_body, (void *)(intptr_t)t);
        for (long t = 0; t < thread_count; t++)
            bench_thread_join(handles[t]);
    }
    for (long i = 0; i < transfer_count; i++)
        release(atomic_load(&transfers[i]));
    double elapsed = bench_now_seconds() - start;
    double steps = 0;
    for (long t = 0; t < thread_count; t++)
        steps += (double)rounds * (double)steps_of(t);
    free(handles);
    free(transfers);
    bench_result("mstress", "threads=%ld steps_per_round=%ld rounds=%ld seconds=%.6f steps_per_sec=%.1f", thread_count,
                 steps_per_round, rounds, elapsed, steps / elapsed);
    return 0;
}
