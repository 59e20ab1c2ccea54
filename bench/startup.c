/* startup: what a short process costs. Runs a child N times, one after
 * another: this program again (posix_spawn of /proc/self/exe with -c, the
 * environment, LD_PRELOAD with it, inherited), which allocates a few blocks
 * of a few sizes, writes and frees them, and exits. Reports processes per
 * second. A shell pipeline, a build's compiler, assembler and linker runs,
 * a test suite's thousands of short programs pay an allocator's start-up
 * and exit on every process; a fast path that wins back half a millisecond
 * needs a million calls. */
#include "bench_args.h"
#include "bench_clock.h"
#include "bench_report.h"

#include <spawn.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>

extern char **environ;

/* What the child allocates: one block of each size, a few times over. */
static int child(void)
{
    static const size_t sizes[] = { 16, 48, 128, 512, 2048, 8192, 65536 };
    enum { ROUNDS = 4, COUNT = sizeof sizes / sizeof sizes[0] };
    void *blocks[ROUNDS][COUNT];
    for (int r = 0; r < ROUNDS; r++)
        for (int s = 0; s < COUNT; s++) {
            blocks[r][s] = bench_check_alloc(malloc(sizes[s]), "child block");
            memset(blocks[r][s], r + s, sizes[s] < 256 ? sizes[s] : 256);
        }
    for (int r = 0; r < ROUNDS; r++)
        for (int s = 0; s < COUNT; s++) {
            if (((unsigned char *)blocks[r][s])[0] != (unsigned char)(r + s))
                bench_check_failed("startup: a child's block lost its contents");
            free(blocks[r][s]);
        }
    return 0;
}

int main(int argc, char **argv)
{
    long processes = 200;
    bool is_child = false;
    const struct bench_option options[] = {
        BENCH_LONG('n', "processes", &processes, 1, 1L << 24),
        BENCH_FLAG('c', "be one child (internal)", &is_child),
        BENCH_OPTIONS_END,
    };
    const struct bench_command command = { "startup", options, NULL, 0, 0 };
    bench_parse_command(&command, argc, argv);
    if (is_child)
        return child();

    char *child_argv[] = { argv[0], "-c", NULL };
    double start = bench_now_seconds();
    for (long i = 0; i < processes; i++) {
        pid_t pid;
        int err = posix_spawn(&pid, "/proc/self/exe", NULL, NULL, child_argv, environ);
        if (err)
            bench_check_failed("startup: posix_spawn: %s", strerror(err));
        int status;
        if (waitpid(pid, &status, 0) != pid || !WIFEXITED(status) || WEXITSTATUS(status) != 0)
            bench_check_failed("startup: child %ld did not exit with 0", i);
    }
    double elapsed = bench_now_seconds() - start;
    bench_result("startup", "processes=%ld seconds=%.6f processes_per_sec=%.1f ms_per_process=%.4f", processes,
                 elapsed, (double)processes / elapsed, elapsed * 1000.0 / (double)processes);
    return 0;
}
