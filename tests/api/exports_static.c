/* Linked with libcorealloc.a (before libc): the program's malloc family is
 * corealloc's, including the allocations libc makes internally (strdup,
 * stdio buffers, getline), which libc then frees through corealloc. */
#include "check.h"

#include <corealloc.h>

#include <malloc.h>
#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static void check_ours(void *p)
{
    REQUIRE(p != NULL);
    CHECK(corealloc_object_start(p) == p);
    CHECK_EQ(corealloc_object_size(p), malloc_usable_size(p));
}

static void *worker(void *arg)
{
    uintptr_t id = (uintptr_t)arg;
    for (size_t n = 0; n < 5000; n++) {
        size_t size = 1 + (n * 131 + id) % 9000;
        unsigned char *p = malloc(size);
        check_ours(p);
        memset(p, (int)id, size);
        free(p);
    }
    return NULL;
}

int main(void)
{
    void *p = malloc(10);
    check_ours(p);
    free(p);
    unsigned char *z = calloc(100, 10);
    check_ours(z);
    CHECK_EQ(z[999], 0);
    z = realloc(z, 100000);
    check_ours(z);
    free(z);
    void *a = aligned_alloc(4096, 4096);
    check_ours(a);
    CHECK_EQ((uintptr_t)a % 4096, 0);
    free(a);
    void *m = NULL;
    CHECK_EQ(posix_memalign(&m, 64, 1000), 0);
    check_ours(m);
    free(m);

    char *dup = strdup("made by libc's strdup"); /* libc calls our malloc */
    check_ours(dup);
    free(dup);

    FILE *f = tmpfile();
    REQUIRE(f != NULL);
    for (int i = 0; i < 1000; i++)
        fprintf(f, "line %d %0*d\n", i, i % 300, 0);
    rewind(f);
    char *line = NULL;
    size_t cap = 0;
    int lines = 0;
    while (getline(&line, &cap, f) > 0)
        lines++;
    CHECK_EQ(lines, 1000);
    check_ours(line);
    free(line);
    fclose(f);

    pthread_t tids[4];
    for (uintptr_t i = 0; i < 4; i++)
        REQUIRE(pthread_create(&tids[i], NULL, worker, (void *)i) == 0);
    for (size_t i = 0; i < 4; i++)
        pthread_join(tids[i], NULL);

    CHECK(corealloc_frontend() != NULL);
    return check_status();
}
