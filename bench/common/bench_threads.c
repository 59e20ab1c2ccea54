#include "bench_threads.h"

#include "bench_report.h"

#include <errno.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

/* Small stacks keep 256-thread runs cheap in address space; no benchmark
 * recurses deeply except barnes-hut, which stays well inside this. */
#define BENCH_THREAD_STACK_BYTES (256 * 1024)

static pthread_t start_thread(void *(*body)(void *), void *arg, int detach_state)
{
    pthread_attr_t attr;
    pthread_attr_init(&attr);
    pthread_attr_setstacksize(&attr, BENCH_THREAD_STACK_BYTES);
    pthread_attr_setdetachstate(&attr, detach_state);
    pthread_t thread;
    int error = pthread_create(&thread, &attr, body, arg);
    pthread_attr_destroy(&attr);
    if (error != 0)
        bench_check_failed("pthread_create: %s", strerror(error));
    return thread;
}

pthread_t bench_thread_start(void *(*body)(void *), void *arg)
{
    return start_thread(body, arg, PTHREAD_CREATE_JOINABLE);
}

void bench_thread_start_detached(void *(*body)(void *), void *arg)
{
    start_thread(body, arg, PTHREAD_CREATE_DETACHED);
}

void bench_thread_join(pthread_t thread)
{
    int error = pthread_join(thread, NULL);
    if (error != 0)
        bench_check_failed("pthread_join: %s", strerror(error));
}

void bench_sleep_seconds(double seconds)
{
    struct timespec remaining;
    remaining.tv_sec = (time_t)seconds;
    remaining.tv_nsec = (long)((seconds - (double)remaining.tv_sec) * 1e9);
    while (nanosleep(&remaining, &remaining) != 0 && errno == EINTR)
        ;
}

int bench_online_cpus(void)
{
    long cpus = sysconf(_SC_NPROCESSORS_ONLN);
    return cpus > 0 ? (int)cpus : 1;
}
