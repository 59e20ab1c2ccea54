/* Call stacks of the calling thread, as return addresses, innermost
 * first: by unwinding (the DWARF unwind tables every object carries, read
 * once per return address into a cache of rules, cfi.h, or by glibc's
 * backtrace() where a frame needs more) or by walking frame pointers (a
 * load per frame, but right only where every frame keeps one). */
#ifndef COREALLOC_STACKTRACE_H
#define COREALLOC_STACKTRACE_H

#include <stdbool.h>

#include "platform/cfi.h"

/* Unwinds once: glibc loads its unwinder (libgcc_s) on the first call,
 * which allocates, so this runs at start-up and not inside malloc; maps
 * the rules' cache. */
void stacktrace_init(void);
/* Up to max return addresses into pcs; returns how many. */
unsigned stacktrace_unwind(void **pcs, unsigned max);
#if CFI_RULES
/* The same by the cached rules alone: what backtrace() would give, or 0
 * when a frame needs more than they tell (a signal frame, a frame address
 * computed by an expression, a frame outside the stack's mapping), where
 * stacktrace_unwind calls backtrace(). Every load is of the thread's stack
 * above the caller's frame. */
unsigned stacktrace_by_rules(void **pcs, unsigned max);
#endif
/* The same stack from frame pointers: the innermost frames (the
 * allocator's own, which keep none) by unwinding, the rest by following
 * the chain, which must pass through the last unwound frame to be
 * trusted. Returns 0 when it does not (a frame without a pointer, a chain
 * leaving the thread's stack): the caller unwinds instead. */
unsigned stacktrace_frame_pointers(void **pcs, unsigned max);

#endif
