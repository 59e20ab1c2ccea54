/* Thread creation and joining that end the run on failure: a benchmark
 * that silently ran with fewer threads would report a wrong number. */
#ifndef BENCH_THREADS_H
#define BENCH_THREADS_H

#include <pthread.h>

pthread_t bench_thread_start(void *(*body)(void *), void *arg);
void bench_thread_join(pthread_t thread);

/* For threads nobody joins (larson's successive generations). */
void bench_thread_start_detached(void *(*body)(void *), void *arg);

/* Sleeps for `seconds` of wall-clock time (the fixed-time benchmarks' interval). */
void bench_sleep_seconds(double seconds);

/* Online CPUs: the "perfect speedup" bound on this machine. */
int bench_online_cpus(void);

#endif
