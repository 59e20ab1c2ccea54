/* Diagnostics for misuse: reported on stderr (never through malloc), or an
 * abort when COREALLOC_ABORT_ON_ERROR is set. */
#ifndef COREALLOC_DIAG_H
#define COREALLOC_DIAG_H

#include <stdint.h>

/* `call` names the API function, `why` says what is wrong with ptr. */
void diag_invalid_pointer(const char *call, const void *ptr, const char *why);
/* Invalid pointers reported so far. */
uint64_t diag_invalid_pointer_count(void);
/* A block found damaged by the program (secure mode's checks): `what`
 * says how; the allocator's own state is intact, so it goes on (or aborts
 * with COREALLOC_ABORT_ON_ERROR). */
void diag_heap_corruption(const char *call, const void *block, const char *what);
uint64_t diag_heap_corruption_count(void);
/* Reports what cannot go on, and aborts. */
__attribute__((noreturn)) void diag_fatal(const char *what);

#endif
