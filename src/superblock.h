/* Superblocks: SB_SIZE-aligned runs of headerless blocks of one class. The
 * descriptor lives out of band: at a computed address in the class zone, or
 * (for superblocks mapped on their own) behind the page map. */
#ifndef COREALLOC_SUPERBLOCK_H
#define COREALLOC_SUPERBLOCK_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "sizeclass.h"

enum sb_list { SB_LIST_NONE, SB_LIST_PARTIAL, SB_LIST_EMPTY };

struct superblock {
    struct superblock *next, *prev; /* on the class's partial or empty list */
    void *free;                     /* returned blocks, linked through word 0 */
    uintptr_t start;
    uint64_t empty_since_ns;
    uint32_t carved; /* blocks cut from the untouched end so far */
    uint32_t used;   /* blocks outside the superblock (caches, central, user) */
    uint16_t cls;
    uint8_t list;    /* enum sb_list */
    uint8_t zoned;   /* lives in its class zone: the address gives the class */
    uint8_t purged;  /* pages returned to the OS while empty */
    uint8_t pad[11];
};
_Static_assert(sizeof(struct superblock) == 64, "one cache line; zone arithmetic");

void sb_init(void);
/* The superblock holding addr, or NULL when addr is not in one. */
struct superblock *sb_of(uintptr_t addr);
/* A superblock formatted for cls: a retained empty one, or fresh address
 * space. NULL when out of memory. Caller holds the class lock. */
struct superblock *sb_acquire(unsigned cls);
/* A superblock whose blocks have all returned: kept for reuse or purged.
 * Caller holds the class lock (and has unlinked it). */
void sb_release_empty(struct superblock *sb);
/* Takes up to n blocks out of sb into out[]. */
unsigned sb_take(struct superblock *sb, void **out, unsigned n);
static inline bool sb_exhausted(const struct superblock *sb)
{
    return !sb->free && sb->carved == sc_info[sb->cls].blocks;
}
/* Start of the block containing addr (which must lie inside sb). */
static inline uintptr_t sb_block_start(const struct superblock *sb, uintptr_t addr)
{
    uint64_t index = sc_block_index(sb->cls, addr - sb->start);
    return sb->start + index * sc_info[sb->cls].size;
}

/* Purges every retained empty superblock of cls (caller holds class lock).
 * Returns bytes released. */
size_t sb_purge_class_empties(unsigned cls, uint64_t older_than_ns);
size_t sb_bytes_retained(void);
void sb_set_retain_limit(size_t bytes);

#endif
