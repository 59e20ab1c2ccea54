/* The fork registry of src/platform/lock.c: before fork every registered
 * lock is taken, after it the parent releases them all and the child
 * re-creates them, so a child can take a lock that a thread of the parent,
 * gone in the child, held at the fork. The registry's bound stops the
 * process rather than overflowing. */
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <sys/wait.h>
#include <unistd.h>

#include "check.h"
#include "platform/lock.h"

#define LOCKS 8

static lock_t locks[LOCKS];
static lock_t held_by_thread = LOCK_INIT;
static pthread_barrier_t taken, done;

/* Whether l is free: taken and given back at once. */
static bool is_free(lock_t *l)
{
    if (!lock_try(l))
        return false;
    lock_release(l);
    return true;
}

static void *hold_until_done(void *arg)
{
    (void)arg;
    lock_acquire(&held_by_thread);
    pthread_barrier_wait(&taken);
    pthread_barrier_wait(&done);
    lock_release(&held_by_thread);
    return NULL;
}

/* Runs f in a child; returns its wait status. */
static int in_child(void (*f)(void))
{
    fflush(stdout);
    pid_t pid = fork();
    REQUIRE(pid >= 0);
    if (pid == 0) {
        f();
        _exit(check_status());
    }
    int status;
    REQUIRE(waitpid(pid, &status, 0) == pid);
    return status;
}

static void child_after_fork(void)
{
    /* The holder thread does not exist here: only a re-created lock is free. */
    CHECK_MSG(!is_free(&held_by_thread), "a lock held at fork must still look held before the reset");
    lock_fork_child();
    CHECK(is_free(&held_by_thread));
    for (int i = 0; i < LOCKS; i++)
        CHECK_MSG(is_free(&locks[i]), "lock %d after the child's reset", i);
}

static void child_overflowing_registry(void)
{
    static lock_t many[1 << 16];
    for (size_t i = 0; i < sizeof many / sizeof many[0]; i++)
        lock_register_for_fork(&many[i]);
    CHECK_MSG(false, "registered %zu locks without stopping", sizeof many / sizeof many[0]);
}

int main(void)
{
    for (int i = 0; i < LOCKS; i++) {
        lock_reset(&locks[i]);
        lock_register_for_fork(&locks[i]);
    }
    lock_register_for_fork(&held_by_thread);

    lock_fork_prepare();
    for (int i = 0; i < LOCKS; i++)
        CHECK_MSG(!is_free(&locks[i]), "lock %d not taken by lock_fork_prepare", i);
    lock_fork_parent();
    for (int i = 0; i < LOCKS; i++)
        CHECK_MSG(is_free(&locks[i]), "lock %d not released by lock_fork_parent", i);

    /* A fork while another thread holds a registered lock. */
    pthread_t holder;
    pthread_barrier_init(&taken, NULL, 2);
    pthread_barrier_init(&done, NULL, 2);
    REQUIRE(pthread_create(&holder, NULL, hold_until_done, NULL) == 0);
    pthread_barrier_wait(&taken);
    int status = in_child(child_after_fork);
    CHECK_MSG(WIFEXITED(status) && WEXITSTATUS(status) == 0, "child status %#x", status);
    pthread_barrier_wait(&done);
    pthread_join(holder, NULL);

    status = in_child(child_overflowing_registry);
    CHECK_MSG(WIFSIGNALED(status) && WTERMSIG(status) == SIGABRT,
              "overflowing the registry: status %#x, not an abort", status);
    return check_status();
}
