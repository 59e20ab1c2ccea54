/* The locks and the fork registry of src/platform/lock.c.
 *
 *  - Before fork every registered lock is taken, after it the parent
 *    releases them all and the child re-creates them, so a child can take
 *    a lock that a thread of the parent, gone in the child, held at the fork.
 *  - They are taken in rank order whatever the order of registration: a
 *    thread that holds an outer lock while it waits for an inner one is
 *    waited for, not deadlocked with (issue 13, D6).
 *  - The C library's stream list lock is taken first (glibc bug 19431,
 *    issue 13, D7): fflush(NULL) waits until the parent's handler.
 *  - The debug build stops a wait against the rank order.
 *  - The registry's bound stops the process rather than overflowing.
 * Each scenario that could hang runs under the watchdog. */
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "check.h"
#include "platform/lock.h"
#include "watchdog.h"

#define LOCKS 8
#define HANG_SECONDS 10

static lock_t locks[LOCKS];
static lock_t held_by_thread = LOCK_INIT;
static lock_t outer = LOCK_INIT, inner = LOCK_INIT; /* registered inner first */
static pthread_barrier_t taken, done;

static void sleep_ms(unsigned ms)
{
    nanosleep(&(struct timespec){.tv_sec = 0, .tv_nsec = (long)ms * 1000000}, NULL);
}

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
        watchdog_arm(HANG_SECONDS, "child scenario", 0);
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

static void registry(void)
{
    lock_fork_prepare();
    for (int i = 0; i < LOCKS; i++)
        CHECK_MSG(!is_free(&locks[i]), "lock %d not taken by lock_fork_prepare", i);
    lock_fork_parent();
    for (int i = 0; i < LOCKS; i++)
        CHECK_MSG(is_free(&locks[i]), "lock %d not released by lock_fork_parent", i);

    /* A fork while another thread holds a registered lock. */
    pthread_t holder;
    REQUIRE(pthread_create(&holder, NULL, hold_until_done, NULL) == 0);
    pthread_barrier_wait(&taken);
    int status = in_child(child_after_fork);
    CHECK_MSG(WIFEXITED(status) && WEXITSTATUS(status) == 0, "child status %#x", status);
    pthread_barrier_wait(&done);
    pthread_join(holder, NULL);
}

static void *hold_outer_until_done(void *arg)
{
    (void)arg;
    lock_acquire(&outer);
    pthread_barrier_wait(&taken);
    pthread_barrier_wait(&done);
    lock_release(&outer);
    return NULL;
}

static void *prepare_and_release(void *arg)
{
    (void)arg;
    lock_fork_prepare();
    lock_fork_parent();
    return NULL;
}

/* The handlers wait for outer, ranked first, before they take anything
 * else, though inner was registered first: a thread that held outer and
 * waited for inner would be waited for, not deadlocked with. */
static void rank_order(void)
{
    watchdog_arm(HANG_SECONDS, "scenario", 2);
    pthread_t holder, forker;
    REQUIRE(pthread_create(&holder, NULL, hold_outer_until_done, NULL) == 0);
    pthread_barrier_wait(&taken);
    REQUIRE(pthread_create(&forker, NULL, prepare_and_release, NULL) == 0);
    sleep_ms(100);
    CHECK_MSG(is_free(&inner), "inner taken before outer: the handlers follow registration, not rank");
    CHECK_MSG(is_free(&locks[1]), "a later rank taken before outer");
    pthread_barrier_wait(&done);
    pthread_join(holder, NULL);
    pthread_join(forker, NULL);
}

static bool list_flushed;
static void *flush_all(void *arg)
{
    (void)arg;
    fflush(NULL);
    __atomic_store_n(&list_flushed, true, __ATOMIC_RELEASE);
    return NULL;
}

static void stdio_list_lock(void)
{
    watchdog_arm(HANG_SECONDS, "scenario", 3);
    lock_fork_prepare();
    pthread_t thread;
    REQUIRE(pthread_create(&thread, NULL, flush_all, NULL) == 0);
    sleep_ms(100);
    CHECK_MSG(!__atomic_load_n(&list_flushed, __ATOMIC_ACQUIRE),
              "fflush(NULL) ran while the fork handlers held the stream list");
    lock_fork_parent();
    pthread_join(thread, NULL);
    CHECK(list_flushed);
}

static void child_against_rank(void)
{
    lock_acquire(&inner);
    lock_acquire(&outer);
    lock_release(&outer);
    lock_release(&inner);
}

static void child_overflowing_registry(void)
{
    static lock_t many[1 << 16];
    for (size_t i = 0; i < sizeof many / sizeof many[0]; i++)
        lock_register_for_fork(&many[i], LOCK_RANK_META);
    CHECK_MSG(false, "registered %zu locks without stopping", sizeof many / sizeof many[0]);
}

static bool aborted(int status)
{
    return WIFSIGNALED(status) && WTERMSIG(status) == SIGABRT;
}

int main(void)
{
    for (int i = 0; i < LOCKS; i++) {
        lock_reset(&locks[i]);
        lock_register_for_fork(&locks[i], LOCK_RANK_THREADS);
    }
    lock_register_for_fork(&held_by_thread, LOCK_RANK_META);
    lock_register_for_fork(&inner, LOCK_RANK_HEAP);
    lock_register_for_fork(&outer, LOCK_RANK_DRAIN);
    pthread_barrier_init(&taken, NULL, 2);
    pthread_barrier_init(&done, NULL, 2);

    registry();
    rank_order();
    stdio_list_lock();
    watchdog_stop();

    int status = in_child(child_against_rank);
#ifdef COREALLOC_DEBUG
    CHECK_MSG(aborted(status), "a wait against the rank order: status %#x, not an abort", status);
#else
    CHECK_MSG(WIFEXITED(status) && WEXITSTATUS(status) == 0, "child status %#x", status);
#endif
    status = in_child(child_overflowing_registry);
    CHECK_MSG(aborted(status), "overflowing the registry: status %#x, not an abort", status);
    return check_status();
}
