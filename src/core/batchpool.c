#include "core/batchpool.h"

#include "platform/lock.h"
#include "platform/os.h"

/* A chunk's first node-sized slot is its header. Its nodes are handed out
 * in order, a chain at a time, as the stacks run out: the pages past those
 * nodes are never touched (a program that parks a few batches does not make
 * a whole chunk resident). Its first page stays resident (it holds the
 * header); the pages of its nodes are purged when all of them are empty,
 * and the chunk starts over. */
#define CHUNK_NODES (BATCHPOOL_CHUNK_BYTES / sizeof(struct batch) - 1)

struct chunk {
    struct chunk *next; /* every chunk, in mapping order */
    uint32_t tally;     /* empty nodes counted by the release in progress */
    uint32_t carved;    /* nodes handed out since it was mapped or purged */
};
_Static_assert(sizeof(struct chunk) <= sizeof(struct batch), "the header fits a node's slot");

/* The chunk's bytes that are resident: its pages up to the end of its
 * carved nodes. */
static size_t carved_bytes(uint32_t carved)
{
    return ((size_t)(carved + 1) * sizeof(struct batch) + OS_PAGE_SIZE - 1) & ~(size_t)(OS_PAGE_SIZE - 1);
}

/* Empty nodes are kept in lanes (core/batch.h), so the two sides of a
 * hand-off (one frees batches and takes nodes, the other refills and puts
 * them back) do not write one contended stack head per batch each, and a
 * CPU gets back the nodes it wrote last. A lane past LANE_KEEP single
 * nodes makes a chain of half of them; a CPU short of nodes takes another
 * lane's chain with one operation on its head. Nodes just carved go on the
 * carving CPU's lane as singles, those a release keeps on the releasing
 * CPU's lane as chains. */
#define LANE_KEEP 32u
#define CHAIN_NODES (LANE_KEEP / 2)
struct lane_stack {
    struct stack nodes;
    uint8_t last_found; /* singles only */
} __attribute__((aligned(64)));
/* A lane's two stacks side by side: a process on a few CPUs touches one
 * page of the table. */
static struct lane_row {
    struct lane_stack singles, chains;
} lanes[LANES];
static lock_t pool_lock = LOCK_INIT; /* chunk list, mapping, releasing */
static struct chunk *chunks;
static struct chunk *carving; /* the chunk nodes were last carved from, or NULL */
static size_t resident_bytes;
static bool put_since_release;

void batchpool_init(void)
{
    lock_register_for_fork(&pool_lock, LOCK_RANK_NODES);
}

static struct batch *chunk_nodes(struct chunk *c) { return (struct batch *)c + 1; }

static struct chunk *chunk_of(struct batch *b)
{
    return (struct chunk *)((uintptr_t)b & ~(uintptr_t)(BATCHPOOL_CHUNK_BYTES - 1));
}

/* A chunk with nodes never handed out (since it was mapped or purged), or
 * a new mapping. Pool lock held. */
static struct chunk *chunk_with_room(void)
{
    /* The last one first: the list is walked once a chunk fills, as it was
     * when chunks were carved whole, not once a chain. */
    if (carving && carving->carved < CHUNK_NODES)
        return carving;
    for (struct chunk *c = chunks; c; c = c->next)
        if (c->carved < CHUNK_NODES)
            return carving = c;
    struct chunk *c = os_map_aligned(BATCHPOOL_CHUNK_BYTES, BATCHPOOL_CHUNK_BYTES);
    if (!c)
        return NULL;
    c->next = chunks;
    chunks = carving = c;
    __atomic_store_n(&resident_bytes, resident_bytes + carved_bytes(0), __ATOMIC_RELAXED);
    return c;
}

static struct lane lane_of(unsigned index)
{
    return (struct lane){ &lanes[index].singles.nodes, &lanes[index].chains.nodes, &lanes[index].singles.last_found };
}

/* Links nodes[0..n) into chains and puts those on the calling CPU's lane's
 * chains. */
static void push_chains(struct batch *const *nodes, size_t n)
{
    struct stack *chains = lane_of(lane_index()).chains;
    for (size_t i = 0; i < n; i += CHAIN_NODES) {
        size_t end = n - i < CHAIN_NODES ? n : i + CHAIN_NODES;
        for (size_t j = i; j < end; j++) {
            batch_single(nodes[j]);
            nodes[j]->next = j + 1 < end ? nodes[j + 1] : NULL;
        }
        batch_chain(nodes[i], nodes[end - 1], (uint32_t)(end - i));
        stack_push(chains, nodes[i]);
    }
}

/* A node from the lane of index, else from another lane. */
static struct batch *take_node(struct lane lane, unsigned index)
{
    return lane_take_or_steal(lane, index, lanes_in_use(), sizeof(struct lane_row));
}

struct batch *batchpool_get(void)
{
    unsigned index = lane_index();
    struct lane lane = lane_of(index);
    struct batch *b = take_node(lane, index);
    if (b) {
        lane_prefetch_next(lane, sizeof(struct batch));
        return b;
    }
    lock_acquire(&pool_lock);
    b = take_node(lane, index); /* another thread may have put some back */
    struct chunk *c = b ? NULL : chunk_with_room();
    if (c) { /* one node for the caller, the next ones single on the lane */
        uint32_t room = (uint32_t)CHUNK_NODES - c->carved, n = room < CHAIN_NODES + 1 ? room : CHAIN_NODES + 1;
        struct batch *nodes = chunk_nodes(c) + c->carved;
        __atomic_store_n(&resident_bytes, resident_bytes + carved_bytes(c->carved + n) - carved_bytes(c->carved),
                         __ATOMIC_RELAXED);
        c->carved += n;
        for (uint32_t j = 1; j < n; j++) {
            batch_single(&nodes[j]);
            nodes[j].next = j + 1 < n ? &nodes[j + 1] : NULL;
        }
        if (n > 1)
            stack_push_list(lane.singles, &nodes[1], &nodes[n - 1], n - 1);
        b = &nodes[0];
        batch_single(b);
    }
    lock_release(&pool_lock);
    return b;
}

void batchpool_put(struct batch *b)
{
    lane_put(lane_of(lane_index()), b, LANE_KEEP, CHAIN_NODES);
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
    for (unsigned i = 0; i < 2 * LANES; i++) {
        struct stack *st = i < LANES ? &lanes[i].singles.nodes : &lanes[i - LANES].chains.nodes;
        for (struct batch *b; (b = stack_pop(st));) {
            for (struct batch *rest = b->rest, *node = b; node; node = rest, rest = rest ? rest->next : NULL) {
                node->next = taken;
                taken = node;
                chunk_of(node)->tally++;
            }
        }
    }
    /* The nodes of chunks that stay go back, as chains, before anything is
     * purged: the list runs through the nodes themselves. */
    struct batch *keep[CHAIN_NODES];
    size_t kept = 0;
    while (taken) {
        struct batch *b = taken;
        taken = b->next;
        if (chunk_of(b)->tally == chunk_of(b)->carved)
            continue;
        keep[kept++] = b;
        if (kept == CHAIN_NODES || !taken) {
            push_chains(keep, kept);
            kept = 0;
        }
    }
    if (kept)
        push_chains(keep, kept);
    size_t released = 0;
    for (struct chunk *c = chunks; c; c = c->next) {
        if (c->carved && c->tally == c->carved) {
            size_t bytes = carved_bytes(c->carved) - OS_PAGE_SIZE;
            if (bytes)
                os_purge((char *)c + OS_PAGE_SIZE, bytes, OS_PURGE_DONTNEED);
            c->carved = 0;
            released += bytes;
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
