/* Allocation sites whose live and allocated bytes are known, for the heap
 * profiler's tests (test_prof.py). Every site writes its blocks, so none
 * can be elided; each is its own function, which the profile must name.
 *
 *   single   leak_site keeps 4000 x 1000 bytes; churn_site allocates
 *            40000 x 1000 bytes and frees each at once
 *   threads  4 threads, each thread_leak_site keeping 1000 x 1000 bytes
 *   fork     after fork, the child keeps 3000 x 1000 bytes (child_site),
 *            the parent 2000 x 1000 (parent_site)
 *   dumps    first_site keeps 2000 x 1000 bytes; a profile is written
 *            (corealloc_profile_dump); second_site keeps 3000 x 1000; a
 *            profile on SIGUSR2; both written to the default names
 *   free_all churn_site as in single, then 10 rounds of handoff_site
 *            allocating 2000 x 1000 bytes that another thread frees:
 *            nothing is left live
 *   big      big_site allocates 8 MiB (past the size at which corealloc
 *            starts its purge thread, inside this call) and frees it */
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#define BLOCK 1000

/* The program is not linked with corealloc: the symbol comes with the
 * preloaded library. */
int corealloc_profile_dump(const char *path) __attribute__((weak));

static void *volatile kept; /* the last kept block: leaks stay reachable from nowhere else */

__attribute__((noinline)) static void keep(size_t count, void *(*site)(void))
{
    for (size_t i = 0; i < count; i++)
        kept = site();
}

/* A macro: the malloc call is the site's own. */
#define FILLED(byte)                         \
    do {                                     \
        void *p_ = malloc(BLOCK);            \
        if (!p_)                             \
            abort();                         \
        memset(p_, (byte), BLOCK);           \
        return p_;                           \
    } while (0)

__attribute__((noinline)) static void *leak_site(void) { FILLED(1); }
__attribute__((noinline)) static void *thread_leak_site(void) { FILLED(2); }
__attribute__((noinline)) static void *child_site(void) { FILLED(3); }
__attribute__((noinline)) static void *parent_site(void) { FILLED(4); }
__attribute__((noinline)) static void *first_site(void) { FILLED(5); }
__attribute__((noinline)) static void *second_site(void) { FILLED(6); }

__attribute__((noinline)) static void churn_site(void)
{
    void *p = malloc(BLOCK);
    if (!p)
        abort();
    memset(p, 7, BLOCK);
    kept = p;
    free(p);
}

#define HANDOFF 2000
__attribute__((noinline)) static void *handoff_site(void) { FILLED(8); }

#define BIG ((size_t)8 << 20)
__attribute__((noinline)) static void *big_site(void)
{
    void *p = malloc(BIG);
    if (!p)
        abort();
    memset(p, 9, BIG);
    return p;
}

static void *free_all_body(void *arg)
{
    void **blocks = arg;
    for (int i = 0; i < HANDOFF; i++)
        free(blocks[i]);
    return NULL;
}

static void *thread_body(void *arg)
{
    (void)arg;
    keep(1000, thread_leak_site);
    return NULL;
}

int main(int argc, char **argv)
{
    const char *mode = argc > 1 ? argv[1] : "single";
    if (!strcmp(mode, "single")) {
        keep(4000, leak_site);
        for (int i = 0; i < 40000; i++)
            churn_site();
    } else if (!strcmp(mode, "threads")) {
        pthread_t threads[4];
        for (int i = 0; i < 4; i++)
            if (pthread_create(&threads[i], NULL, thread_body, NULL))
                return 1;
        for (int i = 0; i < 4; i++)
            pthread_join(threads[i], NULL);
    } else if (!strcmp(mode, "fork")) {
        fflush(stdout);
        pid_t child = fork();
        if (child < 0)
            return 1;
        if (child == 0) {
            keep(3000, child_site);
            exit(0);
        }
        keep(2000, parent_site);
        int status;
        if (waitpid(child, &status, 0) != child || !WIFEXITED(status) || WEXITSTATUS(status))
            return 1;
    } else if (!strcmp(mode, "dumps")) {
        keep(2000, first_site);
        if (!corealloc_profile_dump || corealloc_profile_dump(NULL) != 0) {
            fprintf(stderr, "corealloc_profile_dump failed\n");
            return 1;
        }
        keep(3000, second_site);
        raise(SIGUSR2);
    } else if (!strcmp(mode, "free_all")) {
        for (int i = 0; i < 40000; i++)
            churn_site();
        static void *blocks[HANDOFF];
        for (int round = 0; round < 10; round++) {
            for (int i = 0; i < HANDOFF; i++)
                blocks[i] = handoff_site();
            pthread_t thread;
            if (pthread_create(&thread, NULL, free_all_body, blocks) || pthread_join(thread, NULL))
                return 1;
        }
    } else if (!strcmp(mode, "big")) {
        keep(1, big_site);
        free(kept);
    } else {
        fprintf(stderr, "usage: prof_sites single|threads|fork|dumps|free_all|big\n");
        return 2;
    }
    return 0;
}
