#include "bench_report.h"

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>

void bench_result(const char *bench, const char *format, ...)
{
    va_list args;
    va_start(args, format);
    printf("RESULT bench=%s ", bench);
    vprintf(format, args);
    putchar('\n');
    va_end(args);
    fflush(stdout);
}

void bench_check_failed(const char *format, ...)
{
    va_list args;
    va_start(args, format);
    fputs("CHECK FAILED: ", stderr);
    vfprintf(stderr, format, args);
    fputc('\n', stderr);
    va_end(args);
    exit(1);
}

void *bench_check_alloc(void *p, const char *what)
{
    if (p == NULL)
        bench_check_failed("allocation of %s returned NULL", what);
    return p;
}
