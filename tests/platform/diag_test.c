/* Misuse reports (src/platform/diag.c): an invalid pointer is reported on
 * stderr as the README shows it and counted, also from many threads at
 * once; with COREALLOC_ABORT_ON_ERROR the report ends the process, as a
 * fatal error always does. */
#include <stdint.h>
#include <signal.h>
#include <stdio.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "capture.h"
#include "check.h"
#include "platform/diag.h"
#include "platform/options.h"
#include "threads.h"

#define THREADS 8
#define REPORTS 500

static void *report_many(void *arg)
{
    for (int i = 0; i < REPORTS; i++)
        diag_invalid_pointer("free", arg, "test");
    return NULL;
}

/* Runs f in a child with stderr captured; returns its wait status and, in
 * *said, what it wrote. */
static int in_child(void (*f)(void), const char **said)
{
    capture_stderr_begin();
    pid_t pid = fork();
    REQUIRE(pid >= 0);
    if (pid == 0) {
        f();
        _exit(0);
    }
    int status;
    REQUIRE(waitpid(pid, &status, 0) == pid);
    *said = capture_stderr_end();
    return status;
}

static void abort_on_error(void)
{
    opt.abort_on_error = true;
    diag_invalid_pointer("realloc", (void *)0x1234, "not allocated here");
}

static void fatal(void)
{
    diag_fatal("the page map cannot grow");
}

int main(void)
{
    options_init(); /* the defaults: report and go on */
    uint64_t before = diag_invalid_pointer_count();
    int on_stack;
    capture_stderr_begin();
    diag_invalid_pointer("free", &on_stack, "not allocated here");
    const char *said = capture_stderr_end();
    char want[128];
    snprintf(want, sizeof want, "corealloc: error: free(): invalid pointer %p (not allocated here); ignored\n",
             (void *)&on_stack);
    CHECK_MSG(!strcmp(said, want), "said %s", said);
    CHECK_EQ(diag_invalid_pointer_count(), before + 1);

    capture_stderr_begin();
    run_threads(THREADS, report_many);
    capture_stderr_end();
    CHECK_EQ(diag_invalid_pointer_count(), before + 1 + THREADS * REPORTS);

    int status = in_child(abort_on_error, &said);
    CHECK_MSG(WIFSIGNALED(status) && WTERMSIG(status) == SIGABRT, "abort_on_error: status %#x", status);
    CHECK_MSG(strstr(said, "corealloc: error: realloc(): invalid pointer 0x1234 (not allocated here); "
                           "aborting\n"),
              "abort_on_error said %s", said);
    status = in_child(fatal, &said);
    CHECK_MSG(WIFSIGNALED(status) && WTERMSIG(status) == SIGABRT, "diag_fatal: status %#x", status);
    CHECK_MSG(strstr(said, "corealloc: fatal: the page map cannot grow; aborting\n"), "diag_fatal said %s",
              said);
    return check_status();
}
