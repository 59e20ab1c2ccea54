/* The observed allocation paths shared by the exported C and C++ entry
 * points: call the allocator underneath, then tell the observer. */
#ifndef COREALLOC_INTERPOSE_CORE_H
#define COREALLOC_INTERPOSE_CORE_H

#include <stddef.h>

#include "../common/trace_format.h"

#define INTERPOSER_EXPORT __attribute__((visibility("default")))

void *observed_malloc(enum trace_kind kind, size_t size);
void *observed_calloc(size_t count, size_t size);
void *observed_aligned(enum trace_kind kind, size_t alignment, size_t size);
void *observed_realloc(enum trace_kind kind, void *old, size_t size);
void observed_free(enum trace_kind kind, void *ptr);

#endif
