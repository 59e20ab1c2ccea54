/* fork() from a signal handler that interrupted malloc, in a program of one
 * thread (issue 13, D8). glibc makes fork async-signal-safe for a single
 * thread; corealloc's fork handlers must then not wait for a lock that the
 * interrupted call holds (they waited for ever), nor for one whose holder,
 * the purge thread while it runs, waits for such a lock. A profiling timer
 * interrupts a loop of malloc, realloc, free and malloc_trim; its handler
 * forks. In the child the handler returns, the interrupted call finishes,
 * and the child allocates, checks what it inherited and exits; the parent
 * reaps its children as it goes and checks its own blocks at the end.
 *
 * Usage: api_init_fork_signal FORKS
 * A hang is a failure: the watchdog ends the parent when its loop stalls
 * for STALL_SECONDS, and a child after as long.
 */
#include "check.h"
#include "forking.h"
#include "pattern.h"
#include "watchdog.h"

#include <errno.h>
#include <malloc.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/time.h>
#include <sys/wait.h>
#include <unistd.h>

#define STALL_SECONDS 10
#define LIVE 32

static volatile sig_atomic_t forks, fork_failures, in_child;
static void *blocks[LIVE];
static size_t sizes[LIVE];
static unsigned seeds[LIVE];

static void fork_now(int sig)
{
    (void)sig;
    if (in_child)
        return;
    int saved = errno;
    pid_t pid = fork();
    if (pid == 0) {
        in_child = 1;
        watchdog_arm(STALL_SECONDS, "child of fork", forks);
    } else if (pid > 0) {
        forks++;
    } else {
        fork_failures++;
    }
    errno = saved;
}

static size_t size_for(unsigned n)
{
    static const size_t table[] = {16, 100, 3000, 30000, 100000, 300000};
    return table[n % (sizeof table / sizeof table[0])];
}

/* The child: what it inherited is intact, and it can allocate. */
static void child(void)
{
    for (unsigned i = 0; i < LIVE; i++)
        if (blocks[i] && pattern_mismatch(blocks[i], sizes[i], seeds[i]) != PATTERN_OK)
            _exit(5);
    for (unsigned n = 0; n < 50; n++)
        forked_child_allocation(size_for(n), n);
    _exit(0);
}

static void reap(int options)
{
    int status;
    pid_t pid;
    while ((pid = waitpid(-1, &status, options)) > 0)
        CHECK_MSG(WIFEXITED(status) && WEXITSTATUS(status) == 0,
                  "child %d: status %#x (exit %d, signal %d)", (int)pid, status,
                  WIFEXITED(status) ? WEXITSTATUS(status) : -1, WIFSIGNALED(status) ? WTERMSIG(status) : 0);
}

int main(int argc, char **argv)
{
    int wanted = fork_count_argument(argc, argv);
    struct sigaction sa;
    memset(&sa, 0, sizeof sa);
    sa.sa_handler = fork_now;
    sa.sa_flags = SA_RESTART;
    REQUIRE(sigaction(SIGPROF, &sa, NULL) == 0);
    struct itimerval every = {.it_interval = {0, 500}, .it_value = {0, 500}};
    REQUIRE(setitimer(ITIMER_PROF, &every, NULL) == 0);

    for (unsigned n = 0; forks < wanted; n++) {
        if (in_child)
            child();
        if (n % 64 == 0) {
            watchdog_arm(STALL_SECONDS, "allocation loop after forks", forks);
            reap(WNOHANG);
        }
        unsigned i = n % LIVE;
        if (blocks[i]) {
            REQUIRE(pattern_mismatch(blocks[i], sizes[i], seeds[i]) == PATTERN_OK);
            if (n % 3 == 0) {
                free(blocks[i]);
                blocks[i] = NULL;
            } else { /* grows or shrinks, keeping what fits */
                size_t size = size_for(n);
                void *p = realloc(blocks[i], size);
                REQUIRE(p != NULL);
                blocks[i] = p;
                sizes[i] = size < sizes[i] ? size : sizes[i];
            }
        }
        if (!blocks[i]) {
            sizes[i] = size_for(n + i);
            seeds[i] = n;
            blocks[i] = malloc(sizes[i]);
            REQUIRE(blocks[i] != NULL);
        }
        pattern_fill(blocks[i], sizes[i], seeds[i]);
        if (n % 97 == 0)
            malloc_trim(0);
    }
    setitimer(ITIMER_PROF, &(struct itimerval){0}, NULL);
    watchdog_arm(STALL_SECONDS, "reaping children after forks", forks);
    reap(0);
    watchdog_stop();
    CHECK_EQ(fork_failures, 0);
    for (unsigned i = 0; i < LIVE; i++) {
        if (blocks[i])
            CHECK_EQ(pattern_mismatch(blocks[i], sizes[i], seeds[i]), PATTERN_OK);
        free(blocks[i]);
    }
    printf("%d forks from the signal handler\n", (int)forks);
    return check_status();
}
