/* Confirms that malloc really comes from the allocator the replay is for:
 * a library in LD_PRELOAD that fails to load is only a warning to ld.so. */
#ifndef COREALLOC_REPLAY_ALLOCATOR_CHECK_H
#define COREALLOC_REPLAY_ALLOCATOR_CHECK_H

#include <stdbool.h>
#include <stddef.h>

/* Writes the file that defines the malloc in use into path. */
void allocator_malloc_origin(char *path, size_t cap);

/* True when malloc is defined by the library at expected_path; otherwise
 * writes the reason (dlopen's own error when it does not load) to why. */
bool allocator_is_loaded(const char *expected_path, char *why, size_t why_cap);

#endif
