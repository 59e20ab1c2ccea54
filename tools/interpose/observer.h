/* What an interposer does with the calls it sees. The interposition layer
 * (interpose_core.c) keeps the pointer table; exactly one observer
 * (hist_observer.c or trace_observer.c) is linked into each interposer. */
#ifndef COREALLOC_OBSERVER_H
#define COREALLOC_OBSERVER_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "../common/trace_format.h"
#include "pointer_table.h"

bool observer_enabled(void);

/* Each returns the tag stored with the new object in the pointer table. */
uint64_t observer_alloc(enum trace_kind kind, size_t size, size_t alignment, uint32_t thread);
/* old is NULL for realloc(NULL, n) and for objects the table does not know. */
uint64_t observer_realloc(enum trace_kind kind, const struct pointer_record *old,
                          bool moved, size_t size, uint32_t thread);
void observer_free(enum trace_kind kind, const struct pointer_record *object, uint32_t thread);

void observer_fork_prepare(void);
void observer_fork_parent(void);
void observer_fork_child(void);

/* Before exec or _exit, which end the image without destructors. The
 * observer must do nothing in a vfork child (its pid differs). */
void observer_image_ending(bool by_exec);
void observer_exec_failed(void);

#endif
