#include "frontend/threadcache.h"

#include <pthread.h>

#include "core/central.h"
#include "core/meta.h"
#include "platform/lock.h"
#include "platform/options.h"
#include "platform/os.h"

/* What one thread's cache may hold, at most; with many threads, a share of
 * COREALLOC_THREAD_CACHES_BYTES, so thousands of threads do not mean
 * thousands of full caches. */
#define THREAD_CACHE_BUDGET ((size_t)256 << 10)
#define THREAD_CACHE_BUDGET_MIN ((size_t)8 << 10)

enum thread_state { THREAD_NEW, THREAD_ACTIVE, THREAD_EXITED };

/* Live slabs are linked through a small header before the slab, so
 * statistics can sum them and a forked child can forget other threads'. */
struct slab_owner {
    struct slab_owner *next, *prev;
};
#define OWNER_BYTES 64 /* keeps the slab itself cache-line aligned */
_Static_assert(sizeof(struct slab_owner) <= OWNER_BYTES, "owner header fits");

static __thread void **tcache_slab __attribute__((tls_model("initial-exec")));
static __thread unsigned char thread_state __attribute__((tls_model("initial-exec")));
/* Secure mode's random pops; seeded with the thread's slab. */
static __thread uint64_t secure_rng __attribute__((tls_model("initial-exec")));

static pthread_key_t exit_key;
static bool exit_key_ok;
static lock_t live_lock = LOCK_INIT;
static struct slab_owner *live;
static unsigned live_count;

static size_t thread_budget(void)
{
    unsigned threads = __atomic_load_n(&live_count, __ATOMIC_RELAXED);
    size_t share = opt.thread_caches_bytes / (threads ? threads : 1);
    return share > THREAD_CACHE_BUDGET ? THREAD_CACHE_BUDGET
         : share < THREAD_CACHE_BUDGET_MIN ? THREAD_CACHE_BUDGET_MIN : share;
}

static struct slab_owner *owner_of(void **slab)
{
    return (struct slab_owner *)((char *)slab - OWNER_BYTES);
}

static size_t block_bytes(void) { return OWNER_BYTES + cache_slab_bytes(CACHE_SHAPE_THREAD); }

static void thread_exit(void *slab_arg)
{
    void **slab = slab_arg;
    tcache_slab = NULL;
    thread_state = THREAD_EXITED; /* later calls in this thread go to central directly */
    cache_slab_flush(slab);
    struct slab_owner *o = owner_of(slab);
    lock_acquire(&live_lock);
    if (o->prev)
        o->prev->next = o->next;
    else
        live = o->next;
    if (o->next)
        o->next->prev = o->prev;
    live_count--;
    lock_release(&live_lock);
    meta_free(o, block_bytes());
}

void tcache_init(void)
{
    lock_register_for_fork(&live_lock, LOCK_RANK_THREADS);
    exit_key_ok = pthread_key_create(&exit_key, thread_exit) == 0;
}

static void **create_slab(void)
{
    if (thread_state == THREAD_EXITED)
        return NULL;
    struct slab_owner *o = meta_alloc(block_bytes());
    if (!o)
        return NULL;
    void **slab = (void **)((char *)o + OWNER_BYTES);
    cache_slab_format(slab, CACHE_SHAPE_THREAD);
    lock_acquire(&live_lock);
    o->next = live;
    if (live)
        live->prev = o;
    live = o;
    live_count++;
    lock_release(&live_lock);
    if (opt.secure)
        secure_rng = os_random_seed() | 1;
    /* Published before pthread_setspecific, which may itself allocate. */
    tcache_slab = slab;
    thread_state = THREAD_ACTIVE;
    if (exit_key_ok)
        pthread_setspecific(exit_key, slab);
    return slab;
}

void *tcache_alloc_slow(unsigned cls, bool *refilled)
{
    void **slab = tcache_slab ? tcache_slab : create_slab();
    *refilled = true;
    if (!slab) {
        void *p;
        return central_alloc(cls, &p, 1) ? p : NULL;
    }
    void *p = opt.secure ? cache_pop_random(slab, cls, &secure_rng) : cache_pop(slab, cls);
    if (p) {
        *refilled = false;
        return p;
    }
    return cache_refill_pop(slab, cls, thread_budget());
}

void tcache_free_slow(void *p, unsigned cls)
{
    void **slab = tcache_slab ? tcache_slab : create_slab();
    if (!slab) {
        central_free(cls, &p, 1);
        return;
    }
    if (!cache_push(slab, cls, p))
        cache_spill_push(slab, cls, p, thread_budget());
}

void tcache_flush_current(void)
{
    if (tcache_slab)
        cache_slab_flush(tcache_slab);
}

size_t tcache_bytes_held(unsigned *threads)
{
    size_t bytes = 0;
    unsigned n = 0;
    lock_acquire(&live_lock);
    for (struct slab_owner *o = live; o; o = o->next, n++)
        bytes += cache_slab_bytes_held((void **)((char *)o + OWNER_BYTES));
    lock_release(&live_lock);
    if (threads)
        *threads = n;
    return bytes;
}

bool tcache_holds(const void *p, unsigned cls)
{
    bool found = false;
    lock_acquire(&live_lock);
    for (struct slab_owner *o = live; o && !found; o = o->next)
        found = cache_slab_holds((void **)((char *)o + OWNER_BYTES), cls, p);
    lock_release(&live_lock);
    return found;
}

void tcache_fork_child(void)
{
    /* Only the forking thread lives on in the child; the other slabs'
     * objects are lost to the child, and their slabs can be reused. Not
     * after a fork from a signal handler that interrupted the library: the
     * interrupted call may hold the list's lock or metadata's, so the
     * slabs are kept (their objects lost all the same). */
    if (lock_fork_interrupted())
        return;
    struct slab_owner *keep = tcache_slab ? owner_of(tcache_slab) : NULL;
    for (struct slab_owner *o = live, *next; o; o = next) {
        next = o->next;
        if (o != keep)
            meta_free(o, block_bytes());
    }
    live = keep;
    live_count = keep ? 1 : 0;
    if (keep)
        keep->next = keep->prev = NULL;
}
