/* A minimal check macro for the unit tests: prints where and exits 1. */
#ifndef COREALLOC_UNIT_H
#define COREALLOC_UNIT_H

#include <stdio.h>
#include <stdlib.h>

#define CHECK(cond, ...)                                                                 \
    do {                                                                                 \
        if (!(cond)) {                                                                   \
            fprintf(stderr, "%s:%d: check failed: %s: ", __FILE__, __LINE__, #cond);     \
            fprintf(stderr, __VA_ARGS__);                                                \
            fputc('\n', stderr);                                                         \
            exit(1);                                                                     \
        }                                                                                \
    } while (0)

#endif
