/* Size classes: an 8-byte class, then 16-byte steps up to 128 bytes, then
 * eight classes per power of two (at most 12.5% apart) up to SMALL_MAX,
 * and from 1 KiB up a ninth just above each power of two (1/64 of it past):
 * a page or a buffer with a header of a few words (sqlite's 4104-byte
 * pages, 1032-byte cells) would otherwise waste 11-12% in the next step.
 * Every class size above 8 is a multiple of 16, and power-of-two sizes are
 * classes, so a block of such a class is aligned to its size within its
 * superblock: requests of up to 8 bytes get 8-byte alignment (all an object
 * that small can need), larger ones 16. */
#ifndef COREALLOC_SIZECLASS_H
#define COREALLOC_SIZECLASS_H

#include <stddef.h>
#include <stdint.h>

#include "platform/compiler.h"

#define SC_COUNT 78
#define SMALL_MAX ((size_t)32768)
#define SC_LUT_MAX 1024
/* The smallest class, and the alignment every larger request gets. */
#define SC_MIN_SIZE 8
#define SC_ALIGN 16
/* Most objects moved between a cache and the central layer at once: per-CPU
 * caches move up to SC_BATCH_MAX, per-thread caches (each thread holds a
 * batch of a class at least) up to SC_BATCH_THREAD. */
#define SC_BATCH_MAX 64
#define SC_BATCH_THREAD 32
/* The classes whose blocks are smaller than a cache line (8 to 48 bytes),
 * the first ones: neighbours share lines, so blocks of one line that the
 * program writes on two CPUs make each write cross cores (false sharing). */
#define SC_LINE_SHARING 4
/* Superblocks: aligned runs of blocks of one class. */
#define SB_SHIFT 18
#define SB_SIZE ((size_t)1 << SB_SHIFT)
/* Room for the largest superblock bitmap: a bit per block of the smallest class. */
#define SB_BITMAP_BYTES (SB_SIZE / SC_MIN_SIZE / 8)
/* index = (offset * recip) >> SC_RECIP_SHIFT is exact for offsets < SB_SIZE. */
#define SC_RECIP_SHIFT 40

struct sizeclass_info {
    uint32_t size;     /* block size in bytes */
    uint32_t blocks;   /* blocks in one superblock */
    uint64_t recip;    /* ceil(2^SC_RECIP_SHIFT / size) */
    uint32_t start_step; /* sc_start_mult[cls] * size, mod 2^64 (see sc_start_key) */
    uint16_t batch;    /* objects moved between a cache and the central layer */
    uint16_t limit;    /* most objects one per-thread cache holds */
};

extern INTERNAL_DATA struct sizeclass_info sc_info[SC_COUNT];
/* Per class: floor(2^64 / size) + 1, apart for the free fast path. */
extern INTERNAL_DATA uint64_t sc_start_mult[SC_COUNT];
/* The class of every request size up to SC_LUT_MAX, indexed by the size
 * itself: the malloc fast path looks it up with one load. Past it, every
 * class size is a multiple of 16, so the class of n is that of its 16-byte
 * granule, (n - 1) / 16 (the first SC_LUT_MAX / 16 granules unused). */
extern INTERNAL_DATA uint8_t sc_lut[SC_LUT_MAX + 1];
extern INTERNAL_DATA uint8_t sc_lut_granule[SMALL_MAX / 16];

void sizeclass_init(void);
/* Batches of up to most objects (at most SC_BATCH_MAX; SC_BATCH_THREAD
 * until called): for the front end to set once, before any batch moves. */
void sizeclass_set_batch_max(unsigned most);
/* The batch of cls once the front end sets most (for a layout made before). */
unsigned sizeclass_batch_at_most(unsigned cls, unsigned most);

/* The class of a request of n bytes, n <= SMALL_MAX. Constant time. */
static inline unsigned sc_of(size_t n)
{
    if (__builtin_expect(n <= SC_LUT_MAX, 1))
        return sc_lut[n];
    return sc_lut_granule[(n - 1) / 16];
}

static inline size_t sc_size(unsigned cls) { return sc_info[cls].size; }

/* The start key of an offset inside a superblock, one multiplication
 * (the remainder test of Lemire, Kaser and Kurz): the start of block i has
 * key i * start_step, below SB_SIZE; any other offset, one at least
 * 2^64 / size (far above). So "offset is the start of one of the first n
 * blocks" is key < n * start_step. The multiplier is one above
 * floor(2^64 / size), so that start_step is never 0 (as it would be for a
 * power of two with the usual ceiling). */
static inline uint64_t sc_start_key(unsigned cls, uintptr_t offset)
{
    return offset * sc_start_mult[cls];
}

/* Block index of an offset inside a superblock, from the class's
 * reciprocal (loops over many blocks hold it in a register). */
static inline uint64_t sc_index_by_recip(uint64_t recip, uintptr_t offset)
{
    return (offset * recip) >> SC_RECIP_SHIFT;
}
static inline uint64_t sc_block_index(unsigned cls, uintptr_t offset)
{
    return sc_index_by_recip(sc_info[cls].recip, offset);
}

#endif
