/* Address-space zones (PALLOC2's aligned size-class areas), interleaved:
 * the region's rows each hold a tile of every small size class side by
 * side (a tile: ZONE_TILE_SUPERBLOCKS superblocks of one class), then
 * comes the address space of large spans. For a pointer inside the rows,
 * the class is arithmetic on the address (the tile's column) and the
 * superblock descriptor sits at a computed address. Each class takes its
 * rows in order, so the first superblocks of every class lie within one
 * row: they share page tables (a page walk's upper levels) and their fast
 * entries and descriptors share pages, where a zone per class put each
 * class's pages 16 GiB from the next one's. Reading random lines of 16
 * pages in each of 60 classes took 3.5 ns a read with classes 16 GiB or
 * 1 GiB apart, 2.0 ns with them 2 MiB apart (one page of page-directory
 * entries for all). Nothing is reserved: the fast entries and every class's
 * first tile are mapped at start-up, the rest (tiles, descriptors, bitmaps)
 * as the classes need it, so the address space held grows with use.
 * Without zones the base is a sentinel that no user pointer can match and
 * every lookup falls to the page map. */
#ifndef COREALLOC_ZONE_H
#define COREALLOC_ZONE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "core/sizeclass.h"
#include "platform/compiler.h"

#define ZONE_TILE_SHIFT 21 /* a tile: 2 MiB, eight superblocks of one class */
#define ZONE_TILE_SUPERBLOCKS ((uintptr_t)1 << (ZONE_TILE_SHIFT - SB_SHIFT))
#define ZONE_ROW_TILES 128u /* a row: a tile per class (the columns past SC_COUNT unused) */
#define ZONE_ROW_SHIFT (ZONE_TILE_SHIFT + 7)
_Static_assert(ZONE_ROW_TILES == 1u << (ZONE_ROW_SHIFT - ZONE_TILE_SHIFT) && SC_COUNT <= ZONE_ROW_TILES,
               "a tile per class in a row");
/* The rows: 2 TiB, 8192 rows, 16 GiB for each class. */
#define ZONE_ROWS_SHIFT 41
#define ZONE_ROWS_SIZE ((uintptr_t)1 << ZONE_ROWS_SHIFT)
#define ZONE_TILES (ZONE_ROWS_SIZE >> ZONE_TILE_SHIFT)
#define ZONE_ROWS (ZONE_ROWS_SIZE >> ZONE_ROW_SHIFT)
/* The region is aligned to twice the rows (the second half is for large
 * spans), so a pointer's bits below REGION_SHIFT are its offset in it:
 * masked, they index the fast entries from the region's base. */
#define REGION_SHIFT (ZONE_ROWS_SHIFT + 1)
#define ZONE_NO_REGION ((uintptr_t)1 << 63) /* not a user address */
/* The region starts with the fast entries: a 16-byte entry per superblock
 * slot of the rows, in address order (its class's start multiplier and
 * its bound, see sb_zone_free_fast: side by side, so the free fast path
 * finds both in one cache line, four superblocks' entries to a line).
 * They are mapped whole at start-up (one mapping): the free fast path
 * reads the entry of any address that passes its range check. Then come
 * the descriptors, ZONE_DESCRIPTOR_BYTES per slot in the same order,
 * mapped for runs of rows as rows come into use (struct superblock asserts
 * it fits), then an area of superblock bitmaps per class (but for its
 * first superblocks': those lie in the first slot of its first tile, see
 * zone.c). Rows from ZONE_FIRST_ROW on hold superblocks; the slots the
 * areas before overlap are never used. */
#define ZONE_DESCRIPTOR_BYTES 64
#define ZONE_SLOTS (ZONE_ROWS_SIZE >> SB_SHIFT)
#define ZONE_CLASS_SUPERBLOCKS (ZONE_SLOTS / ZONE_ROW_TILES) /* a class's slots, used or not */
struct zone_fast_entry {
    uint64_t start_mult; /* sc_start_mult of the slot's class (0 until a superblock is formatted there) */
    uint32_t bound;      /* start keys below it are blocks handed out */
    uint32_t local_ids;  /* bit id % 32 set: a free on the CPU of that id stays in its
                          * cache (sb_set_cutter); read only past the bound */
};
#define ZONE_LOCAL_ANY UINT32_MAX
#define ZONE_FAST_ENTRY_SHIFT 4
#define ZONE_FAST_ENTRIES_BYTES (ZONE_SLOTS << ZONE_FAST_ENTRY_SHIFT)
#define ZONE_DESCRIPTORS_OFFSET ZONE_FAST_ENTRIES_BYTES
#define ZONE_BITMAPS_OFFSET (ZONE_DESCRIPTORS_OFFSET + ZONE_SLOTS * ZONE_DESCRIPTOR_BYTES)
#define ZONE_CLASS_BITMAPS_BYTES (ZONE_CLASS_SUPERBLOCKS * SB_BITMAP_BYTES)
#define ZONE_FIRST_ROW \
    ((ZONE_BITMAPS_OFFSET + SC_COUNT * ZONE_CLASS_BITMAPS_BYTES + ((uintptr_t)1 << ZONE_ROW_SHIFT) - 1) >> ZONE_ROW_SHIFT)
_Static_assert(sizeof(struct zone_fast_entry) == 1 << ZONE_FAST_ENTRY_SHIFT && ZONE_FIRST_ROW < ZONE_ROWS / 64,
               "the entry's shift; the areas before the first row leave rows to the classes");

extern INTERNAL_DATA uintptr_t zone_region_base;

/* Places the zones and maps their fast entries (unless disabled). Returns
 * true when zones are on. */
bool zone_init(bool enabled);
bool zone_active(void);

/* The class of an addr known to lie in a class's tile. */
static inline unsigned zone_class_at(uintptr_t addr)
{
    return (unsigned)((addr - zone_region_base) >> ZONE_TILE_SHIFT) & (ZONE_ROW_TILES - 1);
}

/* True when addr lies in a size class's tile (used or not); *cls is its
 * class. */
static inline bool zone_class_of(uintptr_t addr, unsigned *cls)
{
    if (addr - zone_region_base >= ZONE_ROWS_SIZE || zone_class_at(addr) >= SC_COUNT)
        return false;
    *cls = zone_class_at(addr);
    return true;
}

/* The fast entry of the zone superblock slot holding addr (used or not),
 * for an addr inside the rows. */
static inline struct zone_fast_entry *zone_fast_entry_of(uintptr_t addr)
{
    uintptr_t index_bytes = (addr >> (SB_SHIFT - ZONE_FAST_ENTRY_SHIFT)) & ((ZONE_SLOTS - 1) << ZONE_FAST_ENTRY_SHIFT);
    return (struct zone_fast_entry *)(zone_region_base + index_bytes);
}

/* The descriptor slot of the zone superblock holding addr, for an addr in
 * a superblock its class has taken. */
void *zone_descriptor_slot(uintptr_t addr);
/* The descriptor of the zone superblock holding addr, for an addr inside
 * a class's tile, or NULL when no superblock ever had that slot (whose
 * descriptor need not be mapped): the slot's fast entry, always mapped,
 * gets its class's multiplier when its superblock is first formatted, and
 * keeps it; the slots of the areas before the first row never had one. */
void *zone_descriptor_of(uintptr_t addr);

/* Address of the next never-used superblock of the class's tiles, mapped
 * with its descriptor and bitmap, or 0 when they are full (or absent)
 * or cannot grow now (the address-space limit, or another mapping in the
 * way: then for good). Caller holds the class lock. */
uintptr_t zone_take_superblock(unsigned cls);
/* Where the bitmap of the zone superblock at start lives. */
uint64_t *zone_superblock_bitmap(uintptr_t start);
/* Address space for large spans, mapped, right after the last taken (so
 * the last span can grow in place): [start, start + size). Returns false
 * when it cannot be mapped there (or zones are off). Caller holds the page
 * heap's lock, which serialises every taker. */
bool zone_take_large(size_t size, uintptr_t *start);
/* Whether addr lies in the address space for large spans taken so far
 * (caller holds the page heap's lock, as takers do). */
bool zone_large_taken(uintptr_t addr);

#endif
