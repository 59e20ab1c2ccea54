/* The per-thread front end shares COREALLOC_THREAD_CACHES_BYTES among live
 * threads: many threads, each having freed plenty, hold about that much
 * together, not a full cache each. */
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>

#include "check.h"
#include "memory.h"
#include "probe.h"

#define THREADS 400
#define PER_SIZE 64
static const size_t sizes[] = {64, 256, 1024, 4096, 16384};
#define SIZES (sizeof sizes / sizeof sizes[0])

static pthread_barrier_t started, filled, measured;

static void *work(void *arg)
{
    (void)arg;
    /* Every thread has its cache before any fills one: a cache's share is
     * set by the caches alive when it fills (one filled earlier keeps its
     * contents until its thread next overflows it or exits). */
    free(malloc(16));
    pthread_barrier_wait(&started);
    allocate_then_free(sizes, SIZES, PER_SIZE);
    pthread_barrier_wait(&filled);
    pthread_barrier_wait(&measured); /* stay alive, cache and all */
    return NULL;
}

int main(int argc, char **argv)
{
    if (!corealloc_active()) {
        puts("corealloc is not loaded: nothing to check");
        return 0;
    }
    size_t budget = (size_t)(argc > 1 ? atoi(argv[1]) : 4) * MIB;
    pthread_t threads[THREADS];
    pthread_barrier_init(&started, NULL, THREADS);
    pthread_barrier_init(&filled, NULL, THREADS + 1);
    pthread_barrier_init(&measured, NULL, THREADS + 1);
    for (int i = 0; i < THREADS; i++)
        REQUIRE(pthread_create(&threads[i], NULL, work, NULL) == 0);
    pthread_barrier_wait(&filled);
    long long cached = stats_number("cached_bytes");
    printf("%d threads' caches hold %lld KiB (budget %zu KiB)\n", THREADS, cached >> 10, budget >> 10);
    CHECK(cached <= (long long)(2 * budget));
    pthread_barrier_wait(&measured);
    for (int i = 0; i < THREADS; i++)
        pthread_join(threads[i], NULL);
    return check_status();
}
