/* Running one piece of test code on many threads at once. */
#ifndef COREALLOC_TEST_THREADS_H
#define COREALLOC_TEST_THREADS_H

#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

/* Runs body on count threads, passing each its number (1 to count) as its
 * argument, and returns once all have finished. */
void run_threads(unsigned count, void *(*body)(void *));

#ifdef __cplusplus
}
#endif

/* The number run_threads passed to body. */
static inline unsigned thread_number(void *arg) { return (unsigned)(uintptr_t)arg; }

#endif
