#include "core/central.h"

#include <stddef.h>
#include <string.h>

#include "arch/prefetch.h"
#include "core/batchpool.h"
#include "core/counters.h"
#include "core/footprint.h"
#include "core/sizeclass.h"
#include "core/superblock.h"
#include "platform/debug.h"
#include "platform/diag.h"
#include "platform/lock.h"
#include "platform/options.h"
#include "platform/os.h"
#include "platform/rseq.h"

/* Full batches are parked in lanes (below). The statistics each side of a
 * hand-off counts are on lines of their own, written with plain
 * increments (a lost one is an approximation, not an error). */
struct central {
    _Alignas(64) uint64_t refills;
    _Alignas(64) uint64_t spills;
    uint64_t locked_spills; /* spills that took the lock (counted before the purger is woken) */
    _Alignas(64) lock_t lock;
    uint64_t cuts;       /* refills that took blocks from superblocks */
    uint64_t blocks_cut; /* blocks they took */
    uint64_t returns;    /* blocks given back to superblocks */
    struct superblock *partial; /* superblocks with free or uncut blocks */
    uint64_t superblocks;
    uint64_t blocks_out;
} __attribute__((aligned(64)));
/* Three cache lines a class, untouched until the class is used: its lock
 * is free as zeroed, and registering it for fork does not write it. */
_Static_assert(sizeof(struct central) == 3 * 64, "a class's central structure is three lines");

static struct central classes[SC_COUNT];
/* Batches a lane's chains keep per class (see central_free): read by every
 * spill, written at start-up alone. */
static uint32_t parked_limits[SC_COUNT];

/* A class's full batches are parked in lanes (core/batch.h): a CPU that
 * spills a class refills from its own batches first, and a CPU that runs
 * dry takes another's a chain at a time, so a producer and a consumer on
 * two CPUs write a contended head once a chain, not once a batch. A chain
 * holds at most CHAIN_BYTES of objects and CHAIN_MOST batches (classes of
 * batches that large go straight into chains of one). One row of lanes
 * per lane index, a class's lane in it: its single nodes, its chains and
 * where it last found a chain on lines of their own, and where its CPU cuts
 * (cut_source, below). A lane's row is contiguous, so a process on a few
 * CPUs touches a few pages of the table. */
#define CHAIN_BYTES ((size_t)32 << 10)
#define CHAIN_MOST 8u
struct lane_row {
    struct stack singles[SC_COUNT];
    _Alignas(64) struct stack chains[SC_COUNT];
    _Alignas(64) uint8_t last_found[SC_COUNT];
    _Alignas(64) struct cut_source {
        struct superblock *sb;
        uintptr_t thread;  /* the thread that cut last */
        uint64_t cut;      /* the class's cut count then */
        uint64_t returned; /* blocks this CPU sent back to superblocks and has not cut since (central_alloc) */
    } cut_sources[SC_COUNT];
} __attribute__((aligned(64)));
static struct lane_row lanes[LANES];

static uint32_t chain_batches(unsigned cls)
{
    size_t batches = CHAIN_BYTES / ((size_t)sc_info[cls].size * sc_info[cls].batch);
    return batches < 1 ? 1 : batches > CHAIN_MOST ? CHAIN_MOST : (uint32_t)batches;
}

/* The lanes' stacks of cls one by one: i below LANES a lane's single
 * nodes, from LANES on its chains. */
static struct stack *lane_stack(unsigned i, unsigned cls)
{
    return i < LANES ? &lanes[i].singles[cls] : &lanes[i - LANES].chains[cls];
}

static struct lane lane_of(unsigned index, unsigned cls)
{
    return (struct lane){ &lanes[index].singles[cls], &lanes[index].chains[cls], &lanes[index].last_found[cls] };
}

static void count_one(uint64_t *counter)
{
    __atomic_store_n(counter, __atomic_load_n(counter, __ATOMIC_RELAXED) + 1, __ATOMIC_RELAXED);
}

/* A lane's chains keep up to 2 MiB of a class (at least 4 batches, at
 * most 512, whose nodes would outweigh the tiniest objects they hold);
 * past that, spills go back to their superblocks (central_free). */
#define CENTRAL_PARKED_BYTES ((size_t)2 << 20)
#define CENTRAL_PARKED_MOST 512u

static uint32_t parked_limit(unsigned cls)
{
    size_t batches = CENTRAL_PARKED_BYTES / ((size_t)sc_info[cls].size * sc_info[cls].batch);
    return batches < 4 ? 4 : batches > CENTRAL_PARKED_MOST ? CENTRAL_PARKED_MOST : (uint32_t)batches;
}

void central_init(void)
{
    for (unsigned c = 0; c < SC_COUNT; c++) {
        parked_limits[c] = parked_limit(c);
        lock_register_for_fork(&classes[c].lock, LOCK_RANK_CLASS);
    }
    batchpool_init();
}

/* Lists sb as partly free: first, or in tight mode in address order, so
 * that blocks are taken from the lowest partial superblock first. Class
 * lock held. */
static void partial_insert(struct central *ce, struct superblock *sb)
{
    struct superblock *after = NULL;
    if (opt.tight)
        for (struct superblock *q = ce->partial; q && q->start < sb->start; q = q->next)
            after = q;
    sb->list = SB_LIST_PARTIAL;
    sb->prev = after;
    sb->next = after ? after->next : ce->partial;
    if (sb->next)
        sb->next->prev = sb;
    if (after)
        after->next = sb;
    else
        ce->partial = sb;
}

/* Takes sb off the partial list. Class lock held. */
static void partial_remove(struct central *ce, struct superblock *sb)
{
    if (sb->prev)
        sb->prev->next = sb->next;
    else
        ce->partial = sb->next;
    if (sb->next)
        sb->next->prev = sb->prev;
    sb->list = SB_LIST_NONE;
}

/* Where each CPU (lane) cuts fresh blocks of each class from: a superblock
 * of its own, so that two CPUs' blocks do not share pages. Interleaved in
 * one page, the hardware prefetchers of each core pull the other's lines
 * in, and every write after that crosses cores: glibc's bench-malloc-thread
 * at two threads, whose blocks never move between threads, ran 1.15x slower
 * when crossing cores was slow. A superblock a CPU cuts from records it
 * (cut_by). Another CPU takes it over rather than start one more when the
 * thread that cut there last is its own (the thread moved), or when that
 * CPU has not cut the class for CUT_IDLE of the class's cuts (its thread
 * is done with the class, or waits): separate superblocks cost pages, and
 * only CPUs cutting side by side need them. Class lock held for a class's
 * entries. */
static struct cut_source *cut_source_of(unsigned lane, unsigned cls)
{
    return &lanes[lane].cut_sources[cls];
}
_Static_assert(LANES % 32 == 0, "a lane modulo 32 is its id's (sb_set_cutter)");
#define CUT_IDLE 8u

/* The calling CPU sent n blocks of cls back to their superblocks (central_free,
 * shed_batches): until it has cut as many, it cuts rather than take another
 * CPU's parked batches (parked_batch). At most a parked limit's worth is
 * counted: a CPU that mostly frees (a consumer's) would otherwise cut for
 * as long as it had been returning before it took a batch again. Class
 * lock held. */
static void returned_here(unsigned cls, uint64_t n)
{
    uint64_t *returned = &cut_source_of(lane_index(), cls)->returned;
    uint64_t most = (uint64_t)parked_limits[cls] * sc_info[cls].batch, now = *returned + n;
    __atomic_store_n(returned, now < most ? now : most, __ATOMIC_RELAXED);
}

/* Whether another CPU than lane cuts from sb, for another thread, lately. */
static bool cut_by_other(const struct central *ce, const struct superblock *sb, unsigned cls, unsigned lane,
                         uintptr_t thread)
{
    if (!sb->cut_by || sb->cut_by == lane + 1u)
        return false;
    const struct cut_source *other = cut_source_of(sb->cut_by - 1u, cls);
    return other->sb == sb && other->thread != thread && ce->cuts - other->cut < CUT_IDLE;
}

/* A partly free superblock for lane to cut from: among the first
 * CUT_LOOK_AHEAD listed (the list is not searched whole under the lock), one
 * it cut from before, else the first no other CPU cuts from lately. Blocks
 * come back to a superblock from the CPU that freed them (past the parked
 * limit, central_free): in one this CPU cut, they are mostly its own
 * threads', written here last; in one another CPU cut, they were written
 * there, and each first write to them crosses cores. NULL when none. Class
 * lock held. */
#define CUT_LOOK_AHEAD 16u
static struct superblock *partial_for(const struct central *ce, unsigned cls, unsigned lane, uintptr_t thread)
{
    struct superblock *first_free = NULL;
    unsigned looked = 0;
    for (struct superblock *sb = ce->partial; sb; sb = sb->next) {
        if (sb->cut_by == lane + 1u)
            return sb;
        if (!first_free && !cut_by_other(ce, sb, cls, lane, thread))
            first_free = sb;
        if (++looked >= CUT_LOOK_AHEAD && first_free)
            break;
    }
    return first_free;
}

/* A class that brings pages in for a superblock while another class keeps
 * resident empty ones for its own reuse makes the process grow by what the
 * other keeps (a server that empties one class between phases and fills
 * another held both, up to the retained budget, until the purger's pass a
 * delay later). So the other class's empty superblocks that have stayed
 * unused for an eighth of the purge delay go back as this one comes in:
 * memory moves between classes rather than adding up. The other class's
 * lock is only tried (class locks are never waited for two at a time);
 * one class gives back per superblock taken. A look that found none old
 * enough is not repeated for a quarter of that age: a program that cycles
 * its working set through empty superblocks faster takes fresh pages
 * often, and each look walks the classes' lists. Class lock of cls held. */
#define TRADE_AGE_PARTS 8u
static uint64_t trade_idle_until; /* ns */
static void trade_retained(unsigned cls)
{
    if (opt.purge_delay_ms <= 0 || sb_bytes_retained() < SB_SIZE)
        return;
    uint64_t now = os_monotonic_ns(), age = (uint64_t)opt.purge_delay_ms * (1000000u / TRADE_AGE_PARTS);
    if (now < __atomic_load_n(&trade_idle_until, __ATOMIC_RELAXED))
        return;
    uint64_t horizon = now > age ? now - age : 0;
    for (unsigned step = 1; step < SC_COUNT; step++) {
        unsigned c = (cls + step) % SC_COUNT;
        if (!sb_class_retains(c) || !lock_try(&classes[c].lock))
            continue;
        size_t released = sb_purge_class_empties(c, horizon, opt_purge_kind());
        lock_release(&classes[c].lock);
        if (released)
            return;
    }
    __atomic_store_n(&trade_idle_until, now + age / 4, __ATOMIC_RELAXED);
}

/* A superblock newly formatted for cls, listed as partly free (trading
 * away what other classes retain when its pages are to come in). NULL
 * when none is to be had. Class lock held. */
static struct superblock *new_superblock(struct central *ce, unsigned cls)
{
    bool faults = sb_acquire_faults(cls);
    struct superblock *sb = sb_acquire(cls);
    if (!sb)
        return NULL;
    ce->superblocks++;
    partial_insert(ce, sb);
    if (faults)
        trade_retained(cls);
    return sb;
}

/* The superblock the calling CPU cuts blocks of cls from: its own while it
 * has room, else a partly free one (partial_for), else a new one (or, none
 * to be had, any partly free one). NULL when there is none at all. Class
 * lock held. */
static struct superblock *cut_source(struct central *ce, unsigned cls)
{
    unsigned lane = lane_index();
    uintptr_t thread = rseq_thread_token();
    struct cut_source *mine = cut_source_of(lane, cls);
    struct superblock *sb = mine->sb;
    if (!sb || sb->list != SB_LIST_PARTIAL || sb->cls != cls || sb->cut_by != lane + 1u) {
        sb = partial_for(ce, cls, lane, thread);
        if (!sb && !(sb = new_superblock(ce, cls)))
            sb = ce->partial;
        if (!sb)
            return NULL;
        if (sb->cut_by && cut_source_of(sb->cut_by - 1u, cls)->sb == sb)
            cut_source_of(sb->cut_by - 1u, cls)->sb = NULL;
        sb_set_cutter(sb, lane);
        mine->sb = sb;
    }
    mine->thread = thread;
    mine->cut = ce->cuts;
    return sb;
}

/* Tight mode takes the lowest free addresses first, whichever CPU cuts:
 * the lowest partly free superblock, or an empty one still resident below
 * it (the thread moved between CPUs, say, and a cache there holds the only
 * blocks out of a higher superblock). Class lock held. */
static struct superblock *tight_source(struct central *ce, unsigned cls)
{
    struct superblock *sb = ce->partial;
    if ((!sb || sb_resident_empty_below(cls, sb->start)) && new_superblock(ce, cls))
        sb = ce->partial;
    return sb;
}

/* Puts the blocks of sb at the head of objs[0..n) back into it (up to
 * the first that lies elsewhere), reporting those freed twice; returns how
 * many it took off the head, adding those that went back to *returned.
 * Class lock held. */
static unsigned return_run(struct central *ce, struct superblock *sb, void *const *objs, unsigned n, bool purge_now,
                           unsigned *returned)
{
    CA_ASSERT(sb && sb->cls == (unsigned)(ce - classes));
    CA_ASSERT(sb_block_start(sb, (uintptr_t)objs[0]) == (uintptr_t)objs[0]);
    unsigned back = 0, i = 0;
    for (;;) {
        unsigned given = sb_give_run(sb, objs + i, n - i);
        if (purge_now)
            sb_gave_run(sb, objs + i, given);
        back += given;
        i += given;
        if (i == n || (uintptr_t)objs[i] - sb->start >= SB_SIZE)
            break;
        diag_invalid_pointer("free", objs[i++], "freed twice");
    }
    *returned += back;
    if (!back) /* all freed twice: sb may be empty already, released by their first free */
        return i;
    ce->blocks_out -= back;
    if (sb->used == 0) {
        if (sb->list == SB_LIST_PARTIAL)
            partial_remove(ce, sb);
        ce->superblocks--;
        sb_release_empty(sb);
    } else if (sb->list != SB_LIST_PARTIAL)
        partial_insert(ce, sb);
    return i;
}

/* Returns objects to their superblocks and the statistics, a run of
 * neighbours at a time: a batch freed in order holds runs of blocks of one
 * superblock, whose descriptor and bitmap are then found once. Returns how
 * many went back (not those freed twice). Lock held. */
static unsigned return_objects(struct central *ce, unsigned cls, void *const *objs, unsigned n)
{
    unsigned returned = 0;
    bool purge_now = footprint_purge_at_once();
    for (unsigned i = 0; i < n;)
        i += return_run(ce, sb_of((uintptr_t)objs[i]), objs + i, n - i, purge_now, &returned);
    ce->returns += returned;
    counters_add_held(-(ptrdiff_t)(returned * sc_info[cls].size));
    return returned;
}

/* Empties a stack entry's batches (a node, or a chain's) into their
 * superblocks and recycles the nodes; returns how many blocks went back
 * (not those freed twice). Lock held. */
static unsigned return_batches(struct central *ce, unsigned cls, struct batch *b)
{
    unsigned returned = 0;
    for (struct batch *rest = b->rest; b; b = rest, rest = rest ? rest->next : NULL) {
        returned += return_objects(ce, cls, b->objects, b->count);
        batchpool_put(b);
    }
    return returned;
}

/* A cut takes at most a page's worth of blocks or a quarter of the blocks
 * the class has out already, whichever is more: blocks cut are marked free
 * (block_mark.h), so resident, and a class the program uses a little (a
 * few blocks of 4 to 32 KiB, say) would otherwise hold a batch of up to
 * 64 KiB in every cache. A class that grows reaches whole batches within a
 * few cuts, its cached surplus bounded by a quarter of what it has out.
 * Lock held. */
static unsigned cut_allowance(const struct central *ce, unsigned cls, unsigned n)
{
    size_t most = OS_PAGE_SIZE / sc_info[cls].size, grown = ce->blocks_out / 4;
    if (grown > most)
        most = grown;
    return most >= n ? n : most ? (unsigned)most : 1;
}

/* A parked batch's objects are fetched together, as it is taken: freed in
 * any order, they may lie anywhere in memory, each on a line long gone from
 * the cache, and the program writes each as malloc hands it out. Fetched
 * one malloc at a time, each would wait out a whole miss. */
static void prefetch_objects(void *const *objs, unsigned n)
{
    for (unsigned i = 0; i < n; i++)
        arch_prefetch_for_write(objs[i]);
}

/* A parked batch for the CPU of lane index: its own, else another CPU's,
 * unless it sent blocks of the class back to their superblocks and has not
 * cut as many since: then, if it finds the class lock free, it takes the
 * lock (*locked) to cut them again (NULL). Its own blocks were written on
 * this CPU last, the other CPU's batches there: when crossing cores is
 * slow, each of those blocks costs a transfer at its first write. A taken
 * lock means others cut or return meanwhile, and the batch waits for none. */
static struct batch *parked_batch(struct central *ce, unsigned cls, struct lane lane, unsigned index, bool *locked)
{
    struct batch *b = lane_take(lane);
    if (b)
        return b;
    if (__atomic_load_n(&cut_source_of(index, cls)->returned, __ATOMIC_RELAXED) && lock_try(&ce->lock)) {
        *locked = true;
        return NULL;
    }
    return lane_steal(lane, index, lanes_in_use(), sizeof(struct lane_row));
}

/* Up to `most` parked batches into out (see parked_batch), the first taken
 * (its lane's newest) last, so that it goes out first; returns how many
 * objects. 0 when none is parked, or when the caller is to cut with the
 * lock it took (*locked). */
static unsigned take_parked(struct central *ce, unsigned cls, void **out, unsigned most, bool *locked)
{
    most = most < CENTRAL_MOVE_BATCHES ? most : CENTRAL_MOVE_BATCHES;
    unsigned index = lane_index();
    struct lane lane = lane_of(index, cls);
    struct batch *taken[CENTRAL_MOVE_BATCHES];
    unsigned nodes = 0, objects = 0;
    for (struct batch *b = parked_batch(ce, cls, lane, index, locked); b;
         b = nodes < most ? lane_take(lane) : NULL) {
        taken[nodes++] = b;
        objects += b->count;
    }
    if (!nodes)
        return 0;
    lane_prefetch_next(lane, offsetof(struct batch, objects) + sc_info[cls].batch * sizeof(void *));
    for (unsigned i = 0, at = objects; i < nodes; i++) {
        struct batch *b = taken[i];
        at -= b->count;
        memcpy(out + at, b->objects, b->count * sizeof(void *));
        if (b->filled_on == index)
            prefetch_objects(out + at, b->count);
        batchpool_put(b);
    }
    count_one(&ce->refills);
    return objects;
}

unsigned central_alloc(unsigned cls, void **out, unsigned n)
{
    struct central *ce = &classes[cls];
    unsigned got = 0, batch = sc_info[cls].batch;
    bool locked = false;
    if (n >= batch && n % batch == 0 && (got = take_parked(ce, cls, out, n / batch, &locked)))
        return got;
    if (!locked)
        lock_acquire(&ce->lock);
    n = cut_allowance(ce, cls, n);
    uint64_t *returned = &cut_source_of(lane_index(), cls)->returned;
    while (got < n) {
        struct superblock *sb = opt.tight ? tight_source(ce, cls) : cut_source(ce, cls);
        if (!sb)
            break; /* out of memory, or at the limit */
        CA_ASSERT(sb->cls == cls && !sb_exhausted(sb));
        got += sb_take(sb, out + got, n - got);
        if (sb_exhausted(sb))
            partial_remove(ce, sb);
    }
    /* Listed highest first (see central.h), the cut goes out as one
     * ascending run across pages, which the hardware prefetcher follows (a
     * run falling within each page and climbing between them took the
     * same writes twice as long). */
    for (unsigned lo = 0, hi = got; lo + 1 < hi; lo++, hi--) {
        void *swap = out[lo];
        out[lo] = out[hi - 1];
        out[hi - 1] = swap;
    }
    ce->blocks_out += got;
    ce->cuts++;
    ce->blocks_cut += got;
    __atomic_store_n(returned, *returned > got ? *returned - got : 0, __ATOMIC_RELAXED);
    lock_release(&ce->lock);
    counters_add_held((ptrdiff_t)(got * sc_info[cls].size));
    count_one(&ce->refills);
    return got;
}

/* Too much parked in a lane's chains (their batches came while the lock
 * was taken): if it finds the lock free, the lane's CPU takes some batches
 * back to their superblocks, so those can empty. */
static void shed_batches(struct central *ce, unsigned cls, struct lane lane)
{
    if (stack_depth(lane.chains) <= parked_limits[cls] || !lock_try(&ce->lock))
        return;
    while (stack_depth(lane.chains) > parked_limits[cls] / 2) {
        struct batch *old = stack_pop(lane.chains);
        if (!old)
            break;
        returned_here(cls, return_batches(ce, cls, old));
    }
    lock_release(&ce->lock);
}

/* A spill to the superblocks, under the class lock (taken here unless
 * locked; released here). The traffic is counted (locked_spills, or a
 * push's tag, each by an atomic read-modify-write) before the purger is
 * woken: it looks at the traffic once it has said it sleeps, so one of the
 * two sees the other. A CPU about to wait for the lock wakes it first. */
static void spill_to_superblocks(struct central *ce, unsigned cls, void *const *objs, unsigned n, bool locked)
{
    __atomic_fetch_add(&ce->locked_spills, 1, __ATOMIC_SEQ_CST);
    footprint_wake_purger();
    if (!locked)
        lock_acquire(&ce->lock);
    returned_here(cls, return_objects(ce, cls, objs, n));
    lock_release(&ce->lock);
}

/* Full batches are parked while the CPU's lane holds fewer than the limit;
 * past it, a spill goes straight back to its superblocks when the class
 * lock is free (a taken one would make the CPU wait: then it parks, and
 * sheds later). Parked batches come back in the order they were freed,
 * superblocks hand out their lowest free blocks first: a program that
 * frees a structure in an order of its own and builds the next one (CPython
 * with PYTHONMALLOC=malloc) finds that structure's neighbours side by side
 * again instead of scattered, and a producer's blocks come from one
 * superblock in address order (see design.md). */
/* central_free's work, parking on lane_at's lane; index: the caller's. */
static void free_on_lane(unsigned cls, void *const *objs, unsigned n, unsigned index, unsigned lane_at)
{
    struct central *ce = &classes[cls];
    count_one(&ce->spills);
    struct lane lane = lane_of(lane_at, cls);
    unsigned batch = sc_info[cls].batch, parked = 0;
    bool parks = n % batch == 0 && opt_free_blocks_wait();
    if (parks && stack_depth(lane.chains) >= parked_limits[cls] && lock_try(&ce->lock)) {
        spill_to_superblocks(ce, cls, objs, n, true);
        return;
    }
    uint32_t chain = chain_batches(cls);
    for (struct batch *b; parks && parked < n && (b = batchpool_get()); parked += batch) {
        memcpy(b->objects, objs + parked, batch * sizeof(void *));
        b->count = (uint16_t)batch;
        b->filled_on = (uint16_t)index;
        lane_put(lane, b, chain - 1, chain);
    }
    if (parked) {
        footprint_wake_purger();
        shed_batches(ce, cls, lane);
    }
    if (parked < n) /* not whole batches, or out of nodes */
        spill_to_superblocks(ce, cls, objs + parked, n - parked, false);
}

void central_free(unsigned cls, void *const *objs, unsigned n)
{
    unsigned index = lane_index();
    free_on_lane(cls, objs, n, index, index);
}

void central_free_home(unsigned cls, void *const *objs, unsigned n, const void *sample)
{
    const struct superblock *sb = sb_of((uintptr_t)sample);
    unsigned cut_by = sb ? __atomic_load_n(&sb->cut_by, __ATOMIC_RELAXED) : 0, index = lane_index();
    free_on_lane(cls, objs, n, index, cut_by && cut_by <= lanes_in_use() ? cut_by - 1u : index);
}

size_t central_trim_class(unsigned cls, uint32_t batches_back, uint64_t older_than_ns,
                          enum os_purge_kind kind)
{
    struct central *ce = &classes[cls];
    lock_acquire(&ce->lock);
    for (unsigned i = 0; i < 2 * LANES; i++) {
        struct stack *st = lane_stack(i, cls);
        for (struct batch *b; batches_back && (b = stack_pop(st));) {
            uint32_t n = b->nodes; /* the entry's batches, before they go back */
            return_batches(ce, cls, b);
            if (batches_back != CENTRAL_ALL_BATCHES)
                batches_back = n < batches_back ? batches_back - n : 0;
        }
    }
    size_t released = sb_purge_class_empties(cls, older_than_ns, kind);
    lock_release(&ce->lock);
    return released;
}

size_t central_purge_holes(unsigned cls)
{
    struct central *ce = &classes[cls];
    size_t released = 0;
    lock_acquire(&ce->lock);
    for (struct superblock *sb = ce->partial; sb; sb = sb->next)
        released += sb_purge_holes(sb);
    lock_release(&ce->lock);
    return released;
}

size_t central_trim(void)
{
    size_t released = 0;
    for (unsigned c = 0; c < SC_COUNT; c++)
        released += central_trim_class(c, CENTRAL_ALL_BATCHES, UINT64_MAX, OS_PURGE_DONTNEED) + central_purge_holes(c);
    /* Last: every class has emptied what it could into the shared pool. */
    return released + sb_purge_pool(UINT64_MAX, OS_PURGE_DONTNEED) + batchpool_release();
}

/* Whether the entries of st (nodes and chains) hold p. */
static bool stack_holds(const struct stack *st, const void *p)
{
    /* Node memory is never unmapped, and a walk longer than the nodes on
     * the stack has strayed onto another stack: stop there. */
    uint32_t steps = stack_depth(st) + 1;
    for (struct batch *entry = stack_peek((struct stack *)st); entry && steps;
         entry = __atomic_load_n(&entry->next, __ATOMIC_RELAXED)) {
        for (struct batch *b = entry; b && steps;
             b = b == entry ? __atomic_load_n(&entry->rest, __ATOMIC_RELAXED) : __atomic_load_n(&b->next, __ATOMIC_RELAXED)) {
            steps--;
            unsigned count = __atomic_load_n(&b->count, __ATOMIC_RELAXED);
            for (unsigned i = 0; i < count && i < SC_BATCH_MAX; i++)
                if (__atomic_load_n(&b->objects[i], __ATOMIC_RELAXED) == p)
                    return true;
        }
    }
    return false;
}

bool central_holds(unsigned cls, const void *p)
{
    for (unsigned i = 0; i < 2 * LANES; i++)
        if (stack_holds(lane_stack(i, cls), p))
            return true;
    return false;
}

/* Batches parked in the class's lanes, and their traffic. */
static void lanes_count(unsigned cls, uint32_t *depth, uint32_t *traffic)
{
    *depth = *traffic = 0;
    for (unsigned i = 0, in_use = lanes_in_use(); i < in_use; i++)
        for (unsigned side = 0; side < 2; side++) { /* its singles, then its chains */
            *depth += stack_depth(lane_stack(side * LANES + i, cls));
            *traffic += stack_traffic(lane_stack(side * LANES + i, cls));
        }
}

void central_traffic(unsigned cls, struct central_traffic *out)
{
    struct central *ce = &classes[cls];
    uint32_t lane_depth, lane_traffic;
    lanes_count(cls, &lane_depth, &lane_traffic);
    out->activity = (uint64_t)lane_traffic + __atomic_load_n(&ce->cuts, __ATOMIC_RELAXED) +
                    __atomic_load_n(&ce->locked_spills, __ATOMIC_RELAXED);
    out->blocks_cut = __atomic_load_n(&ce->blocks_cut, __ATOMIC_RELAXED);
    uint64_t capacity = __atomic_load_n(&ce->superblocks, __ATOMIC_RELAXED) * sc_info[cls].blocks,
             out_now = __atomic_load_n(&ce->blocks_out, __ATOMIC_RELAXED);
    out->blocks_free = capacity > out_now ? capacity - out_now : 0;
    out->returns = __atomic_load_n(&ce->returns, __ATOMIC_RELAXED);
    out->parked = lane_depth;
}

void central_class_stats(unsigned cls, struct central_class_stats *out)
{
    struct central *ce = &classes[cls];
    uint32_t lane_depth, lane_traffic;
    lanes_count(cls, &lane_depth, &lane_traffic);
    out->superblocks = __atomic_load_n(&ce->superblocks, __ATOMIC_RELAXED);
    out->blocks_out = __atomic_load_n(&ce->blocks_out, __ATOMIC_RELAXED);
    out->batches_central = lane_depth;
    out->refills = __atomic_load_n(&ce->refills, __ATOMIC_RELAXED);
    out->spills = __atomic_load_n(&ce->spills, __ATOMIC_RELAXED);
}
