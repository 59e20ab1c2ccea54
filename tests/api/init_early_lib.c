/* A shared library whose constructor allocates before the program's main
 * (and before the program's own constructors). */
#include "init_early_lib.h"

#include <stdlib.h>
#include <string.h>

static struct early_blocks blocks;

__attribute__((constructor)) static void early_lib_init(void)
{
    for (size_t i = 0; i < EARLY_BLOCKS; i++) {
        blocks.size[i] = (size_t)1 << (i % 21); /* 1 B .. 1 MiB */
        blocks.ptr[i] = malloc(blocks.size[i]);
        if (blocks.ptr[i])
            memset(blocks.ptr[i], (int)i, blocks.size[i]);
    }
    blocks.dup = strdup("allocated by a library constructor");
}

struct early_blocks *early_lib_blocks(void)
{
    return &blocks;
}
