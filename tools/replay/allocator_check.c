#define _GNU_SOURCE
#include "allocator_check.h"

#include <dlfcn.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/stat.h>

void allocator_malloc_origin(char *path, size_t cap)
{
    Dl_info info;
    void *(*volatile malloc_in_use)(size_t) = malloc;
    if (dladdr((void *)malloc_in_use, &info) != 0 && info.dli_fname != NULL)
        snprintf(path, cap, "%s", info.dli_fname);
    else
        snprintf(path, cap, "unknown");
}

static bool same_file(const char *a, const char *b)
{
    struct stat sa, sb;
    return stat(a, &sa) == 0 && stat(b, &sb) == 0 && sa.st_dev == sb.st_dev && sa.st_ino == sb.st_ino;
}

bool allocator_is_loaded(const char *expected_path, char *why, size_t why_cap)
{
    char origin[4096];
    allocator_malloc_origin(origin, sizeof origin);
    if (same_file(origin, expected_path))
        return true;
    void *handle = dlopen(expected_path, RTLD_NOW | RTLD_LOCAL);
    if (handle == NULL)
        snprintf(why, why_cap, "it does not load: %s", dlerror());
    else if (dlsym(handle, "malloc") == NULL)
        snprintf(why, why_cap, "it loads but does not define malloc");
    else
        snprintf(why, why_cap, "malloc still comes from %s", origin);
    return false;
}
