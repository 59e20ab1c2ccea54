/* Four threads each allocate 100 blocks of 72 bytes; after a barrier each
 * frees 75 of its own and 25 of its neighbour's: 100 of 400 frees (25%) are
 * by a thread other than the allocating one. */
#include <pthread.h>
#include <stdlib.h>

#define THREADS 4
#define BLOCKS 100
#define HANDED_OVER 25

static void *blocks[THREADS][BLOCKS];
static pthread_barrier_t allocated;

static void *work(void *arg)
{
    int self = (int)(long)arg;
    int neighbour = (self + 1) % THREADS;
    for (int i = 0; i < BLOCKS; i++)
        blocks[self][i] = malloc(72);
    pthread_barrier_wait(&allocated);
    for (int i = HANDED_OVER; i < BLOCKS; i++)
        free(blocks[self][i]);
    for (int i = 0; i < HANDED_OVER; i++)
        free(blocks[neighbour][i]);
    return NULL;
}

int main(void)
{
    pthread_t threads[THREADS];
    pthread_barrier_init(&allocated, NULL, THREADS);
    for (long t = 0; t < THREADS; t++)
        pthread_create(&threads[t], NULL, work, (void *)t);
    for (int t = 0; t < THREADS; t++)
        pthread_join(threads[t], NULL);
    pthread_barrier_destroy(&allocated);
    return 0;
}
