/* Giving back now everything that can go back: every cache drained into the
 * central layer, every central batch returned to its superblock, every empty
 * superblock, free page and free span purged (malloc_trim, and a memory
 * limit about to refuse an allocation). */
#ifndef COREALLOC_TRIM_H
#define COREALLOC_TRIM_H

#include <stddef.h>

/* Returns the bytes released to the OS. */
size_t trim_all(void);

#endif
