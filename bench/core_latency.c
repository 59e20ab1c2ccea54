/* core-latency: the time a cache line takes to go from one CPU to another
 * and back, measured just before a benchmark run. On virtual machines the
 * same two CPUs come in states far apart (here about 100 ns and 400 ns a
 * round trip, changing every few minutes), and any benchmark that hands
 * memory between threads ranks allocators differently in each; the driver
 * records the state beside every run so that a comparison can tell a
 * difference from a change of state.
 *
 * Two threads, pinned to the first two CPUs the process may use, pass a
 * counter back and forth through one line. Prints
 *   RESULT bench=core-latency roundtrip_ns=N
 * with N the median over -r rounds of -n passes (0 with fewer than two
 * CPUs). */
#define _GNU_SOURCE
#include "bench_args.h"
#include "bench_clock.h"
#include "bench_layout.h"
#include "bench_report.h"
#include "bench_threads.h"

#include <pthread.h>
#include <sched.h>
#include <stdatomic.h>
#include <stdlib.h>

static _Alignas(BENCH_CACHE_LINE) atomic_long token;
static long passes = 2000;
static int cpus[2];

static void pin(int cpu)
{
    cpu_set_t one;
    CPU_ZERO(&one);
    CPU_SET(cpu, &one);
    pthread_setaffinity_np(pthread_self(), sizeof one, &one);
}

/* Answers every odd value with the next even one, for `rounds` rounds. */
static void *answer(void *arg)
{
    long total = *(long *)arg * passes;
    pin(cpus[1]);
    for (long i = 0; i < total; i++) {
        while (atomic_load_explicit(&token, memory_order_acquire) != 2 * i + 1)
            ;
        atomic_store_explicit(&token, 2 * i + 2, memory_order_release);
    }
    return NULL;
}

static int by_value(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return x < y ? -1 : x > y;
}

int main(int argc, char **argv)
{
    long rounds = 9;
    const struct bench_option options[] = {
        BENCH_LONG('n', "passes per round", &passes, 1, 100000000),
        BENCH_LONG('r', "rounds", &rounds, 1, 1000),
        BENCH_OPTIONS_END,
    };
    const struct bench_command command = {"core-latency", options, NULL, 0, 0};
    bench_parse_command(&command, argc, argv);

    cpu_set_t allowed;
    int found = 0;
    if (sched_getaffinity(0, sizeof allowed, &allowed) == 0)
        for (int c = 0; c < CPU_SETSIZE && found < 2; c++)
            if (CPU_ISSET(c, &allowed))
                cpus[found++] = c;
    if (found < 2) {
        bench_result("core-latency", "roundtrip_ns=0");
        return 0;
    }
    pthread_t partner = bench_thread_start(answer, &rounds);
    pin(cpus[0]);
    double *per_round = malloc((size_t)rounds * sizeof *per_round);
    bench_check_alloc(per_round, "rounds");
    long value = 0;
    for (long r = 0; r < rounds; r++) {
        double start = bench_now_seconds();
        for (long i = 0; i < passes; i++, value += 2) {
            atomic_store_explicit(&token, value + 1, memory_order_release);
            while (atomic_load_explicit(&token, memory_order_acquire) != value + 2)
                ;
        }
        per_round[r] = (bench_now_seconds() - start) * 1e9 / (double)passes;
    }
    bench_thread_join(partner);
    qsort(per_round, (size_t)rounds, sizeof *per_round, by_value);
    bench_result("core-latency", "roundtrip_ns=%.1f", per_round[rounds / 2]);
    free(per_round);
    return 0;
}
