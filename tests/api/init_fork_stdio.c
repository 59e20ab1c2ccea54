/* fork() while other threads hold stdio locks and allocate: the scenario
 * of glibc bug 19431 (issue 13, D7). One thread reads long lines with
 * getline, which holds the stream's lock while realloc grows the line
 * buffer into a large block; one flushes every stream with fflush(NULL),
 * which holds the stream list lock while it waits for that stream's lock;
 * one reallocates large blocks; the main thread forks. glibc takes the
 * stream list lock after the fork handlers have run: a handler that held
 * the page heap's lock then waited for the list lock, its holder for the
 * stream lock, and that one's holder, in realloc, for the page heap's lock.
 *
 * Usage: api_init_fork_stdio FORKS
 * A hang is a failure: the watchdog ends the parent when one fork and its
 * child take FORK_SECONDS, and a child after as long.
 */
#include "check.h"
#include "forking.h"
#include "watchdog.h"

#include <pthread.h>
#include <stdbool.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#define FORK_SECONDS 10
#define LINE_BYTES 200000 /* getline's buffer grows past the small sizes */
#define LINES 4

static atomic_bool stop;
static FILE *lines;

static void *reader(void *arg)
{
    (void)arg;
    while (!atomic_load(&stop)) {
        char *line = NULL; /* a fresh buffer every time: every line reallocates */
        size_t capacity = 0;
        ssize_t got = getline(&line, &capacity, lines);
        if (got < 0)
            rewind(lines);
        else
            CHECK_EQ(got, LINE_BYTES + 1);
        free(line);
    }
    return NULL;
}

static void *flusher(void *arg)
{
    (void)arg;
    while (!atomic_load(&stop))
        fflush(NULL);
    return NULL;
}

static void *reallocator(void *arg)
{
    (void)arg;
    void *p = NULL;
    for (unsigned n = 1; !atomic_load(&stop); n++) {
        size_t size = 40000 + (size_t)(n * 2654435761u % (2u << 20));
        void *q = realloc(p, size);
        REQUIRE(q != NULL);
        p = q;
        if (n % 16 == 0) {
            free(p);
            p = NULL;
        }
    }
    free(p);
    return NULL;
}

static void child(int f)
{
    watchdog_arm(FORK_SECONDS, "child of fork", f);
    forked_child_allocation(LINE_BYTES, 1);
    _exit(0);
}

int main(int argc, char **argv)
{
    int forks = fork_count_argument(argc, argv);
    lines = tmpfile();
    REQUIRE(lines != NULL);
    static char line[LINE_BYTES + 1];
    memset(line, 'x', LINE_BYTES);
    line[LINE_BYTES] = '\n';
    for (int i = 0; i < LINES; i++)
        REQUIRE(fwrite(line, 1, sizeof line, lines) == sizeof line);
    rewind(lines);

    void *(*bodies[])(void *) = {reader, flusher, reallocator};
    enum { THREADS = sizeof bodies / sizeof bodies[0] };
    pthread_t threads[THREADS];
    for (int t = 0; t < THREADS; t++)
        REQUIRE(pthread_create(&threads[t], NULL, bodies[t], NULL) == 0);
    for (int f = 0; f < forks; f++) {
        watchdog_arm(FORK_SECONDS, "fork", f);
        fork_and_check_child(f, child);
    }
    watchdog_arm(FORK_SECONDS, "joining the threads after fork", forks);
    atomic_store(&stop, true);
    for (int t = 0; t < THREADS; t++)
        pthread_join(threads[t], NULL);
    watchdog_stop();
    fclose(lines);
    return check_status();
}
