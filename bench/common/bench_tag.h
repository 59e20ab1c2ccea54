/* Block tags: a benchmark writes a tag at both ends of a block when it
 * allocates it and checks both before freeing it, so an allocator that hands
 * out overlapping or already-used memory is caught. */
#ifndef BENCH_TAG_H
#define BENCH_TAG_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

/* Smallest block size that carries a tag; smaller blocks are only checked
 * for being non-NULL. */
#define BENCH_TAG_MIN_SIZE (2 * sizeof(uint64_t))

static inline void bench_tag_write(void *block, size_t size, uint64_t tag)
{
    if (size < BENCH_TAG_MIN_SIZE)
        return;
    uint64_t tail = ~tag;
    memcpy(block, &tag, sizeof tag);
    memcpy((char *)block + size - sizeof tail, &tail, sizeof tail);
}

static inline bool bench_tag_intact(const void *block, size_t size)
{
    if (size < BENCH_TAG_MIN_SIZE)
        return true;
    uint64_t head, tail;
    memcpy(&head, block, sizeof head);
    memcpy(&tail, (const char *)block + size - sizeof tail, sizeof tail);
    return head == ~tail;
}

#endif
