/* A CPU whose allocations another CPU frees (a producer, its consumer
 * elsewhere) runs empty over and over while the program holds a few
 * hundred blocks: its stack grows with that demand only up to the first
 * 256 KiB of the CPU's growth, not further, as the program does not hold
 * what a larger stack would keep. Whatever the program frees there later
 * fills the stack to its capacity and stays resident: a producer's CPU
 * that also ran a consumer held 1.1 MB of 64-byte blocks where the
 * program had 64 KiB in flight (consume at two threads). Thread P on one
 * CPU allocates, thread C on another frees what P hands it, through a
 * ring of RING rounds; then 1 MiB of blocks that C allocated is freed on
 * P's CPU: what that CPU keeps of them is its stack's capacity. The
 * purger is off (it would drain the caches). */
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>

#include "check.h"
#include "memory.h"
#include "pinning.h"
#include "threads.h"

#define SIZE 64u
#define ROUND 64u     /* blocks a hand-over */
#define RING 8u       /* hand-overs in flight: 512 blocks, 32 KiB */
#define ROUNDS 4000u  /* 256,000 blocks: far more growth misses than a MiB of growth takes */
#define LATER 16384u  /* 1 MiB of blocks freed on P's CPU at the end */

static int cpus[2];
static void *ring[RING][ROUND];
static atomic_uint produced, consumed;
static void *later[LATER];

static void *consumer(void *arg)
{
    (void)arg;
    REQUIRE(pin_to_cpu(cpus[1]));
    for (unsigned r = 0; r < ROUNDS; r++) {
        while (atomic_load_explicit(&produced, memory_order_acquire) == r)
            ;
        for (unsigned i = 0; i < ROUND; i++)
            free(ring[r % RING][i]);
        atomic_store_explicit(&consumed, r + 1, memory_order_release);
    }
    for (unsigned i = 0; i < LATER; i++)
        REQUIRE((later[i] = malloc(SIZE)) != NULL);
    return NULL;
}

static void *producer(void *arg)
{
    (void)arg;
    REQUIRE(pin_to_cpu(cpus[0]));
    /* A stack leaves its nursery once it runs full and empty by turns
     * here (as where a consumer frees on the producer's CPU too). */
    static void *first[8 * ROUND];
    for (unsigned turn = 0; turn < 16; turn++) {
        for (unsigned i = 0; i < 8 * ROUND; i++)
            REQUIRE((first[i] = malloc(SIZE)) != NULL);
        for (unsigned i = 0; i < 8 * ROUND; i++)
            free(first[i]);
    }
    for (unsigned r = 0; r < ROUNDS; r++) {
        while (r - atomic_load_explicit(&consumed, memory_order_acquire) >= RING)
            ;
        for (unsigned i = 0; i < ROUND; i++)
            REQUIRE((ring[r % RING][i] = malloc(SIZE)) != NULL);
        atomic_store_explicit(&produced, r + 1, memory_order_release);
    }
    return NULL;
}

static void *role(void *arg)
{
    return thread_number(arg) == 1 ? producer(arg) : consumer(arg);
}

int main(void)
{
    skip_without_cpu_caches();
    if (!first_two_cpus(cpus)) {
        puts("needs two CPUs: skipped");
        return 77;
    }
    run_threads(2, role);
    REQUIRE(pin_to_cpu(cpus[0]));
    long long before = stats_number("cached_bytes");
    for (unsigned i = 0; i < LATER; i++)
        free(later[i]);
    long long kept = stats_number("cached_bytes") - before;
    printf("of %u KiB freed on the producer's CPU, its cache kept %lld KiB\n", LATER * SIZE >> 10, kept >> 10);
    CHECK_MSG(kept <= 512 << 10, "the producer's stack grew to %lld KiB for 32 KiB in flight", kept >> 10);
    return check_status();
}
