/* Internal assertions, compiled in by the debug build (COREALLOC_DEBUG). */
#ifndef COREALLOC_DEBUG_H
#define COREALLOC_DEBUG_H

#ifdef COREALLOC_DEBUG
void debug_assert_failed(const char *file, int line, const char *cond) __attribute__((noreturn));
#define CA_ASSERT(cond) \
    ((cond) ? (void)0 : debug_assert_failed(__FILE__, __LINE__, #cond))
#else
#define CA_ASSERT(cond) ((void)0)
#endif

#endif
