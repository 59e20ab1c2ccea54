/* Is corealloc the malloc of this process, and its entry points.
 *
 * The test programs are ordinary executables run with LD_PRELOAD of
 * libcorealloc.so. They find corealloc's own functions with dlsym, so the
 * same binary also runs on glibc (where corealloc-only checks are skipped).
 */
#ifndef COREALLOC_TEST_PROBE_H
#define COREALLOC_TEST_PROBE_H

#include <stdbool.h>
#include <stddef.h>

#ifdef __cplusplus
extern "C" {
#endif

/* True when LD_PRELOAD names libcorealloc. The first call then requires
 * that malloc really is corealloc's (corealloc_object_start recognises a
 * fresh block) and stops the program with a failure otherwise. */
bool corealloc_active(void);

/* dlsym(RTLD_DEFAULT, name). When corealloc_active(), a missing symbol
 * stops the program with a failure. */
void *corealloc_symbol(const char *name);

/* corealloc_object_start / corealloc_object_size; only when active. */
void *probe_object_start(const void *ptr);
size_t probe_object_size(const void *ptr);

#ifdef __cplusplus
}
#endif

#endif
