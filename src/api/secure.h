/* Secure mode (COREALLOC_SECURE): a trailer in the last word of every
 * block, small or large, holds how far the size the program asked for
 * falls short of it, sealed with a check word, and the bytes between that
 * size and the trailer hold a canary; a free that finds either changed
 * reports a write past the block's size. Free small blocks are filled
 * (core/block_mark.h), and a block whose fill changed while it was free
 * reports a write after free when it is handed out again. The guard pages,
 * the random order and the checked frees live where those things are done
 * (superblock.c, large.c, frontend.c). */
#ifndef COREALLOC_SECURE_H
#define COREALLOC_SECURE_H

#include <stddef.h>

/* The trailer's bytes; a block holds at least two words in secure mode
 * (the free mark, or the program's first bytes, and the trailer). */
#define SECURE_TRAILER_BYTES sizeof(unsigned long long)
/* Bytes of a block a request of `size` needs in secure mode. */
static inline size_t secure_block_bytes(size_t size)
{
    return size < SECURE_TRAILER_BYTES ? 2 * SECURE_TRAILER_BYTES : size + SECURE_TRAILER_BYTES;
}

void secure_init(void);
/* The block p of `capacity` bytes is handed to the program for `size`
 * bytes: its canary and trailer are written. */
void secure_seal(void *p, size_t capacity, size_t size);
/* The size the program asked for p (a block of `capacity` bytes); the
 * capacity but the trailer when the trailer was overwritten. */
size_t secure_requested_size(const void *p, size_t capacity);
/* The block p of `capacity` bytes comes back through `call`: a write past
 * its size (canary or trailer changed) is reported. */
void secure_check_seal(const void *p, size_t capacity, const char *call);
/* A small block p of cls, just taken from a cache, is handed to the
 * program for `size` bytes: its fill is checked, then it is sealed. */
void secure_handing_out(void *p, unsigned cls, size_t size);
/* A small block p of cls comes back: its seal checked, then it is filled. */
void secure_taking_back(void *p, unsigned cls, const char *call);

#endif
