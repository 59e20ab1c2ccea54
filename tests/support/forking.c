#include "forking.h"

#include <stdio.h>
#include <stdlib.h>
#include <sys/wait.h>
#include <unistd.h>

#include "check.h"
#include "pattern.h"

int fork_count_argument(int argc, char **argv)
{
    if (argc != 2) {
        fprintf(stderr, "usage: %s FORKS\n", argv[0]);
        exit(2);
    }
    int forks = atoi(argv[1]);
    REQUIRE(forks > 0);
    return forks;
}

void forked_child_allocation(size_t size, uint64_t seed)
{
    void *p = malloc(size);
    if (!p)
        _exit(3);
    pattern_fill(p, size, seed);
    if (pattern_mismatch(p, size, seed) != PATTERN_OK)
        _exit(4);
    free(p);
}

void fork_and_check_child(int step, void (*child)(int step))
{
    pid_t pid = fork();
    REQUIRE(pid >= 0);
    if (pid == 0)
        child(step);
    int status;
    REQUIRE(waitpid(pid, &status, 0) == pid);
    CHECK_MSG(WIFEXITED(status) && WEXITSTATUS(status) == 0, "fork %d: child status %#x (exit %d, signal %d)",
              step, status, WIFEXITED(status) ? WEXITSTATUS(status) : -1,
              WIFSIGNALED(status) ? WTERMSIG(status) : 0);
}
