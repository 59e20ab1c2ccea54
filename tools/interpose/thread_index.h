/* Small dense thread numbers (0, 1, 2, ... in order of first allocator call),
 * restarted in a forked child so each process numbers its own threads. */
#ifndef COREALLOC_THREAD_INDEX_H
#define COREALLOC_THREAD_INDEX_H

#include <stdint.h>

uint32_t thread_index_current(void);
uint32_t thread_index_count(void);
/* Only in a single-threaded forked child. */
void thread_index_restart(void);

#endif
