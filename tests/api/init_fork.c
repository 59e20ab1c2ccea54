/* fork() while four threads allocate and free: repeated forks never
 * deadlock, the child can allocate and free (including blocks inherited
 * from the parent), and the parent's heap stays intact.
 *
 * Usage: api_init_fork FORKS
 */
#include "check.h"
#include "forking.h"
#include "pattern.h"

#include <pthread.h>
#include <signal.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#define LOADERS 4
#define INHERITED 64
#define CHILD_SECONDS 20

static atomic_bool stop;

static size_t size_for(uint64_t n)
{
    static const size_t sizes[] = {8, 24, 100, 512, 3000, 20000, 100000, 700000};
    return sizes[n % (sizeof sizes / sizeof sizes[0])];
}

static void *loader(void *arg)
{
    uint64_t id = (uintptr_t)arg;
    enum { LIVE = 32 };
    void *blocks[LIVE] = {0};
    uint64_t seeds[LIVE] = {0};
    for (uint64_t n = 0; !atomic_load(&stop); n++) {
        size_t i = n % LIVE;
        if (blocks[i]) {
            CHECK_EQ(pattern_mismatch(blocks[i], size_for(seeds[i]), seeds[i]), PATTERN_OK);
            free(blocks[i]);
        }
        seeds[i] = id << 40 | n;
        blocks[i] = malloc(size_for(seeds[i]));
        REQUIRE(blocks[i] != NULL);
        pattern_fill(blocks[i], size_for(seeds[i]), seeds[i]);
    }
    for (size_t i = 0; i < LIVE; i++)
        free(blocks[i]);
    return NULL;
}

/* The child: verify and free what the parent left, then allocate anew,
 * from this thread and from a new one. */
static void *child_work(void *arg)
{
    uint64_t base = (uintptr_t)arg;
    for (uint64_t n = 0; n < 400; n++) {
        void *p = malloc(size_for(n));
        if (!p)
            _exit(3);
        pattern_fill(p, size_for(n), base + n);
        if (pattern_mismatch(p, size_for(n), base + n) != PATTERN_OK)
            _exit(4);
        free(p);
    }
    return NULL;
}

static void child(void **inherited)
{
    alarm(CHILD_SECONDS); /* a deadlocked child dies of SIGALRM */
    for (size_t i = 0; i < INHERITED; i++) {
        if (pattern_mismatch(inherited[i], size_for(i), 0xF00D + i) != PATTERN_OK)
            _exit(5);
        free(inherited[i]);
    }
    child_work((void *)(uintptr_t)1);
    pthread_t t;
    if (pthread_create(&t, NULL, child_work, (void *)(uintptr_t)100000) != 0)
        _exit(6);
    pthread_join(t, NULL);
    exit(0);
}

/* Waits for pid at most CHILD_SECONDS + 10 seconds; returns its status. */
static int wait_child(pid_t pid)
{
    for (int ms = 0; ms < (CHILD_SECONDS + 10) * 1000; ms += 5) {
        int status;
        pid_t r = waitpid(pid, &status, WNOHANG);
        REQUIRE(r >= 0);
        if (r == pid)
            return status;
        nanosleep(&(struct timespec){0, 5000000}, NULL);
    }
    kill(pid, SIGKILL);
    waitpid(pid, NULL, 0);
    return -1;
}

int main(int argc, char **argv)
{
    int forks = fork_count_argument(argc, argv);

    void *inherited[INHERITED];
    for (size_t i = 0; i < INHERITED; i++) {
        inherited[i] = malloc(size_for(i));
        REQUIRE(inherited[i] != NULL);
        pattern_fill(inherited[i], size_for(i), 0xF00D + i);
    }
    pthread_t tids[LOADERS];
    for (uintptr_t i = 0; i < LOADERS; i++)
        REQUIRE(pthread_create(&tids[i], NULL, loader, (void *)(i + 1)) == 0);

    for (int f = 0; f < forks; f++) {
        pid_t pid = fork();
        REQUIRE(pid >= 0);
        if (pid == 0)
            child(inherited);
        int status = wait_child(pid);
        CHECK_MSG(status != -1, "fork %d: child deadlocked (killed)", f);
        CHECK_MSG(status == -1 || (WIFEXITED(status) && WEXITSTATUS(status) == 0),
                  "fork %d: child failed, status %#x (exit %d, signal %d)", f, status,
                  WIFEXITED(status) ? WEXITSTATUS(status) : -1,
                  WIFSIGNALED(status) ? WTERMSIG(status) : 0);
    }

    atomic_store(&stop, true);
    for (size_t i = 0; i < LOADERS; i++)
        pthread_join(tids[i], NULL);
    for (size_t i = 0; i < INHERITED; i++) {
        CHECK_EQ(pattern_mismatch(inherited[i], size_for(i), 0xF00D + i), PATTERN_OK);
        free(inherited[i]);
    }
    return check_status();
}
