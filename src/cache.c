#include "cache.h"

#include "central.h"

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

void *cache_refill_pop(void **slab, unsigned cls)
{
    struct cache_hdr *h = cache_hdr(slab, cls);
    if (h->top > h->begin) /* filled meanwhile, e.g. by a nested allocation */
        return slab[--h->top];
    unsigned got = central_alloc(cls, &slab[h->top], sc_info[cls].batch);
    if (!got)
        return NULL;
    h->top = (uint16_t)(h->top + got - 1);
    return slab[h->top];
}

void cache_spill_push(void **slab, unsigned cls, void *p, size_t budget)
{
    struct cache_hdr *h = cache_hdr(slab, cls);
    unsigned batch = sc_info[cls].batch;
    if (h->top >= h->end) {
        /* Demand lets the stack grow by a batch, within the slab's budget. */
        if (h->end < h->limit &&
            cache_slab_bytes_held(slab) + (size_t)batch * sc_info[cls].size <= budget) {
            unsigned end = h->end + batch;
            h->end = (uint16_t)(end < h->limit ? end : h->limit);
        } else {
            central_free(cls, &slab[h->top - batch], batch);
            h->top = (uint16_t)(h->top - batch);
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
