#include "core/zone.h"

#include "platform/os.h"

/* Away from where Linux puts executables, the heap and mmap (top-down from
 * 0x7f..); aligned to the region, as the zone arithmetic needs. */
#define ZONES_HINT ((uintptr_t)1 << 44)
_Static_assert(ZONES_HINT % ((uintptr_t)1 << REGION_SHIFT) == 0, "the hint is aligned");

/* A class maps superblocks (with their descriptors and bitmaps) as many at
 * a time as it has mapped already, at least EXTENT_MIN and at most
 * EXTENT_MAX (16 MiB): its address space grows with its use, one mmap per
 * extent, and the extents of a zone merge into one mapping. */
#define EXTENT_MIN 4
#define EXTENT_MAX 64

uintptr_t zone_region_base = ZONE_NO_REGION;
static struct {
    uintptr_t next;   /* index within the zone of the next superblock to take */
    uintptr_t mapped; /* one past the last superblock mapped */
    uintptr_t descriptors_end, bitmaps_end; /* where those areas' mapped pages end */
} zones[SC_COUNT];
static uintptr_t large_next;

/* Each class's superblocks begin at a distance of their own from the zone's
 * base: 256 superblocks (a page of fast entries, four of descriptors) times
 * the class modulo 16, plus a multiple of 37 modulo 256 superblocks (at
 * most 1 GiB of the zone, address space never mapped). Zones are all
 * aligned alike: without it, the live pages of every class, and the pages
 * of their fast entries, sit at the same offsets in their zones and contend
 * for the same TLB sets. After a Larson-like churn over 33 classes,
 * reading live blocks at random took 5.4 ns a read without the distance,
 * 3.4 ns with it (rpmalloc's heap: 3.0 ns). */
static uintptr_t first_superblock(unsigned cls)
{
    return ZONE_FIRST_SUPERBLOCK + 256u * (cls % 16u) + (cls * 37u) % 256u;
}

static uintptr_t page_down(uintptr_t addr) { return addr & ~(uintptr_t)(OS_PAGE_SIZE - 1); }

static size_t bitmap_stride(unsigned cls)
{
    return (sc_info[cls].blocks + 63) / 64 * sizeof(uint64_t);
}

static uintptr_t bitmap_of(unsigned cls, uintptr_t index)
{
    return zone_base(cls) + ZONE_BITMAPS_OFFSET + index * bitmap_stride(cls);
}

/* The fast entries of every zone, mapped at the hint, or where the kernel
 * finds room for all the zones (a reservation made and dropped at once,
 * to learn where). The region's base, or 0 when neither. */
static uintptr_t place_zones(void)
{
    if (os_map(ZONE_FAST_ENTRIES_BYTES, ZONES_HINT))
        return ZONES_HINT;
    void *room = os_reserve_aligned(SMALL_ZONES_SIZE, (uintptr_t)1 << REGION_SHIFT);
    if (!room)
        return 0;
    os_unmap(room, SMALL_ZONES_SIZE);
    return os_map(ZONE_FAST_ENTRIES_BYTES, (uintptr_t)room) ? (uintptr_t)room : 0;
}

bool zone_init(bool enabled)
{
    if (!enabled || os_under_valgrind())
        return false;
    uintptr_t base = place_zones();
    if (!base)
        return false;
    __atomic_store_n(&zone_region_base, base, __ATOMIC_RELEASE);
    for (unsigned c = 0; c < SC_COUNT; c++) {
        uintptr_t first = first_superblock(c);
        zones[c].next = zones[c].mapped = first;
        zones[c].descriptors_end = page_down(zone_base(c) + ZONE_DESCRIPTORS_OFFSET + first * ZONE_DESCRIPTOR_BYTES);
        zones[c].bitmaps_end = page_down(bitmap_of(c, first));
    }
    large_next = base + SMALL_ZONES_SIZE;
    return true;
}

bool zone_active(void)
{
    return zone_region_base != ZONE_NO_REGION;
}

uint64_t *zone_superblock_bitmap(unsigned cls, uintptr_t start)
{
    return (uint64_t *)bitmap_of(cls, (start - zone_base(cls)) >> SB_SHIFT);
}

/* Maps the pages from *end up to the one holding need - 1, unless mapped
 * already. */
static bool map_up_to(uintptr_t *end, uintptr_t need)
{
    need = page_down(need + OS_PAGE_SIZE - 1);
    if (need <= *end)
        return true;
    if (!os_map(need - *end, *end))
        return false;
    *end = need;
    return true;
}

/* Maps the next n superblocks of a zone with their descriptors and
 * bitmaps. What was mapped stays so when a later part fails. */
static bool map_superblocks(unsigned cls, uintptr_t n)
{
    uintptr_t base = zone_base(cls), end = zones[cls].mapped + n;
    if (!map_up_to(&zones[cls].descriptors_end, base + ZONE_DESCRIPTORS_OFFSET + end * ZONE_DESCRIPTOR_BYTES) ||
        !map_up_to(&zones[cls].bitmaps_end, bitmap_of(cls, end)) ||
        !os_map(n << SB_SHIFT, base + (zones[cls].mapped << SB_SHIFT)))
        return false;
    zones[cls].mapped = end;
    return true;
}

/* The next extent of a zone; near the address-space limit, one superblock
 * may still fit where the extent does not. When neither can be mapped
 * while address space is not short, another mapping is in the way: the
 * zone is full for good, and its class goes on outside it. */
static bool grow(unsigned cls)
{
    uintptr_t have = zones[cls].mapped - first_superblock(cls);
    uintptr_t n = have < EXTENT_MIN ? EXTENT_MIN : have > EXTENT_MAX ? EXTENT_MAX : have;
    if (n > ZONE_SUPERBLOCKS - zones[cls].mapped)
        n = ZONE_SUPERBLOCKS - zones[cls].mapped;
    if (map_superblocks(cls, n) || (n > 1 && map_superblocks(cls, 1)))
        return true;
    if (!os_address_space_short())
        zones[cls].next = ZONE_SUPERBLOCKS;
    return false;
}

uintptr_t zone_take_superblock(unsigned cls)
{
    if (!zone_active() || zones[cls].next >= ZONE_SUPERBLOCKS)
        return 0;
    if (zones[cls].next == zones[cls].mapped && !grow(cls))
        return 0;
    return zone_base(cls) + (zones[cls].next++ << SB_SHIFT);
}

bool zone_take_large(size_t size, uintptr_t *start)
{
    if (!zone_active() || !os_map(size, large_next))
        return false;
    *start = large_next;
    large_next += size;
    return true;
}
