/* A batch of free objects of one class, travelling as an array of pointers
 * in a node of its own, so moving it between caches and the central layer
 * never touches the objects (which are often cold by then); the lock-free
 * stack such nodes are kept on; and lanes: a CPU's own nodes, kept to
 * itself first, and passed to other CPUs a chain at a time, so nodes that
 * move between CPUs cost one write of a shared head per chain, not per
 * node. */
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
    uint16_t count;
    uint16_t filled_on; /* the lane index of the CPU that filled it */
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

/* Lanes are indexed by the caller's CPU (or concurrency id) modulo LANES;
 * lanes_in_use() of them can be reached. */
#define LANES 64u
static inline unsigned lane_index(void)
{
    return rseq_current_id() % LANES;
}
static inline unsigned lanes_in_use(void)
{
    unsigned ids = rseq_id_count();
    return ids < 1 ? 1 : ids > LANES ? LANES : ids;
}

/* A lane: a CPU's own nodes, single ones to give and take one at a time,
 * and chains made of them when it had more. A node is put on the caller's
 * lane and taken from it first, chains included, so a CPU that gives and
 * takes nodes gets its own back: their lines (and the objects they hold)
 * were last written there, where a node another CPU wrote costs a transfer
 * of every line read from it (two threads each freeing and allocating
 * their own blocks ran 1.2-1.3x faster, when crossing cores was slow, than
 * when their batches met on one shared stack). A lane past `most` single
 * nodes makes a chain of `send` of them, the newest. A CPU that runs dry
 * takes a chain from another CPU's lane (lane_steal): a producer takes what
 * its consumers' frees parked, a chain at a time, so one contended head is
 * written per chain; it looks first where it found one last. */
struct lane {
    struct stack *singles;
    struct stack *chains; /* on another line than singles: another CPU that
                           * takes a chain does not take the line the owner
                           * puts every node on */
    uint8_t *last_found;  /* the lane it last took a chain from (written by
                           * its own CPU): with many CPUs, looking at every
                           * other lane first would read dozens of lines */
};

/* b, a chain's head just taken, made a single node; the chain's other
 * nodes go on lane's singles with one push. */
static inline struct batch *lane_keep_rest(struct lane lane, struct batch *b)
{
    if (b->rest) {
        stack_push_list(lane.singles, b->rest, b->last, b->nodes - 1);
        batch_single(b);
    }
    return b;
}

/* Puts b on lane. With most 0 it goes straight into a chain of its own. */
static inline void lane_put(struct lane lane, struct batch *b, uint32_t most, uint32_t send)
{
    batch_single(b);
    if (!most) {
        stack_push(lane.chains, b);
        return;
    }
    stack_push(lane.singles, b);
    if (stack_depth(lane.singles) <= most)
        return;
    struct batch *head = stack_take_all(lane.singles);
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
        stack_push_list(lane.singles, kept, end, k);
    }
    batch_chain(head, last, n);
    stack_push(lane.chains, head);
}

/* A node of lane's own: NULL when it has none. */
static inline struct batch *lane_take(struct lane lane)
{
    struct batch *b = stack_pop(lane.singles);
    if (b)
        return b;
    b = stack_pop(lane.chains);
    return b ? lane_keep_rest(lane, b) : NULL;
}

/* A chain taken from another of `lanes` lanes than mine, lane `me`
 * (LANES at most): from the one mine last took from, else the next one
 * round from `me` that has one. The lanes' chains are `stride` bytes apart
 * in one array. Its other nodes go on mine's singles. NULL when no lane
 * has a chain. */
static inline struct batch *lane_steal(struct lane mine, unsigned me, unsigned lanes, size_t stride)
{
    char *first_chains = (char *)mine.chains - (size_t)me * stride;
    unsigned last = *mine.last_found;
    for (unsigned step = 0; step < lanes; step++) {
        unsigned other = step ? (me + step) % lanes : last;
        if (other == me || other >= lanes || (step && other == last))
            continue;
        struct stack *st = (struct stack *)(first_chains + (size_t)other * stride);
        struct batch *b = stack_peek(st) ? stack_pop(st) : NULL;
        if (b) {
            if (other != last)
                __atomic_store_n(mine.last_found, (uint8_t)other, __ATOMIC_RELAXED);
            return lane_keep_rest(mine, b);
        }
    }
    return NULL;
}

/* A node of mine's own, else a chain's head taken from another lane
 * (lane_steal): NULL when no lane has one. */
static inline struct batch *lane_take_or_steal(struct lane mine, unsigned me, unsigned lanes, size_t stride)
{
    struct batch *b = lane_take(mine);
    return b ? b : lane_steal(mine, me, lanes, stride);
}

/* Fetches, for writing, the first `bytes` of the node the next take from
 * lane will get (singles dry: its chains' top): a node may have come from
 * another CPU, or waited long enough to leave the cache, and fetched while
 * the node just taken is used, the next take finds its lines here. A node
 * another thread takes meanwhile only cost the prefetches. */
static inline void lane_prefetch_next(struct lane lane, size_t bytes)
{
    const char *next = (const char *)stack_peek(lane.singles);
    if (!next)
        next = (const char *)stack_peek(lane.chains);
    if (next)
        for (size_t at = 0; at < bytes; at += ARCH_CACHE_LINE)
            arch_prefetch_for_write(next + at);
}

#endif
