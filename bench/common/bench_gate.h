/* Start gate (seed 000's fix to Larson): workers block at the gate until the
 * main thread has seen all of them arrive, started its clock and opened it,
 * so no worker does timed work outside the timed interval. Workers sleep
 * rather than spin, which matters with hundreds of threads on few cores. */
#ifndef BENCH_GATE_H
#define BENCH_GATE_H

#include <pthread.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stddef.h>

struct bench_gate {
    pthread_mutex_t lock;
    pthread_cond_t changed;
    int expected;
    int arrived;
    bool open;
};

void bench_gate_init(struct bench_gate *gate, int expected_workers);

/* Called by each worker: announces its arrival and waits for the opening. */
void bench_gate_pass(struct bench_gate *gate);

/* Called by the main thread: waits for all workers, opens the gate and
 * returns the start time of the timed interval. */
double bench_gate_open_when_ready(struct bench_gate *gate);

void bench_gate_destroy(struct bench_gate *gate);

/* Runs `threads` workers that each pass `gate` first: worker t runs
 * body(records + t * record_size), or body(NULL) when records is NULL.
 * Returns the seconds from the opening until the last one finished. */
double bench_run_gated(struct bench_gate *gate, long threads, void *(*body)(void *), void *records,
                       size_t record_size);

/* The same for fixed-time benchmarks: sets *stop `seconds` after the
 * opening. The clock stops after the last join: work finished after the
 * stop request is counted, so its time must be too. */
double bench_run_gated_for(struct bench_gate *gate, long threads, void *(*body)(void *), void *records,
                           size_t record_size, double seconds, atomic_bool *stop);

#endif
