/* A deliberately wrong allocator for the test that proves replay checks can
 * fail: each block overlaps the one handed out before it. */
#include <errno.h>
#include <stddef.h>
#include <string.h>

static _Alignas(4096) unsigned char arena[64 << 20];
static size_t next_offset;

void *malloc(size_t size)
{
    if (next_offset + size + 64 > sizeof arena)
        return NULL;
    void *block = arena + next_offset;
    next_offset += 16; /* too little: the next block starts inside this one */
    return block;
}

void free(void *block)
{
    (void)block;
}

void *calloc(size_t count, size_t size)
{
    void *block = malloc(count * size);
    if (block != NULL)
        memset(block, 0, count * size);
    return block;
}

void *realloc(void *old, size_t size)
{
    void *block = malloc(size);
    if (block != NULL && old != NULL)
        memmove(block, old, size);
    return block;
}

int posix_memalign(void **out, size_t alignment, size_t size)
{
    next_offset = (next_offset + alignment - 1) & ~(alignment - 1);
    *out = malloc(size);
    return *out != NULL ? 0 : ENOMEM;
}
