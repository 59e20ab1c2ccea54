#include "platform/lock.h"

#include "platform/debug.h"
#include "platform/diag.h"
#include "platform/os.h"

#define MAX_FORK_LOCKS 1100 /* 78 classes, a few globals, ablation slabs */
#define NESTING_MAX 6       /* locks one thread holds at once: 4 on the deepest path */
#define LOCK_WAITERS 0x80000000u /* in a lock's word: a thread may sleep on it */

/* What a thread holds, or is taking, and its id in lock words. Written by
 * its own thread only, before a lock is tried and after it is released, so
 * a signal handler in the thread sees every lock the interrupted code may
 * hold. The id survives fork with the thread's memory. */
struct holder {
    lock_t *held[NESTING_MAX];
    unsigned depth;
    uint32_t id;
};
static __thread struct holder self __attribute__((tls_model("initial-exec")));
/* The last id given out. Ids wrap after 2^31 threads: two threads alive at
 * once with one id would need that many created in between. */
static uint32_t last_id;

static uint32_t id_of(struct holder *me)
{
    while (__builtin_expect(me->id == 0, 0))
        me->id = __atomic_add_fetch(&last_id, 1, __ATOMIC_RELAXED) & ~LOCK_WAITERS;
    return me->id;
}

static uint32_t owner(const lock_t *l)
{
    return __atomic_load_n(&l->word, __ATOMIC_RELAXED) & ~LOCK_WAITERS;
}

static void hold(struct holder *me, lock_t *l)
{
    if (me->depth == NESTING_MAX) /* a build-time bound: deeper nesting is a bug */
        diag_fatal("locks nested deeper than NESTING_MAX");
    me->held[me->depth] = l;
    __atomic_signal_fence(__ATOMIC_SEQ_CST);
    me->depth++;
    __atomic_signal_fence(__ATOMIC_SEQ_CST);
}

static void unhold(struct holder *me, const lock_t *l)
{
    unsigned i = me->depth;
    while (i > 0 && me->held[i - 1] != l)
        i--;
    if (i == 0)
        return;
    for (; i < me->depth; i++) /* usually the innermost: nothing moves */
        me->held[i - 1] = me->held[i];
    __atomic_signal_fence(__ATOMIC_SEQ_CST);
    me->depth--;
}

/* The order every wait must respect (lock.h); the debug build checks it. */
static void check_order(const struct holder *me, const lock_t *l)
{
#ifdef COREALLOC_DEBUG
    for (unsigned i = 0; i + 1 < me->depth; i++)
        CA_ASSERT(me->held[i]->rank == LOCK_RANK_NONE || l->rank == LOCK_RANK_NONE ||
                  me->held[i]->rank < l->rank);
#else
    (void)me;
    (void)l;
#endif
}

static bool take_if_free(lock_t *l, uint32_t id)
{
    uint32_t free_word = 0;
    return __atomic_compare_exchange_n(&l->word, &free_word, id, false, __ATOMIC_ACQUIRE,
                                       __ATOMIC_RELAXED);
}

/* Sleeps until l is free, and takes it. A thread that takes it after
 * sleeping marks it as slept on: another sleeper may remain. */
static void take_after_wait(lock_t *l, uint32_t id)
{
    for (;;) {
        uint32_t word = __atomic_load_n(&l->word, __ATOMIC_RELAXED);
        if (word == 0) {
            if (__atomic_compare_exchange_n(&l->word, &word, id | LOCK_WAITERS, false,
                                            __ATOMIC_ACQUIRE, __ATOMIC_RELAXED))
                return;
            continue;
        }
        if (!(word & LOCK_WAITERS) &&
            !__atomic_compare_exchange_n(&l->word, &word, word | LOCK_WAITERS, false,
                                         __ATOMIC_RELAXED, __ATOMIC_RELAXED))
            continue;
        os_futex_wait(&l->word, word | LOCK_WAITERS);
    }
}

/* A hint that the caller spins: it yields the core's pipeline to the
 * other hardware thread and spends less power. */
static void spin_pause(void)
{
#if defined(__x86_64__)
    __builtin_ia32_pause();
#elif defined(__aarch64__)
    __asm__ volatile("yield" ::: "memory");
#else
    __atomic_signal_fence(__ATOMIC_SEQ_CST);
#endif
}

/* A holder keeps a class lock for a microsecond or so (a batch cut from,
 * or returned to, superblocks), where going to sleep and being woken cost
 * several: so a waiter first spins, for about what a sleep would cost,
 * taking the lock as soon as it reads it free (as a first try does, with
 * sleepers or not: a woken sleeper that finds it taken marks it and sleeps
 * again). The clock is read once every few pauses, whose length varies by
 * CPU (10 to 140 cycles). */
#define LOCK_SPIN_NS 8000
#define LOCK_PAUSES_PER_CLOCK 16
static bool take_after_spin(lock_t *l, uint32_t id)
{
    uint64_t until = os_monotonic_ns() + LOCK_SPIN_NS;
    do {
        for (unsigned i = 0; i < LOCK_PAUSES_PER_CLOCK; i++) {
            spin_pause();
            if (__atomic_load_n(&l->word, __ATOMIC_RELAXED) == 0 && take_if_free(l, id))
                return true;
        }
    } while (os_monotonic_ns() < until);
    return false;
}

static void give_back(lock_t *l)
{
    if (__atomic_exchange_n(&l->word, 0, __ATOMIC_RELEASE) & LOCK_WAITERS)
        os_futex_wake(&l->word, 1);
}

/* While a thread waits, the locks it holds say for what: the fork handlers
 * follow these links (see take_unless_waiting_for). */
static void publish_wait(struct holder *me, lock_t *waited)
{
    for (unsigned i = 0; i + 1 < me->depth; i++)
        __atomic_store_n(&me->held[i]->waits_for, waited, __ATOMIC_RELEASE);
}

void lock_acquire(lock_t *l)
{
    struct holder *me = &self;
    uint32_t id = id_of(me);
    hold(me, l);
    check_order(me, l);
    if (take_if_free(l, id))
        return;
    if (owner(l) == id)
        diag_fatal("a lock taken twice by one thread: the allocator was re-entered "
                   "(from a signal handler, or a fork handler that allocates)");
    publish_wait(me, l);
    if (!take_after_spin(l, id))
        take_after_wait(l, id);
    publish_wait(me, NULL);
}

bool lock_try(lock_t *l)
{
    struct holder *me = &self;
    uint32_t id = id_of(me);
    hold(me, l);
    if (take_if_free(l, id))
        return true;
    unhold(me, l);
    return false;
}

void lock_release(lock_t *l)
{
    give_back(l);
    unhold(&self, l);
}

void lock_reset(lock_t *l)
{
    __atomic_store_n(&l->word, 0, __ATOMIC_RELAXED);
    __atomic_store_n(&l->waits_for, NULL, __ATOMIC_RELAXED);
}

/* ---- fork ---- */

/* glibc's lock of its list of streams (exported since glibc 2.2.5; weak:
 * other C libraries have none). fork takes it after the fork handlers
 * have run; a thread in fflush(NULL) holds it while it waits for a stream
 * whose holder may be in malloc (getline), waiting for one of our locks.
 * So the handlers take it first (glibc bug 19431). It is recursive, and
 * owned by the thread in both processes: fork takes it again, and both
 * handlers after fork give back the prepare handler's hold. */
extern void _IO_list_lock(void) __attribute__((weak));
extern void _IO_list_unlock(void) __attribute__((weak));

/* How the handlers left each registered lock. */
enum fork_hold {
    FORK_TAKEN,       /* taken: released in the parent, re-created in the child */
    FORK_INTERRUPTED, /* this thread's interrupted call holds it: left to it */
    FORK_ABANDONED,   /* its holder waits for the interrupted call: left, re-created in the child */
};

static struct fork_lock {
    lock_t *lock;
    uint8_t rank;
    uint8_t hold; /* enum fork_hold */
} fork_locks[MAX_FORK_LOCKS]; /* in rank order */
static unsigned fork_lock_count;
static bool fork_interrupted;

void lock_register_for_fork(lock_t *l, enum lock_rank rank)
{
    if (fork_lock_count == MAX_FORK_LOCKS) /* a build-time bound: more locks is a bug */
        os_abort();
#ifdef COREALLOC_DEBUG
    l->rank = (uint8_t)rank;
#endif
    unsigned at = fork_lock_count++;
    for (; at > 0 && fork_locks[at - 1].rank > rank; at--)
        fork_locks[at] = fork_locks[at - 1];
    fork_locks[at] = (struct fork_lock){ l, (uint8_t)rank, FORK_TAKEN };
}

/* Whether l's holder waits, directly or through the holders of the locks
 * it waits for, for a lock that id holds. */
static bool waits_for(const lock_t *l, uint32_t id)
{
    for (unsigned hops = 0; hops <= fork_lock_count; hops++) {
        const lock_t *next = __atomic_load_n(&l->waits_for, __ATOMIC_ACQUIRE);
        if (!next)
            return false;
        if (owner(next) == id)
            return true;
        l = next;
    }
    return false;
}

/* Taking a lock while an interrupted call of this thread holds others: the
 * holder may be waiting for them, and waiting for it would never end. A
 * lock the interrupted call was waiting for is taken like any other, once
 * its holder gives it back. */
static enum fork_hold take_unless_waiting_for(lock_t *l, uint32_t id)
{
    while (!take_if_free(l, id)) {
        if (waits_for(l, id))
            return FORK_ABANDONED;
        os_sleep_ns(20000);
    }
    return FORK_TAKEN;
}

void lock_fork_prepare(void)
{
    if (_IO_list_lock)
        _IO_list_lock();
    struct holder *me = &self;
    uint32_t id = id_of(me);
    fork_interrupted = me->depth > 0;
    for (unsigned i = 0; i < fork_lock_count; i++) {
        lock_t *l = fork_locks[i].lock;
        if (!fork_interrupted) {
            if (!take_if_free(l, id))
                take_after_wait(l, id);
            fork_locks[i].hold = FORK_TAKEN;
        } else if (owner(l) == id) {
            fork_locks[i].hold = FORK_INTERRUPTED;
        } else {
            fork_locks[i].hold = (uint8_t)take_unless_waiting_for(l, id);
        }
    }
}

void lock_fork_parent(void)
{
    for (unsigned i = fork_lock_count; i-- > 0;)
        if (fork_locks[i].hold == FORK_TAKEN)
            give_back(fork_locks[i].lock);
    if (_IO_list_unlock)
        _IO_list_unlock();
}

void lock_fork_child(void)
{
    for (unsigned i = 0; i < fork_lock_count; i++)
        if (fork_locks[i].hold != FORK_INTERRUPTED)
            lock_reset(fork_locks[i].lock);
    if (_IO_list_unlock)
        _IO_list_unlock();
}

bool lock_fork_interrupted(void)
{
    return fork_interrupted;
}
