#include "frontend/cpucache.h"

#include "arch/ticks.h"
#include "core/central.h"
#include "core/meta.h"
#include "core/sizeclass.h"
#include "frontend/cache.h"
#include "frontend/fastpath.h"
#include "platform/lock.h"
#include "platform/options.h"

static uintptr_t slabs_base; /* 0 while the per-CPU front end is off */
static unsigned slab_count;
/* Per id: slow-path entries (the cache was empty / full). Counted off the
 * fast path only, so a hit costs nothing; hits are not counted. */
struct id_counters {
    uint64_t misses_empty, misses_full;
    uint64_t grown_bytes; /* capacity added past a batch per class (drain lock) */
    /* Empty misses per class since capacity last moved between classes
     * (racy counts: a guide, not an account). */
    uint16_t class_misses[SC_COUNT];
    /* When each class last missed empty, in arch ticks (wraps; racy):
     * timed in a nursery only once the class has run full here too. */
    uint32_t last_empty[SC_COUNT];
    bool ran_full[SC_COUNT];
    /* Growth misses of each class left before the program's holding is
     * counted again (held_allows). */
    uint8_t held_skips[SC_COUNT];
} __attribute__((aligned(64)));
static struct id_counters *counters;
static lock_t drain_lock = LOCK_INIT;
static bool draining; /* a drain or a move is under way (drain lock held): see cpucache_fork_child */

static void **slab_of(unsigned id)
{
    return cache_slab_of((char *)slabs_base, id);
}

/* A slab with no growth on record: formatted, or drained (which restarts
 * it at a batch a class; drain lock held then). */
static void forget_growth(unsigned id)
{
    counters[id].grown_bytes = 0;
    for (unsigned c = 0; c < SC_COUNT; c++)
        counters[id].class_misses[c] = 0;
}

bool cpucache_init(void)
{
    lock_register_for_fork(&drain_lock, LOCK_RANK_DRAIN);
    if (!ARCH_HAS_RSEQ_SECTIONS ||
        rseq_init(ARCH_RSEQ_SIGNATURE, true) == RSEQ_SOURCE_NONE)
        return false;
    unsigned count = rseq_id_count();
    if (count >= SLAB_ID_LIMIT)
        return false;
    counters = meta_alloc(count * sizeof *counters);
    /* Each slab is formatted on its id's first miss (format_slab), so a
     * process touches the slabs of the CPUs it runs on, not one per
     * possible CPU. */
    char *slabs = counters ? cache_map_slabs(count) : NULL;
    if (!slabs)
        return false;
    /* A CPU's cache holds far more than a thread's, and the batch is what
     * a producer/consumer pair pays a hand-off for: twice the per-thread
     * batch (a per-thread cache holds a batch of a class at least, a cost
     * multiplied by the threads). Before any batch moves. */
    sizeclass_set_batch_max(SC_BATCH_MAX);
    slab_count = count;
    slabs_base = (uintptr_t)slabs;
    /* The CPU this thread runs on will most likely miss first: its slab is
     * formatted (no section sees the slabs yet) and its counters written
     * now, so each of their pages faults once. Left to the first malloc,
     * the fast path would read the slab, and the miss count the counters,
     * before either is written: a zero-page fault, then a copy-on-write
     * fault, for each page. */
    if (rseq_thread_ready()) {
        unsigned id = rseq_current_id();
        forget_growth(id);
        cache_slab_format(slab_of(id), CACHE_SHAPE_CPU);
    }
    /* The area first: a section that reads the new slabs (it reads them
     * last) also sees the new area. */
    __atomic_store_n(&frontend_layout.sections.area_off, rseq_area_offset(), __ATOMIC_RELAXED);
    __atomic_store_n(&frontend_layout.sections.slabs, (uintptr_t)slabs, __ATOMIC_RELEASE);
    return true;
}

bool cpucache_on(void)
{
    return __atomic_load_n(&slabs_base, __ATOMIC_ACQUIRE) != 0;
}

/* A plain increment: only a thread preempted between its load and its
 * store, on the same id, can lose another's count. */
static void count_miss(uint64_t *counter)
{
    __atomic_store_n(counter, __atomic_load_n(counter, __ATOMIC_RELAXED) + 1, __ATOMIC_RELAXED);
}

#define SECTION_ARGS &frontend_layout.sections

/* A stack that runs empty grows by a batch, up to its limit and within
 * the CPU's growth budget: room for what this CPU allocates, not for what
 * it only frees (a consumer's frees would just be parked here). With the
 * budget spent, a class that keeps missing takes capacity from classes
 * that have not missed since capacity last moved (their excess objects
 * stay poppable; pushes wait until they are gone). Changing an end needs
 * no fence (a section that read the old end saw one slot more or less, all
 * within the stack's limit) but must not race a drain, hence the lock;
 * taken only if free, so no path waits for it. */
#define MISSES_TO_TAKE_CAPACITY 2

/* Takes at least `bytes` of capacity from idle classes of id (drain lock
 * held), largest surplus first; returns what it took. */
static uint64_t take_capacity(unsigned id, unsigned cls, uint64_t bytes)
{
    void **slab = slab_of(id);
    struct id_counters *c = &counters[id];
    uint64_t taken = 0;
    while (taken < bytes) {
        unsigned victim = SC_COUNT;
        uint64_t most = 0;
        for (unsigned v = 0; v < SC_COUNT; v++) {
            uint64_t surplus = (uint64_t)cache_surplus(slab, v) * sc_info[v].size;
            if (v != cls && c->class_misses[v] == 0 && surplus > most) {
                victim = v;
                most = surplus;
            }
        }
        if (victim == SC_COUNT)
            break;
        unsigned size = sc_info[victim].size, batch = sc_info[victim].batch;
        unsigned objects = (unsigned)((bytes - taken + size - 1) / size);
        objects = (objects + batch - 1) / batch * batch;
        if (objects > cache_surplus(slab, victim))
            objects = cache_surplus(slab, victim);
        struct cache_hdr *h = cache_hdr(slab, victim);
        __atomic_store_n(&h->end, h->end - objects, __ATOMIC_RELEASE);
        taken += (uint64_t)objects * size;
    }
    for (unsigned v = 0; v < SC_COUNT; v++)
        c->class_misses[v] /= 2;
    return taken;
}

/* Moves the stack of cls out of id's nursery to its own home, as a drain
 * takes a stack (drain lock held): once per class and CPU, two fences. */
static void move_stack(unsigned id, unsigned cls)
{
    void **slab = slab_of(id);
    unsigned capacity = cache_capacity(slab, cls);
    draining = true;
    cache_stack_stop(slab, cls);
    rseq_fence((int)id);
    cache_stack_move_stopped(slab, cls);
    rseq_fence((int)id);
    cache_stack_restart(slab, cls, capacity);
    draining = false;
}

/* Up to this much growth a CPU's cache needs only allocation demand. Past
 * it (up to COREALLOC_CPU_CACHE_BYTES), a class's stack grows only while
 * the program holds as many of its blocks as the stack may take: a round
 * of 100,000 objects allocated and then freed (Hoard's threadtest) then
 * cycles through the cache, where most of them went back to superblocks
 * and were cut again, while a CPU that allocates a stream of blocks freed
 * elsewhere (a producer) does not grow a stack far larger than what the
 * program holds, which whatever it frees later would fill: with a MiB of
 * such growth, consume at two threads kept 1.1 MB of blocks for 64 KiB in
 * flight. */
#define DEMAND_GROWTH_BYTES ((uint64_t)256 << 10)

/* Blocks of cls the program holds now: out of its superblocks, and
 * neither parked centrally nor in a CPU's stack (racy reads: an estimate
 * for a slow path). */
static uint64_t blocks_in_program(unsigned cls)
{
    struct central_class_stats cs;
    central_class_stats(cls, &cs);
    uint64_t elsewhere = cs.batches_central * sc_info[cls].batch;
    for (unsigned id = 0; id < slab_count; id++)
        if (cache_slab_formatted(slab_of(id)))
            elsewhere += cache_class_count(slab_of(id), cls);
    return cs.blocks_out > elsewhere ? cs.blocks_out - elsewhere : 0;
}

/* Whether the stack of cls on id may grow past DEMAND_GROWTH_BYTES: the
 * program holds at least as many of its blocks as it may take. The count
 * reads lines other CPUs write (a few hundred nanoseconds), and a producer
 * whose consumers free elsewhere would pay it on every refill: a refusal
 * spares the next HELD_RECHECK growth misses of the class here. */
#define HELD_RECHECK 16u
static bool held_allows(unsigned id, unsigned cls)
{
    uint8_t *skips = &counters[id].held_skips[cls];
    if (*skips) {
        --*skips;
        return false;
    }
    if (cache_capacity(slab_of(id), cls) <= blocks_in_program(cls))
        return true;
    *skips = HELD_RECHECK;
    return false;
}

/* Grows the stack of cls by a batch within the budget, moving it out of
 * its nursery first when it must; whether it grew. */
static bool widen(unsigned id, unsigned cls)
{
    void **slab = slab_of(id);
    struct id_counters *c = &counters[id];
    unsigned more = cache_growth(slab, cls);
    uint64_t bytes = (uint64_t)more * sc_info[cls].size;
    /* Checked before the lock, the common case of a miss in a steady
     * state: a stack at its limit; within the budget, growth past the
     * demand's share for a class the program holds too few blocks of; at
     * the budget, a class that does not miss often enough to take capacity
     * from idle ones (which adds nothing to what the CPU may hold). */
    if (!opt_free_blocks_wait() || !more)
        return false;
    bool within = c->grown_bytes + bytes <= opt.cpu_cache_bytes;
    bool refused = within ? c->grown_bytes + bytes > DEMAND_GROWTH_BYTES && !held_allows(id, cls)
                          : c->class_misses[cls] < MISSES_TO_TAKE_CAPACITY;
    if (refused || !lock_try(&drain_lock))
        return false;
    more = cache_growth(slab, cls);
    bytes = (uint64_t)more * sc_info[cls].size;
    if (more && c->grown_bytes + bytes > opt.cpu_cache_bytes)
        c->grown_bytes -= take_capacity(id, cls, c->grown_bytes + bytes - opt.cpu_cache_bytes);
    bool grow = more && c->grown_bytes + bytes <= opt.cpu_cache_bytes;
    if (grow) {
        c->grown_bytes += bytes;
        if (cache_stack_must_move(slab, cls, more))
            move_stack(id, cls);
        struct cache_hdr *h = cache_hdr(slab, cls);
        __atomic_store_n(&h->end, h->end + more, __ATOMIC_RELEASE);
    }
    lock_release(&drain_lock);
    return grow;
}

/* A stack grows only for a class that ran empty, and then empty or full
 * again, within GROW_WINDOW_US on this CPU: a miss costs a few hundred
 * nanoseconds, so one that comes less often than that costs the class's
 * allocations under 2% of their time, while the room, once filled, keeps
 * its objects resident. A program that allocates and frees at random
 * around a steady working set (larson) missed once in milliseconds per
 * class and grew its stacks to 1.5 MiB for a working set of 250 KiB. */
#define GROW_WINDOW_US 20u

/* Whether cls last ran empty on id within the window before now (for a
 * class that has run empty there). */
static bool missed_within_window(unsigned id, unsigned cls, uint32_t now)
{
    uint32_t last = __atomic_load_n(&counters[id].last_empty[cls], __ATOMIC_RELAXED);
    return now - last <= GROW_WINDOW_US * ARCH_TICKS_PER_US;
}

/* An empty miss: allocation demand. A stack still in its nursery grows
 * only once it also fills (outgrow_nursery): the room it would move to
 * costs a page of its own, and most stacks that run empty now and then
 * never hold more than their batch. */
static void grow_capacity(unsigned id, unsigned cls)
{
    struct id_counters *c = &counters[id];
    bool missed_before = c->class_misses[cls] != 0;
    if (c->class_misses[cls] < UINT16_MAX)
        c->class_misses[cls]++;
    /* At its limit a stack reads no clock: a streaming class's, once
     * grown, misses every batch. */
    if (missed_before && !cache_growth(slab_of(id), cls))
        return;
    /* Nor does a nursery stack that never ran full here: only a full miss
     * asks when it last ran empty, and a producer's never comes. */
    bool nursery = cache_stack_in_nursery(slab_of(id), cls);
    if (nursery && !c->ran_full[cls])
        return;
    uint32_t now = (uint32_t)arch_ticks();
    bool often = missed_before && missed_within_window(id, cls, now);
    __atomic_store_n(&c->last_empty[cls], now, __ATOMIC_RELAXED);
    if (often && !nursery)
        widen(id, cls);
}

/* A full miss: a stack in its nursery that this CPU also allocates from,
 * often, grows (out of it) rather than spill. Its first full miss here
 * only starts the timing of its empty misses. */
static bool outgrow_nursery(unsigned id, unsigned cls)
{
    struct id_counters *c = &counters[id];
    if (!cache_stack_in_nursery(slab_of(id), cls))
        return false;
    if (!c->ran_full[cls]) {
        c->ran_full[cls] = true;
        return false;
    }
    return c->class_misses[cls] && missed_within_window(id, cls, (uint32_t)arch_ticks()) && widen(id, cls);
}

/* Gives id's zero slab its stacks: stopped first, then, once no section
 * still holds a zero top it read, started (as after a drain). */
static void format_slab(unsigned id)
{
    lock_acquire(&drain_lock);
    if (!cache_slab_formatted(slab_of(id))) {
        cache_slab_format_stopped(slab_of(id), CACHE_SHAPE_CPU);
        rseq_fence((int)id);
        cache_slab_restart(slab_of(id));
    }
    lock_release(&drain_lock);
}

/* The id the calling thread runs on, its miss counted and its slab
 * formatted (or being formatted by a thread that holds the drain lock:
 * stopped meanwhile, so this miss goes to the central layer). */
static unsigned count_miss_here(bool empty)
{
    unsigned id = rseq_current_id();
    count_miss(empty ? &counters[id].misses_empty : &counters[id].misses_full);
    if (__builtin_expect(!cache_slab_formatted(slab_of(id)), 0))
        format_slab(id);
    return id;
}

/* The objects a miss of cls on id moves to or from the central layer: a
 * batch, or several when the stack holds twice as many (a stack grows
 * only for a class that misses often), so that a class streaming through
 * the cache pays the slow path once per few batches, while the stack stays
 * at least half empty after a refill and half full after a spill. */
static unsigned objects_to_move(unsigned id, unsigned cls)
{
    unsigned batch = sc_info[cls].batch, fit = cache_capacity(slab_of(id), cls) / (2 * batch);
    return batch * (fit < 1 ? 1 : fit > CENTRAL_MOVE_BATCHES ? CENTRAL_MOVE_BATCHES : fit);
}

void *cpucache_alloc_slow(unsigned cls)
{
    void *batch[CENTRAL_MOVE_BATCHES * SC_BATCH_MAX];
    if (!rseq_thread_ready()) /* cannot happen with glibc's registration */
        return central_alloc(cls, batch, 1) ? batch[0] : NULL;
    void *p;
    FRONTEND_POP(p, cls, empty);
    return p;
empty:;
    unsigned id = count_miss_here(true);
    grow_capacity(id, cls);
    unsigned got = central_alloc(cls, batch, objects_to_move(id, cls));
    if (!got)
        return NULL;
    /* One for the caller, the rest for this CPU's cache, or (when they do
     * not all fit: a drain, or the thread moved) back as one batch. */
    if (got > 1 && !arch_slab_push_batch(SECTION_ARGS, cls, batch, got - 1))
        central_free(cls, batch, got - 1);
    return batch[got - 1];
}

void cpucache_free_slow(void *p, unsigned cls)
{
    if (rseq_thread_ready()) {
        unsigned id = count_miss_here(false);
        /* Batches off the top of the full stack go to the central layer,
         * and p takes their place, unless the stack gets room. */
        if (!outgrow_nursery(id, cls)) {
            void *batch[CENTRAL_MOVE_BATCHES * SC_BATCH_MAX];
            unsigned got = arch_slab_pop_batch(SECTION_ARGS, cls, batch, objects_to_move(id, cls));
            if (got)
                central_free(cls, batch, got);
        }
        FRONTEND_PUSH(p, cls, elsewhere);
        return;
    }
elsewhere: /* no stack here (or a drain stopped it) */
    central_free(cls, &p, 1);
}

/* Pushed on the class's foreign stack, which pops never take from: the
 * next allocation here gets a block whose neighbours are this CPU's, where
 * taking p back (the stack's top) would make both CPUs write p's line (a
 * block a thread frees on its own CPU, the main thread having allocated it
 * and its neighbours on another: Hoard's cache-scratch). A full foreign
 * stack goes as a batch to the lane of the CPU that cuts the superblock of
 * its oldest block, which takes it before other batches. */
void cpucache_free_foreign(void *p, unsigned cls)
{
    unsigned stack = cache_foreign_stack(cls);
    FRONTEND_PUSH(p, stack, full);
    return;
full:;
    void *batch[SC_BATCH_MAX];
    unsigned got = arch_slab_pop_batch(SECTION_ARGS, stack, batch, sc_info[cls].batch);
    if (got)
        central_free_home(cls, batch, got, batch[0]);
    FRONTEND_PUSH(p, stack, elsewhere);
    return;
elsewhere: /* no slab formatted here yet, a drain, or no rseq for this thread */
    cpucache_free_slow(p, cls);
}

size_t cpucache_drain_all(void)
{
    if (!cpucache_on())
        return 0;
    size_t bytes = 0;
    lock_acquire(&drain_lock);
    draining = true;
    for (unsigned id = 0; id < slab_count; id++)
        if (cache_slab_formatted(slab_of(id)))
            cache_slab_stop(slab_of(id));
    rseq_fence(-1); /* no section anywhere still uses the old bounds */
    for (unsigned id = 0; id < slab_count; id++)
        if (cache_slab_formatted(slab_of(id))) {
            bytes += cache_slab_take_stopped(slab_of(id));
            forget_growth(id);
        }
    rseq_fence(-1); /* nor an old top */
    for (unsigned id = 0; id < slab_count; id++)
        if (cache_slab_formatted(slab_of(id)))
            cache_slab_restart(slab_of(id));
    draining = false;
    lock_release(&drain_lock);
    return bytes;
}

size_t cpucache_drain_id(unsigned id)
{
    if (!cpucache_on() || id >= slab_count || !cache_slab_bytes_held(slab_of(id)))
        return 0; /* nothing to take: spare the fences */
    lock_acquire(&drain_lock);
    draining = true;
    cache_slab_stop(slab_of(id));
    rseq_fence((int)id);
    size_t bytes = cache_slab_take_stopped(slab_of(id));
    forget_growth(id);
    rseq_fence((int)id);
    cache_slab_restart(slab_of(id));
    draining = false;
    lock_release(&drain_lock);
    return bytes;
}

void cpucache_fork_child(void)
{
    /* A drain (or a stack's move) cut short: after a fork from a signal handler, the handlers
     * left the drain lock to a thread that waited for the interrupted call
     * (platform/lock.h), and that thread is gone. Which of the stopped
     * stacks' objects reached the central layer is not known: the rest are
     * lost to the child, never handed out twice. A drain that the
     * interrupted call itself runs (the lock is then still held) finishes
     * when the call goes on. */
    if (!draining || !lock_try(&drain_lock))
        return;
    for (unsigned id = 0; id < slab_count; id++)
        if (cache_slab_stopped(slab_of(id))) {
            cache_slab_forget(slab_of(id));
            cache_slab_restart(slab_of(id));
            forget_growth(id);
        }
    draining = false;
    lock_release(&drain_lock);
}

bool cpucache_holds(const void *p, unsigned cls)
{
    for (unsigned id = 0, count = cpucache_id_count(); id < count; id++)
        if (cache_slab_holds(slab_of(id), cls, p))
            return true;
    return false;
}

size_t cpucache_bytes_held(unsigned *slabs)
{
    size_t bytes = 0;
    unsigned count = cpucache_id_count();
    for (unsigned id = 0; id < count; id++)
        bytes += cache_slab_bytes_held(slab_of(id));
    if (slabs)
        *slabs = count;
    return bytes;
}

unsigned cpucache_id_count(void)
{
    return cpucache_on() ? slab_count : 0;
}

void cpucache_id_misses(unsigned id, uint64_t *empty, uint64_t *full)
{
    *empty = *full = 0;
    if (id < cpucache_id_count()) {
        *empty = __atomic_load_n(&counters[id].misses_empty, __ATOMIC_RELAXED);
        *full = __atomic_load_n(&counters[id].misses_full, __ATOMIC_RELAXED);
    }
}

uint64_t cpucache_id_activity(unsigned id)
{
    if (id >= cpucache_id_count() || !cache_slab_formatted(slab_of(id)))
        return 0;
    uint64_t empty, full;
    cpucache_id_misses(id, &empty, &full);
    return empty + full + cache_slab_tops_digest(slab_of(id));
}
