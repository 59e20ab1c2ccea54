/* Where fresh blocks are cut from: each CPU from a superblock of its own,
 * so that the blocks of threads running side by side on two CPUs share no
 * page (whose lines the cores' prefetchers would pull across), but without
 * a superblock more than needed.
 *
 *   cut apart   two threads on two CPUs take a class's blocks by turns, a
 *               refill at a time: no page holds blocks of both
 *   cut moved   one thread takes blocks while moving from CPU to CPU: they
 *               all come from one superblock
 *   cut after   a thread on a second CPU takes blocks of a class another
 *               thread has finished with: after a few refills it cuts
 *               from that thread's superblock, not only from new ones
 *
 * Exits 77 (skipped) where fewer than two CPUs can be used. */
#define _GNU_SOURCE
#include <pthread.h>
#include <sched.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "check.h"
#include "memory.h"
#include "pinning.h"
#include "probe.h"

/* A class nothing else here uses, so its superblocks are the test's. */
#define SIZE 208
#define TURNS 16
#define PER_TURN 64 /* a refill's worth */
#define PAGE 4096

#define AFTER 3000 /* more than two superblocks' free blocks hold, less than three */
static int cpus[2];
static void *blocks[2][AFTER];
static pthread_barrier_t turn;

/* Two CPUs this process may run on, or exits 77. */
static void find_two_cpus(void)
{
    if (!first_two_cpus(cpus)) {
        puts("fewer than two CPUs: nothing to check");
        exit(77);
    }
}

static void *take_by_turns(void *arg)
{
    int me = (int)(intptr_t)arg;
    REQUIRE(pin_to_cpu(cpus[me]));
    for (int t = 0; t < TURNS; t++)
        for (int side = 0; side < 2; side++) {
            if (side == me)
                for (int i = 0; i < PER_TURN; i++)
                    REQUIRE((blocks[me][t * PER_TURN + i] = malloc(SIZE)) != NULL);
            pthread_barrier_wait(&turn);
        }
    return NULL;
}

static void apart(void)
{
    pthread_t threads[2];
    REQUIRE(pthread_barrier_init(&turn, NULL, 2) == 0);
    for (intptr_t i = 0; i < 2; i++)
        REQUIRE(pthread_create(&threads[i], NULL, take_by_turns, (void *)i) == 0);
    for (int i = 0; i < 2; i++)
        pthread_join(threads[i], NULL);
    unsigned shared = 0;
    for (int i = 0; i < TURNS * PER_TURN; i++) {
        uintptr_t first = (uintptr_t)blocks[0][i] / PAGE, last = ((uintptr_t)blocks[0][i] + SIZE - 1) / PAGE;
        bool both = false;
        for (int j = 0; j < TURNS * PER_TURN && !both; j++) {
            uintptr_t b_first = (uintptr_t)blocks[1][j] / PAGE, b_last = ((uintptr_t)blocks[1][j] + SIZE - 1) / PAGE;
            both = b_first <= last && first <= b_last;
        }
        shared += both;
    }
    printf("blocks of the first thread in a page with blocks of the second: %u of %d\n", shared, TURNS * PER_TURN);
    CHECK_EQ(shared, 0);
}

/* Superblocks of the test's class. */
static long long class_superblocks(void)
{
    char cls[32];
    snprintf(cls, sizeof cls, "{\"size\":%d,", SIZE);
    return stats_number_in(cls, "superblocks");
}

static void moved(void)
{
    for (int t = 0; t < TURNS; t++) {
        REQUIRE(pin_to_cpu(cpus[t % 2]));
        for (int i = 0; i < PER_TURN; i++)
            REQUIRE((blocks[0][t * PER_TURN + i] = malloc(SIZE)) != NULL);
    }
    long long superblocks = class_superblocks();
    printf("superblocks of %d-byte blocks after %d of them taken on two CPUs by turns: %lld\n", SIZE,
           TURNS * PER_TURN, superblocks);
    CHECK_EQ(superblocks, 1);
}

static void *take_on_second(void *arg)
{
    (void)arg;
    REQUIRE(pin_to_cpu(cpus[1]));
    for (int i = 0; i < AFTER; i++)
        REQUIRE((blocks[1][i] = malloc(SIZE)) != NULL);
    return NULL;
}

static void after(void)
{
    REQUIRE(pin_to_cpu(cpus[0]));
    for (int i = 0; i < TURNS * PER_TURN; i++)
        REQUIRE((blocks[0][i] = malloc(SIZE)) != NULL);
    /* Half of them back, to their superblock (a trim empties the caches). */
    for (int i = 0; i < TURNS * PER_TURN; i += 2)
        free(blocks[0][i]);
    int (*trim)(size_t) = (int (*)(size_t))corealloc_symbol("malloc_trim");
    trim(0);
    long long before = class_superblocks();
    pthread_t second;
    REQUIRE(pthread_create(&second, NULL, take_on_second, NULL) == 0);
    pthread_join(second, NULL);
    long long superblocks = class_superblocks();
    printf("superblocks of %d-byte blocks: %lld, then %lld once a thread on another CPU took %d more\n", SIZE,
           before, superblocks, AFTER);
    /* A superblock holds 1260 of them: the first one's free blocks and two
     * new superblocks hold them all, three new ones are needed without it. */
    CHECK(superblocks <= before + 2);
}

int main(int argc, char **argv)
{
    if (!corealloc_active()) {
        puts("corealloc is not loaded: nothing to check");
        return 0;
    }
    find_two_cpus();
    const char *mode = argc > 1 ? argv[1] : "";
    if (!strcmp(mode, "apart"))
        apart();
    else if (!strcmp(mode, "moved"))
        moved();
    else if (!strcmp(mode, "after"))
        after();
    else {
        fprintf(stderr, "usage: cut apart|moved|after\n");
        return 2;
    }
    return check_status();
}
