/* rusage-run: runs a command and writes its resource usage to a file, for
 * the benchmark driver. The driver cannot take peak RSS from its own wait4:
 * Linux carries the parent's high-water RSS across fork and exec into the
 * child's ru_maxrss, so every child of a Python process would report at
 * least the interpreter's size. Forked from this small program instead, the
 * command's ru_maxrss is its own.
 *
 * The allocator to test reaches the command as BENCH_CHILD_PRELOAD (set as
 * LD_PRELOAD in the child only), so this program never runs under it.
 *
 * Output: one line "exit=<status or -signal> max_rss_kib=N user_seconds=F
 * system_seconds=F voluntary_switches=N involuntary_switches=N". Exits with
 * the command's status (128 + signal when killed). */
#include <errno.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <unistd.h>

static double seconds(struct timeval time)
{
    return (double)time.tv_sec + (double)time.tv_usec * 1e-6;
}

int main(int argc, char **argv)
{
    if (argc < 4 || strcmp(argv[2], "--") != 0) {
        fprintf(stderr, "usage: rusage-run OUTPUT-FILE -- COMMAND [ARGUMENTS...]\n");
        return 2;
    }
    pid_t child = fork();
    if (child < 0) {
        perror("rusage-run: fork");
        return 2;
    }
    if (child == 0) {
        const char *preload = getenv("BENCH_CHILD_PRELOAD");
        if (preload != NULL && preload[0] != '\0')
            setenv("LD_PRELOAD", preload, 1);
        unsetenv("BENCH_CHILD_PRELOAD");
        execvp(argv[3], &argv[3]);
        fprintf(stderr, "rusage-run: cannot run %s: %s\n", argv[3], strerror(errno));
        _exit(127);
    }
    int status;
    struct rusage usage;
    while (wait4(child, &status, 0, &usage) < 0) {
        if (errno != EINTR) {
            perror("rusage-run: wait4");
            return 2;
        }
    }
    int exit_code = WIFEXITED(status) ? WEXITSTATUS(status) : -WTERMSIG(status);
    FILE *output = fopen(argv[1], "w");
    if (output == NULL) {
        perror("rusage-run: output file");
        return 2;
    }
    fprintf(output,
            "exit=%d max_rss_kib=%ld user_seconds=%.6f system_seconds=%.6f voluntary_switches=%ld "
            "involuntary_switches=%ld\n",
            exit_code, usage.ru_maxrss, seconds(usage.ru_utime), seconds(usage.ru_stime), usage.ru_nvcsw,
            usage.ru_nivcsw);
    fclose(output);
    return exit_code >= 0 ? exit_code : 128 - exit_code;
}
