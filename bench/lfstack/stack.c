#include "stack.h"

#include <stdlib.h>

#include "bench_report.h"
#include "cpu_relax.h"

#define EXCHANGE_EMPTY ((uintptr_t)0)
#define EXCHANGE_TAKEN ((uintptr_t)1)

void lf_stack_init(struct lf_stack *stack, unsigned threads, unsigned slot_count)
{
    atomic_init(&stack->top, NULL);
    stack->slot_count = slot_count;
    stack->slots = bench_alloc_lines(slot_count, sizeof *stack->slots);
    /* Long enough for a partner to show up, short enough not to stall a
     * thread that has the CPU to itself. */
    stack->backoff_spins = 64;
    hazard_domain_init(&stack->hazards, threads);
}

/* A pusher parks its node in a slot for a short while. Returns true when a
 * popper took it. Poppers never dereference an offer before owning it, so
 * an eliminated node needs no hazard protection. */
static bool offer_for_elimination(struct lf_stack *stack, struct lf_node *node, struct rng *rng)
{
    struct exchange_slot *slot = &stack->slots[rng_below(rng, stack->slot_count)];
    uintptr_t expected = EXCHANGE_EMPTY;
    if (!atomic_compare_exchange_strong(&slot->offer, &expected, (uintptr_t)node))
        return false;
    for (unsigned spin = 0; spin < stack->backoff_spins; spin++) {
        if (atomic_load_explicit(&slot->offer, memory_order_relaxed) != (uintptr_t)node)
            break;
        cpu_relax();
    }
    expected = (uintptr_t)node;
    if (atomic_compare_exchange_strong(&slot->offer, &expected, EXCHANGE_EMPTY))
        return false; /* withdrawn: nobody came */
    /* A popper replaced the offer with TAKEN; only this pusher resets it. */
    atomic_store_explicit(&slot->offer, EXCHANGE_EMPTY, memory_order_release);
    return true;
}

static struct lf_node *take_eliminated(struct lf_stack *stack, struct rng *rng)
{
    struct exchange_slot *slot = &stack->slots[rng_below(rng, stack->slot_count)];
    uintptr_t offer = atomic_load_explicit(&slot->offer, memory_order_acquire);
    if (offer == EXCHANGE_EMPTY || offer == EXCHANGE_TAKEN)
        return NULL;
    if (!atomic_compare_exchange_strong(&slot->offer, &offer, EXCHANGE_TAKEN))
        return NULL;
    return (struct lf_node *)offer;
}

void lf_stack_push(struct lf_stack *stack, uint64_t value, struct rng *rng,
                   struct lf_thread_counts *counts)
{
    struct lf_node *node = bench_check_alloc(malloc(sizeof *node), "stack node");
    node->value = value;
    counts->pushes++;
    counts->pushed_sum += value;
    for (;;) {
        struct lf_node *top = atomic_load_explicit(&stack->top, memory_order_relaxed);
        node->next = top;
        if (atomic_compare_exchange_weak_explicit(&stack->top, &top, node, memory_order_release,
                                                  memory_order_relaxed))
            return;
        if (offer_for_elimination(stack, node, rng))
            return;
    }
}

static void consume_node(struct lf_node *node, struct lf_thread_counts *counts)
{
    counts->pops++;
    counts->popped_sum += node->value;
}

bool lf_stack_pop(struct lf_stack *stack, struct hazard_record *hazard, struct rng *rng,
                  struct lf_thread_counts *counts)
{
    for (;;) {
        struct lf_node *top = atomic_load(&stack->top);
        if (top == NULL) {
            counts->empty_pops++;
            return false;
        }
        hazard_protect(hazard, top);
        if (atomic_load(&stack->top) != top)
            continue;
        /* Safe: `top` is published, so no scan frees it under us. */
        struct lf_node *next = top->next;
        if (atomic_compare_exchange_strong(&stack->top, &top, next)) {
            hazard_clear(hazard);
            consume_node(top, counts);
            hazard_retire(&stack->hazards, hazard, top);
            return true;
        }
        hazard_clear(hazard);
        struct lf_node *eliminated = take_eliminated(stack, rng);
        if (eliminated != NULL) {
            consume_node(eliminated, counts);
            counts->eliminated++;
            free(eliminated);
            return true;
        }
    }
}

void lf_stack_destroy(struct lf_stack *stack, uint64_t *remaining, uint64_t *remaining_sum,
                      uint64_t *retired_freed, uint64_t *retired_leftover)
{
    *retired_freed = hazard_domain_freed(&stack->hazards);
    *remaining = 0;
    *remaining_sum = 0;
    struct lf_node *node = atomic_load(&stack->top);
    while (node != NULL) {
        struct lf_node *next = node->next;
        (*remaining)++;
        *remaining_sum += node->value;
        free(node);
        node = next;
    }
    *retired_leftover = hazard_domain_destroy(&stack->hazards);
    free(stack->slots);
}
