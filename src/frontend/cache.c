#include "frontend/cache.h"

#include "core/central.h"
#include "platform/options.h"

static uint16_t class_begin[SC_COUNT];
static unsigned slab_shift;

void cache_layout_init(void)
{
    unsigned next = SC_COUNT; /* the headers occupy the first slots */
    for (unsigned c = 0; c < SC_COUNT; c++) {
        class_begin[c] = (uint16_t)next;
        next += sc_info[c].limit;
    }
    size_t bytes = (size_t)next * sizeof(void *);
    slab_shift = 12;
    while (((size_t)1 << slab_shift) < bytes)
        slab_shift++;
}

size_t cache_slab_bytes(void) { return (size_t)1 << slab_shift; }
unsigned cache_slab_shift(void) { return slab_shift; }

void cache_slab_format(void **slab)
{
    for (unsigned c = 0; c < SC_COUNT; c++) {
        struct cache_hdr *h = cache_hdr(slab, c);
        h->begin = h->top = class_begin[c];
        h->end = (uint16_t)(class_begin[c] + sc_info[c].batch);
        h->limit = (uint16_t)(class_begin[c] + sc_info[c].limit);
    }
}

/* Bytes the slab's stacks may hold at their current capacities. */
static size_t slab_bytes_room(void **slab)
{
    size_t bytes = 0;
    for (unsigned c = 0; c < SC_COUNT; c++) {
        struct cache_hdr *h = cache_hdr(slab, c);
        bytes += (size_t)(h->end - h->begin) * sc_info[c].size;
    }
    return bytes;
}

void *cache_refill_pop(void **slab, unsigned cls, size_t budget)
{
    struct cache_hdr *h = cache_hdr(slab, cls);
    if (h->top > h->begin) /* filled meanwhile, e.g. by a nested allocation */
        return slab[--h->top];
    unsigned batch = sc_info[cls].batch, size = sc_info[cls].size;
    /* Allocation demand lets the stack grow by a batch while all stacks
     * together could still hold no more than the budget: room for what this
     * thread allocates, not for what it only frees. */
    unsigned more = cache_growth(h, cls);
    if (more && opt_free_blocks_wait() && slab_bytes_room(slab) + (size_t)more * size <= budget)
        h->end = (uint16_t)(h->end + more);
    /* A small budget (many threads sharing one) takes small refills: at
     * most an eighth of it per class. */
    unsigned n = batch;
    size_t most = budget / 8 / size;
    if (most < n)
        n = most ? (unsigned)most : 1;
    unsigned got = central_alloc(cls, &slab[h->top], n);
    if (!got)
        return NULL;
    h->top = (uint16_t)(h->top + got - 1);
    return slab[h->top];
}

void cache_spill_push(void **slab, unsigned cls, void *p, size_t budget)
{
    struct cache_hdr *h = cache_hdr(slab, cls);
    unsigned batch = sc_info[cls].batch, size = sc_info[cls].size;
    if (h->top >= h->end) {
        /* Spilling a batch makes room; over the budget (a share that
         * shrinks as threads multiply), the stack shrinks to an eighth of
         * it, possibly to nothing. */
        unsigned capacity = h->end - h->begin;
        unsigned keep = capacity > batch ? capacity - batch : 0;
        if (cache_slab_bytes_held(slab) > budget && budget / 8 / size < capacity) {
            capacity = (unsigned)(budget / 8 / size);
            keep = capacity ? capacity - 1 : 0;
        }
        while (cache_count(slab, cls) > keep) {
            unsigned n = cache_count(slab, cls) - keep;
            n = n < batch ? n : batch;
            central_free(cls, &slab[h->top - n], n);
            h->top = (uint16_t)(h->top - n);
        }
        h->end = (uint16_t)(h->begin + capacity);
        if (!capacity) {
            central_free(cls, &p, 1);
            return;
        }
    }
    slab[h->top++] = p;
}

void cache_slab_flush(void **slab)
{
    for (unsigned c = 0; c < SC_COUNT; c++) {
        struct cache_hdr *h = cache_hdr(slab, c);
        unsigned batch = sc_info[c].batch;
        while (cache_count(slab, c) >= batch) {
            central_free(c, &slab[h->top - batch], batch);
            h->top = (uint16_t)(h->top - batch);
        }
        if (cache_count(slab, c)) {
            central_free(c, &slab[h->begin], cache_count(slab, c));
            h->top = h->begin;
        }
    }
}

size_t cache_slab_bytes_held(void **slab)
{
    size_t bytes = 0;
    for (unsigned c = 0; c < SC_COUNT; c++)
        bytes += (size_t)cache_count(slab, c) * sc_info[c].size;
    return bytes;
}
