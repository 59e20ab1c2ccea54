#include "frontend/threadcache.h"

#include <pthread.h>

#include "core/central.h"
#include "core/meta.h"
#include "platform/lock.h"
#include "platform/options.h"
#include "platform/os.h"
#include "platform/rseq.h"

/* What one thread's cache may hold, at most; with many threads, a share of
 * COREALLOC_THREAD_CACHES_BYTES, so thousands of threads do not mean
 * thousands of full caches. */
#define THREAD_CACHE_BUDGET ((size_t)256 << 10)
#define THREAD_CACHE_BUDGET_MIN ((size_t)8 << 10)

enum thread_state { THREAD_NEW, THREAD_ACTIVE, THREAD_EXITED };

/* Every live slab has an owner record, listed so that statistics can sum
 * them and a forked child can forget other threads'. */
struct slab_owner {
    struct slab_owner *next, *prev;
    void **slab;
    int id; /* the slab's id among the sections' slabs, or -1: a slab of metadata memory */
};

/* The slabs the sections reach (slab id at id_slabs + (id << SLAB_SHIFT)),
 * when the per-thread caches take the fast paths: each thread's area (see
 * rseq_thread_area_offset) reads the id of its slab, so its hits cost what
 * a CPU's do, with no kernel to restart a section (none needs it: nothing
 * else uses the slab). Ids go to threads at their first slow-path call
 * and come back when they exit; threads past ID_SLABS, and every thread
 * when the fast paths are not to be taken, get a slab of metadata memory
 * that only the slow paths reach. Each id holds SLAB_BYTES of address
 * space (touched only as its stacks fill, a thread's stacks using under
 * 200 KiB of it): 16 keep the process's VmSize within
 * api_alloc_address_limit's bound. */
#define ID_SLABS 16u
static char *id_slabs;
static unsigned free_ids[ID_SLABS], free_id_count; /* live lock */

static __thread struct slab_owner *tcache_owner __attribute__((tls_model("initial-exec")));
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

/* An owner's slab id back to the pool (live lock held, or in a forked
 * child). */
static void give_back_id(const struct slab_owner *o)
{
    if (o->id >= 0)
        free_ids[free_id_count++] = (unsigned)o->id;
}

/* Frees an owner and, when it is of metadata memory, its slab (an id's
 * slab stays mapped for the next thread that takes the id). */
static void free_owner(struct slab_owner *o)
{
    if (o->id < 0)
        meta_free(o->slab, cache_slab_bytes(CACHE_SHAPE_THREAD));
    meta_free(o, sizeof *o);
}

static void thread_exit(void *owner)
{
    struct slab_owner *o = owner;
    rseq_thread_area_set_id(-1); /* the sections miss from now on */
    tcache_owner = NULL;
    thread_state = THREAD_EXITED; /* later calls in this thread go to central directly */
    cache_slab_flush(o->slab);
    lock_acquire(&live_lock);
    if (o->prev)
        o->prev->next = o->next;
    else
        live = o->next;
    if (o->next)
        o->next->prev = o->prev;
    live_count--;
    give_back_id(o);
    lock_release(&live_lock);
    free_owner(o);
}

void tcache_init(void)
{
    lock_register_for_fork(&live_lock, LOCK_RANK_THREADS);
    exit_key_ok = pthread_key_create(&exit_key, thread_exit) == 0;
}

/* Not under a tight address-space limit, of which the 288 MiB would be
 * most: every thread then gets a slab of metadata memory. */
char *tcache_map_id_slabs(void)
{
    if (os_address_space_limit() < OS_ADDRESS_SPACE_TIGHT)
        return NULL;
    id_slabs = cache_map_slabs(ID_SLABS);
    if (id_slabs)
        for (unsigned i = 0; i < ID_SLABS; i++)
            free_ids[i] = ID_SLABS - 1 - i; /* id 0 first */
    free_id_count = id_slabs ? ID_SLABS : 0;
    return id_slabs;
}

static void **create_slab(void)
{
    if (thread_state == THREAD_EXITED)
        return NULL;
    struct slab_owner *o = meta_alloc(sizeof *o);
    if (!o)
        return NULL;
    lock_acquire(&live_lock);
    o->id = free_id_count ? (int)free_ids[--free_id_count] : -1;
    lock_release(&live_lock);
    o->slab = o->id >= 0 ? cache_slab_of(id_slabs, (unsigned)o->id) : meta_alloc(cache_slab_bytes(CACHE_SHAPE_THREAD));
    if (!o->slab) {
        meta_free(o, sizeof *o);
        return NULL;
    }
    cache_slab_format(o->slab, CACHE_SHAPE_THREAD);
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
    tcache_owner = o;
    thread_state = THREAD_ACTIVE;
    if (o->id >= 0)
        rseq_thread_area_set_id(o->id); /* the sections hit from now on */
    if (exit_key_ok)
        pthread_setspecific(exit_key, o);
    return o->slab;
}

void *tcache_alloc_slow(unsigned cls, bool *refilled)
{
    void **slab = tcache_owner ? tcache_owner->slab : create_slab();
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
    void **slab = tcache_owner ? tcache_owner->slab : create_slab();
    if (!slab) {
        central_free(cls, &p, 1);
        return;
    }
    if (!cache_push(slab, cls, p))
        cache_spill_push(slab, cls, p, thread_budget());
}

void tcache_flush_current(void)
{
    if (tcache_owner)
        cache_slab_flush(tcache_owner->slab);
}

size_t tcache_bytes_held(unsigned *threads)
{
    size_t bytes = 0;
    unsigned n = 0;
    lock_acquire(&live_lock);
    for (struct slab_owner *o = live; o; o = o->next, n++)
        bytes += cache_slab_bytes_held(o->slab);
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
        found = cache_slab_holds(o->slab, cls, p);
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
    struct slab_owner *keep = tcache_owner;
    for (struct slab_owner *o = live, *next; o; o = next) {
        next = o->next;
        if (o != keep) {
            give_back_id(o);
            free_owner(o);
        }
    }
    live = keep;
    live_count = keep ? 1 : 0;
    if (keep)
        keep->next = keep->prev = NULL;
}
