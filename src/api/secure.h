/* Secure mode (COREALLOC_SECURE) for small blocks: a trailer in the last
 * word of every block holds the size the program asked for, sealed with a
 * check word, and the bytes between that size and the trailer hold a
 * canary; a free that finds either changed reports a write past the
 * block's size. Free blocks are filled (core/block_mark.h), and a block
 * whose fill changed while it was free reports a write after free when it
 * is handed out again. The guard pages, the random order and the checked
 * frees live where those things are done (superblock.c, frontend.c). */
#ifndef COREALLOC_SECURE_H
#define COREALLOC_SECURE_H

#include <stddef.h>

/* The trailer's bytes; a block holds at least two words in secure mode
 * (the free mark, or the program's first bytes, and the trailer). */
#define SECURE_TRAILER_BYTES sizeof(unsigned long long)
/* Bytes of a small block a request of `size` needs in secure mode. */
static inline size_t secure_block_bytes(size_t size)
{
    return size < SECURE_TRAILER_BYTES ? 2 * SECURE_TRAILER_BYTES : size + SECURE_TRAILER_BYTES;
}

void secure_init(void);
/* p (of cls, just taken from a cache) is handed to the program for
 * `size` bytes: its fill is checked, its canary and trailer written. */
void secure_handing_out(void *p, unsigned cls, size_t size);
/* The size the program asked for p (of cls); the block's capacity but the
 * trailer when the trailer was overwritten. */
size_t secure_requested_size(const void *p, unsigned cls);
/* p (of cls, verified and marked free) comes back: its canary and trailer
 * are checked, the rest of it filled. */
void secure_taking_back(void *p, unsigned cls, const char *call);

#endif
