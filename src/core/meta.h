/* Memory for the allocator's own metadata (descriptors, cache slabs):
 * bump-allocated from mappings that are never returned, with per-size free
 * lists for recycling. Never calls malloc. */
#ifndef COREALLOC_META_H
#define COREALLOC_META_H

#include <stddef.h>

/* Zeroed memory of `size` bytes aligned to 64, or NULL. */
void *meta_alloc(size_t size);
/* Returns memory from meta_alloc(size) for reuse by meta_alloc(size). */
void meta_free(void *p, size_t size);
size_t meta_bytes_mapped(void);
void meta_init(void);

#endif
