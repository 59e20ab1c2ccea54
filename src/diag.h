/* Diagnostics for misuse: reported on stderr (never through malloc), or an
 * abort when COREALLOC_ABORT_ON_ERROR is set. */
#ifndef COREALLOC_DIAG_H
#define COREALLOC_DIAG_H

/* `call` names the API function, `why` says what is wrong with ptr. */
void diag_invalid_pointer(const char *call, const void *ptr, const char *why);

#endif
