#include "platform/lock.h"

#include "platform/debug.h"
#include "platform/os.h"

#define MAX_FORK_LOCKS 1100 /* 73 classes, a few globals, ablation slabs */

#ifdef COREALLOC_DEBUG
/* The locks this thread holds, for the rank order every wait must respect
 * (lock.h). */
#define NESTING_MAX 6 /* locks one thread holds at once: 4 on the deepest path */
static __thread struct {
    const lock_t *held[NESTING_MAX];
    unsigned depth;
} self __attribute__((tls_model("initial-exec")));

static void check_order(const lock_t *l)
{
    for (unsigned i = 0; i < self.depth; i++)
        CA_ASSERT(self.held[i]->rank == LOCK_RANK_NONE || l->rank == LOCK_RANK_NONE ||
                  self.held[i]->rank < l->rank);
}

static void hold(const lock_t *l)
{
    CA_ASSERT(self.depth < NESTING_MAX);
    self.held[self.depth++] = l;
}

static void unhold(const lock_t *l)
{
    unsigned i = self.depth;
    while (i > 0 && self.held[i - 1] != l)
        i--;
    CA_ASSERT(i > 0);
    for (; i < self.depth; i++) /* usually the innermost: nothing moves */
        self.held[i - 1] = self.held[i];
    self.depth--;
}
#else
static void check_order(const lock_t *l) { (void)l; }
static void hold(const lock_t *l) { (void)l; }
static void unhold(const lock_t *l) { (void)l; }
#endif

void lock_acquire(lock_t *l)
{
    check_order(l);
    pthread_mutex_lock(&l->mutex);
    hold(l);
}

bool lock_try(lock_t *l)
{
    if (pthread_mutex_trylock(&l->mutex) != 0)
        return false;
    hold(l);
    return true;
}

void lock_release(lock_t *l)
{
    unhold(l);
    pthread_mutex_unlock(&l->mutex);
}

void lock_reset(lock_t *l)
{
    pthread_mutex_init(&l->mutex, NULL);
}

/* glibc's lock of its list of streams (exported since glibc 2.2.5; weak:
 * other C libraries have none). fork takes it after the fork handlers
 * have run; a thread in fflush(NULL) holds it while it waits for a stream
 * whose holder may be in malloc (getline), waiting for one of our locks.
 * So the handlers take it first (glibc bug 19431). It is recursive, and
 * owned by the thread in both processes: fork takes it again, and both
 * handlers after fork give back the prepare handler's hold. */
extern void _IO_list_lock(void) __attribute__((weak));
extern void _IO_list_unlock(void) __attribute__((weak));

static lock_t *fork_locks[MAX_FORK_LOCKS]; /* in rank order */
static unsigned fork_lock_count;

void lock_register_for_fork(lock_t *l, enum lock_rank rank)
{
    if (fork_lock_count == MAX_FORK_LOCKS) /* a build-time bound: more locks is a bug */
        os_abort();
    l->rank = (uint8_t)rank;
    unsigned at = fork_lock_count++;
    for (; at > 0 && fork_locks[at - 1]->rank > rank; at--)
        fork_locks[at] = fork_locks[at - 1];
    fork_locks[at] = l;
}

/* The handlers take the mutexes themselves: the checks above are for the
 * nesting of the library's own paths. */
void lock_fork_prepare(void)
{
    if (_IO_list_lock)
        _IO_list_lock();
    for (unsigned i = 0; i < fork_lock_count; i++)
        pthread_mutex_lock(&fork_locks[i]->mutex);
}

void lock_fork_parent(void)
{
    for (unsigned i = fork_lock_count; i-- > 0;)
        pthread_mutex_unlock(&fork_locks[i]->mutex);
    if (_IO_list_unlock)
        _IO_list_unlock();
}

void lock_fork_child(void)
{
    for (unsigned i = 0; i < fork_lock_count; i++)
        lock_reset(fork_locks[i]);
    if (_IO_list_unlock)
        _IO_list_unlock();
}
