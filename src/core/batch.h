/* A batch of free objects of one class, travelling as an array of pointers
 * in a node of its own, so moving it between caches and the central layer
 * never touches the objects (which are often cold by then); and the
 * lock-free stack such nodes are kept on. */
#ifndef COREALLOC_BATCH_H
#define COREALLOC_BATCH_H

#include <stdint.h>

#include "core/sizeclass.h"

struct batch {
    struct batch *next; /* on a stack */
    uint32_t count;
    void *objects[SC_BATCH_MAX];
};

/* Treiber stack head: low 64 bits the top node, high 64 bits a tag that
 * counts pushes (its low half) and pops (its high half), so a node popped
 * and pushed again between a reader's load and its CAS is noticed (no ABA),
 * and the depth and the traffic are read from the head with no counter of
 * their own to update. Replaced by one 16-byte CAS. */
typedef unsigned __int128 stack_word;
struct stack {
    _Alignas(16) volatile stack_word head;
};

static inline stack_word stack_head_of(uint64_t tag, struct batch *top)
{
    return ((stack_word)tag << 64) | (uintptr_t)top;
}

static inline void stack_push(struct stack *st, struct batch *b)
{
    stack_word old = st->head, seen;
    for (;;) {
        b->next = (struct batch *)(uintptr_t)old;
        uint64_t tag = (uint64_t)(old >> 64);
        stack_word desired = stack_head_of((tag & ~(uint64_t)UINT32_MAX) | (uint32_t)(tag + 1), b);
        seen = __sync_val_compare_and_swap(&st->head, old, desired);
        if (seen == old)
            return;
        old = seen;
    }
}

/* The top node, without taking it. */
static inline struct batch *stack_peek(struct stack *st)
{
    return (struct batch *)(uintptr_t)st->head;
}

static inline struct batch *stack_pop(struct stack *st)
{
    stack_word old = st->head, seen;
    for (;;) {
        struct batch *top = (struct batch *)(uintptr_t)old;
        if (!top)
            return NULL;
        /* top may be popped and reused meanwhile: reading its link is
         * harmless (node memory stays mapped, purged pages read as zero)
         * and the tag makes the CAS fail. */
        struct batch *next = __atomic_load_n(&top->next, __ATOMIC_RELAXED);
        stack_word desired = stack_head_of((uint64_t)(old >> 64) + ((uint64_t)1 << 32), next);
        seen = __sync_val_compare_and_swap(&st->head, old, desired);
        if (seen == old)
            return top;
        old = seen;
    }
}

/* The tag alone (one 8-byte load: its counts are consistent). */
static inline uint64_t stack_tag(const struct stack *st)
{
    return __atomic_load_n((const uint64_t *)&st->head + 1, __ATOMIC_RELAXED);
}
/* Nodes on the stack now, and pushes plus pops so far (both wrap). */
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

#endif
