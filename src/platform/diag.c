#include "platform/diag.h"

#include <stdio.h>

#include "platform/debug.h"
#include "platform/options.h"
#include "platform/os.h"

static uint64_t invalid_pointers;

uint64_t diag_invalid_pointer_count(void)
{
    return __atomic_load_n(&invalid_pointers, __ATOMIC_RELAXED);
}

static uint64_t heap_corruptions;

uint64_t diag_heap_corruption_count(void)
{
    return __atomic_load_n(&heap_corruptions, __ATOMIC_RELAXED);
}

/* One line on stderr, then the abort when asked for. */
static void report(const char *call, const char *kind, const void *ptr, const char *why, const char *going_on)
{
    char line[256];
    int n = snprintf(line, sizeof line, "corealloc: error: %s(): %s %p (%s)%s\n", call, kind, ptr, why,
                     opt.abort_on_error ? "; aborting" : going_on);
    if (n > 0)
        os_write_all(2, line, (size_t)n < sizeof line ? (size_t)n : sizeof line - 1);
    if (opt.abort_on_error)
        os_abort();
}

void diag_invalid_pointer(const char *call, const void *ptr, const char *why)
{
    __atomic_add_fetch(&invalid_pointers, 1, __ATOMIC_RELAXED);
    report(call, "invalid pointer", ptr, why, "; ignored");
}

void diag_heap_corruption(const char *call, const void *block, const char *what)
{
    __atomic_add_fetch(&heap_corruptions, 1, __ATOMIC_RELAXED);
    report(call, "heap corruption in block", block, what, "");
}

void diag_fatal(const char *what)
{
    char line[256];
    int n = snprintf(line, sizeof line, "corealloc: fatal: %s; aborting\n", what);
    if (n > 0)
        os_write_all(2, line, (size_t)n < sizeof line ? (size_t)n : sizeof line - 1);
    os_abort();
}

#ifdef COREALLOC_DEBUG
void debug_assert_failed(const char *file, int line, const char *cond)
{
    char msg[512];
    int n = snprintf(msg, sizeof msg, "corealloc: internal assertion failed at %s:%d: %s\n", file, line, cond);
    if (n > 0)
        os_write_all(2, msg, (size_t)n < sizeof msg ? (size_t)n : sizeof msg - 1);
    os_abort();
}
#endif
