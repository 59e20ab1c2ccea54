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
/* Slot indices (at most ZONE_SUPERBLOCKS) fit 32 bits, so an entry holds
 * its class's geometry too and stays 32 bytes: no page more for start-up
 * to touch (it writes the table whole). */
static struct {
    uint32_t first;         /* slot of the first superblock (first_superblock) */
    uint32_t bitmap_stride; /* bytes of one superblock's bitmap */
    uint32_t next;          /* slot of the next superblock to take */
    uint32_t mapped;        /* one past the last superblock mapped */
    uintptr_t descriptors_end, bitmaps_end; /* where those areas' mapped pages end */
} zones[SC_COUNT];
_Static_assert(ZONE_SUPERBLOCKS <= UINT32_MAX && sizeof zones[0] == 32, "slots fit; an entry is 32 bytes");
static uintptr_t large_next;

/* Each class's superblocks begin at a distance of their own from the zone's
 * base: 256 superblocks (a page of fast entries, four of descriptors) times
 * the class modulo 16, plus a multiple of 37 modulo 224 superblocks (at
 * most 1.3 GiB of the zone, address space never mapped). Zones are all
 * aligned alike: without it, the live pages of every class, and the pages
 * of their fast entries, sit at the same offsets in their zones and contend
 * for the same TLB sets. After a Larson-like churn over 33 classes,
 * reading live blocks at random took 5.4 ns a read without the distance,
 * 3.4 ns with it (rpmalloc's heap: 3.0 ns). The first superblock's fast
 * entry is never among the first FIRST_IN_PAGE of its page, whose place
 * holds the first descriptors (see in_page_descriptors). */
#define FIRST_IN_PAGE 32u
#define ENTRIES_PER_PAGE (OS_PAGE_SIZE / sizeof(struct zone_fast_entry))
static uintptr_t place_first_superblock(unsigned cls)
{
    uintptr_t page_aligned = (ZONE_FIRST_SUPERBLOCK + ENTRIES_PER_PAGE - 1) / ENTRIES_PER_PAGE * ENTRIES_PER_PAGE;
    return page_aligned + ENTRIES_PER_PAGE * (cls % 16u) + FIRST_IN_PAGE +
           (cls * 37u) % (ENTRIES_PER_PAGE - FIRST_IN_PAGE);
}

/* The zone's first superblocks have their descriptors at the start of the
 * page of its first fast entry, where the entries of slots never used
 * would be: as many as fit before that entry (8 to 63). Each descriptor's
 * guard words lie where those entries' bounds would be and read 0, so a
 * free into such a slot still fails the fast check (superblock.h). */
static uintptr_t in_page_descriptors(uintptr_t first)
{
    return first % ENTRIES_PER_PAGE * sizeof(struct zone_fast_entry) / ZONE_DESCRIPTOR_BYTES;
}
_Static_assert(FIRST_IN_PAGE * sizeof(struct zone_fast_entry) % ZONE_DESCRIPTOR_BYTES == 0,
               "descriptors end where entries begin");

static uintptr_t page_down(uintptr_t addr) { return addr & ~(uintptr_t)(OS_PAGE_SIZE - 1); }

/* Computed once (zone_init): a block's return to its superblock asks for
 * both, where the placement's modulo would cost a division each time. */
static uintptr_t first_superblock(unsigned cls)
{
    return zones[cls].first;
}

static size_t bitmap_stride(unsigned cls)
{
    return zones[cls].bitmap_stride;
}

/* The zone's first superblocks keep their bitmaps in the slot just before
 * the first (never a superblock: its fast entry lies among the in-page
 * descriptors, whose guard words fail the free check), mapped with the
 * first extent: a class's first use is one mmap, not one for the bitmaps
 * too, and its metadata and blocks share page tables. As many as the slot
 * holds (64 to 4096); the rest are in the bitmap area. */
static uintptr_t near_bitmaps(unsigned cls)
{
    return SB_SIZE / bitmap_stride(cls);
}

static uintptr_t bitmap_in_area(unsigned cls, uintptr_t index)
{
    return zone_base(cls) + ZONE_BITMAPS_OFFSET + index * bitmap_stride(cls);
}

/* On every block's return to its superblock: the near test multiplies
 * rather than divide by the stride (near_bitmaps). */
static uintptr_t bitmap_of(unsigned cls, uintptr_t index)
{
    uintptr_t first = first_superblock(cls), offset = (index - first) * bitmap_stride(cls);
    if (index >= first && offset < SB_SIZE)
        return zone_base(cls) + ((first - 1) << SB_SHIFT) + offset;
    return bitmap_in_area(cls, index);
}

static uintptr_t descriptor_in_array(unsigned cls, uintptr_t index)
{
    return zone_base(cls) + ZONE_DESCRIPTORS_OFFSET + index * ZONE_DESCRIPTOR_BYTES;
}

static uintptr_t slot_of(uintptr_t addr)
{
    return (addr >> SB_SHIFT) & (ZONE_SUPERBLOCKS - 1);
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
        uintptr_t first = place_first_superblock(c);
        zones[c].first = zones[c].next = zones[c].mapped = (uint32_t)first;
        zones[c].bitmap_stride = (sc_info[c].blocks + 63) / 64 * sizeof(uint64_t);
        zones[c].descriptors_end = page_down(descriptor_in_array(c, first + in_page_descriptors(first)));
        zones[c].bitmaps_end = page_down(bitmap_in_area(c, first + near_bitmaps(c)));
    }
    large_next = base + SMALL_ZONES_SIZE;
    return true;
}

bool zone_active(void)
{
    return zone_region_base != ZONE_NO_REGION;
}

uint64_t *zone_superblock_bitmap(uintptr_t start)
{
    return (uint64_t *)bitmap_of(zone_class_at(start), slot_of(start));
}

/* The descriptor of slot index of the zone whose first superblock is at
 * slot first: in the page of that superblock's fast entry, or the array. */
static void *descriptor_at(unsigned cls, uintptr_t first, uintptr_t index)
{
    if (index - first < in_page_descriptors(first)) {
        uintptr_t page = page_down((uintptr_t)zone_fast_entry_of(zone_base(cls) + (first << SB_SHIFT)));
        return (void *)(page + (index - first) * ZONE_DESCRIPTOR_BYTES);
    }
    return (void *)descriptor_in_array(cls, index);
}

void *zone_descriptor_slot(uintptr_t addr)
{
    unsigned cls = zone_class_at(addr);
    return descriptor_at(cls, first_superblock(cls), slot_of(addr));
}

void *zone_descriptor_of(uintptr_t addr)
{
    unsigned cls = zone_class_at(addr);
    uintptr_t first = first_superblock(cls), index = slot_of(addr);
    if (index < first || !__atomic_load_n(&zone_fast_entry_of(addr)->start_mult, __ATOMIC_ACQUIRE))
        return NULL;
    return descriptor_at(cls, first, index);
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
 * bitmaps (the first extent with the slot of near bitmaps before it).
 * What was mapped stays so when a later part fails. */
static bool map_superblocks(unsigned cls, uintptr_t n)
{
    uintptr_t base = zone_base(cls), end = zones[cls].mapped + n, first = first_superblock(cls);
    uintptr_t from = zones[cls].mapped == first ? first - 1 : zones[cls].mapped;
    bool past_page = end > first + in_page_descriptors(first);
    bool past_near = end > first + near_bitmaps(cls);
    if ((past_page && !map_up_to(&zones[cls].descriptors_end, descriptor_in_array(cls, end))) ||
        (past_near && !map_up_to(&zones[cls].bitmaps_end, bitmap_in_area(cls, end))) ||
        !os_map((end - from) << SB_SHIFT, base + (from << SB_SHIFT)))
        return false;
    zones[cls].mapped = (uint32_t)end;
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
    return zone_base(cls) + ((uintptr_t)zones[cls].next++ << SB_SHIFT);
}

bool zone_take_large(size_t size, uintptr_t *start)
{
    if (!zone_active() || !os_map(size, large_next))
        return false;
    *start = large_next;
    large_next += size;
    return true;
}

bool zone_large_taken(uintptr_t addr)
{
    uintptr_t area = zone_region_base + SMALL_ZONES_SIZE;
    return zone_active() && addr - area < large_next - area;
}
