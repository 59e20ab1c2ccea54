/* The core's leaf counters (src/core/counters.c): mapped, held and purged
 * bytes add up, peaks follow the highest value ever reached and never come
 * down, also with many threads counting at once. */
#include <stdint.h>

#include "check.h"
#include "core/counters.h"
#include "threads.h"

#define THREADS 8
#define ROUNDS 100000

static size_t shared_peak;

static void *count(void *arg)
{
    size_t first = (thread_number(arg) - 1) * (size_t)ROUNDS;
    for (int i = 0; i < ROUNDS; i++) {
        counters_add_held(+1000);
        counters_add_mapped(1);
        counters_add_held(-1000);
        counters_raise_peak(&shared_peak, first + (size_t)i);
    }
    return NULL;
}

int main(void)
{
    struct counters c0, c;
    counters_read(&c0);
    CHECK(c0.mapped == 0 && c0.held == 0 && c0.purged_total == 0);

    counters_add_mapped(1000);
    counters_add_held(700);
    counters_add_held(-300);
    counters_add_purged(50);
    counters_add_purged(25);
    counters_read(&c);
    CHECK_EQ(c.mapped, 1000);
    CHECK_EQ(c.mapped_peak, 1000);
    CHECK_EQ(c.held, 400);
    CHECK_EQ(c.held_peak, 700); /* the peak stays where it was */
    CHECK_EQ(c.purged_total, 75);

    size_t peak = 10;
    counters_raise_peak(&peak, 5);
    CHECK_EQ(peak, 10);
    counters_raise_peak(&peak, 20);
    CHECK_EQ(peak, 20);

    run_threads(THREADS, count);
    counters_read(&c);
    CHECK_EQ(c.mapped, 1000 + THREADS * ROUNDS);
    CHECK_EQ(c.mapped_peak, c.mapped);
    CHECK_EQ(c.held, 400);
    /* At least one thread's 1000 on top of the 400, at most all of them. */
    CHECK_MSG(c.held_peak >= 1400 && c.held_peak <= 400 + 1000 * THREADS, "held peak %zu", c.held_peak);
    CHECK_EQ(shared_peak, THREADS * ROUNDS - 1); /* the highest any thread raised it to */
    return check_status();
}
