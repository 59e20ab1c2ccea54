/* Address-space zones (PALLOC2's aligned size-class areas): one aligned
 * reservation holds a zone per small size class, then a zone for large
 * spans. For a pointer inside a class zone, the class is arithmetic on the
 * address and the superblock descriptor sits at a computed address in the
 * zone's first pages. Without the reservation, the base is a sentinel that
 * no user pointer can match and every lookup falls to the page map. */
#ifndef COREALLOC_ZONE_H
#define COREALLOC_ZONE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "core/sizeclass.h"
#include "platform/compiler.h"

#define ZONE_SHIFT 36 /* 64 GiB per size class */
#define ZONE_SIZE ((uintptr_t)1 << ZONE_SHIFT)
#define REGION_SHIFT 43 /* 8 TiB: 73 class zones, the rest for large spans */
#define REGION_SIZE ((uintptr_t)1 << REGION_SHIFT)
#define SMALL_ZONES_SIZE ((uintptr_t)SC_COUNT << ZONE_SHIFT)
#define ZONE_NO_REGION ((uintptr_t)1 << 63) /* not a user address */
/* A zone starts with a descriptor of this size per superblock (struct
 * superblock asserts it fits), then a 32-bit fast bound per superblock
 * (see sb_zone_free_fast: apart, so the free fast path's load finds 16
 * superblocks' bounds in a cache line), then the superblocks' bitmaps
 * (zone.c), then the superblocks. The superblock slots those areas
 * overlap are never used: the fast bounds of the two just below the first
 * superblock hold the class's start multiplier instead (sc_start_key), in
 * the cache line of the first superblocks' bounds, where the free fast
 * path finds it from the address alone. */
#define ZONE_DESCRIPTOR_BYTES 64
#define ZONE_SUPERBLOCKS (ZONE_SIZE >> SB_SHIFT)
#define ZONE_FAST_BOUNDS_OFFSET (ZONE_SUPERBLOCKS * ZONE_DESCRIPTOR_BYTES)
#define ZONE_FAST_BOUNDS_AREA (ZONE_SUPERBLOCKS * sizeof(uint32_t))
#define ZONE_FIRST_SUPERBLOCK                                                                  \
    ((ZONE_FAST_BOUNDS_OFFSET + ZONE_FAST_BOUNDS_AREA + ZONE_SUPERBLOCKS * SB_BITMAP_BYTES) / SB_SIZE)
#define ZONE_START_MULT_OFFSET (ZONE_FAST_BOUNDS_OFFSET + (ZONE_FIRST_SUPERBLOCK - 2) * sizeof(uint32_t))
_Static_assert((ZONE_FAST_BOUNDS_OFFSET + ZONE_FAST_BOUNDS_AREA + ZONE_SUPERBLOCKS * SB_BITMAP_BYTES) % SB_SIZE ==
                       0 &&
                   ZONE_START_MULT_OFFSET % sizeof(uint64_t) == 0,
               "superblocks stay aligned; the multiplier is a word");

extern INTERNAL_DATA uintptr_t zone_region_base;

/* Reserves the region (unless disabled). Returns true when zones are on. */
bool zone_init(bool enabled);
bool zone_active(void);

/* True when addr lies in a size-class zone; *cls is its class. */
static inline bool zone_class_of(uintptr_t addr, unsigned *cls)
{
    uintptr_t off = addr - zone_region_base;
    if (off >= SMALL_ZONES_SIZE)
        return false;
    *cls = (unsigned)(off >> ZONE_SHIFT);
    return true;
}

static inline uintptr_t zone_base(unsigned cls)
{
    return zone_region_base + ((uintptr_t)cls << ZONE_SHIFT);
}

/* The descriptor slot of the zone superblock holding addr (used or not),
 * for an addr inside a class zone: arithmetic on addr alone, as zones are
 * aligned to their size. */
static inline void *zone_descriptor_slot(uintptr_t addr)
{
    _Static_assert(ZONE_DESCRIPTOR_BYTES == 1 << 6, "the shift below");
    uintptr_t base = addr & ~(ZONE_SIZE - 1);
    uintptr_t index_bytes = (addr >> (SB_SHIFT - 6)) & (((ZONE_SIZE - 1) >> SB_SHIFT) << 6);
    return (void *)(base + index_bytes);
}

/* The fast bound of the zone superblock holding addr (used or not), and
 * the start multiplier of the class, for an addr inside a class zone (the
 * multiplier reads 0 until the zone's first superblocks are committed). */
static inline uint32_t *zone_fast_bound_slot(uintptr_t addr)
{
    uintptr_t base = addr >> ZONE_SHIFT << ZONE_SHIFT;
    uintptr_t index_bytes = (addr >> (SB_SHIFT - 2)) & (((ZONE_SIZE - 1) >> SB_SHIFT) << 2);
    return (uint32_t *)(base + ZONE_FAST_BOUNDS_OFFSET + index_bytes);
}
static inline uint64_t *zone_start_mult_slot(uintptr_t addr)
{
    return (uint64_t *)((addr >> ZONE_SHIFT << ZONE_SHIFT) + ZONE_START_MULT_OFFSET);
}

/* Address of the next never-used superblock of the class's zone, or 0 when
 * the zone is full (or absent). Caller holds the class lock. */
uintptr_t zone_take_superblock(unsigned cls);
/* Where the bitmap of the zone superblock at start lives. */
uint64_t *zone_superblock_bitmap(unsigned cls, uintptr_t start);
/* Address space for large spans inside the region: [start, start + size).
 * Returns false when the large zone is exhausted (or absent). Caller holds
 * the page heap's lock, which serialises every taker. */
bool zone_take_large(size_t size, uintptr_t *start);

#endif
