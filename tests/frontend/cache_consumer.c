/* A cache grows with what its owner allocates, not with what it only frees:
 * a consumer thread that frees thousands of blocks another thread allocated
 * keeps at most about a batch of them (per-thread front end, where the
 * owner is certain; per-CPU caches follow the same rule). */
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>

#include "check.h"
#include "memory.h"
#include "probe.h"

#define BLOCKS 4096
#define SIZE 256

static void *blocks[BLOCKS];
static pthread_barrier_t freed, measured;

static void *consume(void *arg)
{
    (void)arg;
    for (int i = 0; i < BLOCKS; i++)
        free(blocks[i]);
    pthread_barrier_wait(&freed);
    pthread_barrier_wait(&measured); /* alive, cache and all */
    return NULL;
}

int main(void)
{
    if (!corealloc_active()) {
        puts("corealloc is not loaded: nothing to check");
        return 0;
    }
    for (int i = 0; i < BLOCKS; i++)
        REQUIRE((blocks[i] = malloc(SIZE)) != NULL);
    pthread_barrier_init(&freed, NULL, 2);
    pthread_barrier_init(&measured, NULL, 2);
    pthread_t consumer;
    REQUIRE(pthread_create(&consumer, NULL, consume, NULL) == 0);
    pthread_barrier_wait(&freed);
    long long cached = stats_number("cached_bytes");
    printf("caches hold %lld KiB after %d frees of %d-byte blocks\n", cached >> 10, BLOCKS, SIZE);
    /* The producer's leftover refill and the consumer's one batch: 16 KiB
     * (25 with the other classes in use); a consumer cache grown to its
     * limit would hold 64 KiB more. */
    CHECK(cached <= 40 << 10);
    pthread_barrier_wait(&measured);
    pthread_join(consumer, NULL);
    return check_status();
}
