/* The __libc_* entry points that glibc-aware programs call directly behave
 * like the standard functions (and, under corealloc, are corealloc's). */
#include "check.h"
#include "probe.h"

#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

typedef void *(*malloc_fn)(size_t);
typedef void *(*calloc_fn)(size_t, size_t);
typedef void *(*realloc_fn)(void *, size_t);
typedef void (*free_fn)(void *);
typedef void *(*memalign_fn)(size_t, size_t);

static void check_ours(void *p, size_t alignment)
{
    REQUIRE(p != NULL);
    CHECK_EQ((uintptr_t)p % alignment, 0);
    if (corealloc_active())
        CHECK(probe_object_start(p) == p);
}

int main(void)
{
    malloc_fn libc_malloc = (malloc_fn)corealloc_symbol("__libc_malloc");
    calloc_fn libc_calloc = (calloc_fn)corealloc_symbol("__libc_calloc");
    realloc_fn libc_realloc = (realloc_fn)corealloc_symbol("__libc_realloc");
    free_fn libc_free = (free_fn)corealloc_symbol("__libc_free");
    memalign_fn libc_memalign = (memalign_fn)corealloc_symbol("__libc_memalign");
    malloc_fn libc_valloc = (malloc_fn)corealloc_symbol("__libc_valloc");
    malloc_fn libc_pvalloc = (malloc_fn)corealloc_symbol("__libc_pvalloc");
    REQUIRE(libc_malloc && libc_calloc && libc_realloc && libc_free && libc_memalign &&
            libc_valloc && libc_pvalloc);
    size_t page = (size_t)sysconf(_SC_PAGESIZE);

    unsigned char *p = libc_malloc(100);
    check_ours(p, 16);
    memset(p, 9, 100);
    p = libc_realloc(p, 100000);
    check_ours(p, 16);
    CHECK_EQ(p[99], 9);
    free(p); /* the aliases and the standard names share one heap */

    unsigned char *z = libc_calloc(1000, 10);
    check_ours(z, 16);
    CHECK_EQ(z[0], 0);
    CHECK_EQ(z[9999], 0);
    libc_free(z);

    void *a = libc_memalign(4096, 10);
    check_ours(a, 4096);
    libc_free(a);
    void *v = libc_valloc(10);
    check_ours(v, page);
    libc_free(v);
    void *pv = libc_pvalloc(10);
    check_ours(pv, page);
    libc_free(pv);

    void *m = malloc(50);
    check_ours(m, 16);
    libc_free(m);
    return check_status();
}
