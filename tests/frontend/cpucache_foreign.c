/* A block smaller than a cache line that one CPU cut and another frees
 * does not go back out on the freeing CPU: its neighbours are in use where
 * it was cut, and a thread there writing them while a thread here writes
 * it would make every write cross cores (Hoard's cache-scratch: the main
 * thread allocates, each worker frees one block and allocates its own).
 * Checked on two CPUs, in the per-CPU front end: a thread on CPU a
 * allocates, the main thread on CPU b frees; the block is not the next
 * one b hands out; freed twice there, it is reported and kept once; and
 * once a batch of them has gathered on b, they go back to a, where
 * another thread's allocations find them again. */
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "check.h"
#include "pinning.h"
#include "probe.h"
#include "threads.h"

#define SIZE 16            /* a class of 16-byte blocks: four to a line */
#define WARM 3000          /* allocated on CPU a first: the last ones are cut there */
#define FREED_ON_B 200     /* more than a batch (64) */
#define LOOK_ON_A 20000    /* allocations on a that must find one of them */

static void *blocks[WARM];

static bool among(void *const *set, size_t n, const void *p)
{
    for (size_t i = 0; i < n; i++)
        if (set[i] == p)
            return true;
    return false;
}

static int cpu_a;
static void *first;
static size_t back, first_seen;

static void *allocate_on_a(void *arg)
{
    (void)arg;
    REQUIRE(pin_to_cpu(cpu_a));
    for (size_t i = 0; i < WARM; i++)
        REQUIRE((blocks[i] = malloc(SIZE)) != NULL);
    return NULL;
}

static void *got[LOOK_ON_A];

static void *look_on_a(void *arg)
{
    (void)arg;
    REQUIRE(pin_to_cpu(cpu_a));
    for (size_t n = 0; n < LOOK_ON_A; n++) {
        REQUIRE((got[n] = malloc(SIZE)) != NULL);
        back += among(&blocks[WARM - FREED_ON_B], FREED_ON_B, got[n]);
        first_seen += got[n] == first;
    }
    return NULL;
}

int main(void)
{
    if (!corealloc_active()) {
        puts("corealloc is not loaded: nothing to check");
        return 77;
    }
    const char *(*frontend)(void) = (const char *(*)(void))corealloc_symbol("corealloc_frontend");
    int cpus[2];
    if (strcmp(frontend(), "rseq") != 0 || !first_two_cpus(cpus) || !pin_to_cpu(cpus[1])) {
        puts("needs the per-CPU front end and two CPUs: skipped");
        return 77;
    }
    cpu_a = cpus[0];
    int b = cpus[1];
    run_threads(1, allocate_on_a);
    void **from_a = &blocks[WARM - FREED_ON_B];
    first = from_a[0];
    free(first);
    void *next = malloc(SIZE);
    REQUIRE(next != NULL);
    CHECK_MSG(next != first, "CPU %d handed out at once the block CPU %d cut that it had just freed", b, cpu_a);
    free(next);
    free(first); /* a double free: reported, and the block kept once */
    for (size_t i = 1; i < FREED_ON_B; i++)
        free(from_a[i]);

    run_threads(1, look_on_a);
    printf("%zu of the %d blocks freed on CPU %d came back to CPU %d within %d allocations\n", back,
           FREED_ON_B, b, cpu_a, LOOK_ON_A);
    CHECK_MSG(back > 0, "no block freed on CPU %d came back to CPU %d, which cut them", b, cpu_a);
    CHECK_MSG(first_seen <= 1, "the block freed twice came out %zu times", first_seen);
    for (size_t i = 0; i < LOOK_ON_A; i++)
        free(got[i]);
    for (size_t i = 0; i < WARM - FREED_ON_B; i++)
        free(blocks[i]);
    return check_status();
}
