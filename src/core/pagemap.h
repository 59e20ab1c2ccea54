/* A radix map from 4 KiB page to a tagged descriptor pointer, for memory
 * outside the size-class zones: large spans and superblocks that had to be
 * mapped on their own. Reads are lock-free; writers serialise among
 * themselves (each writer owns the pages it writes). */
#ifndef COREALLOC_PAGEMAP_H
#define COREALLOC_PAGEMAP_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/* Entry tags in the low bit: a superblock or a span descriptor. */
#define PAGEMAP_TAG_SPAN ((uintptr_t)1)

void pagemap_init(void);
uintptr_t pagemap_get(uintptr_t addr);
/* Sets every page of [addr, addr + size) to value. False when the map's own
 * memory cannot be had. */
bool pagemap_set_range(uintptr_t addr, size_t size, uintptr_t value);
bool pagemap_set(uintptr_t addr, uintptr_t value);
/* The entries of [addr, addr + size) will not be read until set again (the
 * inside of a free span): the map's own pages that hold only such entries go
 * back to the OS and read as 0. The caller owns the range, as a writer. */
void pagemap_forget_range(uintptr_t addr, size_t size);
size_t pagemap_bytes_mapped(void);

#endif
