/* Superblocks: SB_SIZE-aligned runs of headerless blocks of one class. The
 * descriptor lives out of band: at a computed address in the zones, or
 * (for superblocks mapped on their own) behind the page map. Which blocks
 * are in the superblock is a bitmap beside it (seed 001's PALLOC): blocks are
 * taken lowest address first, and giving one back touches only the bitmap,
 * never the block, which is usually cold by then. */
#ifndef COREALLOC_SUPERBLOCK_H
#define COREALLOC_SUPERBLOCK_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "core/sizeclass.h"
#include "core/zone.h"
#include "platform/os.h"

enum sb_list { SB_LIST_NONE, SB_LIST_PARTIAL, SB_LIST_EMPTY };
/* Where an empty superblock's pages are. Formatted ones are resident. */
enum sb_residency {
    SB_RESIDENT,
    SB_PURGED,
    SB_LAZY,    /* MADV_FREE: until the kernel takes them */
    SB_UNMAPPED /* address space short: mapped again (zeros) when reused */
};

struct superblock {
    struct superblock *next; /* on the class's partial or empty list */
    struct superblock *prev;
    uintptr_t start;
    uint64_t holes;       /* in use: bit i set when page i went back to the OS (all its blocks free) */
    uint32_t empty_since; /* when it was emptied, in units of SB_CLOCK_SHIFT ns (wraps) */
    uint16_t carved; /* one past the highest block handed out (lowered when the free top goes back) */
    uint16_t used;   /* blocks outside the superblock (caches, central, user) */
    uint16_t cursor; /* no set bit below this bitmap word */
    uint16_t cut_by; /* 1 + the lane of the CPU that cuts from it (central.c), or 0 */
    uint8_t cls;
    uint8_t list;      /* enum sb_list */
    uint8_t zoned;     /* lives in its class's tiles: the address gives the class */
    uint8_t residency; /* enum sb_residency */
} __attribute__((aligned(ZONE_DESCRIPTOR_BYTES)));
#define SB_CLOCK_SHIFT 20 /* about a millisecond */
_Static_assert(SB_SIZE / SC_MIN_SIZE <= UINT16_MAX && SC_COUNT <= UINT8_MAX, "carved, used and cls fit");
_Static_assert(sizeof(struct superblock) == ZONE_DESCRIPTOR_BYTES, "one cache line; zone arithmetic");

void sb_init(void);
/* The superblock holding addr, or NULL when addr is not in one. */
struct superblock *sb_of(uintptr_t addr);
/* A superblock formatted for cls: a retained empty one, or fresh address
 * space. NULL when out of memory or at the memory limit. Caller holds the
 * class lock. */
struct superblock *sb_acquire(unsigned cls);
/* Whether sb_acquire(cls) would take a superblock whose pages are not
 * resident (fresh address space, or a purged empty one of the class).
 * Caller holds the class lock. */
bool sb_acquire_faults(unsigned cls);
/* Whether cls keeps resident empty superblocks (zoned ones, kept for its
 * own reuse). Racy: a hint for another class, whose caller takes cls's
 * lock before it acts. */
bool sb_class_retains(unsigned cls);
/* Tight mode: whether sb_acquire(cls) would take a resident empty
 * superblock lying below addr (lower free addresses, and no page to fault
 * in). Caller holds the class lock. */
bool sb_resident_empty_below(unsigned cls, uintptr_t addr);
/* A superblock whose blocks have all returned: kept for reuse or purged.
 * Caller holds the class lock (and has unlinked it). */
void sb_release_empty(struct superblock *sb);
/* From when per-CPU caches start: a superblock of a class whose blocks
 * share cache lines (SC_LINE_SHARING) admits into a CPU's cache the frees
 * made on the CPU that cuts from it alone; the fast path sends the others
 * back toward that CPU (frontend/cpucache.c), so that no CPU takes a block
 * whose neighbours are written on another. */
void sb_route_foreign_frees(void);
/* Records that the CPU of lane cuts from sb (cut_by, and the fast entry's
 * local ids). Class lock held. */
void sb_set_cutter(struct superblock *sb, unsigned lane);
/* Which of its blocks (below carved) are in the superblock: in its class's
 * first tile or bitmap area (zone.c), or right after the descriptor of one
 * mapped on its own. */
uint64_t *sb_bitmap(const struct superblock *sb);
/* Takes up to n blocks out of sb into out[], lowest addresses first,
 * marked free (core/block_mark.h). */
unsigned sb_take(struct superblock *sb, void **out, unsigned n);
/* Puts blocks objs[0..n) of sb back, in order, up to the first that is in
 * already (a double free) or lies elsewhere; returns how many went back. */
unsigned sb_give_run(struct superblock *sb, void *const *objs, unsigned n);
static inline bool sb_exhausted(const struct superblock *sb)
{
    return sb->used == sc_info[sb->cls].blocks;
}
/* What a free of addr, said to be of class cls, would find. */
enum block_state {
    BLOCK_HANDED_OUT,    /* a block out of its superblock: in a cache or the program's */
    BLOCK_IN_SUPERBLOCK, /* a block its superblock holds: never handed out, or freed already */
    BLOCK_NOT_A_START,   /* inside a block, or in the tail past the last one */
    BLOCK_NO_SUPERBLOCK, /* where no superblock of the class is */
};
/* Racy reads, without the class lock: exact for a block handed out (its
 * state cannot change under a legitimate free), a best guess for misuse
 * racing with the block's superblock. */
enum block_state sb_block_state(uintptr_t addr, unsigned cls);

/* The free fast path's check, inline: addr, in a class's tile, is the
 * start of a block of a zone superblock in use, among those handed out
 * (below carved), below the lowest page given back. Then a block without
 * the free mark is the program's: every free block there was marked when
 * it was carved or freed, and kept its mark. One cache line, the
 * superblock's fast entry: the class's start multiplier and the bound
 * (start keys below it: that many blocks times start_step while in use,
 * else 0);
 * false sends the free to a closer look (sb_block_state). The fast
 * entries are mapped whole: the entry of a slot no superblock used reads
 * 0. The _at form takes addr's entry (zone_fast_entry_of), for a caller
 * that reads more of it. */
static inline bool sb_zone_free_fast_at(const struct zone_fast_entry *entry, uintptr_t addr)
{
    uint64_t key = (addr & (SB_SIZE - 1)) * entry->start_mult; /* sc_start_key */
    return key < __atomic_load_n(&entry->bound, __ATOMIC_RELAXED);
}
static inline bool sb_zone_free_fast(uintptr_t addr)
{
    return sb_zone_free_fast_at(zone_fast_entry_of(addr), addr);
}

/* Start of the block containing addr (which must lie inside sb). */
static inline uintptr_t sb_block_start(const struct superblock *sb, uintptr_t addr)
{
    uint64_t index = sc_block_index(sb->cls, addr - sb->start);
    return sb->start + index * sc_info[sb->cls].size;
}

/* Purges the empty superblocks of cls emptied before older_than_ns (caller
 * holds the class lock); with OS_PURGE_DONTNEED, lazily freed ones too.
 * Returns bytes released. */
size_t sb_purge_class_empties(unsigned cls, uint64_t older_than_ns, enum os_purge_kind kind);
/* The same for the shared pool of superblocks mapped outside the zones
 * (which any class may reformat). */
size_t sb_purge_pool(uint64_t older_than_ns, enum os_purge_kind kind);
/* Gives back the pages of a partly used superblock whose blocks are all in
 * it (taking a block from such a page brings the page back). Caller holds
 * the class lock. Returns bytes released. */
size_t sb_purge_holes(struct superblock *sb);
/* After sb_give_run(sb, objs, n) when purging is immediate
 * (footprint_purge_at_once: a zero delay, or memory pressure), on a
 * superblock still in use: the pages of those blocks whose blocks are now
 * all free go back at once. Caller holds the class lock. */
void sb_gave_run(struct superblock *sb, void *const *objs, unsigned n);
size_t sb_bytes_retained(void);
void sb_set_retain_limit(size_t bytes);

#endif
