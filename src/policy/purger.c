#include "policy/purger.h"

#include <pthread.h>
#include <signal.h>

#include "core/batchpool.h"
#include "core/central.h"
#include "core/counters.h"
#include "core/footprint.h"
#include "core/large.h"
#include "core/meta.h"
#include "core/sizeclass.h"
#include "core/superblock.h"
#include "frontend/frontend.h"
#include "platform/lock.h"
#include "platform/options.h"
#include "platform/os.h"

enum { PURGER_OFF, PURGER_STARTING, PURGER_RUNNING, PURGER_FAILED };
static int state = PURGER_OFF;
/* Set once the C library is fully initialised: threads may not be created
 * from allocations made while libraries are still being loaded. */
static bool process_ready;
static uint64_t process_ready_ns;
/* A short, small process has nothing to return: the thread (with the
 * cgroup files it reads) would cost it half a millisecond. It starts once
 * the process holds more than this in blocks (handed out, or free in the
 * caches), or has lived a quarter of the delay (the thread's first pass
 * would come no sooner). Not the resident estimate: that counts a
 * superblock whole from its first block, so a short program that touched
 * 17 classes (a compiler pass, python's start-up) paid for the thread
 * holding a few hundred KiB. */
#define PURGER_START_BYTES ((size_t)4 << 20)

/* Last traffic seen per CPU cache and per class, and when it last changed. */
struct watch {
    uint64_t activity, changed_ns;
};
static struct watch *ids; /* frontend_id_count() of them, from the thread's start */
static unsigned id_count;
/* Per class: its traffic when last seen and when that changed, and a
 * window of about one delay over which parked batches and free pages are
 * judged unused even while a trickle of traffic keeps the class from idling. */
struct class_watch {
    uint64_t activity, changed_ns;
    uint64_t window_ns;     /* when the window began */
    uint64_t blocks_cut;    /* blocks refills cut from superblocks, at its start */
    uint32_t low_water;     /* fewest batches seen parked in it */
    uint64_t holes_scanned; /* blocks returned to superblocks at the last
                               scan for free pages: unchanged, a scan would
                               find nothing new */
};
static struct class_watch classes[SC_COUNT];

__attribute__((constructor)) static void note_process_ready(void)
{
    process_ready_ns = os_monotonic_ns();
    __atomic_store_n(&process_ready, true, __ATOMIC_RELEASE);
}

static bool worth_a_thread(void)
{
    return counters_held_bytes() > PURGER_START_BYTES ||
           os_monotonic_ns() - process_ready_ns >= (uint64_t)opt.purge_delay_ms * 250000u;
}

static bool unchanged_since(uint64_t activity, uint64_t *last, uint64_t *changed_ns, uint64_t now)
{
    if (activity != *last) {
        *last = activity;
        *changed_ns = now;
        return false;
    }
    return true;
}

/* Free memory that a later pass would purge, where no traffic counter
 * shows it: empty superblocks and free spans still resident. */
static bool memory_waiting(void)
{
    struct large_stats large;
    large_stats(&large);
    return sb_bytes_retained() || large.bytes_free_resident;
}

/* One pass: whatever has been free and untouched for the delay goes back.
 * Returns whether anything is left for a later pass: a cache or a class
 * with traffic within the delay, or memory still waiting. */
static bool purge_pass(uint64_t delay_ns)
{
    uint64_t now = os_monotonic_ns();
    bool hard = footprint_under_pressure();
    uint64_t horizon = hard ? now : now > delay_ns ? now - delay_ns : 0; /* freed before: purge */
    enum os_purge_kind kind = opt_purge_kind();

    /* Classes are judged before caches are drained into them. */
    bool class_idle[SC_COUNT], left = false;
    struct central_traffic traffic;
    for (unsigned c = 0; c < SC_COUNT; c++) {
        central_traffic(c, &traffic);
        class_idle[c] = unchanged_since(traffic.activity, &classes[c].activity, &classes[c].changed_ns, now) &&
                        (hard || classes[c].changed_ns <= horizon);
        left |= !class_idle[c];
    }

    for (unsigned id = 0; id < id_count; id++) {
        if (unchanged_since(frontend_id_activity(id), &ids[id].activity, &ids[id].changed_ns, now) &&
            (hard || ids[id].changed_ns <= horizon))
            frontend_drain_id(id);
        else
            left = true;
    }

    for (unsigned c = 0; c < SC_COUNT; c++) {
        struct class_watch *w = &classes[c];
        central_traffic(c, &traffic);
        if (traffic.parked < w->low_water)
            w->low_water = traffic.parked;
        bool window_over = hard || now - w->window_ns >= delay_ns;
        /* An idle class's batches (and what idle caches just gave it) are
         * as old as the delay: back to their superblocks, and what empties
         * is purged with no more wait. A busy class gives back the batches
         * that stayed parked all through the window, and its free pages
         * if refills cut fewer blocks from superblocks in it than half
         * the free blocks there: most of that memory was not needed, and
         * refaulting what is cut again costs less than the pages held. */
        uint32_t back = class_idle[c] ? CENTRAL_ALL_BATCHES : window_over ? w->low_water : 0;
        bool pages_unused =
            class_idle[c] || (window_over && 2 * (traffic.blocks_cut - w->blocks_cut) < traffic.blocks_free);
        central_trim_class(c, back, class_idle[c] ? now : horizon, kind);
        central_traffic(c, &traffic);
        w->activity = traffic.activity; /* our own draining is not the program's traffic */
        if (pages_unused && w->holes_scanned != traffic.returns) {
            central_purge_holes(c);
            w->holes_scanned = traffic.returns;
        }
        if (window_over) {
            w->window_ns = now;
            w->blocks_cut = traffic.blocks_cut;
            w->low_water = traffic.parked;
        }
    }
    sb_purge_pool(horizon, kind);
    /* Nodes of the batches just drained, once whole chunks are empty. */
    batchpool_release();
    large_trim(horizon, kind);
    return left || memory_waiting();
}

/* Whether the program allocated or freed through the central layer since
 * the last pass judged it (our own draining excluded). */
static bool traffic_since_pass(void)
{
    struct central_traffic traffic;
    for (unsigned c = 0; c < SC_COUNT; c++) {
        central_traffic(c, &traffic);
        if (traffic.activity != classes[c].activity)
            return true;
    }
    for (unsigned id = 0; id < id_count; id++)
        if (frontend_id_activity(id) != ids[id].activity)
            return true;
    return false;
}

static void *purger_main(void *arg)
{
    (void)arg;
    uint64_t delay_ns = (uint64_t)opt.purge_delay_ms * 1000000u;
    /* A few passes per delay: memory goes back between 1 and 1.25 delays
     * after it was last used. */
    uint64_t period_ns = delay_ns / 4;
    if (period_ns < 1000000u)
        period_ns = 1000000u;
    if (period_ns > 1000000000u)
        period_ns = 1000000000u;
    footprint_read_container(); /* how near the limits memory may go */
    if (!ids) { /* a forked child keeps its parent's */
        unsigned count = frontend_id_count();
        ids = count ? meta_alloc(count * sizeof *ids) : NULL;
        id_count = ids ? count : 0;
    }
    for (;;) {
        os_sleep_ns(period_ns);
        if (purge_pass(delay_ns))
            continue;
        /* Nothing is left: sleep until a free or an allocation wakes us
         * rather than wake a few times per delay for nothing. What came
         * before we said so is seen by this last look. */
        footprint_purger_will_sleep();
        if (traffic_since_pass() || memory_waiting())
            footprint_purger_stays_awake();
        else
            footprint_purger_sleep();
    }
    return NULL;
}

static void start_thread(void)
{
    pthread_attr_t attr;
    pthread_t thread;
    sigset_t all, saved;
    bool ok = pthread_attr_init(&attr) == 0;
    if (ok) {
        pthread_attr_setdetachstate(&attr, PTHREAD_CREATE_DETACHED);
        pthread_attr_setstacksize(&attr, (size_t)256 << 10);
        /* The thread inherits this mask: the program's signals never land on it. */
        sigfillset(&all);
        pthread_sigmask(SIG_SETMASK, &all, &saved);
        ok = pthread_create(&thread, &attr, purger_main, NULL) == 0;
        pthread_sigmask(SIG_SETMASK, &saved, NULL);
        pthread_attr_destroy(&attr);
    }
    if (ok)
        pthread_setname_np(thread, "corealloc-purge");
    /* A failure is not retried on every free; purging then waits for the
     * retain limit or malloc_trim, or the limits' pressure. */
    if (!ok)
        footprint_read_container();
    __atomic_store_n(&state, ok ? PURGER_RUNNING : PURGER_FAILED, __ATOMIC_RELEASE);
}

static void (*start_through)(void (*start)(void));

void purger_start_through(void (*run)(void (*start)(void)))
{
    __atomic_store_n(&start_through, run, __ATOMIC_RELEASE);
}

void purger_kick(void)
{
    footprint_wake_purger();
    if (__builtin_expect(__atomic_load_n(&state, __ATOMIC_RELAXED) != PURGER_OFF, 1))
        return;
    if (opt.purge_delay_ms <= 0 || !__atomic_load_n(&process_ready, __ATOMIC_ACQUIRE) || !worth_a_thread())
        return;
    int expected = PURGER_OFF;
    if (__atomic_compare_exchange_n(&state, &expected, PURGER_STARTING, false, __ATOMIC_ACQ_REL,
                                    __ATOMIC_RELAXED)) {
        void (*run)(void (*)(void)) = __atomic_load_n(&start_through, __ATOMIC_ACQUIRE);
        if (run)
            run(start_thread);
        else
            start_thread();
    }
}

void purger_fork_child(void)
{
    bool was_running = __atomic_load_n(&state, __ATOMIC_RELAXED) == PURGER_RUNNING;
    __atomic_store_n(&state, PURGER_OFF, __ATOMIC_RELAXED);
    /* The child inherited what the parent's thread had to purge. Not after
     * a fork from a signal handler that interrupted the library: creating
     * a thread allocates, and the interrupted call may hold our locks; the
     * child's next allocation that reaches a slow path starts it. */
    if (was_running && !lock_fork_interrupted())
        purger_kick();
}

bool purger_running(void)
{
    return __atomic_load_n(&state, __ATOMIC_ACQUIRE) == PURGER_RUNNING;
}
