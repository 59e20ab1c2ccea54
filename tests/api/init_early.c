/* Allocation before main: from a shared library's constructor and from a
 * constructor(101) of the executable. The blocks are intact in main, are
 * corealloc's, and can be reallocated and freed. */
#include "check.h"
#include "init_early_lib.h"
#include "pattern.h"
#include "probe.h"

#include <stdlib.h>
#include <string.h>

#define EXE_BLOCKS 100

static void *exe_blocks[EXE_BLOCKS];

__attribute__((constructor(101))) static void exe_init(void)
{
    for (size_t i = 0; i < EXE_BLOCKS; i++) {
        exe_blocks[i] = calloc(1, 16 * i + 1);
        if (exe_blocks[i])
            memset(exe_blocks[i], 0x77, 16 * i + 1);
    }
}

static void check_owned(void *p)
{
    REQUIRE(p != NULL);
    if (corealloc_active())
        CHECK(probe_object_start(p) == p);
}

int main(void)
{
    struct early_blocks *lib = early_lib_blocks();
    for (size_t i = 0; i < EARLY_BLOCKS; i++) {
        check_owned(lib->ptr[i]);
        CHECK(block_filled_with(lib->ptr[i], lib->size[i], (unsigned char)i));
        lib->ptr[i] = realloc(lib->ptr[i], lib->size[i] * 2 + 1);
        REQUIRE(lib->ptr[i] != NULL);
        CHECK(block_filled_with(lib->ptr[i], lib->size[i], (unsigned char)i));
        free(lib->ptr[i]);
    }
    check_owned(lib->dup);
    CHECK(strcmp(lib->dup, "allocated by a library constructor") == 0);
    free(lib->dup);
    for (size_t i = 0; i < EXE_BLOCKS; i++) {
        check_owned(exe_blocks[i]);
        CHECK(block_filled_with(exe_blocks[i], 16 * i + 1, 0x77));
        free(exe_blocks[i]);
    }
    return check_status();
}
