/* Failure reporting for check.h. Writes with dprintf so that reporting a
 * failure does not itself depend on the allocator under test. */
#include "check.h"

#include <stdatomic.h>
#include <stdio.h>
#include <unistd.h>

static atomic_int failures;

void check_failed(const char *file, int line, const char *expr)
{
    atomic_fetch_add(&failures, 1);
    dprintf(2, "%s:%d: check failed: %s\n", file, line, expr);
}

void check_failed_eq(const char *file, int line, const char *expr,
                     unsigned long long got, unsigned long long want)
{
    atomic_fetch_add(&failures, 1);
    dprintf(2, "%s:%d: check failed: %s (got %llu = %#llx, want %llu = %#llx)\n",
            file, line, expr, got, got, want, want);
}

void require_failed(const char *file, int line, const char *expr)
{
    dprintf(2, "%s:%d: requirement failed: %s\n", file, line, expr);
    _exit(1);
}

int check_status(void)
{
    int n = atomic_load(&failures);
    if (n)
        dprintf(2, "%d check(s) failed\n", n);
    return n ? 1 : 0;
}
