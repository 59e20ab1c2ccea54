/* Waves of threads that exit together: glibc frees their thread memory
 * (TLS blocks, through free) while holding the lock it also takes in
 * pthread_create. Those frees can be a program's first overflowing ones, so
 * a purger started from a free could be created under that lock and
 * deadlock; corealloc starts it from allocations only. Each wave runs in a
 * fresh child (the chance comes once per process); a child that does not
 * finish in time is killed and counted. */
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "check.h"

#define CHILDREN 12
#define THREADS 256
#define WAVES 2
#define DEADLINE_MS 5000

static void *touch(void *arg)
{
    (void)arg;
    free(malloc(64));
    return NULL;
}

static void waves(void)
{
    for (int wave = 0; wave < WAVES; wave++) {
        pthread_t threads[THREADS];
        for (int i = 0; i < THREADS; i++)
            if (pthread_create(&threads[i], NULL, touch, NULL) != 0)
                _exit(2);
        for (int i = 0; i < THREADS; i++)
            pthread_join(threads[i], NULL);
    }
}

/* The child's exit status, or -1 after killing it at the deadline. */
static int finish(pid_t pid)
{
    for (int waited = 0; waited < DEADLINE_MS; waited += 10) {
        int status;
        if (waitpid(pid, &status, WNOHANG) == pid)
            return WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
        nanosleep(&(struct timespec){.tv_nsec = 10 * 1000 * 1000}, NULL);
    }
    kill(pid, SIGKILL);
    waitpid(pid, NULL, 0);
    return -1;
}

int main(void)
{
    int hung = 0, failed = 0;
    for (int c = 0; c < CHILDREN; c++) {
        pid_t pid = fork();
        REQUIRE(pid >= 0);
        if (pid == 0) {
            waves();
            _exit(0);
        }
        int status = finish(pid);
        hung += status == -1;
        failed += status > 0;
    }
    printf("%d children, %d waves of %d threads each: %d hung, %d failed\n", CHILDREN, WAVES, THREADS,
           hung, failed);
    CHECK_EQ(hung, 0);
    CHECK_EQ(failed, 0);
    return check_status();
}
