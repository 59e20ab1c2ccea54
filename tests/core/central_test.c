/* The central layer under contention: threads take and return objects in
 * full batches, one or several at a time (the lock-free stacks), and odd
 * counts (the superblock path).
 * Every object taken is tagged with its holder by an atomic exchange on its
 * first word, so an object handed to two holders at once is caught; counts
 * in and out must balance; trimming returns the superblocks. A cut takes
 * at most a quarter of what the class has out (or a page's worth), so each
 * class is first given enough out for whole cuts. A working set freed past
 * the parked limit goes back to its superblocks and comes out of them in
 * address order, to the CPU that freed it before another CPU's batches. */
#include <sched.h>
#include <stdint.h>
#include <stdio.h>

#include "api/alloc.h"
#include "api/init.h"
#include "core/central.h"
#include "core/sizeclass.h"
#include "platform/diag.h"
#include "platform/os.h"
#include "platform/rseq.h"
#include "central_hold.h"
#include "check.h"
#include "pinning.h"
#include "rng.h"
#include "threads.h"

#define THREADS 8
#define ROUNDS 20000
#define HELD_MAX (CENTRAL_MOVE_BATCHES * SC_BATCH_MAX)

static const unsigned test_classes[] = {0, 17, 40, SC_COUNT - 1};

static void take(uintptr_t tag, void **objs, unsigned n)
{
    for (unsigned i = 0; i < n; i++) {
        uintptr_t old = __atomic_exchange_n((uintptr_t *)objs[i], tag, __ATOMIC_ACQ_REL);
        CHECK_MSG(old == 0 || old > THREADS, "object %p handed out twice (held by %lu, now %lu)", objs[i],
              (unsigned long)old, (unsigned long)tag);
    }
}

static void give_back(uintptr_t tag, unsigned cls, void **objs, unsigned n)
{
    for (unsigned i = 0; i < n; i++) {
        CHECK_MSG(*(uintptr_t *)objs[i] == tag, "object %p changed hands while held", objs[i]);
        __atomic_store_n((uintptr_t *)objs[i], 0, __ATOMIC_RELEASE);
    }
    central_free(cls, objs, n);
}

static void *worker(void *arg)
{
    uintptr_t tag = thread_number(arg);
    void *held[HELD_MAX];
    struct rng rng = rng_seeded(tag);
    for (int r = 0; r < ROUNDS; r++) {
        unsigned cls = test_classes[rng_below(&rng, sizeof test_classes / sizeof test_classes[0])];
        unsigned batch = sc_info[cls].batch, kind = (unsigned)rng_below(&rng, 4);
        unsigned n = kind == 0 ? 1 + (unsigned)rng_below(&rng, batch)
                   : kind == 1 ? batch * (2 + (unsigned)rng_below(&rng, CENTRAL_MOVE_BATCHES - 1))
                               : batch;
        unsigned got = central_alloc(cls, held, n);
        /* Several batches come as many as are parked, or as a cut takes
         * (a quarter of what the class has out: maybe fewer than asked). */
        CHECK_MSG(n > batch ? got > 0 && got <= n : got == n, "central_alloc gave %u of %u", got, n);
        take(tag, held, got);
        if (got % batch == 0 && kind != 0 && rng_below(&rng, 2)) {
            give_back(tag, cls, held, got);
        } else {
            for (unsigned i = 0; i < got; i++)
                give_back(tag, cls, &held[i], 1);
        }
    }
    return NULL;
}

/* A cut of a class takes a page's worth of blocks or a quarter of those
 * the class has out, whichever is more, up to the batch: a class used a
 * little holds little; one that grows reaches whole batches. And the
 * blocks given back one at a time leave nothing out. */
static void test_cut_allowance(unsigned cls)
{
    struct central_class_stats stats;
    central_class_stats(cls, &stats);
    REQUIRE_MSG(stats.refills == 0 && stats.blocks_out == 0, "class %u was used before the test", cls);
    unsigned batch = sc_info[cls].batch, page = (unsigned)(OS_PAGE_SIZE / sc_info[cls].size), held = 0;
    REQUIRE(page > 0 && page < batch);
    static void *objs[CENTRAL_HOLD_MOST];
    for (unsigned got = 0; got < batch;) {
        unsigned expect = held / 4 > page ? held / 4 : page;
        expect = expect < batch ? expect : batch;
        REQUIRE(held + batch <= CENTRAL_HOLD_MOST);
        got = central_alloc(cls, &objs[held], batch);
        CHECK_MSG(got == expect, "class %u with %u out: a cut of %u blocks, expected %u", cls, held, got, expect);
        REQUIRE(got > 0);
        held += got;
    }
    for (unsigned i = 0; i < held; i++)
        central_free(cls, &objs[i], 1);
    central_class_stats(cls, &stats);
    CHECK_EQ(stats.blocks_out, 0);
}

/* Takes n blocks of cls into objs, cut or parked, a batch at a time. */
static void take_blocks(unsigned cls, void **objs, unsigned n)
{
    for (unsigned held = 0; held < n;) {
        unsigned want = n - held < sc_info[cls].batch ? n - held : sc_info[cls].batch;
        unsigned got = central_alloc(cls, &objs[held], want);
        REQUIRE(got > 0);
        held += got;
    }
}

static uint64_t batches_parked(unsigned cls)
{
    struct central_class_stats stats;
    central_class_stats(cls, &stats);
    return stats.batches_central;
}

/* A working set freed whole, well past the parked limit, in an order of
 * its own (every batch strided across the set), and allocated again, twice:
 * each time only up to the limit stays parked, the rest goes back to the
 * superblocks, and comes out of them again lowest address first, each cut
 * one ascending run (listed highest first, see central.h). The limit holds
 * per CPU (each parks its own batches), so the test stays on one. */
static void test_past_the_limit_back_in_address_order(unsigned cls)
{
    enum { BATCHES = 2000 };
    static void *objs[BATCHES * SC_BATCH_MAX], *freeing[SC_BATCH_MAX];
    cpu_set_t before;
    REQUIRE(sched_getaffinity(0, sizeof before, &before) == 0);
    REQUIRE(pin_to_this_cpu());
    struct central_class_stats stats;
    central_class_stats(cls, &stats);
    REQUIRE_MSG(stats.refills == 0 && stats.blocks_out == 0, "class %u was used before the test", cls);
    unsigned batch = sc_info[cls].batch, n = BATCHES * batch;
    take_blocks(cls, objs, n);
    for (unsigned round = 1; round <= 2; round++) {
        for (unsigned b = 0; b < BATCHES; b++) {
            for (unsigned i = 0; i < batch; i++)
                freeing[i] = objs[i * BATCHES + b];
            central_free(cls, freeing, batch);
        }
        uint64_t parked = batches_parked(cls);
        central_class_stats(cls, &stats);
        CHECK_MSG(parked < BATCHES / 2, "round %u: %lu of %u batches parked", round, (unsigned long)parked,
                  BATCHES);
        CHECK_MSG(stats.blocks_out <= parked * batch + batch,
                  "round %u: %lu blocks out of their superblocks, %lu parked", round,
                  (unsigned long)stats.blocks_out, (unsigned long)(parked * batch));
        unsigned in_order = 0, cuts = 0;
        for (unsigned held = 0; held < n; held += batch) {
            REQUIRE(central_alloc(cls, &objs[held], batch) == batch);
            if (held / batch < parked)
                continue; /* a parked batch: the order it was freed in */
            cuts++;
            unsigned breaks = 0; /* at most one: where a cut moves on to another superblock */
            for (unsigned i = 1; i < batch; i++)
                breaks += (uintptr_t)objs[held + i] > (uintptr_t)objs[held + i - 1];
            in_order += breaks <= 1;
        }
        CHECK_MSG(cuts > BATCHES / 2 && in_order == cuts, "round %u: %u of %u cuts in address order", round,
                  in_order, cuts);
    }
    for (unsigned i = 0; i < n; i += batch)
        central_free(cls, &objs[i], batch);
    REQUIRE(sched_setaffinity(0, sizeof before, &before) == 0);
}

/* Runs the caller on cpu alone; false when it may not, or when the id the
 * central layer's lanes go by is not that CPU's (no rseq: under an
 * emulator, say). */
static bool run_on(int cpu)
{
    return pin_to_cpu(cpu) && sched_getcpu() == cpu && rseq_current_id() == (unsigned)cpu;
}

static bool among(void *p, void *const *set, unsigned n)
{
    for (unsigned i = 0; i < n; i++)
        if (set[i] == p)
            return true;
    return false;
}

/* A CPU that sent blocks back to their superblocks (past the parked limit)
 * cuts them again, the class lock being free, before it takes another
 * CPU's parked batches: those were written there last, its own here. CPU 0
 * takes a working set, CPU 1 parks a few chains of batches, CPU 0 frees its
 * set past the limit and takes it back: its own parked batches, then as
 * many blocks as went back, none of them CPU 1's. */
static void test_own_returns_before_stealing(unsigned cls)
{
    /* The parked limit is at most 512 batches a CPU (central.c). */
    enum { THEIRS = 24, BACK = 16, MINE = 512 + BACK };
    static void *theirs[THEIRS * SC_BATCH_MAX], *mine[MINE * SC_BATCH_MAX];
    cpu_set_t before;
    REQUIRE(sched_getaffinity(0, sizeof before, &before) == 0);
    if (!CPU_ISSET(0, &before) || !CPU_ISSET(1, &before) || !run_on(1) || !run_on(0)) {
        printf("own_returns_before_stealing: skipped, needs CPUs 0 and 1, each its own lane\n");
        REQUIRE(sched_setaffinity(0, sizeof before, &before) == 0);
        return;
    }
    struct central_class_stats stats;
    central_class_stats(cls, &stats);
    REQUIRE_MSG(stats.refills == 0 && stats.blocks_out == 0, "class %u was used before the test", cls);
    unsigned batch = sc_info[cls].batch;
    REQUIRE(run_on(0));
    take_blocks(cls, mine, MINE * batch);
    REQUIRE(run_on(1));
    take_blocks(cls, theirs, THEIRS * batch);
    for (unsigned i = 0; i < THEIRS * batch; i += batch)
        central_free(cls, &theirs[i], batch);
    REQUIRE(batches_parked(cls) == THEIRS);
    REQUIRE(run_on(0));
    unsigned freed = 0, back = 0;
    for (uint64_t parked = THEIRS, now; back < BACK; freed += batch, parked = now) {
        REQUIRE_MSG(freed < MINE * batch, "class %u: no parked limit in %u batches", cls, MINE);
        central_free(cls, &mine[freed], batch);
        now = batches_parked(cls);
        back += now == parked;
    }
    /* Its own parked batches first, then what went back. */
    unsigned own_parked = (unsigned)(batches_parked(cls) - THEIRS), from_theirs = 0;
    for (unsigned b = 0; b < own_parked; b++)
        REQUIRE(central_alloc(cls, &mine[b * batch], batch) == batch);
    void **again = &mine[own_parked * batch];
    take_blocks(cls, again, BACK * batch);
    for (unsigned i = 0; i < BACK * batch; i++)
        from_theirs += among(again[i], theirs, THEIRS * batch);
    CHECK_MSG(from_theirs == 0, "class %u: of the %u blocks taken after as many went back, %u were parked by another CPU",
              cls, BACK * batch, from_theirs);
    for (unsigned i = 0; i < (own_parked + BACK) * batch; i += batch)
        central_free(cls, &mine[i], batch);
    for (unsigned i = freed; i < MINE * batch; i += batch)
        central_free(cls, &mine[i], batch);
    REQUIRE(sched_setaffinity(0, sizeof before, &before) == 0);
}

/* Several batches in one call: parked a batch each, the last given on top,
 * and taken back in one call as the very same sequence (the batch parked
 * last goes out first, from the end of the array, as a cache's stack pops
 * it); asked for more than are parked, a call takes what is parked. Stays
 * on one CPU, whose lane is the class's only one in use. */
static void test_several_batches_in_one_move(unsigned cls)
{
    enum { MOVE = CENTRAL_MOVE_BATCHES };
    static void *objs[MOVE * SC_BATCH_MAX], *again[MOVE * SC_BATCH_MAX];
    cpu_set_t before;
    REQUIRE(sched_getaffinity(0, sizeof before, &before) == 0);
    REQUIRE(pin_to_this_cpu());
    REQUIRE_MSG(batches_parked(cls) == 0, "class %u was used before the test", cls);
    unsigned batch = sc_info[cls].batch, n = MOVE * batch;
    take_blocks(cls, objs, n);
    central_free(cls, objs, n);
    CHECK_EQ(batches_parked(cls), MOVE);
    CHECK_EQ(central_alloc(cls, again, n), n);
    unsigned moved = 0;
    for (unsigned i = 0; i < n; i++)
        moved += again[i] != objs[i];
    CHECK_MSG(moved == 0, "class %u: %u of %u objects came back elsewhere in the sequence", cls, moved, n);
    CHECK_EQ(batches_parked(cls), 0);
    central_free(cls, again, 2 * batch);
    CHECK_EQ(batches_parked(cls), 2);
    CHECK_EQ(central_alloc(cls, again, n), 2 * batch);
    central_free(cls, again, n);
    REQUIRE(sched_setaffinity(0, sizeof before, &before) == 0);
}

/* Blocks going back to their superblocks, some of them twice: each second
 * time is reported and changes nothing, also when the first emptied the
 * superblock and released it (releasing it again would list it twice).
 * Alone in its class, so its superblock holds only these blocks. */
static void test_freed_twice_back_to_superblock(unsigned cls)
{
    enum { MOST = 64 };
    unsigned blocks = sc_info[cls].blocks;
    REQUIRE(blocks <= MOST && blocks > 2);
    void *objs[MOST];
    struct central_class_stats stats;
    central_class_stats(cls, &stats);
    REQUIRE_MSG(stats.refills == 0 && stats.superblocks == 0, "class %u was used before the test", cls);
    take_blocks(cls, objs, blocks);
    central_class_stats(cls, &stats);
    REQUIRE_MSG(stats.superblocks == 1, "%lu superblocks for %u blocks", (unsigned long)stats.superblocks, blocks);
    uint64_t invalid = diag_invalid_pointer_count();
    void *twice[] = {objs[0], objs[1], objs[0]};
    central_free(cls, twice, 3);
    CHECK_EQ(diag_invalid_pointer_count(), invalid + 1);
    central_free(cls, &objs[2], blocks - 2); /* empties the superblock */
    central_class_stats(cls, &stats);
    CHECK_EQ(stats.superblocks, 0);
    CHECK_EQ(stats.blocks_out, 0);
    central_free(cls, &objs[1], 2);
    CHECK_EQ(diag_invalid_pointer_count(), invalid + 3);
    central_class_stats(cls, &stats);
    CHECK_MSG(stats.superblocks == 0 && stats.blocks_out == 0,
              "after frees of blocks back already: %lu superblocks, %lu blocks out", (unsigned long)stats.superblocks,
              (unsigned long)stats.blocks_out);
    take_blocks(cls, objs, blocks);
    central_class_stats(cls, &stats);
    CHECK_EQ(stats.superblocks, 1);
    central_free(cls, objs, blocks);
}

int main(void)
{
    init_ensure();
    test_cut_allowance(sc_of(1792));
    test_past_the_limit_back_in_address_order(sc_of(64));
    test_freed_twice_back_to_superblock(sc_of(16384));
    test_own_returns_before_stealing(sc_of(256));
    test_several_batches_in_one_move(sc_of(96));
    test_several_batches_in_one_move(sc_of(3072));
    for (unsigned i = 0; i < sizeof test_classes / sizeof test_classes[0]; i++)
        central_hold_until_whole_batches(test_classes[i]);
    struct central_class_stats before[SC_COUNT], after;
    for (unsigned c = 0; c < SC_COUNT; c++)
        central_class_stats(c, &before[c]);
    run_threads(THREADS, worker);
    size_t released = central_trim();
    for (unsigned i = 0; i < sizeof test_classes / sizeof test_classes[0]; i++) {
        unsigned c = test_classes[i];
        central_class_stats(c, &after);
        CHECK_MSG(after.blocks_out == before[c].blocks_out,
              "class %u: %lu blocks still out after every thread returned all (%lu before)", c,
              (unsigned long)after.blocks_out, (unsigned long)before[c].blocks_out);
        CHECK_MSG(after.batches_central == 0, "class %u: trim left batches", c);
        CHECK_MSG(after.spills > before[c].spills && after.refills > before[c].refills, "class %u: traffic", c);
    }
    CHECK_MSG(released > 0, "trim released nothing");
    return check_status();
}
