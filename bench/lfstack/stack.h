/* The lock-free stack of seed 004: a Treiber stack whose push allocates a
 * node and whose pop frees one (through hazard pointers), with an
 * elimination back-off array: a push and a pop that both lost the race on
 * the top meet in a random slot and exchange the node without touching the
 * stack. */
#ifndef LFSTACK_STACK_H
#define LFSTACK_STACK_H

#include <stdatomic.h>
#include <stdbool.h>
#include <stdint.h>

#include "bench_layout.h"
#include "rng.h"
#include "hazard.h"

struct lf_node {
    struct lf_node *next;
    uint64_t value;
};

/* Holds EXCHANGE_EMPTY, EXCHANGE_TAKEN, or a node a pusher offers. */
struct exchange_slot {
    _Alignas(BENCH_CACHE_LINE) _Atomic(uintptr_t) offer;
};

struct lf_stack {
    _Alignas(BENCH_CACHE_LINE) _Atomic(struct lf_node *) top;
    struct exchange_slot *slots;
    unsigned slot_count;
    unsigned backoff_spins;
    struct hazard_domain hazards;
};

/* Per-thread outcome counters; the accounting check adds them up. */
struct lf_thread_counts {
    uint64_t pushes, pushed_sum;
    uint64_t pops, popped_sum, empty_pops;
    uint64_t eliminated;
};

void lf_stack_init(struct lf_stack *stack, unsigned threads, unsigned slot_count);

/* Allocates a node holding `value` and pushes it. */
void lf_stack_push(struct lf_stack *stack, uint64_t value, struct rng *rng,
                   struct lf_thread_counts *counts);

/* Pops a value and releases its node; false when the stack was empty. */
bool lf_stack_pop(struct lf_stack *stack, struct hazard_record *hazard, struct rng *rng,
                  struct lf_thread_counts *counts);

/* Single-threaded teardown: frees the remaining nodes, reporting their
 * number and the sum of their values, how many retired nodes the scans had
 * freed, and how many were still retired (freed now). */
void lf_stack_destroy(struct lf_stack *stack, uint64_t *remaining, uint64_t *remaining_sum,
                      uint64_t *retired_freed, uint64_t *retired_leftover);

#endif
