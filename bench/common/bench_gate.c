#include "bench_gate.h"

#include "bench_clock.h"

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
