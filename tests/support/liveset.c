/* Striped open-addressing hash set (see liveset.h). Each of STRIPES
 * stripes is a linear-probing table behind its own mutex; removal shifts
 * later entries back, so no tombstones accumulate. */
#include "liveset.h"

#include "check.h"
#include "hash.h"

#include <pthread.h>
#include <stdint.h>
#include <sys/mman.h>

#define STRIPES 256

struct stripe {
    pthread_mutex_t lock;
    size_t used;
    uintptr_t *slots;
};

struct liveset {
    size_t mapped;
    size_t mask; /* slots per stripe - 1 */
    struct stripe stripes[STRIPES];
};

struct liveset *liveset_create(size_t capacity)
{
    size_t per_stripe = 64;
    while (per_stripe * STRIPES < 4 * capacity)
        per_stripe *= 2;
    size_t bytes = sizeof(struct liveset) + STRIPES * per_stripe * sizeof(uintptr_t);
    struct liveset *set =
        mmap(NULL, bytes, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    REQUIRE(set != MAP_FAILED);
    set->mapped = bytes;
    set->mask = per_stripe - 1;
    uintptr_t *slots = (uintptr_t *)(set + 1);
    for (size_t i = 0; i < STRIPES; i++) {
        pthread_mutex_init(&set->stripes[i].lock, NULL);
        set->stripes[i].slots = slots + i * per_stripe;
    }
    return set;
}

void liveset_destroy(struct liveset *set)
{
    munmap(set, set->mapped);
}

bool liveset_insert(struct liveset *set, const void *ptr)
{
    uint64_t h = hash64((uintptr_t)ptr);
    struct stripe *s = &set->stripes[h % STRIPES];
    size_t i = (h / STRIPES) & set->mask;
    bool inserted = false;
    pthread_mutex_lock(&s->lock);
    REQUIRE(s->used < set->mask); /* keep one slot empty to end probes */
    while (s->slots[i] && s->slots[i] != (uintptr_t)ptr)
        i = (i + 1) & set->mask;
    if (!s->slots[i]) {
        s->slots[i] = (uintptr_t)ptr;
        s->used++;
        inserted = true;
    }
    pthread_mutex_unlock(&s->lock);
    return inserted;
}

bool liveset_remove(struct liveset *set, const void *ptr)
{
    uint64_t h = hash64((uintptr_t)ptr);
    struct stripe *s = &set->stripes[h % STRIPES];
    size_t mask = set->mask;
    size_t i = (h / STRIPES) & mask;
    bool removed = false;
    pthread_mutex_lock(&s->lock);
    while (s->slots[i] && s->slots[i] != (uintptr_t)ptr)
        i = (i + 1) & mask;
    if (s->slots[i]) {
        /* Backward-shift deletion: move up every later entry of the probe
         * run whose home slot is not in (i, j]. */
        for (size_t j = (i + 1) & mask; s->slots[j]; j = (j + 1) & mask) {
            size_t home = (hash64(s->slots[j]) / STRIPES) & mask;
            if (((j - home) & mask) >= ((j - i) & mask)) {
                s->slots[i] = s->slots[j];
                i = j;
            }
        }
        s->slots[i] = 0;
        s->used--;
        removed = true;
    }
    pthread_mutex_unlock(&s->lock);
    return removed;
}
