/* The free mark: every block free in the allocator that was ever handed
 * out (in a cache, a central batch, or its superblock) carries it in its
 * first word. Superblocks write it into the blocks they hand to the
 * central layer, free writes it, malloc wipes it as it hands a block out.
 * So free tells a block that is free already with one compare, and the
 * first word of a block the program holds is the program's (a program
 * that stores the mark itself costs one search that finds the block in
 * no cache). Not a pointer, and an unlikely integer: a sign-extended
 * 32-bit immediate, so marking is one store. */
#ifndef COREALLOC_BLOCK_MARK_H
#define COREALLOC_BLOCK_MARK_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#define BLOCK_FREE_MARK ((uintptr_t)(intptr_t)(int32_t)0xA110C8ED)

static inline bool block_marked_free(const void *p)
{
    return *(const uintptr_t *)p == BLOCK_FREE_MARK;
}
/* The fast paths look at the mark's first byte alone, then at the word:
 * a byte load is served from any recent store that covers it, where a
 * word load after a narrower store to the block (block[0] = c; free(block))
 * waits for the store to reach the cache. */
static inline bool block_maybe_marked_free(const void *p)
{
    return *(const unsigned char *)p == (unsigned char)BLOCK_FREE_MARK;
}
static inline void block_mark_free(void *p)
{
    *(uintptr_t *)p = BLOCK_FREE_MARK;
}
/* Secure mode also fills the rest of every free block with this byte, and
 * checks the fill when the block is handed out again: a write after free
 * shows. */
#define BLOCK_FREE_FILL 0xdf
static inline void block_fill_free(void *p, size_t size)
{
    memset((char *)p + sizeof(uintptr_t), BLOCK_FREE_FILL, size - sizeof(uintptr_t));
}
/* A block leaving the allocator for the program. */
static inline void block_handing_out(void *p)
{
    *(uintptr_t *)p = 0;
}

#endif
