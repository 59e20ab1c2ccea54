/* Multi-thread stress with cross-thread frees and data-integrity checks.
 *
 * Usage: frontend_stress THREADS OPS_PER_THREAD
 *
 * Phase 1, producer/consumer: half the threads allocate blocks and hand
 * them through a queue to the other half, which verify and free them.
 * Phase 2, random mix: all threads pick random slots of a shared table;
 * an empty slot gets a new block (malloc, calloc or posix_memalign, 1 B to
 * 1 MiB), a full one is verified and then freed or reallocated, so most
 * frees happen on a thread other than the allocating one.
 * Every block is filled with a pattern unique to it and verified before it
 * is freed; every block's address goes into a concurrent set, so a block
 * handed out twice is caught the moment the second owner gets it.
 */
#include "check.h"
#include "liveset.h"
#include "pattern.h"
#include "probe.h"
#include "rng.h"

#include <malloc.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

struct block {
    unsigned char *ptr;
    size_t size;
    uint64_t seed;
};

static struct liveset *live;
static atomic_uint_fast64_t next_seed = 1;
static unsigned ops_per_thread;

/* Mostly small sizes, some large, a few up to 1 MiB. */
static size_t random_size(struct rng *rng)
{
    uint64_t r = rng_next(rng);
    unsigned bits;
    if (r % 100 < 88)
        bits = 1 + (unsigned)(r >> 8) % 10; /* up to 1 KiB */
    else if (r % 100 < 99)
        bits = 11 + (unsigned)(r >> 8) % 6; /* up to 64 KiB */
    else
        bits = 17 + (unsigned)(r >> 8) % 4; /* up to 1 MiB */
    return 1 + (size_t)rng_below(rng, (uint64_t)1 << bits);
}

/* Checks that a freshly obtained block is sane and not live elsewhere. */
static void claim(struct block *b)
{
    REQUIRE(b->ptr != NULL);
    CHECK_EQ((uintptr_t)b->ptr % MALLOC_ALIGNMENT_OF(b->size), 0);
    CHECK(malloc_usable_size(b->ptr) >= b->size);
    if (corealloc_active()) {
        CHECK(probe_object_start(b->ptr + b->size - 1) == b->ptr);
        CHECK_EQ(probe_object_size(b->ptr), malloc_usable_size(b->ptr));
    }
    CHECK_MSG(liveset_insert(live, b->ptr), "block %p handed out while still live", (void *)b->ptr);
}

/* Gives a claimed block a fresh pattern of its own. */
static void fill(struct block *b)
{
    b->seed = atomic_fetch_add(&next_seed, 1);
    pattern_fill(b->ptr, b->size, b->seed);
}

static void new_block(struct block *b, struct rng *rng)
{
    b->size = random_size(rng);
    uint64_t kind = rng_below(rng, 8);
    if (kind == 0) {
        b->ptr = calloc(1, b->size);
        claim(b);
        size_t i = 0;
        while (i < b->size && !b->ptr[i])
            i++;
        CHECK_MSG(i == b->size, "calloc(1, %zu) = %p: byte %zu is %#x", b->size, (void *)b->ptr, i,
                  b->ptr[i]);
    } else if (kind == 1) {
        void *p = NULL;
        size_t align = (size_t)16 << rng_below(rng, 9); /* 16 B .. 4 KiB */
        CHECK_EQ(posix_memalign(&p, align, b->size), 0);
        CHECK_EQ((uintptr_t)p % align, 0);
        b->ptr = p;
        claim(b);
    } else {
        b->ptr = malloc(b->size);
        claim(b);
    }
    fill(b);
}

static void verify(const struct block *b)
{
    size_t bad = pattern_mismatch(b->ptr, b->size, b->seed);
    CHECK_MSG(bad == PATTERN_OK, "block %p (size %zu) changed at offset %zu while it was live",
              (void *)b->ptr, b->size, bad);
}

static void release(struct block *b)
{
    verify(b);
    CHECK(liveset_remove(live, b->ptr));
    free(b->ptr);
    b->ptr = NULL;
}

/* Grows or shrinks a block: the kept prefix must survive the move. */
static void resize(struct block *b, struct rng *rng)
{
    verify(b);
    CHECK(liveset_remove(live, b->ptr));
    size_t size = random_size(rng);
    unsigned char *p = realloc(b->ptr, size);
    REQUIRE(p != NULL);
    size_t keep = size < b->size ? size : b->size;
    size_t bad = pattern_mismatch(p, keep, b->seed);
    CHECK_MSG(bad == PATTERN_OK, "realloc to %zu lost the block's contents at offset %zu", size, bad);
    b->ptr = p;
    b->size = size;
    claim(b);
    fill(b);
}

/* ---- phase 1: producer/consumer through a bounded queue ---- */

#define QUEUE_SIZE 256

static struct {
    pthread_mutex_t lock;
    pthread_cond_t not_empty, not_full;
    struct block items[QUEUE_SIZE];
    size_t head, count;
    unsigned producers_left;
} queue = {.lock = PTHREAD_MUTEX_INITIALIZER,
         .not_empty = PTHREAD_COND_INITIALIZER,
         .not_full = PTHREAD_COND_INITIALIZER};

static void *producer(void *arg)
{
    struct rng rng = rng_seeded((uintptr_t)arg);
    for (unsigned i = 0; i < ops_per_thread; i++) {
        struct block b;
        new_block(&b, &rng);
        pthread_mutex_lock(&queue.lock);
        while (queue.count == QUEUE_SIZE)
            pthread_cond_wait(&queue.not_full, &queue.lock);
        queue.items[(queue.head + queue.count++) % QUEUE_SIZE] = b;
        pthread_cond_signal(&queue.not_empty);
        pthread_mutex_unlock(&queue.lock);
    }
    pthread_mutex_lock(&queue.lock);
    queue.producers_left--;
    pthread_cond_broadcast(&queue.not_empty);
    pthread_mutex_unlock(&queue.lock);
    return NULL;
}

static void *consumer(void *arg)
{
    (void)arg;
    for (;;) {
        pthread_mutex_lock(&queue.lock);
        while (queue.count == 0 && queue.producers_left > 0)
            pthread_cond_wait(&queue.not_empty, &queue.lock);
        if (queue.count == 0) {
            pthread_mutex_unlock(&queue.lock);
            return NULL;
        }
        struct block b = queue.items[queue.head];
        queue.head = (queue.head + 1) % QUEUE_SIZE;
        queue.count--;
        pthread_cond_signal(&queue.not_full);
        pthread_mutex_unlock(&queue.lock);
        release(&b);
    }
}

static void run_producer_consumer(unsigned threads)
{
    unsigned producers = threads / 2 ? threads / 2 : 1;
    unsigned consumers = threads - producers ? threads - producers : 1;
    queue.producers_left = producers;
    pthread_t tids[2 * threads + 2];
    for (unsigned i = 0; i < producers; i++)
        REQUIRE(pthread_create(&tids[i], NULL, producer, (void *)(uintptr_t)(i + 1)) == 0);
    for (unsigned i = 0; i < consumers; i++)
        REQUIRE(pthread_create(&tids[producers + i], NULL, consumer, NULL) == 0);
    for (unsigned i = 0; i < producers + consumers; i++)
        pthread_join(tids[i], NULL);
    CHECK_EQ(queue.count, 0);
}

/* ---- phase 2: random operations on a shared table ---- */

#define SLOTS 4096
#define SLOT_LOCKS 256

static struct block slots[SLOTS];
static pthread_mutex_t slot_locks[SLOT_LOCKS];

static void *mixer(void *arg)
{
    struct rng rng = rng_seeded(~(uintptr_t)arg); /* not the producers' sequences */
    for (unsigned i = 0; i < ops_per_thread; i++) {
        size_t s = rng_below(&rng, SLOTS);
        pthread_mutex_lock(&slot_locks[s % SLOT_LOCKS]);
        if (!slots[s].ptr)
            new_block(&slots[s], &rng);
        else if (rng_below(&rng, 4) == 0)
            resize(&slots[s], &rng);
        else
            release(&slots[s]);
        pthread_mutex_unlock(&slot_locks[s % SLOT_LOCKS]);
    }
    return NULL;
}

static void run_mix(unsigned threads)
{
    for (size_t i = 0; i < SLOT_LOCKS; i++)
        pthread_mutex_init(&slot_locks[i], NULL);
    pthread_t tids[threads];
    for (unsigned i = 0; i < threads; i++)
        REQUIRE(pthread_create(&tids[i], NULL, mixer, (void *)(uintptr_t)(i + 1)) == 0);
    for (unsigned i = 0; i < threads; i++)
        pthread_join(tids[i], NULL);
    for (size_t s = 0; s < SLOTS; s++)
        if (slots[s].ptr)
            release(&slots[s]);
}

int main(int argc, char **argv)
{
    if (argc != 3) {
        fprintf(stderr, "usage: %s THREADS OPS_PER_THREAD\n", argv[0]);
        return 2;
    }
    unsigned threads = (unsigned)strtoul(argv[1], NULL, 10);
    ops_per_thread = (unsigned)strtoul(argv[2], NULL, 10);
    REQUIRE(threads >= 2 && threads <= 256 && ops_per_thread > 0);
    live = liveset_create(SLOTS + QUEUE_SIZE + 2 * threads);
    run_producer_consumer(threads);
    run_mix(threads);
    liveset_destroy(live);
    return check_status();
}
