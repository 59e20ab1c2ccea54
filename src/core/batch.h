/* A batch of free objects of one class, travelling as an array of pointers
 * in a node of its own, so moving it between caches and the central layer
 * never touches the objects (which are often cold by then); the lock-free
 * stack such nodes are kept on; and lanes: a stack per CPU that sends and
 * takes nodes a chain at a time through a shared stack, so nodes passed
 * between CPUs cost one write of a shared head per chain, not per node. */
#ifndef COREALLOC_BATCH_H
#define COREALLOC_BATCH_H

#include <stddef.h>
#include <stdint.h>

#include "arch/prefetch.h"
#include "core/sizeclass.h"
#include "platform/rseq.h"

struct batch {
    struct batch *next; /* on a stack; in a chain, the chain's next node */
    struct batch *rest; /* a chain's head: its other nodes, linked by next to NULL */
    struct batch *last; /* a chain's head: its last node */
    uint32_t nodes;     /* the nodes an entry on a stack stands for: 1, or its chain's */
    uint32_t count;
    void *objects[SC_BATCH_MAX];
};

/* Treiber stack head: low 64 bits the top node, high 64 bits a tag that
 * counts the nodes pushed (its low half) and popped (its high half), so a
 * node popped and pushed again between a reader's load and its CAS is
 * noticed (no ABA), and the depth and the traffic are read from the head
 * with no counter of their own to update. Replaced by one 16-byte CAS. */
typedef unsigned __int128 stack_word;
struct stack {
    _Alignas(16) volatile stack_word head;
};

static inline stack_word stack_head_of(uint64_t tag, struct batch *top)
{
    return ((stack_word)tag << 64) | (uintptr_t)top;
}

/* Pushes the entries first..last, linked by next, standing for n nodes. */
static inline void stack_push_list(struct stack *st, struct batch *first, struct batch *last, uint32_t n)
{
    stack_word old = st->head, seen;
    for (;;) {
        last->next = (struct batch *)(uintptr_t)old;
        uint64_t tag = (uint64_t)(old >> 64);
        stack_word desired = stack_head_of((tag & ~(uint64_t)UINT32_MAX) | (uint32_t)(tag + n), first);
        seen = __sync_val_compare_and_swap(&st->head, old, desired);
        if (seen == old)
            return;
        old = seen;
    }
}

/* Pushes b, a node or a chain's head. */
static inline void stack_push(struct stack *st, struct batch *b)
{
    stack_push_list(st, b, b, b->nodes);
}

/* The top node, without taking it. */
static inline struct batch *stack_peek(struct stack *st)
{
    return (struct batch *)(uintptr_t)st->head;
}

/* The top entry, taken: a node or a chain's head. */
static inline struct batch *stack_pop(struct stack *st)
{
    stack_word old = st->head, seen;
    for (;;) {
        struct batch *top = (struct batch *)(uintptr_t)old;
        if (!top)
            return NULL;
        /* top may be popped and reused meanwhile: reading its fields is
         * harmless (node memory stays mapped, purged pages read as zero)
         * and the tag makes the CAS fail. */
        struct batch *next = __atomic_load_n(&top->next, __ATOMIC_RELAXED);
        uint64_t nodes = __atomic_load_n(&top->nodes, __ATOMIC_RELAXED);
        stack_word desired = stack_head_of((uint64_t)(old >> 64) + (nodes << 32), next);
        seen = __sync_val_compare_and_swap(&st->head, old, desired);
        if (seen == old)
            return top;
        old = seen;
    }
}

/* Every entry, taken at once: a list linked by next, NULL-terminated. */
static inline struct batch *stack_take_all(struct stack *st)
{
    stack_word old = st->head, seen;
    for (;;) {
        if (!(struct batch *)(uintptr_t)old)
            return NULL;
        uint64_t tag = (uint64_t)(old >> 64);
        stack_word desired = stack_head_of((tag & UINT32_MAX) | (tag << 32), NULL); /* popped = pushed */
        seen = __sync_val_compare_and_swap(&st->head, old, desired);
        if (seen == old)
            return (struct batch *)(uintptr_t)old;
        old = seen;
    }
}

/* The tag alone (one 8-byte load: its counts are consistent). */
static inline uint64_t stack_tag(const struct stack *st)
{
    return __atomic_load_n((const uint64_t *)&st->head + 1, __ATOMIC_RELAXED);
}
/* Nodes on the stack now, and nodes pushed plus popped so far (both wrap). */
static inline uint32_t stack_depth(const struct stack *st)
{
    uint64_t tag = stack_tag(st);
    return (uint32_t)tag - (uint32_t)(tag >> 32);
}
static inline uint32_t stack_traffic(const struct stack *st)
{
    uint64_t tag = stack_tag(st);
    return (uint32_t)tag + (uint32_t)(tag >> 32);
}

/* A single node's entry fields, for a stack or a chain. */
static inline void batch_single(struct batch *b)
{
    b->rest = NULL;
    b->nodes = 1;
}

/* Makes head..last (linked by next, n nodes, single ones) a chain headed
 * by head. */
static inline void batch_chain(struct batch *head, struct batch *last, uint32_t n)
{
    last->next = NULL;
    head->rest = n > 1 ? head->next : NULL;
    head->last = last;
    head->nodes = n;
}

/* Lanes are indexed by the caller's CPU (or concurrency id) modulo LANES. */
#define LANES 64u
static inline unsigned lane_index(void)
{
    return rseq_current_id() % LANES;
}

/* Lanes: a node is put on the caller's lane (its CPU's), and taken from
 * it first, so a CPU that gives and takes nodes keeps them to itself, its
 * lane's head in its own cache. A lane past `most` nodes sends `send` of
 * them (the newest) to the shared stack as one chain; a lane that runs dry
 * takes a chain from there. Lane entries are single nodes, shared ones
 * chains. With most 0 a node goes straight to the shared stack. */
static inline void lane_put(struct stack *lane, struct stack *shared, struct batch *b, uint32_t most, uint32_t send)
{
    batch_single(b);
    if (!most) {
        stack_push(shared, b);
        return;
    }
    stack_push(lane, b);
    if (stack_depth(lane) <= most)
        return;
    struct batch *head = stack_take_all(lane);
    if (!head)
        return; /* another thread on this CPU took them meanwhile */
    uint32_t n = 1;
    struct batch *last = head;
    for (; n < send && last->next; n++)
        last = last->next;
    struct batch *kept = last->next;
    if (kept) { /* back on the lane */
        uint32_t k = 1;
        struct batch *end = kept;
        for (; end->next; k++)
            end = end->next;
        stack_push_list(lane, kept, end, k);
    }
    batch_chain(head, last, n);
    stack_push(shared, head);
}

/* A node from lane, else the head of a chain from shared (its other nodes
 * go on lane with one push): NULL when both are empty. */
static inline struct batch *lane_take(struct stack *lane, struct stack *shared)
{
    struct batch *b = stack_pop(lane);
    if (b)
        return b;
    b = stack_pop(shared);
    if (b && b->rest) {
        stack_push_list(lane, b->rest, b->last, b->nodes - 1);
        batch_single(b);
    }
    return b;
}

/* Fetches, for writing, the first `bytes` of the node the next take from
 * lane will get (lane dry: the shared stack's top): nodes pass between
 * CPUs, and fetched while the node just taken is used, the next take finds
 * its lines here instead of waiting on the core that wrote them. A node
 * another thread takes meanwhile only cost the prefetches. */
static inline void lane_prefetch_next(struct stack *lane, struct stack *shared, size_t bytes)
{
    const char *next = (const char *)stack_peek(lane);
    if (!next)
        next = (const char *)stack_peek(shared);
    if (next)
        for (size_t at = 0; at < bytes; at += ARCH_CACHE_LINE)
            arch_prefetch_for_write(next + at);
}

#endif
