#include "core/batchpool.h"

#include "platform/lock.h"
#include "platform/os.h"

/* A chunk's first node-sized slot is its header; its first page stays
 * resident (it holds the header), the rest is purged when all its nodes
 * are empty. */
#define CHUNK_BYTES ((size_t)64 << 10)
#define CHUNK_NODES (CHUNK_BYTES / sizeof(struct batch) - 1)

struct chunk {
    struct chunk *next;  /* every chunk, in mapping order */
    uint32_t tally;      /* empty nodes counted by the release in progress */
    uint8_t purged;      /* pages gone; none of its nodes is on a stack */
};
_Static_assert(sizeof(struct chunk) <= sizeof(struct batch), "the header fits a node's slot");

static struct stack empty_nodes;
static lock_t pool_lock = LOCK_INIT; /* chunk list, mapping, releasing */
static struct chunk *chunks;
static size_t resident_bytes;
static bool put_since_release;

void batchpool_init(void)
{
    lock_register_for_fork(&pool_lock, LOCK_RANK_NODES);
}

static struct batch *chunk_nodes(struct chunk *c) { return (struct batch *)c + 1; }

static struct chunk *chunk_of(struct batch *b)
{
    return (struct chunk *)((uintptr_t)b & ~(uintptr_t)(CHUNK_BYTES - 1));
}

/* A chunk to hand out nodes from: a purged one again, or a new mapping.
 * Pool lock held. */
static struct chunk *chunk_to_fill(void)
{
    for (struct chunk *c = chunks; c; c = c->next)
        if (c->purged) {
            c->purged = 0;
            __atomic_store_n(&resident_bytes, resident_bytes + CHUNK_BYTES - OS_PAGE_SIZE, __ATOMIC_RELAXED);
            return c;
        }
    struct chunk *c = os_map_aligned(CHUNK_BYTES, CHUNK_BYTES);
    if (!c)
        return NULL;
    c->next = chunks;
    chunks = c;
    __atomic_store_n(&resident_bytes, resident_bytes + CHUNK_BYTES, __ATOMIC_RELAXED);
    return c;
}

struct batch *batchpool_get(void)
{
    struct batch *b = stack_pop(&empty_nodes);
    if (b)
        return b;
    lock_acquire(&pool_lock);
    b = stack_pop(&empty_nodes); /* another thread may have filled it */
    struct chunk *c = b ? NULL : chunk_to_fill();
    if (c) {
        struct batch *nodes = chunk_nodes(c);
        for (size_t i = 1; i < CHUNK_NODES; i++)
            stack_push(&empty_nodes, &nodes[i]);
        b = &nodes[0];
    }
    lock_release(&pool_lock);
    return b;
}

void batchpool_put(struct batch *b)
{
    stack_push(&empty_nodes, b);
    /* Read before written: the line is not dirtied on every put. */
    if (!__atomic_load_n(&put_since_release, __ATOMIC_RELAXED))
        __atomic_store_n(&put_since_release, true, __ATOMIC_RELAXED);
}

size_t batchpool_release(void)
{
    if (!__atomic_load_n(&put_since_release, __ATOMIC_RELAXED))
        return 0;
    lock_acquire(&pool_lock);
    __atomic_store_n(&put_since_release, false, __ATOMIC_RELAXED);
    /* Every empty node is taken off the stack and counted against its
     * chunk; a node in use elsewhere keeps its chunk resident. */
    struct batch *taken = NULL;
    for (struct batch *b; (b = stack_pop(&empty_nodes));) {
        b->next = taken;
        taken = b;
        chunk_of(b)->tally++;
    }
    /* The nodes of chunks that stay go back on the stack before anything
     * is purged: the list runs through the nodes themselves. */
    while (taken) {
        struct batch *b = taken;
        taken = b->next;
        if (chunk_of(b)->tally != CHUNK_NODES)
            stack_push(&empty_nodes, b);
    }
    size_t released = 0;
    for (struct chunk *c = chunks; c; c = c->next) {
        if (c->tally == CHUNK_NODES) {
            os_purge((char *)c + OS_PAGE_SIZE, CHUNK_BYTES - OS_PAGE_SIZE, OS_PURGE_DONTNEED);
            c->purged = 1;
            released += CHUNK_BYTES - OS_PAGE_SIZE;
        }
        c->tally = 0;
    }
    __atomic_store_n(&resident_bytes, resident_bytes - released, __ATOMIC_RELAXED);
    lock_release(&pool_lock);
    return released;
}

size_t batchpool_bytes_resident(void)
{
    return __atomic_load_n(&resident_bytes, __ATOMIC_RELAXED);
}
