/* Run-time lookup of corealloc in the current process (see probe.h). */
#include "probe.h"

#include "check.h"

#include <dlfcn.h>
#include <stdlib.h>
#include <string.h>

typedef void *(*object_start_fn)(const void *);
typedef size_t (*object_size_fn)(const void *);

static object_start_fn object_start;
static object_size_fn object_size;

static bool preload_names_corealloc(void)
{
    const char *preload = getenv("LD_PRELOAD");
    return preload && strstr(preload, "libcorealloc");
}

void *corealloc_symbol(const char *name)
{
    void *sym = dlsym(RTLD_DEFAULT, name);
    REQUIRE_MSG(sym || !preload_names_corealloc(), "corealloc is preloaded but has no %s", name);
    return sym;
}

static bool probe(void)
{
    if (!preload_names_corealloc())
        return false;
    object_start = (object_start_fn)corealloc_symbol("corealloc_object_start");
    object_size = (object_size_fn)corealloc_symbol("corealloc_object_size");
    void *volatile p = malloc(1);
    REQUIRE(p != NULL);
    REQUIRE(object_start(p) == p); /* malloc must be corealloc's */
    free(p);
    return true;
}

bool corealloc_active(void)
{
    static int state; /* 0 unknown, 1 active, 2 not active */
    if (!state)
        state = probe() ? 1 : 2;
    return state == 1;
}

void *probe_object_start(const void *ptr)
{
    REQUIRE(corealloc_active());
    return object_start(ptr);
}

size_t probe_object_size(const void *ptr)
{
    REQUIRE(corealloc_active());
    return object_size(ptr);
}
