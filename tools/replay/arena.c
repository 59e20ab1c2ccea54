#include "arena.h"

#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/mman.h>

#define CHUNK_BYTES (4u << 20)

static pthread_mutex_t arena_lock = PTHREAD_MUTEX_INITIALIZER;
static unsigned char *chunk_next;
static size_t chunk_left;

static void *map_or_die(size_t size)
{
    void *mem = mmap(NULL, size, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    if (mem == MAP_FAILED) {
        fprintf(stderr, "corealloc-replay: out of memory mapping %zu bytes\n", size);
        exit(3);
    }
    return mem;
}

void *arena_alloc(size_t size)
{
    size = (size + 15) & ~(size_t)15;
    if (size >= CHUNK_BYTES / 4)
        return map_or_die(size);
    pthread_mutex_lock(&arena_lock);
    if (size > chunk_left) {
        chunk_next = map_or_die(CHUNK_BYTES);
        chunk_left = CHUNK_BYTES;
    }
    void *mem = chunk_next;
    chunk_next += size;
    chunk_left -= size;
    pthread_mutex_unlock(&arena_lock);
    return mem;
}
