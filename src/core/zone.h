/* Address-space zones (PALLOC2's aligned size-class areas): a zone per
 * small size class, side by side, then the address space of large spans.
 * For a pointer inside a class zone, the class is arithmetic on the
 * address and the superblock descriptor sits at a computed address in the
 * zone's first pages. Nothing is reserved: each zone's fast entries are
 * mapped at start-up, the rest (descriptors, bitmaps, superblocks) as the
 * class needs it, so the address space held grows with use. Without zones
 * the base is a sentinel that no user pointer can match and every lookup
 * falls to the page map. */
#ifndef COREALLOC_ZONE_H
#define COREALLOC_ZONE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "core/sizeclass.h"
#include "platform/compiler.h"

#define ZONE_SHIFT 34 /* 16 GiB per size class */
#define ZONE_SIZE ((uintptr_t)1 << ZONE_SHIFT)
#define SMALL_ZONES_SIZE ((uintptr_t)SC_COUNT << ZONE_SHIFT)
/* The zones' region is aligned to room for 128 zones (2 TiB), so a
 * pointer's bits below REGION_SHIFT are its offset in the region: masked,
 * they index the fast entries from the region's base. */
#define REGION_SHIFT (ZONE_SHIFT + 7)
_Static_assert(SC_COUNT <= 1u << (REGION_SHIFT - ZONE_SHIFT), "the zones fit the region's alignment");
#define ZONE_NO_REGION ((uintptr_t)1 << 63) /* not a user address */
/* The region starts (inside zone 0) with the fast entries of every zone: a
 * 16-byte entry per superblock slot, in address order (its class's start
 * multiplier and its bound, see sb_zone_free_fast: side by side, so the
 * free fast path finds both in one cache line, four superblocks' entries
 * to a line). They are mapped whole at start-up (1 MiB a zone, one
 * mapping): the free fast path reads the entry of any address that passes
 * its range check. Each zone then has, at ZONE_DESCRIPTORS_OFFSET, a
 * descriptor of ZONE_DESCRIPTOR_BYTES per superblock (struct superblock
 * asserts it fits), then the superblocks' bitmaps (but for the first
 * superblocks', which are in the slot before the first, see zone.c), then
 * the superblocks, mapped as superblocks are taken. The superblock slots those
 * areas overlap are never used. The first descriptors of a zone are not
 * there but in its fast-entry page, over the entries of the slots before
 * its first superblock (never used): a class that needs a few superblocks
 * touches one page of metadata, not two (zone.c). */
#define ZONE_DESCRIPTOR_BYTES 64
#define ZONE_SUPERBLOCKS (ZONE_SIZE >> SB_SHIFT)
struct zone_fast_entry {
    uint64_t start_mult; /* sc_start_mult of the zone's class (0 until set) */
    uint32_t bound;      /* start keys below it are blocks handed out */
    uint32_t local_ids;  /* bit id % 32 set: a free on the CPU of that id stays in its
                          * cache (sb_set_cutter); read only past the bound */
};
#define ZONE_LOCAL_ANY UINT32_MAX
#define ZONE_FAST_ENTRY_SHIFT 4
#define ZONE_FAST_ENTRIES_BYTES (SMALL_ZONES_SIZE >> (SB_SHIFT - ZONE_FAST_ENTRY_SHIFT))
#define ZONE_DESCRIPTORS_OFFSET ((uintptr_t)1 << (REGION_SHIFT - SB_SHIFT + ZONE_FAST_ENTRY_SHIFT))
#define ZONE_BITMAPS_OFFSET (ZONE_DESCRIPTORS_OFFSET + ZONE_SUPERBLOCKS * ZONE_DESCRIPTOR_BYTES)
#define ZONE_FIRST_SUPERBLOCK ((ZONE_BITMAPS_OFFSET + ZONE_SUPERBLOCKS * SB_BITMAP_BYTES) / SB_SIZE)
_Static_assert((ZONE_BITMAPS_OFFSET + ZONE_SUPERBLOCKS * SB_BITMAP_BYTES) % SB_SIZE == 0 &&
                   sizeof(struct zone_fast_entry) == 1 << ZONE_FAST_ENTRY_SHIFT,
               "superblocks stay aligned; the entry's shift");

extern INTERNAL_DATA uintptr_t zone_region_base;

/* Places the zones and maps their fast entries (unless disabled). Returns
 * true when zones are on. */
bool zone_init(bool enabled);
bool zone_active(void);

/* The class of an addr known to lie in a size-class zone. */
static inline unsigned zone_class_at(uintptr_t addr)
{
    return (unsigned)((addr - zone_region_base) >> ZONE_SHIFT);
}

/* True when addr lies in a size-class zone; *cls is its class. */
static inline bool zone_class_of(uintptr_t addr, unsigned *cls)
{
    if (addr - zone_region_base >= SMALL_ZONES_SIZE)
        return false;
    *cls = zone_class_at(addr);
    return true;
}

static inline uintptr_t zone_base(unsigned cls)
{
    return zone_region_base + ((uintptr_t)cls << ZONE_SHIFT);
}

/* The fast entry of the zone superblock holding addr (used or not), for
 * an addr inside a class zone. */
static inline struct zone_fast_entry *zone_fast_entry_of(uintptr_t addr)
{
    uintptr_t index_bytes = (addr >> (SB_SHIFT - ZONE_FAST_ENTRY_SHIFT)) &
                            (((((uintptr_t)1 << REGION_SHIFT) - 1) >> SB_SHIFT) << ZONE_FAST_ENTRY_SHIFT);
    return (struct zone_fast_entry *)(zone_region_base + index_bytes);
}

/* The descriptor slot of the zone superblock holding addr, for an addr in
 * a superblock its zone has taken. */
void *zone_descriptor_slot(uintptr_t addr);
/* The descriptor of the zone superblock holding addr, for an addr inside
 * a class zone, or NULL when no superblock ever had that slot (whose
 * descriptor need not be mapped): the slot's fast entry, always mapped,
 * gets its class's multiplier when its superblock is first formatted, and
 * keeps it; the slots before the zone's first superblock never had one. */
void *zone_descriptor_of(uintptr_t addr);

/* Address of the next never-used superblock of the class's zone, mapped
 * with its descriptor and bitmap, or 0 when the zone is full (or absent)
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
