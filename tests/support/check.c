/* Failure reporting for check.h. A report is formatted on the stack and
 * written with write(2): reporting a failure neither allocates (the
 * allocator under test may be what failed) nor takes a stdio lock (a
 * failure may be found in a signal handler). */
#include "check.h"

#include <stdarg.h>
#include <stdatomic.h>
#include <stdio.h>
#include <unistd.h>

static atomic_int failures;

/* "<file>:<line>: <what> failed: <expr>[: <message>]" on stderr. */
static void report(const char *file, int line, const char *what, const char *expr,
                   const char *fmt, va_list ap)
{
    char text[1024];
    size_t len = 0;
    int n = snprintf(text, sizeof text, "%s:%d: %s failed: %s", file, line, what, expr);
    if (n > 0)
        len = (size_t)n < sizeof text ? (size_t)n : sizeof text - 1;
    if (fmt && len + 2 < sizeof text) {
        text[len++] = ':';
        text[len++] = ' ';
        n = vsnprintf(text + len, sizeof text - len, fmt, ap);
        if (n > 0)
            len += (size_t)n < sizeof text - len ? (size_t)n : sizeof text - len - 1;
    }
    if (len == sizeof text - 1)
        len--; /* room for the newline */
    text[len++] = '\n';
    for (size_t done = 0; done < len;) {
        ssize_t w = write(2, text + done, len - done);
        if (w <= 0)
            break;
        done += (size_t)w;
    }
}

void check_failed(const char *file, int line, const char *expr, const char *fmt, ...)
{
    atomic_fetch_add(&failures, 1);
    va_list ap;
    va_start(ap, fmt);
    report(file, line, "check", expr, fmt, ap);
    va_end(ap);
}

void check_failed_eq(const char *file, int line, const char *expr,
                     unsigned long long got, unsigned long long want)
{
    check_failed(file, line, expr, "got %llu = %#llx, want %llu = %#llx", got, got, want, want);
}

void require_failed(const char *file, int line, const char *expr, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    report(file, line, "requirement", expr, fmt, ap);
    va_end(ap);
    _exit(1);
}

int check_status(void)
{
    int n = atomic_load(&failures);
    if (n) {
        char text[64];
        int len = snprintf(text, sizeof text, "%d check(s) failed\n", n);
        if (write(2, text, (size_t)len) < 0)
            return 1;
    }
    return n ? 1 : 0;
}
