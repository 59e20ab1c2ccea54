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
 *  - A fork from a signal handler that interrupted a holder (issue 13, D8):
 *    the handlers never wait for the locks the interrupted call holds,
 *    which stay held in both processes, nor for a lock whose holder waits
 *    for one of those, which the child re-creates. A lock the interrupted
 *    call was waiting for is waited for and taken as any other.
 *  - Taking a lock twice in one thread stops the program with a message;
 *    the debug build also stops a wait against the rank order.
 *  - The registry's bound stops the process rather than overflowing.
 *  - One holder at a time under contention, whether a waiter gets the lock
 *    while it spins or after it slept.
 * Each scenario that could hang runs under the watchdog. */
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <string.h>
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

/* Takes outer, then waits for inner: the nesting the ranks allow. */
static void *outer_then_inner(void *arg)
{
    (void)arg;
    lock_acquire(&outer);
    pthread_barrier_wait(&taken);
    lock_acquire(&inner);
    lock_release(&inner);
    lock_release(&outer);
    return NULL;
}

/* Threads that take one lock over and over, mostly for a moment (a waiter
 * gets it while it spins), every 64th time for longer than the spin (it
 * sleeps): each checks that nobody else is inside, and the count of
 * entries made in two steps loses none. */
#define CONTENDERS 4
#define ENTRIES 20000
static lock_t contended = LOCK_INIT;
static volatile int inside;
static volatile long entries;
static volatile bool overlapped;

static void *contend(void *arg)
{
    (void)arg;
    for (int i = 0; i < ENTRIES; i++) {
        lock_acquire(&contended);
        if (inside)
            overlapped = true;
        inside = 1;
        long seen = entries;
        if (i % 64 == 0)
            nanosleep(&(struct timespec){.tv_sec = 0, .tv_nsec = 50000}, NULL);
        entries = seen + 1;
        inside = 0;
        lock_release(&contended);
    }
    return NULL;
}

static void exclusion(void)
{
    watchdog_arm(HANG_SECONDS, "scenario", 6);
    pthread_t threads[CONTENDERS];
    for (int t = 0; t < CONTENDERS; t++)
        REQUIRE(pthread_create(&threads[t], NULL, contend, NULL) == 0);
    for (int t = 0; t < CONTENDERS; t++)
        pthread_join(threads[t], NULL);
    watchdog_stop();
    CHECK_MSG(!overlapped, "two threads held the lock at once");
    CHECK_MSG(entries == (long)CONTENDERS * ENTRIES, "%ld entries counted of %ld", entries,
              (long)CONTENDERS * ENTRIES);
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
    CHECK(!lock_fork_interrupted());
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

/* What a signal handler sees that forks while its thread's interrupted
 * code holds locks[0] and another thread holds outer and waits for
 * inner, which the interrupted code also holds. */
static void child_of_interrupted(void)
{
    lock_fork_child();
    CHECK(lock_fork_interrupted());
    CHECK_MSG(!is_free(&locks[0]) && !is_free(&inner), "the interrupted call's locks stay its own");
    CHECK_MSG(is_free(&outer), "a lock whose holder waited for the interrupted call is re-created");
    for (int i = 1; i < LOCKS; i++)
        CHECK_MSG(is_free(&locks[i]), "lock %d after the child's reset", i);
    lock_release(&inner); /* as the interrupted call would */
    lock_release(&locks[0]);
    CHECK(is_free(&inner) && is_free(&locks[0]));
}

static void interrupted_holder(void)
{
    watchdog_arm(HANG_SECONDS, "scenario", 4);
    lock_acquire(&locks[0]);
    lock_acquire(&inner);
    pthread_t thread;
    REQUIRE(pthread_create(&thread, NULL, outer_then_inner, NULL) == 0);
    pthread_barrier_wait(&taken);
    sleep_ms(50); /* the thread now waits for inner */

    lock_fork_prepare(); /* as a signal handler would, from inside the calls above */
    CHECK(lock_fork_interrupted());
    for (int i = 1; i < LOCKS; i++)
        CHECK_MSG(!is_free(&locks[i]), "lock %d not taken by lock_fork_prepare", i);
    fflush(stdout);
    pid_t pid = fork();
    REQUIRE(pid >= 0);
    if (pid == 0) {
        child_of_interrupted();
        _exit(check_status());
    }
    lock_fork_parent();
    int status;
    REQUIRE(waitpid(pid, &status, 0) == pid);
    CHECK_MSG(WIFEXITED(status) && WEXITSTATUS(status) == 0, "child status %#x", status);
    for (int i = 1; i < LOCKS; i++)
        CHECK_MSG(is_free(&locks[i]), "lock %d not released by lock_fork_parent", i);
    CHECK_MSG(!is_free(&outer), "the parent leaves the waiting thread's lock alone");
    lock_release(&inner);
    lock_release(&locks[0]);
    pthread_join(thread, NULL);
    CHECK(is_free(&outer) && is_free(&inner) && is_free(&locks[0]));
}

/* A signal handler that forks, interrupting this thread's wait for
 * `waited`, which another thread holds and gives back a little later. */
static lock_t waited = LOCK_INIT;
static pid_t waiter_tid;
static bool waiting, given_back, interrupted_seen, taken_after_give_back;

static void fork_from_handler(int sig)
{
    (void)sig;
    lock_fork_prepare();
    interrupted_seen = lock_fork_interrupted();
    taken_after_give_back = __atomic_load_n(&given_back, __ATOMIC_ACQUIRE);
    pid_t pid = fork();
    if (pid == 0) {
        lock_fork_child();
        CHECK_MSG(is_free(&waited), "the lock the interrupted call waited for, in the child");
        _exit(check_status());
    }
    lock_fork_parent();
    int status;
    REQUIRE(pid > 0 && waitpid(pid, &status, 0) == pid);
    CHECK_MSG(WIFEXITED(status) && WEXITSTATUS(status) == 0, "child status %#x", status);
}

/* Whether the thread sleeps (its state in /proc is S). */
static bool sleeping(pid_t tid)
{
    char path[64], stat[256];
    snprintf(path, sizeof path, "/proc/self/task/%d/stat", (int)tid);
    FILE *f = fopen(path, "r");
    REQUIRE(f != NULL);
    size_t got = fread(stat, 1, sizeof stat - 1, f);
    fclose(f);
    stat[got] = '\0';
    const char *after_name = strrchr(stat, ')');
    return after_name && after_name[1] == ' ' && after_name[2] == 'S';
}

static void *hold_then_interrupt(void *arg)
{
    pthread_t waiter = *(pthread_t *)arg;
    lock_acquire(&waited);
    pthread_barrier_wait(&taken);
    /* Once the waiter has said it is about to wait, the only sleep left to
     * it is the wait for the lock. */
    while (!__atomic_load_n(&waiting, __ATOMIC_ACQUIRE) || !sleeping(waiter_tid))
        sleep_ms(1);
    REQUIRE(pthread_kill(waiter, SIGUSR1) == 0);
    sleep_ms(50); /* the handler now waits for the lock too */
    __atomic_store_n(&given_back, true, __ATOMIC_RELEASE);
    lock_release(&waited);
    return NULL;
}

static void interrupted_waiter(void)
{
    watchdog_arm(HANG_SECONDS, "scenario", 5);
    struct sigaction sa;
    memset(&sa, 0, sizeof sa);
    sa.sa_handler = fork_from_handler;
    REQUIRE(sigaction(SIGUSR1, &sa, NULL) == 0);
    waiter_tid = gettid();
    pthread_t self = pthread_self(), thread;
    REQUIRE(pthread_create(&thread, NULL, hold_then_interrupt, &self) == 0);
    pthread_barrier_wait(&taken);
    __atomic_store_n(&waiting, true, __ATOMIC_RELEASE);
    lock_acquire(&waited);
    lock_release(&waited);
    pthread_join(thread, NULL);
    CHECK_MSG(interrupted_seen, "the handler did not see the interrupted wait");
    CHECK_MSG(taken_after_give_back, "the handlers went on before the holder gave the lock back");
    CHECK(is_free(&waited));
    signal(SIGUSR1, SIG_DFL);
}

static void child_taking_twice(void)
{
    lock_acquire(&locks[1]);
    lock_acquire(&locks[1]);
    CHECK_MSG(false, "a lock taken twice by one thread did not stop the program");
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
    lock_register_for_fork(&waited, LOCK_RANK_CLASS);
    pthread_barrier_init(&taken, NULL, 2);
    pthread_barrier_init(&done, NULL, 2);

    registry();
    rank_order();
    stdio_list_lock();
    interrupted_holder();
    interrupted_waiter();
    watchdog_stop();
    exclusion();

    int status = in_child(child_taking_twice);
    CHECK_MSG(aborted(status), "a lock taken twice: status %#x, not an abort", status);
    status = in_child(child_against_rank);
#ifdef COREALLOC_DEBUG
    CHECK_MSG(aborted(status), "a wait against the rank order: status %#x, not an abort", status);
#else
    CHECK_MSG(WIFEXITED(status) && WEXITSTATUS(status) == 0, "child status %#x", status);
#endif
    status = in_child(child_overflowing_registry);
    CHECK_MSG(aborted(status), "overflowing the registry: status %#x, not an abort", status);
    return check_status();
}
