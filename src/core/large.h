/* Large and huge blocks: page-granular spans from a page heap with best
 * fit and coalescing, in the region's large zone (or in mappings of their
 * own without it). Every page of a block in use maps to its span, so the
 * start and size of the block holding any interior pointer are O(1). Freed
 * blocks stay resident for reuse until they have been free a purge delay,
 * within a budget: RETAIN_BYTES plus the most the program had in use lately. */
#ifndef COREALLOC_LARGE_H
#define COREALLOC_LARGE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "platform/os.h"

struct span;

void large_init(void);
/* A block of at least size bytes aligned to align (a power of two). When
 * *zeroed is set on return the memory is known to read as zero. */
void *large_alloc(size_t size, size_t align, bool *zeroed);
/* The span in use that contains addr, or NULL. */
struct span *large_span_of(uintptr_t addr);
/* Whether addr is a page inside a free span: where a block was, most
 * likely, so a free of it is a double free. A search of every free span:
 * for reporting misuse only. */
bool large_is_free_page(uintptr_t addr);
uintptr_t large_span_start(const struct span *s);
size_t large_span_size(const struct span *s);
/* Frees the block: it stays resident for reuse, within the budget. */
void large_free(struct span *s);
/* Resizes in place (shrink, or grow into free space behind it) or, for
 * blocks past the huge threshold, moves the pages with mremap. Returns the
 * block's address, or NULL when the caller has to allocate and copy. */
void *large_resize(struct span *s, size_t size);
/* Gives free spans unchanged since before older_than_ns back to the OS
 * (with OS_PURGE_DONTNEED, lazily freed ones too), and whatever the budget
 * no longer allows. Returns bytes. */
size_t large_trim(uint64_t older_than_ns, enum os_purge_kind kind);
/* Makes way for bytes of small-block memory about to become resident:
 * the oldest resident free spans idle for half a purge delay go back to
 * the OS until that many bytes did. Free memory kept for reuse is one
 * budget for the whole heap, so a span that has waited a while for a large
 * block stands aside when the size classes grow instead (they cannot use
 * it); one freed just now is likely the program's next block. Returns
 * bytes. */
size_t large_give_way(size_t bytes);
/* Blocks of at least bytes go back to the OS as they are freed, as glibc
 * unmaps the blocks it mapped past M_MMAP_THRESHOLD; none by default. */
void large_set_release_threshold(size_t bytes);

struct large_stats {
    uint64_t spans_in_use, bytes_in_use;
    uint64_t bytes_free_resident, bytes_free_lazy, bytes_free_released; /* free spans */
    uint64_t mremap_moves, in_place_grows;
};
void large_stats(struct large_stats *out);

#endif
