#include "central.h"

#include "debug.h"
#include "lock.h"
#include "os.h"
#include "sizeclass.h"
#include "stats.h"
#include "superblock.h"

/* A batch is linked through its objects: word 0 of each object points to the
 * next object of the batch, word 1 of the first object to the next batch on
 * the stack. Objects are at least 16 bytes. */
struct batch_link {
    struct batch_link *next_object;
    struct batch_link *next_batch;
};

/* Treiber stack head with a tag that changes on every pop, so a head that
 * was popped and pushed again between our read and our CAS is noticed. */
typedef unsigned __int128 stack_word;

struct central {
    _Alignas(16) volatile stack_word stack; /* low 64 bits: head, high: tag */
    uint32_t batches;                       /* batches on the stack (approximate) */
    uint64_t refills, spills;
    _Alignas(64) lock_t lock;
    struct superblock *partial; /* superblocks with free or uncut blocks */
    uint64_t superblocks;
    uint64_t blocks_out;
} __attribute__((aligned(64)));

static struct central classes[SC_COUNT];

/* More batches than this on the stack go back to their superblocks. */
static uint32_t max_batches(unsigned cls)
{
    uint32_t by_bytes = (uint32_t)((1u << 20) / (sc_info[cls].size * sc_info[cls].batch));
    return by_bytes < 4 ? 4 : by_bytes;
}

void central_init(void)
{
    for (unsigned c = 0; c < SC_COUNT; c++) {
        lock_reset(&classes[c].lock);
        lock_register_for_fork(&classes[c].lock);
    }
}

static void stack_push(struct central *ce, struct batch_link *first)
{
    stack_word old = ce->stack, seen;
    for (;;) {
        first->next_batch = (struct batch_link *)(uintptr_t)old;
        stack_word desired = ((old >> 64) << 64) | (uintptr_t)first;
        seen = __sync_val_compare_and_swap(&ce->stack, old, desired);
        if (seen == old)
            break;
        old = seen;
    }
    __atomic_fetch_add(&ce->batches, 1, __ATOMIC_RELAXED);
}

static struct batch_link *stack_pop(struct central *ce)
{
    stack_word old = ce->stack, seen;
    for (;;) {
        struct batch_link *head = (struct batch_link *)(uintptr_t)old;
        if (!head)
            return NULL;
        /* head may already be popped and reused by its new owner: the read
         * is harmless (our memory stays mapped) and the tag makes the CAS fail. */
        struct batch_link *next = __atomic_load_n(&head->next_batch, __ATOMIC_RELAXED);
        stack_word desired = (((old >> 64) + 1) << 64) | (uintptr_t)next;
        seen = __sync_val_compare_and_swap(&ce->stack, old, desired);
        if (seen == old) {
            __atomic_fetch_sub(&ce->batches, 1, __ATOMIC_RELAXED);
            return head;
        }
        old = seen;
    }
}

/* Puts one object back into its superblock. Class lock held. */
static void return_to_superblock(struct central *ce, void *p)
{
    struct superblock *sb = sb_of((uintptr_t)p);
    CA_ASSERT(sb && sb->cls == (unsigned)(ce - classes) && sb->used > 0);
    CA_ASSERT(sb_block_start(sb, (uintptr_t)p) == (uintptr_t)p);
    *(void **)p = sb->free;
    sb->free = p;
    sb->used--;
    ce->blocks_out--;
    if (sb->used == 0) {
        if (sb->list == SB_LIST_PARTIAL) {
            if (sb->prev)
                sb->prev->next = sb->next;
            else
                ce->partial = sb->next;
            if (sb->next)
                sb->next->prev = sb->prev;
        }
        ce->superblocks--;
        sb_release_empty(sb);
        return;
    }
    if (sb->list != SB_LIST_PARTIAL) {
        sb->list = SB_LIST_PARTIAL;
        sb->prev = NULL;
        sb->next = ce->partial;
        if (ce->partial)
            ce->partial->prev = sb;
        ce->partial = sb;
    }
}

static void return_batch_list(struct central *ce, struct batch_link *obj)
{
    while (obj) {
        struct batch_link *next = obj->next_object;
        return_to_superblock(ce, obj);
        obj = next;
    }
}

unsigned central_alloc(unsigned cls, void **out, unsigned n)
{
    struct central *ce = &classes[cls];
    unsigned got = 0;
    if (n == sc_info[cls].batch) {
        struct batch_link *obj = stack_pop(ce);
        if (obj) {
            for (; obj && got < n; obj = obj->next_object)
                out[got++] = obj;
            __atomic_fetch_add(&ce->refills, 1, __ATOMIC_RELAXED);
            return got;
        }
    }
    lock_acquire(&ce->lock);
    while (got < n) {
        struct superblock *sb = ce->partial;
        if (!sb) {
            sb = sb_acquire(cls);
            if (!sb)
                break;
            ce->superblocks++;
            sb->list = SB_LIST_PARTIAL;
            sb->prev = NULL;
            sb->next = NULL;
            ce->partial = sb;
        }
        CA_ASSERT(sb->cls == cls && !sb_exhausted(sb));
        got += sb_take(sb, out + got, n - got);
        if (sb_exhausted(sb)) {
            ce->partial = sb->next;
            if (ce->partial)
                ce->partial->prev = NULL;
            sb->list = SB_LIST_NONE;
        }
    }
    ce->blocks_out += got;
    lock_release(&ce->lock);
    __atomic_fetch_add(&ce->refills, 1, __ATOMIC_RELAXED);
    return got;
}

void central_free(unsigned cls, void *const *objs, unsigned n)
{
    struct central *ce = &classes[cls];
    __atomic_fetch_add(&ce->spills, 1, __ATOMIC_RELAXED);
    if (n == sc_info[cls].batch) {
        for (unsigned i = 0; i + 1 < n; i++)
            ((struct batch_link *)objs[i])->next_object = objs[i + 1];
        ((struct batch_link *)objs[n - 1])->next_object = NULL;
        stack_push(ce, objs[0]);
        /* Too much parked centrally: whoever finds the lock free takes some
         * batches back to their superblocks, so they can empty. */
        if (__atomic_load_n(&ce->batches, __ATOMIC_RELAXED) <= max_batches(cls) ||
            !lock_try(&ce->lock))
            return;
        unsigned keep = max_batches(cls) / 2;
        while (__atomic_load_n(&ce->batches, __ATOMIC_RELAXED) > keep) {
            struct batch_link *b = stack_pop(ce);
            if (!b)
                break;
            return_batch_list(ce, b);
        }
        lock_release(&ce->lock);
        return;
    }
    lock_acquire(&ce->lock);
    for (unsigned i = 0; i < n; i++)
        return_to_superblock(ce, objs[i]);
    lock_release(&ce->lock);
}

size_t central_trim(uint64_t older_than_ns)
{
    size_t released = 0;
    for (unsigned c = 0; c < SC_COUNT; c++) {
        struct central *ce = &classes[c];
        lock_acquire(&ce->lock);
        for (struct batch_link *b; (b = stack_pop(ce));)
            return_batch_list(ce, b);
        released += sb_purge_class_empties(c, older_than_ns);
        lock_release(&ce->lock);
    }
    return released;
}

void central_class_stats(unsigned cls, struct central_class_stats *out)
{
    struct central *ce = &classes[cls];
    out->superblocks = __atomic_load_n(&ce->superblocks, __ATOMIC_RELAXED);
    out->blocks_out = __atomic_load_n(&ce->blocks_out, __ATOMIC_RELAXED);
    out->batches_central = __atomic_load_n(&ce->batches, __ATOMIC_RELAXED);
    out->refills = __atomic_load_n(&ce->refills, __ATOMIC_RELAXED);
    out->spills = __atomic_load_n(&ce->spills, __ATOMIC_RELAXED);
}
