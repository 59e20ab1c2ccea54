/* fork() while other threads drain every cache: the fork handlers take the
 * allocator's locks in the order every other path nests them (issue 13,
 * D6: draining every CPU's cache for malloc_trim holds the drain lock while
 * it returns objects under class locks; the handlers took class locks
 * first, then waited for the drain lock, and a fork under malloc_trim
 * hung). Two threads loop malloc, free and malloc_trim(0), so a drain is
 * nearly always under way, while the main thread forks; each child
 * allocates, frees and exits. With COREALLOC_PURGE_DELAY_MS=1 the purger
 * drains idle caches the same way, four times a millisecond.
 *
 * Usage: api_init_fork_order FORKS
 * A hang is a failure: the watchdog ends the parent when one fork and its
 * child take FORK_SECONDS (they take milliseconds, also on a loaded
 * machine), and a child after as long.
 */
#include "check.h"
#include "forking.h"
#include "pattern.h"
#include "watchdog.h"

#include <malloc.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>

#define FORK_SECONDS 10
#define TRIMMERS 2 /* one drains while the other waits to */
#define BLOCKS 16  /* a partial batch of each size: returning it takes the class lock */

static atomic_bool stop;

static size_t size_for(unsigned n)
{
    static const size_t sizes[] = {8, 48, 200, 1000, 5000, 30000, 100000, 1 << 20};
    return sizes[n % (sizeof sizes / sizeof sizes[0])];
}

/* Fills the caches it touches, then has malloc_trim drain them all. */
static void *trimmer(void *arg)
{
    (void)arg;
    void *blocks[BLOCKS];
    for (unsigned round = 0; !atomic_load(&stop); round++) {
        for (unsigned i = 0; i < BLOCKS; i++) {
            blocks[i] = malloc(size_for(round + i));
            REQUIRE(blocks[i] != NULL);
            pattern_fill(blocks[i], size_for(round + i), round + i);
        }
        for (unsigned i = 0; i < BLOCKS; i++) {
            REQUIRE(pattern_mismatch(blocks[i], size_for(round + i), round + i) == PATTERN_OK);
            free(blocks[i]);
        }
        malloc_trim(0);
    }
    return NULL;
}

static void child(int f)
{
    watchdog_arm(FORK_SECONDS, "child of fork", f);
    for (unsigned n = 0; n < 64; n++)
        forked_child_allocation(size_for(n), n);
    _exit(0);
}

int main(int argc, char **argv)
{
    int forks = fork_count_argument(argc, argv);
    pthread_t threads[TRIMMERS];
    for (int t = 0; t < TRIMMERS; t++)
        REQUIRE(pthread_create(&threads[t], NULL, trimmer, NULL) == 0);
    for (int f = 0; f < forks; f++) {
        watchdog_arm(FORK_SECONDS, "fork", f);
        fork_and_check_child(f, child);
    }
    watchdog_arm(FORK_SECONDS, "joining the trimmers after fork", forks);
    atomic_store(&stop, true);
    for (int t = 0; t < TRIMMERS; t++)
        pthread_join(threads[t], NULL);
    watchdog_stop();
    return check_status();
}
