#include "bench_gate.h"

#include "bench_clock.h"
#include "bench_threads.h"

#include <stdlib.h>

void bench_gate_init(struct bench_gate *gate, int expected_workers)
{
    pthread_mutex_init(&gate->lock, NULL);
    pthread_cond_init(&gate->changed, NULL);
    gate->expected = expected_workers;
    gate->arrived = 0;
    gate->open = false;
}

void bench_gate_pass(struct bench_gate *gate)
{
    pthread_mutex_lock(&gate->lock);
    gate->arrived++;
    pthread_cond_broadcast(&gate->changed);
    while (!gate->open)
        pthread_cond_wait(&gate->changed, &gate->lock);
    pthread_mutex_unlock(&gate->lock);
}

double bench_gate_open_when_ready(struct bench_gate *gate)
{
    pthread_mutex_lock(&gate->lock);
    while (gate->arrived < gate->expected)
        pthread_cond_wait(&gate->changed, &gate->lock);
    double start = bench_now_seconds();
    gate->open = true;
    pthread_cond_broadcast(&gate->changed);
    pthread_mutex_unlock(&gate->lock);
    return start;
}

void bench_gate_destroy(struct bench_gate *gate)
{
    pthread_cond_destroy(&gate->changed);
    pthread_mutex_destroy(&gate->lock);
}

double bench_run_gated(struct bench_gate *gate, long threads, void *(*body)(void *), void *records,
                       size_t record_size)
{
    return bench_run_gated_for(gate, threads, body, records, record_size, 0, NULL);
}

double bench_run_gated_for(struct bench_gate *gate, long threads, void *(*body)(void *), void *records,
                           size_t record_size, double seconds, atomic_bool *stop)
{
    pthread_t *workers = calloc((size_t)threads, sizeof *workers);
    if (!workers)
        abort(); /* the benchmark cannot run at all */
    bench_gate_init(gate, (int)threads);
    for (long t = 0; t < threads; t++)
        workers[t] = bench_thread_start(body, records ? (char *)records + (size_t)t * record_size : NULL);
    double start = bench_gate_open_when_ready(gate);
    if (stop) {
        bench_sleep_seconds(seconds);
        atomic_store(stop, true);
    }
    for (long t = 0; t < threads; t++)
        bench_thread_join(workers[t]);
    double elapsed = bench_now_seconds() - start;
    free(workers);
    return elapsed;
}
