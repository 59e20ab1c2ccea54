/* A short program for the statistics tests: allocates a spread of sizes
 * from two threads, frees most of it, and prints one line to stdout. */
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static void *work(void *arg)
{
    static void *kept[2][64];
    void **mine = kept[arg != NULL];
    for (size_t i = 0; i < 4000; i++) {
        size_t size = (size_t)16 << (i % 17); /* 16 B .. 1 MiB */
        char *p = malloc(size);
        if (!p)
            exit(1);
        memset(p, 1, size);
        if (i % 64 == 0)
            mine[i / 64 % 64] = p; /* a few stay live until exit */
        else
            free(p);
    }
    return NULL;
}

int main(void)
{
    pthread_t t;
    if (pthread_create(&t, NULL, work, (void *)1) != 0)
        return 1;
    work(NULL);
    pthread_join(t, NULL);
    puts("workload done");
    return 0;
}
