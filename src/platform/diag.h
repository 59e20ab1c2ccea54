/* Diagnostics for misuse: reported on stderr (never through malloc), or an
 * abort when COREALLOC_ABORT_ON_ERROR is set. */
#ifndef COREALLOC_DIAG_H
#define COREALLOC_DIAG_H

#include <stdint.h>

/* `call` names the API function, `why` says what is wrong with ptr. */
void diag_invalid_pointer(const char *call, const void *ptr, const char *why);
/* Invalid pointers reported so far. */
uint64_t diag_invalid_pointer_count(void);
/* Reports what cannot go on, and aborts. */
__attribute__((noreturn)) void diag_fatal(const char *what);

#endif
