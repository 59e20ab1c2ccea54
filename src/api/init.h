/* Start-up: the first call into the library initialises every layer (no
 * allocation), and registers the fork handlers. */
#ifndef COREALLOC_INIT_H
#define COREALLOC_INIT_H

/* Returns once the allocator is initialised; cheap after the first call. */
void init_ensure(void);

#endif
