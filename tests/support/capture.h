/* What the code under test writes to stderr (fd 2), caught in a file: the
 * library reports through write(2) on fd 2, so stdio redirection would
 * miss it. */
#ifndef COREALLOC_TEST_CAPTURE_H
#define COREALLOC_TEST_CAPTURE_H

#include <stdbool.h>
#include <stddef.h>

/* From now on fd 2 writes to a fresh temporary file. */
void capture_stderr_begin(void);
/* Puts fd 2 back and returns what was written meanwhile (the first 64 KiB,
 * NUL-terminated; valid until the next call). */
const char *capture_stderr_end(void);
/* Whether a captured log holds a corealloc error report naming the
 * address p and containing `what`. */
bool capture_reported(const char *log, const void *p, const char *what);
/* Secure mode's trailer check, for a block of size bytes the program
 * filled: its free reports nothing; then a new block of that size with one
 * byte written past its end is reported ("written past its size") when
 * freed. */
void check_overflow_by_one_reported(void *filled, size_t size);

#endif
