#include "bench_args.h"

#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>

long bench_arg_long(const char *option, const char *text, long min, long max)
{
    char *end;
    errno = 0;
    long value = strtol(text, &end, 10);
    if (errno != 0 || end == text || *end != '\0' || value < min || value > max) {
        fprintf(stderr, "invalid %s '%s': expected an integer in [%ld, %ld]\n", option, text, min, max);
        exit(2);
    }
    return value;
}

double bench_arg_double(const char *option, const char *text, double min, double max)
{
    char *end;
    errno = 0;
    double value = strtod(text, &end);
    if (errno != 0 || end == text || *end != '\0' || !isfinite(value) || value < min || value > max) {
        fprintf(stderr, "invalid %s '%s': expected a number in [%g, %g]\n", option, text, min, max);
        exit(2);
    }
    return value;
}

void bench_usage(const char *usage)
{
    fprintf(stderr, "usage: %s\n", usage);
    exit(2);
}
