/* Thread churn: 10,000 short-lived threads, a few at a time, each
 * allocating and freeing a mix of sizes and freeing one block left by an
 * earlier thread. Whatever an exiting thread caches must come back: the
 * resident set may not keep growing with the number of threads.
 *
 * Usage: frontend_threadcache_churn THREADS_TOTAL CONCURRENT
 */
#include "check.h"
#include "memory.h"
#include "pattern.h"

#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>

#define BLOCKS_PER_THREAD 96

/* One block handed from each thread to a later one (a cross-thread free
 * of memory whose allocating thread has exited). */
static struct {
    pthread_mutex_t lock;
    void *ptr;
    uint64_t seed;
    size_t size;
} handoff = {PTHREAD_MUTEX_INITIALIZER, NULL, 0, 0};

static void *worker(void *arg)
{
    uint64_t id = (uintptr_t)arg;
    void *blocks[BLOCKS_PER_THREAD];
    size_t sizes[BLOCKS_PER_THREAD];
    for (int i = 0; i < BLOCKS_PER_THREAD; i++) {
        /* 16 B .. 16 KiB, plus one 64 KiB and one 256 KiB block */
        sizes[i] = i == 0 ? 65536 : i == 1 ? 262144 : (size_t)16 << (i % 11);
        blocks[i] = malloc(sizes[i]);
        REQUIRE(blocks[i] != NULL);
        pattern_fill(blocks[i], sizes[i], id * 1000 + (uint64_t)i);
    }
    for (int i = 0; i < BLOCKS_PER_THREAD; i++) {
        CHECK_EQ(pattern_mismatch(blocks[i], sizes[i], id * 1000 + (uint64_t)i), PATTERN_OK);
        if (i != 2)
            free(blocks[i]);
    }
    pthread_mutex_lock(&handoff.lock);
    if (handoff.ptr) {
        CHECK_EQ(pattern_mismatch(handoff.ptr, handoff.size, handoff.seed), PATTERN_OK);
        free(handoff.ptr);
    }
    handoff.ptr = blocks[2];
    handoff.size = sizes[2];
    handoff.seed = id * 1000 + 2;
    pthread_mutex_unlock(&handoff.lock);
    return NULL;
}

static void run_threads(unsigned first, unsigned total, unsigned concurrent)
{
    pthread_t tids[concurrent];
    for (unsigned base = first; base < first + total; base += concurrent) {
        unsigned n = first + total - base < concurrent ? first + total - base : concurrent;
        for (unsigned i = 0; i < n; i++)
            REQUIRE(pthread_create(&tids[i], NULL, worker, (void *)(uintptr_t)(base + i)) ==
                    0);
        for (unsigned i = 0; i < n; i++)
            pthread_join(tids[i], NULL);
    }
}

int main(int argc, char **argv)
{
    if (argc != 3) {
        fprintf(stderr, "usage: %s THREADS_TOTAL CONCURRENT\n", argv[0]);
        return 2;
    }
    unsigned total = (unsigned)strtoul(argv[1], NULL, 10);
    unsigned concurrent = (unsigned)strtoul(argv[2], NULL, 10);
    REQUIRE(total >= 200 && concurrent >= 1 && concurrent <= 64);

    unsigned warmup = 100;
    run_threads(0, warmup, concurrent);
    size_t rss_before = rss_bytes();
    run_threads(warmup, total - warmup, concurrent);
    size_t rss_after = rss_bytes();
    free(handoff.ptr);

    size_t growth = rss_after > rss_before ? rss_after - rss_before : 0;
    printf("resident: %zu KiB after %u threads, %zu KiB after %u (growth %zu KiB)\n",
           rss_before >> 10, warmup, rss_after >> 10, total, growth >> 10);
    CHECK(growth < ((size_t)200 << 20));
    return check_status();
}
