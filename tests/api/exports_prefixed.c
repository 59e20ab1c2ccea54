/* corealloc.h: the prefixed API, trim, statistics and front-end name. Runs
 * only under corealloc; on any other malloc it has nothing to test. */
#include "check.h"
#include "probe.h"

#include <corealloc.h>

#include <errno.h>
#include <fcntl.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

/* The header's functions, resolved in the preloaded library. */
static struct {
    __typeof__(corealloc_malloc) *malloc;
    __typeof__(corealloc_calloc) *calloc;
    __typeof__(corealloc_realloc) *realloc;
    __typeof__(corealloc_free) *free;
    __typeof__(corealloc_free_sized) *free_sized;
    __typeof__(corealloc_aligned_alloc) *aligned_alloc;
    __typeof__(corealloc_posix_memalign) *posix_memalign;
    __typeof__(corealloc_usable_size) *usable_size;
    __typeof__(corealloc_trim) *trim;
    __typeof__(corealloc_stats_snprint) *stats_snprint;
    __typeof__(corealloc_stats_write) *stats_write;
    __typeof__(corealloc_frontend) *frontend;
} ca;

#define RESOLVE(name) (ca.name = (__typeof__(ca.name))corealloc_symbol("corealloc_" #name))

static void resolve(void)
{
    RESOLVE(malloc);
    RESOLVE(calloc);
    RESOLVE(realloc);
    RESOLVE(free);
    RESOLVE(free_sized);
    RESOLVE(aligned_alloc);
    RESOLVE(posix_memalign);
    RESOLVE(usable_size);
    RESOLVE(trim);
    RESOLVE(stats_snprint);
    RESOLVE(stats_write);
    RESOLVE(frontend);
}

static void test_allocation(void)
{
    unsigned char *p = ca.malloc(1000);
    REQUIRE(p != NULL);
    CHECK_EQ((uintptr_t)p % 16, 0);
    CHECK(ca.usable_size(p) >= 1000);
    CHECK_EQ(ca.usable_size(p), probe_object_size(p));
    memset(p, 4, 1000);
    p = ca.realloc(p, 1 << 20);
    REQUIRE(p != NULL);
    CHECK_EQ(p[999], 4);
    free(p); /* the prefixed API and malloc share one heap here */

    p = malloc(64);
    REQUIRE(p != NULL);
    ca.free_sized(p, 64);

    unsigned char *z = ca.calloc(300, 7);
    REQUIRE(z != NULL);
    CHECK_EQ(z[0], 0);
    CHECK_EQ(z[2099], 0);
    ca.free(z);
    volatile size_t big = SIZE_MAX / 2;
    errno = 0;
    CHECK(ca.calloc(big, 3) == NULL);
    CHECK_EQ(errno, ENOMEM);
    errno = 0;
    CHECK(ca.malloc(big) == NULL);
    CHECK_EQ(errno, ENOMEM);

    void *a = ca.aligned_alloc(4096, 8192);
    REQUIRE(a != NULL);
    CHECK_EQ((uintptr_t)a % 4096, 0);
    ca.free(a);
    CHECK(ca.aligned_alloc(3, 64) == NULL);
    void *m = NULL;
    CHECK_EQ(ca.posix_memalign(&m, 256, 100), 0);
    REQUIRE(m != NULL);
    CHECK_EQ((uintptr_t)m % 256, 0);
    ca.free(m);
    CHECK_EQ(ca.posix_memalign(&m, 24, 100), EINVAL);
    ca.free(NULL);
    CHECK_EQ(ca.usable_size(NULL), 0);
}

static void test_trim(void)
{
    enum { N = 256 };
    void *blocks[N];
    for (int i = 0; i < N; i++) {
        blocks[i] = malloc(100000);
        REQUIRE(blocks[i] != NULL);
        memset(blocks[i], 1, 100000);
    }
    for (int i = 0; i < N; i++)
        free(blocks[i]);
    size_t released = ca.trim();
    CHECK(released > 0); /* 25 MB were just freed */
    void *p = malloc(100000);
    REQUIRE(p != NULL);
    memset(p, 2, 100000);
    free(p);
}

static void check_json_shape(const char *s, size_t n)
{
    while (n > 0 && (s[n - 1] == '\n' || s[n - 1] == ' '))
        n--;
    REQUIRE(n >= 2);
    CHECK_EQ(s[0], '{');
    CHECK_EQ(s[n - 1], '}');
    long depth = 0;
    int in_string = 0;
    for (size_t i = 0; i < n; i++) {
        if (in_string) {
            if (s[i] == '\\')
                i++;
            else if (s[i] == '"')
                in_string = 0;
        } else if (s[i] == '"') {
            in_string = 1;
        } else if (s[i] == '{' || s[i] == '[') {
            depth++;
        } else if (s[i] == '}' || s[i] == ']') {
            depth--;
            CHECK(depth >= 0);
        }
    }
    CHECK_EQ(depth, 0);
    CHECK(!in_string);
}

/* The report describes the heap, so nothing may allocate between the calls
 * compared here: the buffers are static. */
static void test_stats(void)
{
    static char buf[1 << 20];
    for (int json = 0; json <= 1; json++) {
        size_t need = ca.stats_snprint(NULL, 0, json);
        REQUIRE(need > 0 && need < sizeof buf);
        CHECK_EQ(ca.stats_snprint(buf, need + 1, json), need);
        CHECK_EQ(strlen(buf), need);
        char small[10];
        memset(small, 'x', sizeof small);
        CHECK_EQ(ca.stats_snprint(small, sizeof small, json), need);
        CHECK_EQ(strlen(small), sizeof small - 1); /* truncated, terminated */
        CHECK(strstr(buf, "frontend") != NULL);
        if (json)
            check_json_shape(buf, need);

        FILE *tmp = tmpfile();
        REQUIRE(tmp != NULL);
        CHECK_EQ(ca.stats_write(fileno(tmp), json), 0);
        CHECK(lseek(fileno(tmp), 0, SEEK_END) > 0);
        fclose(tmp);
    }
    errno = 0;
    CHECK_EQ(ca.stats_write(-1, 0), -1);
    CHECK_EQ(errno, EBADF);
}

static void test_frontend(void)
{
    const char *name = ca.frontend();
    REQUIRE(name != NULL);
    CHECK(strcmp(name, "rseq") == 0 || strcmp(name, "per-thread") == 0);
    const char *forced = getenv("COREALLOC_FRONTEND");
    if (forced && strcmp(forced, "thread") == 0)
        CHECK(strcmp(name, "per-thread") == 0);
}

int main(void)
{
    if (!corealloc_active()) {
        fprintf(stderr, "corealloc is not preloaded: nothing to test\n");
        return 77;
    }
    resolve();
    test_allocation();
    test_trim();
    test_stats();
    test_frontend();
    return check_status();
}
