#include "core/zone.h"

#include "platform/lock.h"
#include "platform/os.h"

/* Away from where Linux puts executables, the heap and mmap (top-down from
 * 0x7f..); aligned to the region, as the zone arithmetic needs. */
#define ZONES_HINT ((uintptr_t)1 << 44)
_Static_assert(ZONES_HINT % ((uintptr_t)1 << REGION_SHIFT) == 0, "the hint is aligned");

uintptr_t zone_region_base = ZONE_NO_REGION;

/* A class's superblock slots are numbered down its column: index i lies in
 * row i / ZONE_TILE_SUPERBLOCKS, at i % ZONE_TILE_SUPERBLOCKS in the tile.
 * Every class's first tile is mapped at start-up (one mmap for all of
 * them, side by side in the first row); past it a class maps a tile at a
 * time (one mmap; the tiles of a row merge into one mapping). The first
 * slot of its first tile is never a superblock: it holds the bitmaps of its
 * first superblocks, mapped with them. */
#define FIRST_INDEX (ZONE_FIRST_ROW * ZONE_TILE_SUPERBLOCKS + 1)
/* Each class's first superblock sits at a slot of its own in its first
 * tile: without it, the live pages of every class lie at the same offset
 * in their tiles (the same address bits below 2 MiB) and contend for the
 * same TLB sets. Larson with the standard parameters, one thread, pinned:
 * 0.87x the operations a second of a zone per class (16 GiB apart)
 * without the distance, 0.99x with it. The slots skipped are never used
 * (address space only), nor are their near bitmaps. */
static uintptr_t first_superblock(unsigned cls)
{
    return FIRST_INDEX + cls % (ZONE_TILE_SUPERBLOCKS - 1);
}
static struct {
    uint32_t next;          /* index of the next superblock to take */
    uint32_t mapped;        /* one past the last index mapped */
    uint32_t bitmap_stride; /* bytes of one superblock's bitmap */
    uintptr_t bitmaps_end;  /* where the mapped pages of its bitmap area end */
} zones[SC_COUNT];
_Static_assert(ZONE_CLASS_SUPERBLOCKS <= UINT32_MAX, "indices fit");

/* The descriptors of a row, every class's: mapped for runs of rows, when
 * the first class reaches one, by whichever class gets there first. */
#define ROW_DESCRIPTOR_BYTES ((uintptr_t)ZONE_ROW_TILES * ZONE_TILE_SUPERBLOCKS * ZONE_DESCRIPTOR_BYTES)
#define DESCRIPTOR_RUN_MAX 64u
static lock_t rows_lock = LOCK_INIT;
static uintptr_t descriptors_end; /* where the mapped descriptors end (rows_lock; read with acquire) */
static uintptr_t large_next;

static uintptr_t page_down(uintptr_t addr) { return addr & ~(uintptr_t)(OS_PAGE_SIZE - 1); }

static uintptr_t index_address(unsigned cls, uintptr_t index)
{
    return zone_region_base + ((index / ZONE_TILE_SUPERBLOCKS) << ZONE_ROW_SHIFT) +
           ((uintptr_t)cls << ZONE_TILE_SHIFT) + ((index % ZONE_TILE_SUPERBLOCKS) << SB_SHIFT);
}

static uintptr_t index_of(uintptr_t addr)
{
    uintptr_t offset = addr - zone_region_base;
    return (offset >> ZONE_ROW_SHIFT) * ZONE_TILE_SUPERBLOCKS + ((offset >> SB_SHIFT) & (ZONE_TILE_SUPERBLOCKS - 1));
}

static uintptr_t descriptor_address(uintptr_t addr)
{
    return zone_region_base + ZONE_DESCRIPTORS_OFFSET + ((addr - zone_region_base) >> SB_SHIFT) * ZONE_DESCRIPTOR_BYTES;
}

/* Where the descriptors of row `row` begin. */
static uintptr_t row_descriptors(uintptr_t row)
{
    return zone_region_base + ZONE_DESCRIPTORS_OFFSET + row * ROW_DESCRIPTOR_BYTES;
}

static size_t bitmap_stride(unsigned cls)
{
    return zones[cls].bitmap_stride;
}

/* How many first superblocks keep their bitmaps in the first slot (64 to
 * 4096); the rest are in the class's bitmap area. */
static uintptr_t near_bitmaps(unsigned cls)
{
    return SB_SIZE / bitmap_stride(cls);
}

static uintptr_t bitmap_in_area(unsigned cls, uintptr_t index)
{
    return zone_region_base + ZONE_BITMAPS_OFFSET + cls * ZONE_CLASS_BITMAPS_BYTES + index * bitmap_stride(cls);
}

/* On every block's return to its superblock: the near test multiplies
 * rather than divide by the stride (near_bitmaps). */
static uintptr_t bitmap_of(unsigned cls, uintptr_t index)
{
    uintptr_t offset = (index - FIRST_INDEX) * bitmap_stride(cls);
    if (offset < SB_SIZE)
        return index_address(cls, FIRST_INDEX - 1) + offset;
    return bitmap_in_area(cls, index);
}

/* Start-up maps the fast entries and, right after them, the descriptors
 * of the rows up to the first's (those of the rows before it are never
 * touched): a class's first use then maps its tile alone. */
#define START_MAPPING (ZONE_DESCRIPTORS_OFFSET + (ZONE_FIRST_ROW + 1) * ROW_DESCRIPTOR_BYTES)

/* The start-up mapping at the hint, or where the kernel finds room for
 * all the rows (a reservation made and dropped at once, to learn where).
 * The region's base, or 0 when neither. */
static uintptr_t place_zones(void)
{
    if (os_map(START_MAPPING, ZONES_HINT))
        return ZONES_HINT;
    void *room = os_reserve_aligned(ZONE_ROWS_SIZE, (uintptr_t)1 << REGION_SHIFT);
    if (!room)
        return 0;
    os_unmap(room, ZONE_ROWS_SIZE);
    return os_map(START_MAPPING, (uintptr_t)room) ? (uintptr_t)room : 0;
}

/* Under a tight address-space limit the zones stay off: their fast
 * entries (128 MiB) and a 2 MiB tile for each class in use would take
 * most of it (a Python that runs under `ulimit -v 300000` on glibc failed
 * at start-up with them, and runs without). */
bool zone_init(bool enabled)
{
    size_t limit = os_address_space_limit();
    if (!enabled || os_under_valgrind() || limit < OS_ADDRESS_SPACE_TIGHT)
        return false;
    uintptr_t base = place_zones();
    if (!base)
        return false;
    __atomic_store_n(&zone_region_base, base, __ATOMIC_RELEASE);
    for (unsigned c = 0; c < SC_COUNT; c++) {
        zones[c].next = (uint32_t)first_superblock(c);
        zones[c].mapped = FIRST_INDEX - 1;
        zones[c].bitmap_stride = (sc_info[c].blocks + 63) / 64 * sizeof(uint64_t);
        zones[c].bitmaps_end = page_down(bitmap_in_area(c, FIRST_INDEX + near_bitmaps(c)));
    }
    /* Every class's first tile, side by side in the first row: one mmap
     * for all (an mmap costs a short process more than the pages a class
     * touches) rather than one at each class's first use. Not under an
     * address-space limit, where the 156 MiB of classes a program may never
     * use would count against it; nor when it cannot be had. Each class
     * then maps its own at its first use. */
    uintptr_t first_tiles = index_address(0, FIRST_INDEX - 1);
    if (limit == SIZE_MAX && os_map((uintptr_t)SC_COUNT << ZONE_TILE_SHIFT, first_tiles))
        for (unsigned c = 0; c < SC_COUNT; c++)
            zones[c].mapped = (uint32_t)(FIRST_INDEX - 1 + ZONE_TILE_SUPERBLOCKS);
    descriptors_end = row_descriptors(ZONE_FIRST_ROW + 1);
    large_next = base + ZONE_ROWS_SIZE;
    lock_register_for_fork(&rows_lock, LOCK_RANK_ZONE_ROWS);
    return true;
}

bool zone_active(void)
{
    return zone_region_base != ZONE_NO_REGION;
}

uint64_t *zone_superblock_bitmap(uintptr_t start)
{
    return (uint64_t *)bitmap_of(zone_class_at(start), index_of(start));
}

void *zone_descriptor_slot(uintptr_t addr)
{
    return (void *)descriptor_address(addr);
}

void *zone_descriptor_of(uintptr_t addr)
{
    if (!__atomic_load_n(&zone_fast_entry_of(addr)->start_mult, __ATOMIC_ACQUIRE))
        return NULL;
    return (void *)descriptor_address(addr);
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

/* Makes sure the descriptors of the rows below `rows` are mapped: a run of
 * as many rows as have theirs already (at least one, at most
 * DESCRIPTOR_RUN_MAX), or just those. */
static bool map_descriptor_rows(uintptr_t rows)
{
    uintptr_t need = row_descriptors(rows);
    if (__atomic_load_n(&descriptors_end, __ATOMIC_ACQUIRE) >= need)
        return true;
    lock_acquire(&rows_lock);
    uintptr_t end = descriptors_end, have = (end - row_descriptors(0)) / ROW_DESCRIPTOR_BYTES;
    uintptr_t run = have - ZONE_FIRST_ROW;
    run = run < 1 ? 1 : run > DESCRIPTOR_RUN_MAX ? DESCRIPTOR_RUN_MAX : run;
    uintptr_t want = have + run > ZONE_ROWS ? ZONE_ROWS : have + run;
    bool ok = map_up_to(&end, want > rows ? row_descriptors(want) : need) || map_up_to(&end, need);
    __atomic_store_n(&descriptors_end, end, __ATOMIC_RELEASE);
    lock_release(&rows_lock);
    return ok;
}

/* Maps the class's slots up to index end with their descriptors and
 * bitmaps. What was mapped stays so when a later part fails. */
static bool map_superblocks(unsigned cls, uintptr_t end)
{
    uintptr_t from = zones[cls].mapped;
    if (!map_descriptor_rows((end - 1) / ZONE_TILE_SUPERBLOCKS + 1) ||
        (end > FIRST_INDEX + near_bitmaps(cls) && !map_up_to(&zones[cls].bitmaps_end, bitmap_in_area(cls, end))) ||
        !os_map((end - from) << SB_SHIFT, index_address(cls, from)))
        return false;
    zones[cls].mapped = (uint32_t)end;
    return true;
}

/* The rest of the tile the next superblock is in; near the address-space
 * limit, that superblock alone may still fit where the tile does not. When
 * neither can be mapped while address space is not short, another mapping
 * is in the way: the class's tiles are full for good, and it goes on
 * outside them. */
static bool grow(unsigned cls)
{
    uintptr_t least = (uintptr_t)zones[cls].next + 1;
    uintptr_t tile_end = (zones[cls].mapped / ZONE_TILE_SUPERBLOCKS + 1) * ZONE_TILE_SUPERBLOCKS;
    if (map_superblocks(cls, tile_end) || (tile_end > least && map_superblocks(cls, least)))
        return true;
    if (!os_address_space_short())
        zones[cls].next = ZONE_CLASS_SUPERBLOCKS;
    return false;
}

uintptr_t zone_take_superblock(unsigned cls)
{
    if (!zone_active() || zones[cls].next >= ZONE_CLASS_SUPERBLOCKS)
        return 0;
    if (zones[cls].next >= zones[cls].mapped && !grow(cls))
        return 0;
    return index_address(cls, zones[cls].next++);
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
    uintptr_t area = zone_region_base + ZONE_ROWS_SIZE;
    return zone_active() && addr - area < large_next - area;
}
