/* Blocks that init_early_lib's constructor allocated before main. */
#ifndef COREALLOC_TEST_EARLY_LIB_H
#define COREALLOC_TEST_EARLY_LIB_H

#include <stddef.h>

#define EARLY_BLOCKS 42

struct early_blocks {
    void *ptr[EARLY_BLOCKS];
    size_t size[EARLY_BLOCKS];
    char *dup;
};

struct early_blocks *early_lib_blocks(void);

#endif
