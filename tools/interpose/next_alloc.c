#define _GNU_SOURCE
#include "next_alloc.h"

#include <dlfcn.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "raw_io.h"

#define TLS __attribute__((tls_model("initial-exec")))

static struct next_alloc next;
static atomic_bool next_ready;
static pthread_once_t next_once = PTHREAD_ONCE_INIT;
static TLS __thread bool resolving;

static void *must_find(const char *name)
{
    void *fn = dlsym(RTLD_NEXT, name);
    if (fn == NULL) {
        raw_error("corealloc interposer: no underlying '", name, "' found; aborting");
        abort();
    }
    return fn;
}

static void resolve_next(void)
{
    resolving = true;
    next.malloc = must_find("malloc");
    next.calloc = must_find("calloc");
    next.realloc = must_find("realloc");
    next.free = must_find("free");
    next.posix_memalign = must_find("posix_memalign");
    next.aligned_alloc = must_find("aligned_alloc");
    next.memalign = must_find("memalign");
    next.valloc = must_find("valloc");
    next.pvalloc = must_find("pvalloc");
    next.malloc_usable_size = must_find("malloc_usable_size");
    resolving = false;
    atomic_store_explicit(&next_ready, true, memory_order_release);
}

const struct next_alloc *next_alloc_get(void)
{
    if (!atomic_load_explicit(&next_ready, memory_order_acquire))
        pthread_once(&next_once, resolve_next);
    return &next;
}

bool next_alloc_resolving(void)
{
    return resolving;
}

void *next_symbol(const char *name)
{
    return dlsym(RTLD_NEXT, name);
}

/* dlsym needs a few hundred bytes at most; 64 KiB leaves ample room. Each
 * block carries its size in the 16 bytes before it so realloc can copy it. */
#define BOOTSTRAP_BYTES (64 * 1024)
#define BOOTSTRAP_HEADER 16

static _Alignas(4096) unsigned char bootstrap_arena[BOOTSTRAP_BYTES];
static atomic_size_t bootstrap_used;

void *bootstrap_alloc(size_t size, size_t alignment)
{
    if (alignment < BOOTSTRAP_HEADER)
        alignment = BOOTSTRAP_HEADER;
    size_t used = atomic_load(&bootstrap_used);
    for (;;) {
        uintptr_t base = (uintptr_t)bootstrap_arena + used + BOOTSTRAP_HEADER;
        uintptr_t start = (base + alignment - 1) & ~(uintptr_t)(alignment - 1);
        size_t end = (size_t)(start - (uintptr_t)bootstrap_arena) + size;
        if (size > BOOTSTRAP_BYTES || end > BOOTSTRAP_BYTES)
            return NULL;
        if (atomic_compare_exchange_weak(&bootstrap_used, &used, end)) {
            memcpy((void *)(start - BOOTSTRAP_HEADER), &size, sizeof size);
            return (void *)start;
        }
    }
}

bool bootstrap_owns(const void *ptr)
{
    return (const unsigned char *)ptr >= bootstrap_arena &&
           (const unsigned char *)ptr < bootstrap_arena + BOOTSTRAP_BYTES;
}

size_t bootstrap_size(const void *ptr)
{
    size_t size;
    memcpy(&size, (const unsigned char *)ptr - BOOTSTRAP_HEADER, sizeof size);
    return size;
}
