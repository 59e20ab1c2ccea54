#include "platform/lock.h"

#include "platform/os.h"

#define MAX_FORK_LOCKS 1100 /* 73 classes, a few globals, ablation slabs */

static lock_t *fork_locks[MAX_FORK_LOCKS];
static unsigned fork_lock_count;

void lock_register_for_fork(lock_t *l)
{
    if (fork_lock_count == MAX_FORK_LOCKS) /* a build-time bound: more locks is a bug */
        os_abort();
    fork_locks[fork_lock_count++] = l;
}

void lock_fork_prepare(void)
{
    for (unsigned i = 0; i < fork_lock_count; i++)
        lock_acquire(fork_locks[i]);
}

void lock_fork_parent(void)
{
    for (unsigned i = fork_lock_count; i-- > 0;)
        lock_release(fork_locks[i]);
}

void lock_fork_child(void)
{
    for (unsigned i = 0; i < fork_lock_count; i++)
        lock_reset(fork_locks[i]);
}
