/* Call stacks of the calling thread, as return addresses, innermost
 * first: by unwinding (glibc's backtrace(), which reads the DWARF unwind
 * tables every object carries) or by walking frame pointers (a load per
 * frame, but right only where every frame keeps one). */
#ifndef COREALLOC_STACKTRACE_H
#define COREALLOC_STACKTRACE_H

#include <stdbool.h>

/* Unwinds once: glibc loads its unwinder (libgcc_s) on the first call,
 * which allocates, so this runs at start-up and not inside malloc. */
void stacktrace_init(void);
/* Up to max return addresses into pcs; returns how many. */
unsigned stacktrace_unwind(void **pcs, unsigned max);
/* The same stack from frame pointers: the innermost frames (the
 * allocator's own, which keep none) by unwinding, the rest by following
 * the chain, which must pass through the last unwound frame to be
 * trusted. Returns 0 when it does not (a frame without a pointer, a chain
 * leaving the thread's stack): the caller unwinds instead. */
unsigned stacktrace_frame_pointers(void **pcs, unsigned max);

#endif
