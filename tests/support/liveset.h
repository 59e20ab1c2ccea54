/* A concurrent set of block addresses: inserting an address that is already
 * present means the allocator handed the same block out twice. Its memory
 * comes from mmap, so the set never calls the allocator under test. */
#ifndef COREALLOC_TEST_LIVESET_H
#define COREALLOC_TEST_LIVESET_H

#include <stdbool.h>
#include <stddef.h>

#ifdef __cplusplus
extern "C" {
#endif

struct liveset;

/* A set for at least `capacity` addresses at once. */
struct liveset *liveset_create(size_t capacity);
void liveset_destroy(struct liveset *set);
/* False when ptr is already in the set. */
bool liveset_insert(struct liveset *set, const void *ptr);
/* False when ptr is not in the set. */
bool liveset_remove(struct liveset *set, const void *ptr);

#ifdef __cplusplus
}
#endif

#endif
