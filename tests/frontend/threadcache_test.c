/* Per-thread caches (src/frontend/threadcache.c): a thread gets its slab on
 * its first slow-path call and gives everything back when it exits; calls
 * from its later thread-exit code go to the central layer and leave no
 * slab behind; together the caches hold about COREALLOC_THREAD_CACHES_BYTES
 * at most; flushing empties the caller's cache; a forked child keeps only
 * the forking thread's cache. No block is stranded. */
#include <pthread.h>
#include <stdint.h>
#include <sys/wait.h>
#include <unistd.h>

#include "api/init.h"
#include "check.h"
#include "core/central.h"
#include "frontend/threadcache.h"
#include "platform/options.h"

#define KIB ((size_t)1 << 10)

static const size_t sizes[] = {1024, 2048, 4096, 8192, 16384};
#define SIZES (sizeof sizes / sizeof sizes[0])
#define PER_SIZE 64 /* more than a batch of each */

static unsigned threads_with_caches(void)
{
    unsigned n;
    tcache_bytes_held(&n);
    return n;
}

/* Allocates and frees PER_SIZE blocks of each size through the cache;
 * returns how many of the allocations reached the central layer. */
static unsigned churn(void)
{
    void *blocks[SIZES][PER_SIZE];
    unsigned refills = 0;
    for (unsigned s = 0; s < SIZES; s++)
        for (unsigned i = 0; i < PER_SIZE; i++) {
            bool refilled;
            REQUIRE((blocks[s][i] = tcache_alloc_slow(sc_of(sizes[s]), &refilled)) != NULL);
            refills += refilled;
        }
    for (unsigned s = 0; s < SIZES; s++)
        for (unsigned i = 0; i < PER_SIZE; i++)
            tcache_free_slow(blocks[s][i], sc_of(sizes[s]));
    return refills;
}

static void *first_use(void *arg)
{
    unsigned before = *(unsigned *)arg;
    CHECK_EQ(threads_with_caches(), before); /* a new thread has no cache yet */
    unsigned refills = churn();
    CHECK_EQ(threads_with_caches(), before + 1);
    CHECK_MSG(tcache_bytes_held(NULL) > 0, "the cache kept nothing of what it freed");
    /* An empty stack refills a batch at a time; the rest are hits. */
    CHECK_MSG(refills >= SIZES && refills <= SIZES * PER_SIZE / 2, "%u of %u allocations refilled", refills,
              (unsigned)(SIZES * PER_SIZE));
    bool refilled;
    void *p = tcache_alloc_slow(sc_of(sizes[0]), &refilled);
    CHECK_MSG(p && !refilled, "an allocation from a warm cache reached the central layer");
    tcache_free_slow(p, sc_of(sizes[0]));
    return NULL;
}

/* Runs after the cache's own exit destructor: its key was created later. */
static pthread_key_t late_key;
static bool late_call_ran;

static void late_destructor(void *value)
{
    (void)value;
    unsigned before = threads_with_caches();
    bool refilled;
    void *p = tcache_alloc_slow(sc_of(100), &refilled);
    CHECK(p != NULL);
    tcache_free_slow(p, sc_of(100));
    CHECK_MSG(threads_with_caches() == before, "a call after the thread's exit made it a new cache");
    late_call_ran = true;
}

static void *exit_late(void *arg)
{
    (void)arg;
    churn();
    pthread_setspecific(late_key, &late_key);
    return NULL;
}

static void *budgeted(void *arg)
{
    size_t budget = *(size_t *)arg;
    churn();
    /* Without the budget every class would keep a batch: 288 KiB here. */
    size_t held = tcache_bytes_held(NULL);
    CHECK_MSG(held <= 2 * budget, "one thread's cache holds %zu KiB, budget %zu KiB", held / KIB,
              budget / KIB);
    return NULL;
}

static void run(void *(*f)(void *), void *arg)
{
    pthread_t thread;
    REQUIRE(pthread_create(&thread, NULL, f, arg) == 0);
    pthread_join(thread, NULL);
}

static pthread_barrier_t forked;

static void *wait_for_fork(void *arg)
{
    (void)arg;
    churn();
    pthread_barrier_wait(&forked); /* cache built */
    pthread_barrier_wait(&forked); /* fork done */
    return NULL;
}

static void test_fork(void)
{
    pthread_t other;
    pthread_barrier_init(&forked, NULL, 2);
    REQUIRE(pthread_create(&other, NULL, wait_for_fork, NULL) == 0);
    pthread_barrier_wait(&forked);
    churn(); /* this thread's own cache */
    CHECK_EQ(threads_with_caches(), 2);
    pid_t pid = fork();
    REQUIRE(pid >= 0);
    if (pid == 0)
        _exit(threads_with_caches() == 1 ? 0 : 1);
    int status;
    REQUIRE(waitpid(pid, &status, 0) == pid);
    CHECK_MSG(WIFEXITED(status) && WEXITSTATUS(status) == 0,
              "the child kept the caches of threads it does not have (status %#x)", status);
    pthread_barrier_wait(&forked);
    pthread_join(other, NULL);
}

int main(void)
{
    init_ensure();
    REQUIRE(pthread_key_create(&late_key, late_destructor) == 0);
    struct central_class_stats before[SIZES], after;
    for (unsigned s = 0; s < SIZES; s++)
        central_class_stats(sc_of(sizes[s]), &before[s]);
    unsigned threads = threads_with_caches();
    size_t held = tcache_bytes_held(NULL);

    run(first_use, &threads);
    CHECK_EQ(threads_with_caches(), threads);
    CHECK_MSG(tcache_bytes_held(NULL) == held, "an exited thread's cache still holds %zu bytes",
              tcache_bytes_held(NULL) - held);

    run(exit_late, NULL);
    CHECK(late_call_ran);
    CHECK_EQ(threads_with_caches(), threads);

    opt.thread_caches_bytes = 64 * KIB;
    size_t budget = 64 * KIB; /* the whole of it: the only cache */
    run(budgeted, &budget);
    opt.thread_caches_bytes = 64 * KIB * KIB;

    test_fork();
    CHECK_MSG(tcache_bytes_held(NULL) > 0, "this thread's cache kept nothing");
    tcache_flush_current();
    CHECK_EQ(tcache_bytes_held(NULL), 0);

    central_trim();
    for (unsigned s = 0; s < SIZES; s++) {
        central_class_stats(sc_of(sizes[s]), &after);
        CHECK_MSG(after.blocks_out == before[s].blocks_out, "%zu-byte blocks: %lu out, %lu before",
                  sizes[s], (unsigned long)after.blocks_out, (unsigned long)before[s].blocks_out);
    }
    return check_status();
}
