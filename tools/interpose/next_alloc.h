/* The allocator underneath the interposer, found with dlsym(RTLD_NEXT). */
#ifndef COREALLOC_NEXT_ALLOC_H
#define COREALLOC_NEXT_ALLOC_H

#include <stdbool.h>
#include <stddef.h>

struct next_alloc {
    void *(*malloc)(size_t);
    void *(*calloc)(size_t, size_t);
    void *(*realloc)(void *, size_t);
    void (*free)(void *);
    int (*posix_memalign)(void **, size_t, size_t);
    void *(*aligned_alloc)(size_t, size_t);
    void *(*memalign)(size_t, size_t);
    void *(*valloc)(size_t);
    void *(*pvalloc)(size_t);
    size_t (*malloc_usable_size)(void *);
};

/* Resolves the functions once; safe to call from any thread at any time. */
const struct next_alloc *next_alloc_get(void);

/* True while this thread is inside dlsym resolving the functions: dlsym may
 * allocate, and those requests must be served without the real allocator. */
bool next_alloc_resolving(void);

/* A small static arena for the allocations made during resolution. */
void *bootstrap_alloc(size_t size, size_t alignment);
bool bootstrap_owns(const void *ptr);
size_t bootstrap_size(const void *ptr);

/* Looks up another symbol in the libraries after this one (C++ operators). */
void *next_symbol(const char *name);

#endif
