#include "core/superblock.h"

#include <string.h>

#include "core/block_mark.h"
#include "core/counters.h"
#include "core/footprint.h"
#include "core/large.h"
#include "core/meta.h"
#include "core/pagemap.h"
#include "core/zone.h"
#include "platform/debug.h"
#include "platform/lock.h"
#include "platform/options.h"
#include "platform/os.h"
#include "platform/random.h"

/* Superblocks mapped on their own come in aligned chunks of this many. */
#define CHUNK_SUPERBLOCKS 16

/* Empty superblocks retained per class (zone superblocks stay in their
 * zone), and a shared pool of empty chunk superblocks that any class may
 * reformat. */
static struct superblock *class_empty[SC_COUNT];
/* How many of each class's empty superblocks are resident (written under
 * the class lock, read by other classes' cuts: sb_class_retains). */
static uint32_t class_resident_empties[SC_COUNT];
static struct superblock *chunk_pool;
static lock_t chunk_lock = LOCK_INIT;
static size_t retained_bytes;
static size_t retain_limit = (size_t)32 << 20;

void sb_init(void)
{
    lock_register_for_fork(&chunk_lock, LOCK_RANK_CHUNKS);
}

uint64_t *sb_bitmap(const struct superblock *sb)
{
    return sb->zoned ? zone_superblock_bitmap(sb->start) : (uint64_t *)(sb + 1);
}

struct superblock *sb_of(uintptr_t addr)
{
    unsigned cls;
    if (zone_class_of(addr, &cls))
        return zone_descriptor_of(addr);
    uintptr_t entry = pagemap_get(addr);
    if (entry && !(entry & PAGEMAP_TAG_SPAN))
        return (struct superblock *)entry;
    return NULL;
}

enum block_state sb_block_state(uintptr_t addr, unsigned cls)
{
    unsigned zone_cls;
    struct superblock *sb;
    if (zone_class_of(addr, &zone_cls)) {
        if (zone_cls != cls)
            return BLOCK_NO_SUPERBLOCK;
        sb = zone_descriptor_of(addr);
    } else {
        sb = sb_of(addr);
    }
    uintptr_t start = sb ? __atomic_load_n(&sb->start, __ATOMIC_ACQUIRE) : 0;
    if (!start || __atomic_load_n(&sb->cls, __ATOMIC_RELAXED) != cls || addr - start >= SB_SIZE)
        return BLOCK_NO_SUPERBLOCK;
    uint64_t offset = addr - start, index = sc_block_index(cls, offset);
    if (index * sc_info[cls].size != offset || index >= sc_info[cls].blocks)
        return BLOCK_NOT_A_START;
    if (index >= __atomic_load_n(&sb->carved, __ATOMIC_RELAXED) ||
        __atomic_load_n(&sb_bitmap(sb)[index / 64], __ATOMIC_RELAXED) & ((uint64_t)1 << (index % 64)))
        return BLOCK_IN_SUPERBLOCK;
    return BLOCK_HANDED_OUT;
}

/* Blocks the free fast path may admit: those below carved that lie below
 * the lowest page given back (a purged page reads zero, so its blocks lost
 * their marks; a free of one gets the closer look, which finds it in the
 * superblock). */
static uint32_t marked_below(const struct superblock *sb)
{
    if (!sb->holes)
        return sb->carved;
    uint64_t first_lost = ((uint64_t)__builtin_ctzll(sb->holes) << OS_PAGE_SHIFT) / sc_info[sb->cls].size;
    return first_lost < sb->carved ? (uint32_t)first_lost : sb->carved;
}

/* The bound sb_zone_free_fast reads: recomputed whenever carved or holes
 * change, and 0 while not in use. Zone superblocks only (the fast path
 * knows no other). */
static void set_fast_bound(struct superblock *sb, bool in_use)
{
    if (!sb->zoned)
        return;
    /* Secure mode: 0 for good, every free gets the closer look. */
    uint32_t bound = in_use && !opt.secure ? marked_below(sb) * sc_info[sb->cls].start_step : 0;
    struct zone_fast_entry *entry = zone_fast_entry_of(sb->start);
    entry->start_mult = sc_start_mult[sb->cls]; /* before the bound admits a free */
    __atomic_store_n(&entry->bound, bound, __ATOMIC_RELEASE);
}

static bool foreign_frees_routed;

void sb_route_foreign_frees(void)
{
    __atomic_store_n(&foreign_frees_routed, true, __ATOMIC_RELAXED);
}

static void set_local_ids(struct superblock *sb, uint32_t ids)
{
    if (sb->zoned)
        __atomic_store_n(&zone_fast_entry_of(sb->start)->local_ids, ids, __ATOMIC_RELAXED);
}

void sb_set_cutter(struct superblock *sb, unsigned lane)
{
    sb->cut_by = (uint16_t)(lane + 1u);
    if (sb->cls < SC_LINE_SHARING && __atomic_load_n(&foreign_frees_routed, __ATOMIC_RELAXED))
        set_local_ids(sb, (uint32_t)1 << (lane % 32u)); /* a lane is its id modulo a multiple of 32 */
}

/* Bits of blocks past carved (never handed out) stay clear: those blocks
 * are in the superblock without a bit, so a fresh superblock's bitmap is
 * not written until a block comes back (in a short-lived program, often
 * never: its page is not touched). Secure mode takes blocks at random
 * rather than by carving, so every block starts with its bit. */
static void format(struct superblock *sb, unsigned cls)
{
    uint64_t *bitmap = sb_bitmap(sb);
    /* What the last format handed out: zero for a fresh descriptor */
    memset(bitmap, 0, (sb->carved + 63u) / 64u * sizeof(uint64_t));
    if (opt.secure) {
        unsigned blocks = sc_info[cls].blocks;
        memset(bitmap, 0xff, (blocks / 64) * sizeof(uint64_t));
        if (blocks % 64)
            bitmap[blocks / 64] = ((uint64_t)1 << (blocks % 64)) - 1;
    }
    sb->cursor = 0;
    sb->cut_by = 0;
    set_local_ids(sb, ZONE_LOCAL_ANY);
    sb->holes = 0;
    sb->cls = (uint8_t)cls;
    sb->carved = 0;
    sb->used = 0;
    sb->list = SB_LIST_NONE;
    sb->next = sb->prev = NULL;
    set_fast_bound(sb, true);
}

/* Secure mode: the last page of a new superblock becomes a guard (no block
 * reaches it, see sizeclass_init), so a run off the end of the last block
 * faults. False when the kernel refuses. */
static bool guard(uintptr_t start)
{
    return !opt.secure || os_guard((void *)(start + SB_SIZE - OS_PAGE_SIZE), OS_PAGE_SIZE);
}

/* An unmapped superblock's place mapped again (with its guard). False when
 * it cannot be: no address space, or another mapping took the place. */
static bool map_again(struct superblock *sb)
{
    if (!os_map(SB_SIZE, sb->start))
        return false;
    if (!guard(sb->start)) {
        os_purge((void *)sb->start, SB_SIZE, OS_PURGE_UNMAP);
        return false;
    }
    counters_add_mapped(SB_SIZE);
    return true;
}

/* A zone superblock of its class's empty list became, or stopped being,
 * resident. Class lock held. */
static void count_resident_empty(const struct superblock *sb, int change)
{
    if (sb->zoned)
        __atomic_store_n(&class_resident_empties[sb->cls], class_resident_empties[sb->cls] + (uint32_t)change,
                         __ATOMIC_RELAXED);
}

/* An empty superblock about to be formatted: its pages count as resident
 * again. False when the memory limit does not allow it, or an unmapped one
 * cannot be mapped again (it stays unmapped). */
static bool make_resident(struct superblock *sb)
{
    if (sb->residency == SB_RESIDENT) {
        __atomic_fetch_sub(&retained_bytes, SB_SIZE, __ATOMIC_RELAXED);
        count_resident_empty(sb, -1);
        return true;
    }
    if (!footprint_charge(SB_SIZE))
        return false;
    if (sb->residency == SB_UNMAPPED && !map_again(sb)) {
        footprint_uncharge(SB_SIZE);
        return false;
    }
    if (sb->residency == SB_LAZY)
        footprint_add_lazy(-(ptrdiff_t)SB_SIZE);
    sb->residency = SB_RESIDENT;
    return true;
}

/* Unmaps an empty superblock. A zone superblock keeps its place, mapped
 * again when reused; one outside the zones is forgotten by the page map
 * first (the kernel may hand its place to the next mapping) and leaves
 * (gone_for_good). False when the kernel refuses. */
static bool unmap(struct superblock *sb)
{
    if (!sb->zoned)
        pagemap_set_range(sb->start, SB_SIZE, 0); /* its leaves exist: cannot fail */
    if (!os_purge((void *)sb->start, SB_SIZE, OS_PURGE_UNMAP)) {
        if (!sb->zoned)
            pagemap_set_range(sb->start, SB_SIZE, (uintptr_t)sb);
        return false;
    }
    counters_add_mapped(-(ptrdiff_t)SB_SIZE);
    sb->residency = SB_UNMAPPED;
    return true;
}

/* A superblock outside the zones that purge unmapped: its descriptor and
 * bitmap go back to the metadata. True when it did. */
static bool gone_for_good(struct superblock *sb)
{
    if (sb->zoned || sb->residency != SB_UNMAPPED)
        return false;
    meta_free(sb, sizeof *sb + SB_BITMAP_BYTES);
    return true;
}

/* Returns an empty superblock's pages to the OS: with OS_PURGE_UNMAP its
 * address space too (a purged one's included), or only its pages where the
 * kernel will not split the mapping (vm.max_map_count). */
static size_t purge(struct superblock *sb, enum os_purge_kind kind)
{
    size_t released = 0;
    if (sb->residency == SB_RESIDENT) {
        __atomic_fetch_sub(&retained_bytes, SB_SIZE, __ATOMIC_RELAXED);
        count_resident_empty(sb, -1);
        footprint_uncharge(SB_SIZE);
        released = SB_SIZE;
    } else if (sb->residency == SB_LAZY && kind != OS_PURGE_FREE) {
        footprint_add_lazy(-(ptrdiff_t)SB_SIZE);
        released = SB_SIZE; /* the lazy pages go now, not when the kernel wants them */
    } else if (sb->residency != SB_PURGED || kind != OS_PURGE_UNMAP) {
        return 0;
    }
    if (kind != OS_PURGE_UNMAP || !unmap(sb)) {
        kind = kind == OS_PURGE_UNMAP ? OS_PURGE_DONTNEED : kind;
        os_purge((void *)sb->start, SB_SIZE, kind);
        sb->residency = kind == OS_PURGE_FREE ? SB_LAZY : SB_PURGED;
    }
    counters_add_purged(released);
    if (kind == OS_PURGE_FREE)
        footprint_add_lazy((ptrdiff_t)SB_SIZE);
    return released;
}

/* Maps a chunk of superblocks outside the zones and puts them in the pool. */
static bool grow_chunk_pool(void)
{
    char *chunk = os_map_aligned(SB_SIZE * CHUNK_SUPERBLOCKS, SB_SIZE);
    if (!chunk)
        return false;
    counters_add_mapped(SB_SIZE * CHUNK_SUPERBLOCKS);
    for (unsigned i = 0; i < CHUNK_SUPERBLOCKS; i++) {
        /* The bitmap right after: room for any class's, as any may take it. */
        struct superblock *sb = meta_alloc(sizeof *sb + SB_BITMAP_BYTES);
        uintptr_t start = (uintptr_t)chunk + i * SB_SIZE;
        if (!sb || !pagemap_set_range(start, SB_SIZE, (uintptr_t)sb)) {
            /* What could not be described is left unused, never handed out. */
            return i > 0;
        }
        if (!guard(start))
            return i > 0;
        sb->start = start;
        sb->residency = SB_PURGED; /* fresh pages: nothing to give back */
        sb->next = chunk_pool;
        chunk_pool = sb;
    }
    return true;
}

/* Tight mode's pick of a (non-empty) list of empty superblocks: the
 * lowest resident one, memory held already, or else the lowest. */
static struct superblock **lowest_empty(struct superblock **list)
{
    struct superblock **lowest = list, **resident = NULL;
    for (struct superblock **at = list; *at; at = &(*at)->next) {
        if ((*at)->start < (*lowest)->start)
            lowest = at;
        if ((*at)->residency == SB_RESIDENT && (!resident || (*at)->start < (*resident)->start))
            resident = at;
    }
    return resident ? resident : lowest;
}

/* The superblock of a list of empty ones to reuse: the first (the most
 * recently emptied, likely still resident), or tight mode's pick. */
static struct superblock **pick_empty(struct superblock **list)
{
    return opt.tight ? lowest_empty(list) : list;
}

static bool resident_below(struct superblock **list, uintptr_t addr)
{
    struct superblock *sb = *list ? *lowest_empty(list) : NULL;
    return sb && sb->residency == SB_RESIDENT && sb->start < addr;
}

bool sb_acquire_faults(unsigned cls)
{
    if (class_empty[cls])
        return (*pick_empty(&class_empty[cls]))->residency != SB_RESIDENT;
    return zone_active(); /* a fresh zone slot; without zones, the pool every class shares */
}

bool sb_class_retains(unsigned cls)
{
    return __atomic_load_n(&class_resident_empties[cls], __ATOMIC_RELAXED) != 0;
}

bool sb_resident_empty_below(unsigned cls, uintptr_t addr)
{
    /* Where sb_acquire looks: the class's own empty superblocks, or
     * without zones the pool every class shares. */
    if (class_empty[cls] || zone_active())
        return resident_below(&class_empty[cls], addr);
    lock_acquire(&chunk_lock);
    bool below = resident_below(&chunk_pool, addr);
    lock_release(&chunk_lock);
    return below;
}

static struct superblock *take_from_chunk_pool(unsigned cls)
{
    lock_acquire(&chunk_lock);
    if (!chunk_pool && !grow_chunk_pool()) {
        lock_release(&chunk_lock);
        return NULL;
    }
    struct superblock **pick = pick_empty(&chunk_pool), *sb = *pick;
    if (!make_resident(sb)) {
        lock_release(&chunk_lock);
        return NULL;
    }
    *pick = sb->next;
    lock_release(&chunk_lock);
    format(sb, cls); /* reformatted: any class may take a pooled superblock */
    return sb;
}

struct superblock *sb_acquire(unsigned cls)
{
    /* Pages about to become resident make the large heap's idle free spans
     * give way (large_give_way), before the chunk lock (ranked below it). */
    if (class_empty[cls]) {
        struct superblock **pick = pick_empty(&class_empty[cls]), *sb = *pick;
        if (sb->residency != SB_RESIDENT)
            large_give_way(SB_SIZE);
        if (make_resident(sb)) {
            *pick = sb->next;
            format(sb, cls);
            return sb;
        }
        /* At the memory limit; or an unmapped one's place could not be
         * mapped again (no address space, or another mapping took it: it
         * stays, tried again next time), and fresh space may yet be had. */
        if (sb->residency != SB_UNMAPPED)
            return NULL;
    }
    large_give_way(SB_SIZE);
    if (!zone_active())
        return take_from_chunk_pool(cls);
    if (!footprint_charge(SB_SIZE))
        return NULL;
    uintptr_t start = zone_take_superblock(cls);
    if (!start || !guard(start)) {
        footprint_uncharge(SB_SIZE);
        return start ? NULL : take_from_chunk_pool(cls);
    }
    struct superblock *sb = zone_descriptor_slot(start);
    sb->start = start;
    sb->zoned = 1;
    sb->residency = SB_RESIDENT;
    counters_add_mapped(SB_SIZE);
    format(sb, cls);
    return sb;
}

void sb_release_empty(struct superblock *sb)
{
    CA_ASSERT(sb->used == 0 && sb->list != SB_LIST_EMPTY);
    /* Its blocks may lose their marks (purged pages read zero): every free
     * into it gets the closer look, which finds them in the superblock. */
    set_fast_bound(sb, false);
    /* Empty, it is counted whole again: purging it uncharges it whole. */
    if (sb->holes) {
        footprint_recharge((size_t)__builtin_popcountll(sb->holes) << OS_PAGE_SHIFT);
        sb->holes = 0;
    }
    sb->empty_since = (uint32_t)(os_monotonic_ns() >> SB_CLOCK_SHIFT);
    sb->list = SB_LIST_EMPTY;
    sb->residency = SB_RESIDENT;
    size_t retained = __atomic_add_fetch(&retained_bytes, SB_SIZE, __ATOMIC_RELAXED);
    count_resident_empty(sb, 1);
    if (retained > retain_limit || footprint_purge_at_once() || os_address_space_short())
        purge(sb, opt_purge_kind());
    if (gone_for_good(sb))
        return;
    if (sb->zoned) {
        sb->next = class_empty[sb->cls];
        class_empty[sb->cls] = sb;
        return;
    }
    lock_acquire(&chunk_lock);
    sb->next = chunk_pool;
    chunk_pool = sb;
    lock_release(&chunk_lock);
}

/* Bits [bit, bit + count) of a 64-bit mask (a bitmap word, a superblock's pages), count from 1 to 64 - bit. */
static uint64_t bit_range(unsigned bit, unsigned count)
{
    return (~(uint64_t)0 >> (64 - count)) << bit;
}

/* Pages of the superblock that block index overlaps, as a mask. */
static uint64_t block_pages(unsigned cls, uint64_t index)
{
    uint64_t start = index * sc_info[cls].size, end = start + sc_info[cls].size - 1;
    unsigned first = (unsigned)(start >> OS_PAGE_SHIFT), last = (unsigned)(end >> OS_PAGE_SHIFT);
    return bit_range(first, last - first + 1);
}

_Static_assert(SB_SIZE >> OS_PAGE_SHIFT == 64, "one hole bit per page");

/* Blocks taken from pages that went back: those pages count again. */
static void refill_holes(struct superblock *sb, void *const *taken, unsigned n)
{
    uint64_t pages = 0;
    for (unsigned i = 0; i < n; i++)
        pages |= block_pages(sb->cls, sc_block_index(sb->cls, (uintptr_t)taken[i] - sb->start));
    pages &= sb->holes;
    if (pages) {
        sb->holes &= ~pages;
        footprint_recharge((size_t)__builtin_popcountll(pages) << OS_PAGE_SHIFT);
    }
}

/* Secure mode: blocks taken in random order (the next free one at or
 * after a random index), and filled. Class lock held, so per class state. */
static unsigned take_random(struct superblock *sb, void **out, unsigned n)
{
    static uint64_t state[SC_COUNT];
    uint64_t *rng = &state[sb->cls];
    if (!*rng)
        *rng = os_random_seed() | 1;
    const struct sizeclass_info *sc = &sc_info[sb->cls];
    uint64_t *bitmap = sb_bitmap(sb);
    unsigned words = (sc->blocks + 63) / 64, got = 0;
    while (got < n && sb->used + got < sc->blocks) {
        unsigned from = random_below(rng, sc->blocks), w = from / 64;
        uint64_t bits = bitmap[w] & (~(uint64_t)0 << (from % 64));
        while (!bits) {
            w = (w + 1) % words;
            bits = bitmap[w];
        }
        unsigned index = w * 64 + (unsigned)__builtin_ctzll(bits);
        bitmap[w] &= ~((uint64_t)1 << (index % 64));
        out[got] = (void *)(sb->start + (uintptr_t)index * sc->size);
        if (index >= sb->carved)
            sb->carved = (uint16_t)(index + 1);
        if (sb->holes)
            refill_holes(sb, &out[got], 1);
        block_mark_free(out[got]);
        block_fill_free(out[got++], sc->size);
    }
    sb->cursor = 0;
    sb->used = (uint16_t)(sb->used + got);
    return got;
}

unsigned sb_take(struct superblock *sb, void **out, unsigned n)
{
    if (opt.secure)
        return take_random(sb, out, n);
    /* In registers: the marks' stores may alias sb. */
    const uintptr_t start = sb->start, size = sc_info[sb->cls].size, blocks = sc_info[sb->cls].blocks;
    /* Blocks that came back first (they are below carved), then new ones.
     * With none back, the bitmap is not read: its page may never be touched. */
    uint64_t *bitmap = sb_bitmap(sb);
    unsigned carved = sb->carved, words = sb->used < carved ? (carved + 63u) / 64u : 0, got = 0, w = sb->cursor;
    for (; w < words && got < n; w++) {
        uint64_t bits = bitmap[w];
        while (bits && got < n) {
            unsigned index = w * 64 + (unsigned)__builtin_ctzll(bits);
            bits &= bits - 1;
            out[got] = (void *)(start + (uintptr_t)index * size);
            block_mark_free(out[got++]);
        }
        bitmap[w] = bits;
        if (bits)
            break;
    }
    sb->cursor = (uint16_t)w;
    for (; got < n && carved < blocks; carved++) {
        out[got] = (void *)(start + (uintptr_t)carved * size);
        block_mark_free(out[got++]);
    }
    sb->carved = (uint16_t)carved;
    sb->used = (uint16_t)(sb->used + got);
    if (sb->holes)
        refill_holes(sb, out, got);
    set_fast_bound(sb, true);
    return got;
}

/* Whether blocks first..last are all in the superblock. */
static bool all_in(const struct superblock *sb, uint64_t first, uint64_t last)
{
    const uint64_t *bitmap = sb_bitmap(sb);
    if (first >= sb->carved) /* never handed out: in */
        return true;
    if (last >= sb->carved)
        last = (uint64_t)sb->carved - 1;
    for (uint64_t w = first / 64; w <= last / 64; w++) {
        uint64_t mask = ~(uint64_t)0;
        if (w == first / 64)
            mask &= ~(uint64_t)0 << (first % 64);
        if (w == last / 64)
            mask &= ~(uint64_t)0 >> (63 - last % 64);
        if ((bitmap[w] & mask) != mask)
            return false;
    }
    return true;
}

/* Purges those of the candidate pages whose blocks are all in the
 * superblock, and marks them as holes. */
static size_t purge_free_pages(struct superblock *sb, uint64_t candidates)
{
    const struct sizeclass_info *sc = &sc_info[sb->cls];
    uint64_t fresh = 0;
    for (uint64_t left = candidates & ~sb->holes; left; left &= left - 1) {
        unsigned p = (unsigned)__builtin_ctzll(left);
        uint64_t first = ((uint64_t)p << OS_PAGE_SHIFT) / sc->size;
        uint64_t last = ((((uint64_t)p + 1) << OS_PAGE_SHIFT) - 1) / sc->size;
        if (last >= sc->blocks)
            last = sc->blocks - 1; /* the tail past the last block */
        if (all_in(sb, first, last))
            fresh |= (uint64_t)1 << p;
    }
    for (uint64_t left = fresh; left;) {
        unsigned p = (unsigned)__builtin_ctzll(left);
        uint64_t rest = ~(left >> p);
        unsigned run = rest ? (unsigned)__builtin_ctzll(rest) : 64; /* pages in a row from p */
        os_purge((void *)(sb->start + ((uintptr_t)p << OS_PAGE_SHIFT)), (size_t)run << OS_PAGE_SHIFT,
                 OS_PURGE_DONTNEED);
        left &= ~bit_range(p, run);
    }
    sb->holes |= fresh;
    set_fast_bound(sb, true);
    size_t released = (size_t)__builtin_popcountll(fresh) << OS_PAGE_SHIFT;
    if (released) {
        footprint_uncharge(released);
        counters_add_purged(released);
    }
    return released;
}

/* Lowers carved to one past the highest block the program or a cache
 * holds: the free blocks above it count as never carved (their bits
 * cleared), so the pages they fill go back as holes above carved, where
 * the free fast path's bound does not shrink for them. Lowest-first taking
 * leaves the free blocks of a partial superblock mostly at its top. */
static void uncarve_free_top(struct superblock *sb)
{
    uint64_t *bitmap = sb_bitmap(sb);
    unsigned w = (sb->carved - 1u) / 64u;
    uint64_t out = ~bitmap[w] & (~(uint64_t)0 >> (63 - (sb->carved - 1u) % 64));
    while (!out) /* used > 0: some block below carved is out */
        out = ~bitmap[--w];
    unsigned carved = w * 64 + 64 - (unsigned)__builtin_clzll(out);
    bitmap[w] &= ~(uint64_t)0 >> (63 - (carved - 1u) % 64);
    memset(&bitmap[w + 1], 0, ((sb->carved + 63u) / 64u - (w + 1)) * sizeof(uint64_t));
    sb->carved = (uint16_t)carved; /* the cursor stays valid: no bit was set */
}

size_t sb_purge_holes(struct superblock *sb)
{
    CA_ASSERT(sb->list == SB_LIST_PARTIAL && sb->used > 0);
    /* Pages past the highest block ever carved were never touched: counted
     * before carved comes down. */
    unsigned pages = (unsigned)(((uint64_t)sb->carved * sc_info[sb->cls].size + OS_PAGE_SIZE - 1) >> OS_PAGE_SHIFT);
    if (!opt.secure) /* secure mode takes blocks at random: its carved is not a frontier */
        uncarve_free_top(sb);
    return purge_free_pages(sb, pages >= 64 ? ~(uint64_t)0 : ((uint64_t)1 << pages) - 1);
}

/* Blocks freed in the order they were handed out (either way) come side
 * by side: how many of objs[0..n) follow objs[0] in a row, step bytes
 * apart (a block's size, up or down), in the word of objs[0] (at bit) and
 * below carved (room blocks from objs[0] on), with their bits in *mask.
 * Out of line: the loop that calls it keeps its registers for blocks that
 * come one by one. */
static __attribute__((noinline)) unsigned neighbours(void *const *objs, unsigned n, intptr_t step, unsigned bit,
                                                     unsigned room, uint64_t *mask)
{
    unsigned most = step > 0 ? (64 - bit < room ? 64 - bit : room) : bit + 1, run = 1;
    most = n < most ? n : most;
    while (run < most && (uintptr_t)objs[run] == (uintptr_t)objs[0] + (uintptr_t)((intptr_t)run * step))
        run++;
    *mask = bit_range(step > 0 ? bit : bit + 1 - run, run);
    return run;
}

unsigned sb_give_run(struct superblock *sb, void *const *objs, unsigned n)
{
    const uint64_t recip = sc_info[sb->cls].recip;
    const uintptr_t start = sb->start, carved = sb->carved, size = sc_info[sb->cls].size;
    uint64_t *bitmap = sb_bitmap(sb);
    /* Neighbours share a bitmap word: it is kept in a register while they
     * come, not stored and loaded again for each. */
    uintptr_t w = UINTPTR_MAX; /* no word loaded yet */
    uint64_t word = 0;
    unsigned cursor = sb->cursor, given = 0;
    while (given < n) {
        uintptr_t addr = (uintptr_t)objs[given];
        /* Tested, not left to the index: the multiplication by the
         * reciprocal wraps for offsets past the superblock, and a block of
         * another superblock of the class a multiple of 128 MiB away (the
         * same tile column, rows apart) would map to a block of this one. */
        if (addr - start >= SB_SIZE)
            break;
        uintptr_t index = sc_index_by_recip(recip, addr - start);
        if (index >= carved)
            break;
        if (index / 64 != w) {
            if (w != UINTPTR_MAX)
                bitmap[w] = word;
            w = index / 64;
            word = bitmap[w];
        }
        unsigned bit = (unsigned)(index % 64), run = 1;
        uint64_t mask = (uint64_t)1 << bit;
        intptr_t step = given + 1 < n ? (intptr_t)((uintptr_t)objs[given + 1] - addr) : 0;
        if (step == (intptr_t)size || step == -(intptr_t)size)
            run = neighbours(objs + given, n - given, step, bit, (unsigned)(carved - index), &mask);
        if (word & mask) { /* one of them is in already: one at a time, to stop at it */
            run = 1;
            mask = (uint64_t)1 << bit;
            if (word & mask)
                break;
        }
        word |= mask;
        given += run;
        if (w < cursor)
            cursor = (unsigned)w;
    }
    if (w != UINTPTR_MAX)
        bitmap[w] = word;
    sb->cursor = (uint16_t)cursor;
    sb->used = (uint16_t)(sb->used - given);
    return given;
}

void sb_gave_run(struct superblock *sb, void *const *objs, unsigned n)
{
    if (!sb->used)
        return;
    uint64_t pages = 0;
    for (unsigned i = 0; i < n; i++)
        pages |= block_pages(sb->cls, sc_block_index(sb->cls, (uintptr_t)objs[i] - sb->start));
    purge_free_pages(sb, pages);
}

static size_t purge_list(struct superblock **head, uint64_t older_than_ns, enum os_purge_kind kind)
{
    size_t released = 0;
    /* Emptied at or before the horizon, on the descriptor's wrapping clock
     * (any horizon from now on takes them all). */
    bool all = older_than_ns >= os_monotonic_ns();
    uint32_t horizon = (uint32_t)(older_than_ns >> SB_CLOCK_SHIFT);
    for (struct superblock **at = head, *sb; (sb = *at);) {
        if (all || (int32_t)(sb->empty_since - horizon) <= 0)
            released += purge(sb, kind);
        struct superblock *next = sb->next;
        if (gone_for_good(sb))
            *at = next;
        else
            at = &sb->next;
    }
    return released;
}

size_t sb_purge_class_empties(unsigned cls, uint64_t older_than_ns, enum os_purge_kind kind)
{
    return purge_list(&class_empty[cls], older_than_ns, kind);
}

size_t sb_purge_pool(uint64_t older_than_ns, enum os_purge_kind kind)
{
    lock_acquire(&chunk_lock);
    size_t released = purge_list(&chunk_pool, older_than_ns, kind);
    lock_release(&chunk_lock);
    return released;
}

size_t sb_bytes_retained(void)
{
    return __atomic_load_n(&retained_bytes, __ATOMIC_RELAXED);
}

void sb_set_retain_limit(size_t bytes)
{
    retain_limit = bytes;
}
