#define _GNU_SOURCE
#include "pointer_table.h"

#include <pthread.h>
#include <sys/mman.h>

#include "../common/hash.h"

/* 64 shards keep lock contention low at the thread counts we measure. */
#define SHARD_COUNT 64
#define SHARD_INITIAL_SLOTS 1024
#define EMPTY_ADDRESS ((uintptr_t)0)
#define DELETED_ADDRESS ((uintptr_t)1)

struct shard {
    pthread_mutex_t lock;
    struct pointer_record *slots;
    size_t capacity; /* a power of two */
    size_t used;     /* live + deleted slots */
    size_t live;
} __attribute__((aligned(64)));

static struct shard shards[SHARD_COUNT] = {
    [0 ... SHARD_COUNT - 1] = { .lock = PTHREAD_MUTEX_INITIALIZER },
};

static struct shard *shard_of(uint64_t hash)
{
    return &shards[hash >> 58];
}

static struct pointer_record *map_slots(size_t capacity)
{
    void *mem = mmap(NULL, capacity * sizeof(struct pointer_record),
                     PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    return mem == MAP_FAILED ? NULL : mem;
}

static void place(struct pointer_record *slots, size_t capacity,
                  const struct pointer_record *record)
{
    size_t mask = capacity - 1;
    for (size_t i = hash64(record->address) & mask;; i = (i + 1) & mask) {
        if (slots[i].address <= DELETED_ADDRESS) {
            slots[i] = *record;
            return;
        }
    }
}

/* Rebuilds the shard without deleted slots, doubling when live entries
 * alone would fill more than a quarter of it. */
static bool rebuild(struct shard *shard)
{
    size_t capacity = shard->capacity == 0 ? SHARD_INITIAL_SLOTS : shard->capacity;
    while (shard->live * 4 >= capacity)
        capacity *= 2;
    struct pointer_record *slots = map_slots(capacity);
    if (slots == NULL)
        return false;
    for (size_t i = 0; i < shard->capacity; i++) {
        if (shard->slots[i].address > DELETED_ADDRESS)
            place(slots, capacity, &shard->slots[i]);
    }
    if (shard->slots != NULL)
        munmap(shard->slots, shard->capacity * sizeof(struct pointer_record));
    shard->slots = slots;
    shard->capacity = capacity;
    shard->used = shard->live;
    return true;
}

bool pointer_table_insert(const struct pointer_record *record)
{
    struct shard *shard = shard_of(hash64(record->address));
    bool ok = true;
    pthread_mutex_lock(&shard->lock);
    if ((shard->used + 1) * 2 > shard->capacity)
        ok = rebuild(shard);
    if (ok) {
        size_t mask = shard->capacity - 1;
        size_t i = hash64(record->address) & mask;
        while (shard->slots[i].address > DELETED_ADDRESS)
            i = (i + 1) & mask;
        if (shard->slots[i].address == EMPTY_ADDRESS)
            shard->used++;
        shard->slots[i] = *record;
        shard->live++;
    }
    pthread_mutex_unlock(&shard->lock);
    return ok;
}

bool pointer_table_remove(uintptr_t address, struct pointer_record *out)
{
    struct shard *shard = shard_of(hash64(address));
    bool found = false;
    pthread_mutex_lock(&shard->lock);
    if (shard->capacity != 0) {
        size_t mask = shard->capacity - 1;
        for (size_t i = hash64(address) & mask;
             shard->slots[i].address != EMPTY_ADDRESS; i = (i + 1) & mask) {
            if (shard->slots[i].address == address) {
                *out = shard->slots[i];
                shard->slots[i].address = DELETED_ADDRESS;
                shard->live--;
                found = true;
                break;
            }
        }
    }
    pthread_mutex_unlock(&shard->lock);
    return found;
}

void pointer_table_lock_all(void)
{
    for (int i = 0; i < SHARD_COUNT; i++)
        pthread_mutex_lock(&shards[i].lock);
}

void pointer_table_unlock_all(void)
{
    for (int i = SHARD_COUNT - 1; i >= 0; i--)
        pthread_mutex_unlock(&shards[i].lock);
}
