#include "superblock.h"

#include <string.h>

#include "debug.h"
#include "lock.h"
#include "meta.h"
#include "options.h"
#include "os.h"
#include "pagemap.h"
#include "stats.h"
#include "zone.h"

/* Superblocks mapped on their own come in aligned chunks of this many. */
#define CHUNK_SUPERBLOCKS 16

/* Empty superblocks retained per class (zone superblocks stay in their
 * zone), and a shared pool of empty chunk superblocks that any class may
 * reformat. */
static struct superblock *class_empty[SC_COUNT];
static struct superblock *chunk_pool;
static lock_t chunk_lock = LOCK_INIT;
static size_t retained_bytes;
static size_t retain_limit = (size_t)32 << 20;

void sb_init(void)
{
    lock_register_for_fork(&chunk_lock);
}

/* The descriptor slot of the zone superblock holding addr (used or not). */
static struct superblock *zone_descriptor(unsigned cls, uintptr_t addr)
{
    uintptr_t base = zone_base(cls);
    return (struct superblock *)(base + ((addr - base) >> SB_SHIFT) * sizeof(struct superblock));
}

struct superblock *sb_of(uintptr_t addr)
{
    unsigned cls;
    if (zone_class_of(addr, &cls)) {
        struct superblock *sb = zone_descriptor(cls, addr);
        return sb->start ? sb : NULL; /* never-used superblocks have no start */
    }
    uintptr_t entry = pagemap_get(addr);
    if (entry && !(entry & PAGEMAP_TAG_SPAN))
        return (struct superblock *)entry;
    return NULL;
}

static void format(struct superblock *sb, unsigned cls)
{
    unsigned blocks = sc_info[cls].blocks;
    memset(sb->bitmap, 0xff, (blocks / 64) * sizeof(uint64_t));
    if (blocks % 64)
        sb->bitmap[blocks / 64] = ((uint64_t)1 << (blocks % 64)) - 1;
    sb->cursor = 0;
    sb->cls = (uint16_t)cls;
    sb->carved = 0;
    sb->used = 0;
    sb->list = SB_LIST_NONE;
    sb->next = sb->prev = NULL;
}

static void note_reused(struct superblock *sb)
{
    if (!sb->purged)
        __atomic_fetch_sub(&retained_bytes, SB_SIZE, __ATOMIC_RELAXED);
    sb->purged = 0;
}

/* Maps a chunk of superblocks outside the zones and puts them in the pool. */
static bool grow_chunk_pool(void)
{
    char *chunk = os_map_aligned(SB_SIZE * CHUNK_SUPERBLOCKS, SB_SIZE);
    if (!chunk)
        return false;
    stats_add_mapped(SB_SIZE * CHUNK_SUPERBLOCKS);
    for (unsigned i = 0; i < CHUNK_SUPERBLOCKS; i++) {
        struct superblock *sb = meta_alloc(sizeof *sb);
        uint64_t *bitmap = meta_alloc(SB_BITMAP_BYTES); /* any class may take it */
        uintptr_t start = (uintptr_t)chunk + i * SB_SIZE;
        if (!sb || !bitmap || !pagemap_set_range(start, SB_SIZE, (uintptr_t)sb)) {
            /* What could not be described is left unused, never handed out. */
            return i > 0;
        }
        sb->start = start;
        sb->bitmap = bitmap;
        sb->purged = 1; /* fresh pages: nothing to give back */
        sb->next = chunk_pool;
        chunk_pool = sb;
    }
    return true;
}

static struct superblock *take_from_chunk_pool(unsigned cls)
{
    lock_acquire(&chunk_lock);
    if (!chunk_pool && !grow_chunk_pool()) {
        lock_release(&chunk_lock);
        return NULL;
    }
    struct superblock *sb = chunk_pool;
    chunk_pool = sb->next;
    lock_release(&chunk_lock);
    note_reused(sb);
    format(sb, cls); /* reformatted: any class may take a pooled superblock */
    return sb;
}

struct superblock *sb_acquire(unsigned cls)
{
    struct superblock *sb = class_empty[cls];
    if (sb) {
        class_empty[cls] = sb->next;
        note_reused(sb);
        format(sb, cls);
        return sb;
    }
    uintptr_t start = zone_take_superblock(cls);
    if (start) {
        sb = zone_descriptor(cls, start);
        sb->start = start;
        sb->bitmap = zone_superblock_bitmap(cls, start);
        sb->zoned = 1;
        sb->purged = 1;
        stats_add_mapped(SB_SIZE);
        note_reused(sb);
        format(sb, cls);
        return sb;
    }
    return take_from_chunk_pool(cls);
}

static bool keep_retained(void)
{
    size_t now = __atomic_add_fetch(&retained_bytes, SB_SIZE, __ATOMIC_RELAXED);
    if (now <= retain_limit)
        return true;
    __atomic_fetch_sub(&retained_bytes, SB_SIZE, __ATOMIC_RELAXED);
    return false;
}

void sb_release_empty(struct superblock *sb)
{
    CA_ASSERT(sb->used == 0 && sb->list != SB_LIST_EMPTY);
    sb->empty_since_ns = os_monotonic_ns();
    sb->list = SB_LIST_EMPTY;
    if (keep_retained()) {
        sb->purged = 0;
    } else {
        os_purge((void *)sb->start, SB_SIZE, opt_purge_kind());
        stats_add_purged(SB_SIZE);
        sb->purged = 1;
    }
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

unsigned sb_take(struct superblock *sb, void **out, unsigned n)
{
    const struct sizeclass_info *sc = &sc_info[sb->cls];
    unsigned words = (sc->blocks + 63) / 64, got = 0, w = sb->cursor;
    for (; w < words && got < n; w++) {
        uint64_t bits = sb->bitmap[w];
        while (bits && got < n) {
            unsigned index = w * 64 + (unsigned)__builtin_ctzll(bits);
            bits &= bits - 1;
            out[got++] = (void *)(sb->start + (uintptr_t)index * sc->size);
            if (index >= sb->carved)
                sb->carved = index + 1;
        }
        sb->bitmap[w] = bits;
        if (bits)
            break;
    }
    sb->cursor = (uint16_t)w;
    sb->used += got;
    return got;
}

bool sb_give(struct superblock *sb, void *p)
{
    uint64_t index = sc_block_index(sb->cls, (uintptr_t)p - sb->start);
    uint64_t bit = (uint64_t)1 << (index % 64);
    if (sb->bitmap[index / 64] & bit)
        return false;
    sb->bitmap[index / 64] |= bit;
    if (index / 64 < sb->cursor)
        sb->cursor = (uint16_t)(index / 64);
    sb->used--;
    return true;
}

static size_t purge_list(struct superblock *head, uint64_t older_than_ns)
{
    size_t released = 0;
    for (struct superblock *sb = head; sb; sb = sb->next) {
        if (sb->purged || sb->empty_since_ns > older_than_ns)
            continue;
        os_purge((void *)sb->start, SB_SIZE, opt_purge_kind());
        stats_add_purged(SB_SIZE);
        sb->purged = 1;
        __atomic_fetch_sub(&retained_bytes, SB_SIZE, __ATOMIC_RELAXED);
        released += SB_SIZE;
    }
    return released;
}

size_t sb_purge_class_empties(unsigned cls, uint64_t older_than_ns)
{
    size_t released = purge_list(class_empty[cls], older_than_ns);
    if (cls == 0) { /* the shared pool is purged along with class 0's list */
        lock_acquire(&chunk_lock);
        released += purge_list(chunk_pool, older_than_ns);
        lock_release(&chunk_lock);
    }
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
