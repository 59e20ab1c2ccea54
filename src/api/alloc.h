/* The allocation paths: the inline fast paths shared by every exported
 * entry point, and the slow paths behind them. */
#ifndef COREALLOC_ALLOC_H
#define COREALLOC_ALLOC_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "core/sizeclass.h"
#include "core/zone.h"
#include "frontend/frontend.h"

void *alloc_malloc_slow(size_t size);
void alloc_free_slow(void *p);
void *alloc_calloc(size_t count, size_t size);
void *alloc_realloc(void *p, size_t size);
/* alignment: a power of two. NULL (errno ENOMEM) when out of memory. */
void *alloc_aligned(size_t alignment, size_t size);
size_t alloc_usable_size(const void *p);
void *alloc_object_start(const void *p);
size_t alloc_object_size(const void *p);
size_t alloc_trim(void);
const char *alloc_frontend_name(void);

static inline void *alloc_malloc(size_t size)
{
    if (__builtin_expect(size <= SMALL_MAX, 1)) {
        void *p = frontend_try_alloc(sc_of(size));
        if (__builtin_expect(p != NULL, 1))
            return p;
    }
    return alloc_malloc_slow(size);
}

static inline void alloc_free(void *p)
{
    uintptr_t addr = (uintptr_t)p;
    unsigned cls;
    if (__builtin_expect(zone_class_of(addr, &cls), 1)) {
        uintptr_t offset = addr & (SB_SIZE - 1);
        uint64_t index = sc_block_index(cls, offset);
        /* Only block starts inside a superblock's blocks are accepted here. */
        if (__builtin_expect(index * sc_info[cls].size == offset && index < sc_info[cls].blocks, 1)) {
            if (__builtin_expect(frontend_try_free(p, cls), 1))
                return;
            frontend_free_slow(p, cls);
            return;
        }
    }
    alloc_free_slow(p);
}

#endif
