/* Memory for the replayer's own data, taken from mmap so that the allocator
 * under test sees only the replayed requests. */
#ifndef COREALLOC_REPLAY_ARENA_H
#define COREALLOC_REPLAY_ARENA_H

#include <stddef.h>

/* Zeroed memory; exits with a message when the system has none left. */
void *arena_alloc(size_t size);

#endif
