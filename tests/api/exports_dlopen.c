/* A program that is not linked to corealloc and does not preload it loads
 * libcorealloc.so at run time (as a Python extension would be loaded) and
 * uses the prefixed API from several threads, while its own malloc stays
 * glibc's and pointers from glibc are not mistaken for corealloc's.
 *
 * Usage: api_exports_dlopen PATH_TO_LIBCOREALLOC
 */
#include "check.h"
#include "pattern.h"

#include <corealloc.h>

#include <dlfcn.h>
#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static struct {
    __typeof__(corealloc_malloc) *malloc;
    __typeof__(corealloc_calloc) *calloc;
    __typeof__(corealloc_realloc) *realloc;
    __typeof__(corealloc_free) *free;
    __typeof__(corealloc_posix_memalign) *posix_memalign;
    __typeof__(corealloc_usable_size) *usable_size;
    __typeof__(corealloc_object_start) *object_start;
    __typeof__(corealloc_trim) *trim;
    __typeof__(corealloc_stats_snprint) *stats_snprint;
    __typeof__(corealloc_frontend) *frontend;
} ca;

static void *resolve(void *lib, const char *name)
{
    void *sym = dlsym(lib, name);
    if (!sym)
        dprintf(2, "dlsym(%s): %s\n", name, dlerror());
    REQUIRE(sym != NULL);
    return sym;
}

static void *worker(void *arg)
{
    uint64_t id = (uintptr_t)arg;
    for (uint64_t n = 0; n < 3000; n++) {
        size_t size = 1 + (size_t)((n * 7919) % 70000);
        unsigned char *p = ca.malloc(size);
        REQUIRE(p != NULL);
        CHECK(ca.object_start(p + size - 1) == p);
        pattern_fill(p, size, id << 32 | n);
        p = ca.realloc(p, size + 5000);
        REQUIRE(p != NULL);
        CHECK_EQ(pattern_mismatch(p, size, id << 32 | n), PATTERN_OK);
        ca.free(p);
    }
    return NULL;
}

int main(int argc, char **argv)
{
    if (argc != 2) {
        fprintf(stderr, "usage: %s PATH_TO_LIBCOREALLOC\n", argv[0]);
        return 2;
    }
    void *glibc_block = malloc(100);
    REQUIRE(glibc_block != NULL);

    void *lib = dlopen(argv[1], RTLD_NOW | RTLD_LOCAL);
    if (!lib)
        dprintf(2, "dlopen: %s\n", dlerror());
    REQUIRE(lib != NULL);
    ca.malloc = resolve(lib, "corealloc_malloc");
    ca.calloc = resolve(lib, "corealloc_calloc");
    ca.realloc = resolve(lib, "corealloc_realloc");
    ca.free = resolve(lib, "corealloc_free");
    ca.posix_memalign = resolve(lib, "corealloc_posix_memalign");
    ca.usable_size = resolve(lib, "corealloc_usable_size");
    ca.object_start = resolve(lib, "corealloc_object_start");
    ca.trim = resolve(lib, "corealloc_trim");
    ca.stats_snprint = resolve(lib, "corealloc_stats_snprint");
    ca.frontend = resolve(lib, "corealloc_frontend");

    /* The process's malloc is still glibc's, and its blocks are foreign. */
    void *after = malloc(100);
    REQUIRE(after != NULL);
    CHECK(ca.object_start(glibc_block) == NULL);
    CHECK(ca.object_start(after) == NULL);
    free(after);
    free(glibc_block);

    CHECK(ca.frontend() != NULL);
    unsigned char *z = ca.calloc(100, 100);
    REQUIRE(z != NULL);
    CHECK_EQ(z[9999], 0);
    CHECK(ca.usable_size(z) >= 10000);
    ca.free(z);
    void *aligned = NULL;
    CHECK_EQ(ca.posix_memalign(&aligned, 65536, 100), 0);
    CHECK_EQ((uintptr_t)aligned % 65536, 0);
    ca.free(aligned);

    pthread_t tids[4];
    for (uintptr_t i = 0; i < 4; i++)
        REQUIRE(pthread_create(&tids[i], NULL, worker, (void *)i) == 0);
    for (size_t i = 0; i < 4; i++)
        pthread_join(tids[i], NULL);

    ca.trim();
    char report[64];
    CHECK(ca.stats_snprint(report, sizeof report, 1) > 0);
    return check_status();
}
