/* lfstack (seed 004's workload): T threads operate on one lock-free
 * elimination back-off stack whose push allocates a node and whose pop frees
 * one, under one of four access patterns. Afterwards the accounting must
 * balance: pushes = pops + nodes left on the stack (by count and by sum of
 * values), and every allocated node was freed exactly once (by a hazard
 * pointer scan, by an eliminating pop, or at teardown). Reports stack
 * operations per second. */
#include "bench_args.h"
#include "bench_clock.h"
#include "bench_gate.h"
#include "bench_layout.h"
#include "bench_report.h"
#include "rng.h"
#include "bench_threads.h"
#include "lfstack/stack.h"

#include <stdlib.h>
#include <string.h>

enum pattern { PATTERN_RANDOM, PATTERN_PRODUCER_CONSUMER, PATTERN_MOSTLY_PRODUCER, PATTERN_MOSTLY_CONSUMER };

static const char *const pattern_names[] = { "random", "producer-consumer", "mostly-producer", "mostly-consumer",
                                             NULL };

struct worker {
    _Alignas(BENCH_CACHE_LINE) pthread_t thread;
    long index;
    struct lf_thread_counts counts;
};

static struct bench_gate gate;
static struct lf_stack stack;
static long pattern = PATTERN_RANDOM; /* an enum pattern */
static long operations_per_thread = 100000;
static long thread_count = 1;

/* Percent of this thread's operations that are pushes. In the
 * producer-consumer pattern threads are either producers or consumers (a
 * lone thread alternates, as it has nobody to hand over to). */
static unsigned push_percent(long index)
{
    switch (pattern) {
    case PATTERN_PRODUCER_CONSUMER:
        return thread_count == 1 ? 50 : (index % 2 == 0 ? 100 : 0);
    case PATTERN_MOSTLY_PRODUCER:
        return 75;
    case PATTERN_MOSTLY_CONSUMER:
        return 25;
    case PATTERN_RANDOM:
        break;
    }
    return 50;
}

static void *worker_body(void *arg)
{
    struct worker *self = arg;
    struct rng rng = rng_seeded((uint64_t)self->index + 17);
    struct hazard_record *hazard = &stack.hazards.records[self->index];
    unsigned pushes_in_100 = push_percent(self->index);
    bool alternate = pattern == PATTERN_PRODUCER_CONSUMER && thread_count == 1;
    bench_gate_pass(&gate);
    for (long op = 0; op < operations_per_thread; op++) {
        bool push = alternate ? op % 2 == 0 : rng_below(&rng, 100) < pushes_in_100;
        if (push)
            lf_stack_push(&stack, ((uint64_t)self->index << 40) | (uint64_t)op, &rng, &self->counts);
        else
            lf_stack_pop(&stack, hazard, &rng, &self->counts);
    }
    return NULL;
}

int main(int argc, char **argv)
{
    long slots = 0;
    const struct bench_option options[] = {
        BENCH_THREADS(&thread_count),
        BENCH_LONG('n', "operations-per-thread", &operations_per_thread, 1, 1L << 40),
        BENCH_CHOICE('p', "pattern", &pattern, pattern_names),
        BENCH_LONG('e', "elimination-slots", &slots, 1, 65536),
        BENCH_OPTIONS_END,
    };
    const struct bench_command command = { "lfstack", options, NULL, 0, 0 };
    bench_parse_command(&command, argc, argv);
    if (slots == 0) /* room for about one pair in four to meet */
        slots = thread_count / 4 + 1;

    lf_stack_init(&stack, (unsigned)thread_count, (unsigned)slots);
    struct worker *workers = bench_alloc_lines((size_t)thread_count, sizeof *workers);
    bench_gate_init(&gate, (int)thread_count);
    for (long t = 0; t < thread_count; t++) {
        workers[t].index = t;
        workers[t].thread = bench_thread_start(worker_body, &workers[t]);
    }
    double start = bench_gate_open_when_ready(&gate);
    for (long t = 0; t < thread_count; t++)
        bench_thread_join(workers[t].thread);
    double elapsed = bench_now_seconds() - start;

    struct lf_thread_counts total = { 0 };
    for (long t = 0; t < thread_count; t++) {
        const struct lf_thread_counts *c = &workers[t].counts;
        total.pushes += c->pushes;
        total.pushed_sum += c->pushed_sum;
        total.pops += c->pops;
        total.popped_sum += c->popped_sum;
        total.empty_pops += c->empty_pops;
        total.eliminated += c->eliminated;
    }
    free(workers);
    uint64_t remaining, remaining_sum, retired_freed, retired_leftover;
    lf_stack_destroy(&stack, &remaining, &remaining_sum, &retired_freed, &retired_leftover);

    if (total.pushes != total.pops + remaining)
        bench_check_failed("lfstack: %llu pushes but %llu pops and %llu nodes left", (unsigned long long)total.pushes,
                           (unsigned long long)total.pops, (unsigned long long)remaining);
    if (total.pushed_sum != total.popped_sum + remaining_sum)
        bench_check_failed("lfstack: the values popped and left do not add up to the values pushed");
    /* Every pop either retired its node or freed an eliminated one. */
    uint64_t freed = retired_freed + retired_leftover + total.eliminated + remaining;
    if (freed != total.pushes)
        bench_check_failed("lfstack: %llu nodes allocated but %llu freed", (unsigned long long)total.pushes,
                           (unsigned long long)freed);
    if (retired_freed + retired_leftover != total.pops - total.eliminated)
        bench_check_failed("lfstack: retired nodes do not match the pops from the stack");

    uint64_t operations = (uint64_t)operations_per_thread * (uint64_t)thread_count;
    bench_result("lfstack",
                 "threads=%ld pattern=%s operations=%llu pushes=%llu pops=%llu empty_pops=%llu eliminated=%llu "
                 "left=%llu seconds=%.6f ops_per_sec=%.1f",
                 thread_count, pattern_names[pattern], (unsigned long long)operations,
                 (unsigned long long)total.pushes, (unsigned long long)total.pops,
                 (unsigned long long)total.empty_pops, (unsigned long long)total.eliminated,
                 (unsigned long long)remaining, elapsed, (double)operations / elapsed);
    return 0;
}
