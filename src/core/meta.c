#include "core/meta.h"

#include <string.h>

#include "platform/lock.h"
#include "platform/os.h"

#define META_CHUNK ((size_t)1 << 20)
#define META_ALIGN 64
#define META_FREE_BINS 64 /* recycled sizes, in units of META_ALIGN */

struct free_node {
    struct free_node *next;
    size_t size; /* used on the list of sizes beyond the bins */
};

static lock_t meta_lock = LOCK_INIT;
static char *bump, *bump_end;
static size_t mapped;
static struct free_node *free_bins[META_FREE_BINS + 1];
static struct free_node *free_big; /* exact-size reuse: few distinct sizes */

static size_t round_size(size_t size)
{
    return (size + META_ALIGN - 1) & ~(size_t)(META_ALIGN - 1);
}

void *meta_alloc(size_t size)
{
    size = round_size(size);
    size_t bin = size / META_ALIGN;
    lock_acquire(&meta_lock);
    void *p = NULL;
    struct free_node **link = bin <= META_FREE_BINS ? &free_bins[bin] : &free_big;
    while (*link && (*link)->size != size && bin > META_FREE_BINS)
        link = &(*link)->next;
    if (*link) {
        p = *link;
        *link = (*link)->next;
        lock_release(&meta_lock);
        memset(p, 0, size);
        return p;
    }
    if ((size_t)(bump_end - bump) < size) {
        size_t chunk = size > META_CHUNK ? (size + META_CHUNK - 1) & ~(META_CHUNK - 1) : META_CHUNK;
        char *fresh = os_map(chunk, 0);
        if (!fresh) {
            lock_release(&meta_lock);
            return NULL;
        }
        mapped += chunk;
        bump = fresh;
        bump_end = fresh + chunk;
    }
    p = bump; /* fresh mappings are zero */
    bump += size;
    lock_release(&meta_lock);
    return p;
}

void meta_free(void *p, size_t size)
{
    size = round_size(size);
    size_t bin = size / META_ALIGN;
    struct free_node *n = p;
    n->size = size;
    lock_acquire(&meta_lock);
    struct free_node **head = bin <= META_FREE_BINS ? &free_bins[bin] : &free_big;
    n->next = *head;
    *head = n;
    lock_release(&meta_lock);
}

size_t meta_bytes_mapped(void)
{
    return __atomic_load_n(&mapped, __ATOMIC_RELAXED);
}

void meta_init(void)
{
    lock_register_for_fork(&meta_lock, LOCK_RANK_META);
}
