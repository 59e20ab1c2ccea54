/* Where batch nodes come from: aligned chunks of nodes, recycled through
 * lanes of empty nodes (one per CPU, a CPU short of nodes taking another's
 * chains: core/batch.h), whose pages go back to the OS once every node of a
 * chunk is empty again (a burst of frees can park thousands of
 * batches; their nodes should not stay resident after it). */
#ifndef COREALLOC_BATCHPOOL_H
#define COREALLOC_BATCHPOOL_H

#include <stddef.h>

#include "core/batch.h"

/* Nodes come from chunks of this size, aligned to it. */
#define BATCHPOOL_CHUNK_BYTES ((size_t)64 << 10)

void batchpool_init(void);
/* An empty node, or NULL when out of memory. Never blocks on the fast
 * path: the lock is met once per chain of nodes new to the stacks. */
struct batch *batchpool_get(void);
void batchpool_put(struct batch *b);
/* Purges the chunks whose nodes are all empty; returns bytes released.
 * Cheap when no node was put back since the last call. */
size_t batchpool_release(void);
/* Bytes of node chunks not purged. */
size_t batchpool_bytes_resident(void);

#endif
