/* Superblocks (src/core/superblock.c), on a class of four blocks a page:
 * formatted for their class and found from any address inside; blocks
 * taken lowest address first, a block given back taken again first, a
 * double give refused; the pages whose blocks are all in the superblock go
 * back to the OS as holes (at once when purging is immediate) and count
 * again when a block is taken from them; an empty superblock is kept for
 * its class within the retain limit, purged past it or when it has waited
 * long enough, and reused. The resident estimate follows every step. In a
 * zone, the free fast path's check vouches exactly for the starts of the
 * blocks taken below carved and below the lowest hole, while the
 * superblock is in use; the free top of a superblock goes back above a
 * lowered carved, not as holes the blocks below it pay for.
 * Blocks never taken need no bit: a superblock's bitmap stays unwritten
 * until a block comes back (in a zone its page stays untouched however
 * many takes), and is clear again when it is reused. A run given back
 * ends at the first block of another superblock.
 * Run on the zones and on superblocks mapped on their own (the zones0
 * variant). */
#include <stdint.h>
#include <string.h>
#include <sys/mman.h>

#include "api/init.h"
#include "check.h"
#include "pattern.h"
#include "core/footprint.h"
#include "core/superblock.h"
#include "platform/options.h"

#define SIZE 1024 /* four blocks a page */
#define PER_PAGE (OS_PAGE_SIZE / SIZE)

/* One block at a time, as the tests give them. */
static bool sb_give(struct superblock *sb, void *p) { return sb_give_run(sb, &p, 1) == 1; }
static void sb_gave(struct superblock *sb, void *p) { sb_gave_run(sb, &p, 1); }

static unsigned cls;
static unsigned blocks; /* in one superblock */
static void *block[SB_SIZE / SIZE];

static size_t resident(void)
{
    struct footprint_stats st;
    footprint_stats(&st);
    return st.resident;
}

/* A superblock of cls with every block taken, lowest addresses first. */
static struct superblock *acquire_full(void)
{
    struct superblock *sb = sb_acquire(cls);
    REQUIRE(sb != NULL);
    CHECK(sb->cls == cls && sb->used == 0 && sb->holes == 0);
    CHECK_EQ(sb->start % SB_SIZE, 0);
    CHECK(sb_of(sb->start) == sb && sb_of(sb->start + SB_SIZE - 1) == sb);
    CHECK_EQ(sb_take(sb, block, 10), 10);
    CHECK_EQ(sb_take(sb, block + 10, 2 * blocks), blocks - 10);
    for (unsigned i = 0; i < blocks; i++)
        CHECK_MSG(block[i] == (void *)(sb->start + (uintptr_t)i * SIZE), "block %u at %p", i, block[i]);
    CHECK(sb_exhausted(sb));
    void *more;
    CHECK_EQ(sb_take(sb, &more, 1), 0);
    return sb;
}

/* How many blocks the fast check vouches for, checking that these are
 * the first ones and that no other offset passes. */
static unsigned fast_vouched(const struct superblock *sb)
{
    unsigned n = 0;
    for (uintptr_t off = 0; off < SB_SIZE; off += 8) {
        bool fast = sb_zone_free_fast(sb->start + off);
        CHECK_MSG(!fast || (off % SIZE == 0 && off / SIZE == n), "offset %lu vouched for", (unsigned long)off);
        n += fast;
    }
    return n;
}

static void test_fast_check(void)
{
    struct superblock *sb = sb_acquire(cls);
    REQUIRE(sb != NULL);
    CHECK_EQ(fast_vouched(sb), 0);
    void *some[10];
    CHECK_EQ(sb_take(sb, some, 10), 10);
    CHECK_EQ(fast_vouched(sb), 10);
    sb_give(sb, some[9]);
    CHECK_EQ(fast_vouched(sb), 10); /* once taken, the mark tells */
    for (unsigned i = 0; i < 9; i++)
        sb_give(sb, some[i]);
    sb_release_empty(sb);
    CHECK_EQ(fast_vouched(sb), 0);
}

static bool bitmap_clear(const struct superblock *sb)
{
    for (unsigned w = 0; w < (blocks + 63) / 64; w++)
        if (sb_bitmap(sb)[w])
            return false;
    return true;
}

static void test_bitmap_written_on_return(void)
{
    struct superblock *sb = sb_acquire(cls);
    REQUIRE(sb != NULL);
    CHECK(bitmap_clear(sb));
    void *some[12];
    CHECK_EQ(sb_take(sb, some, 10), 10);
    CHECK_MSG(bitmap_clear(sb), "blocks taken for the first time write no bit");
    CHECK_EQ(sb->carved, 10);
    void *untaken = (void *)(sb->start + 20 * SIZE);
    CHECK_MSG(!sb_give(sb, untaken), "a block never taken is in the superblock already");
    CHECK_EQ(sb_block_state((uintptr_t)untaken, cls), BLOCK_IN_SUPERBLOCK);
    CHECK(sb_give(sb, some[8]) && sb_give(sb, some[5]));
    CHECK_EQ(sb_block_state((uintptr_t)some[5], cls), BLOCK_IN_SUPERBLOCK);
    CHECK_EQ(sb_block_state((uintptr_t)some[6], cls), BLOCK_HANDED_OUT);
    /* the given ones first, lowest first, then new ones in address order */
    CHECK_EQ(sb_take(sb, some + 10, 2), 2);
    CHECK(some[10] == some[5] && some[11] == some[8]);
    CHECK_MSG(bitmap_clear(sb), "bits go with the blocks taken back");
    void *next;
    CHECK_EQ(sb_take(sb, &next, 1), 1);
    CHECK(next == (void *)(sb->start + 10 * SIZE));
    CHECK(sb_give(sb, next));
    for (unsigned i = 0; i < 10; i++)
        CHECK(sb_give(sb, some[i]));
    CHECK_EQ(sb->used, 0);
    sb_release_empty(sb);
    struct superblock *again = sb_acquire(cls);
    REQUIRE(again != NULL);
    CHECK_MSG(again->carved == 0 && bitmap_clear(again), "a reused superblock starts clear");
    CHECK_EQ(sb_take(again, &next, 1), 1);
    CHECK(next == (void *)again->start);
    CHECK(sb_give(again, next));
    sb_release_empty(again);
}

/* Blocks given back side by side, in either order, go back a word's run
 * at a time: a run across words, a descending one that stops at a block
 * given already (the double give), all taken back lowest first. */
static void test_runs(void)
{
    struct superblock *sb = sb_acquire(cls);
    REQUIRE(sb != NULL);
    void *some[130], *run[66];
    CHECK_EQ(sb_take(sb, some, 130), 130);
    for (unsigned i = 0; i < 66; i++)
        run[i] = some[5 + i];
    CHECK_EQ(sb_give_run(sb, run, 66), 66); /* blocks 5..70 */
    CHECK_EQ(sb->used, 130 - 66);
    CHECK(sb_give(sb, some[90]));
    for (unsigned i = 0; i < 21; i++)
        run[i] = some[100 - i]; /* 100 down to 80 */
    CHECK_MSG(sb_give_run(sb, run, 21) == 10, "a descending run stops at the block given already");
    CHECK_EQ(sb->used, 130 - 66 - 1 - 10);
    CHECK_EQ(sb_block_state((uintptr_t)some[89], cls), BLOCK_HANDED_OUT);
    CHECK_EQ(sb_block_state((uintptr_t)some[4], cls), BLOCK_HANDED_OUT);
    CHECK_EQ(sb_block_state((uintptr_t)some[71], cls), BLOCK_HANDED_OUT);
    void *back[70];
    CHECK_EQ(sb_take(sb, back, 70), 70);
    for (unsigned i = 0; i < 70; i++) {
        unsigned want = i < 66 ? 5 + i : 90 + (i - 66);
        CHECK_MSG(back[i] == some[want], "took %p at %u, want block %u", back[i], i, want);
    }
    CHECK_EQ(sb->used, 130 - 7);
    for (unsigned i = 0; i < 130; i++)
        if (i < 5 || (i > 70 && i < 90) || i > 100)
            CHECK(sb_give(sb, some[i]));
    for (unsigned i = 0; i < 70; i++)
        CHECK(sb_give(sb, back[i]));
    CHECK(sb_give_run(sb, some + 94, 7) == 0 && sb->used == 0);
    sb->list = SB_LIST_NONE;
    sb_release_empty(sb);
}

/* A run given back stops at a block of another superblock of the class,
 * however far away: with zones, nine superblocks of the 8-byte class reach
 * the next row, 256 MiB on, where the block's offset from the first
 * superblock, multiplied by the class's reciprocal, wraps to the index of
 * one of the first superblock's own blocks. */
static void test_run_stops_at_another_superblock(void)
{
    enum { SUPERBLOCKS = 9 };
    unsigned tiny = sc_of(1);
    struct superblock *sbs[SUPERBLOCKS];
    void *taken[SUPERBLOCKS][8];
    for (unsigned i = 0; i < SUPERBLOCKS; i++) {
        sbs[i] = sb_acquire(tiny);
        REQUIRE(sbs[i] != NULL);
        CHECK_EQ(sb_take(sbs[i], taken[i], 8), 8);
    }
    for (unsigned i = 1; i < SUPERBLOCKS; i++) {
        void *run[2] = {taken[0][5], taken[i][6]};
        CHECK_MSG(sb_give_run(sbs[0], run, 2) == 1, "superblock %u: a run took a block %#lx bytes away", i,
                  (unsigned long)(sbs[i]->start - sbs[0]->start));
        CHECK_EQ(sb_block_state((uintptr_t)taken[0][6], tiny), BLOCK_HANDED_OUT);
        CHECK_EQ(sb_block_state((uintptr_t)taken[i][6], tiny), BLOCK_HANDED_OUT);
        void *again;
        CHECK(sb_take(sbs[0], &again, 1) == 1 && again == taken[0][5]);
    }
    for (unsigned i = 0; i < SUPERBLOCKS; i++) {
        CHECK_EQ(sb_give_run(sbs[i], taken[i], 8), 8);
        CHECK_EQ(sbs[i]->used, 0);
        sb_release_empty(sbs[i]);
    }
}

static bool page_resident(const void *addr)
{
    unsigned char in_core;
    REQUIRE(mincore((void *)((uintptr_t)addr & ~(uintptr_t)(OS_PAGE_SIZE - 1)), 1, &in_core) == 0);
    return in_core & 1;
}

/* A class this program has not used: its bitmaps' page is its own. Takes
 * with no block back in between neither write nor read it. */
static void test_bitmap_untouched_by_takes(void)
{
    struct superblock *sb = sb_acquire(sc_of(3000));
    REQUIRE(sb != NULL);
    void *some[6];
    for (unsigned i = 0; i < 3; i++)
        CHECK_EQ(sb_take(sb, some + 2 * i, 2), 2);
    CHECK_MSG(!page_resident(sb_bitmap(sb)), "three takes and no block back touched the bitmap's page");
    for (unsigned i = 0; i < 6; i++)
        CHECK(sb_give(sb, some[i]));
    sb_release_empty(sb);
}

static void give_range(struct superblock *sb, unsigned first, unsigned last)
{
    for (unsigned i = first; i <= last; i++)
        CHECK_MSG(sb_give(sb, block[i]), "give block %u", i);
}

static void test_take_and_give(struct superblock *sb)
{
    CHECK_EQ(sb_block_start(sb, sb->start + 5 * SIZE + 7), sb->start + 5 * SIZE);
    CHECK_EQ(sb_block_start(sb, sb->start + (blocks - 1) * SIZE + SIZE - 1),
             sb->start + (blocks - 1) * SIZE);
    CHECK(sb_give(sb, block[3]));
    CHECK_EQ(sb->used, blocks - 1);
    CHECK_MSG(!sb_give(sb, block[3]), "a double give must be refused");
    CHECK_EQ(sb->used, blocks - 1);
    /* A run stops at its first block in already, having given those before. */
    void *run[] = {block[70], block[6], block[3], block[7]};
    CHECK_EQ(sb_give_run(sb, run, 4), 2);
    CHECK_EQ(sb->used, blocks - 3);
    CHECK_EQ(sb_give_run(sb, run + 3, 1), 1);
    CHECK_MSG(sb_give_run(sb, run, 2) == 0, "a run of blocks in already went back again");
    void *back[3];
    CHECK_EQ(sb_take(sb, back, 3), 3);
    CHECK_MSG(back[0] == block[3] && back[1] == block[6] && back[2] == block[7], "took %p %p %p back", back[0],
              back[1], back[2]);
    CHECK_EQ(sb_take(sb, back, 1), 1);
    CHECK(back[0] == block[70]);
    CHECK(sb_give(sb, block[3])); /* as before the runs */
    CHECK_EQ(sb->used, blocks - 1);
    CHECK(sb_give(sb, block[200]));
    void *p;
    CHECK_EQ(sb_take(sb, &p, 1), 1);
    CHECK_MSG(p == block[3], "took %p, the lowest free block is %p", p, block[3]);
    CHECK_EQ(sb_take(sb, &p, 1), 1);
    CHECK(p == block[200]);
}

static void test_holes(struct superblock *sb)
{
    /* Pages 2 to 5 entirely free, page 6 partly. */
    for (unsigned i = 2 * PER_PAGE; i <= 6 * PER_PAGE; i++)
        memset(block[i], 0xab, SIZE);
    give_range(sb, 2 * PER_PAGE, 6 * PER_PAGE);
    sb->list = SB_LIST_PARTIAL; /* as the central layer keeps a superblock with free blocks */
    size_t before = resident();
    CHECK_EQ(sb_purge_holes(sb), 4 * OS_PAGE_SIZE);
    CHECK_EQ(sb->holes, (uint64_t)0xf << 2);
    if (sb->zoned) /* blocks in holes lost their marks: only those below the lowest hole keep the fast check */
        CHECK_EQ(fast_vouched(sb), 2 * PER_PAGE);
    CHECK_EQ(resident(), before - 4 * OS_PAGE_SIZE);
    CHECK_MSG(block_filled_with(block[2 * PER_PAGE], 4 * OS_PAGE_SIZE, 0), "purged pages must read as zero");
    CHECK_EQ(sb_purge_holes(sb), 0); /* nothing new */
    /* Taking a block from a hole brings its page back. */
    void *p;
    CHECK_EQ(sb_take(sb, &p, 1), 1);
    CHECK(p == block[2 * PER_PAGE]);
    CHECK_EQ(sb->holes, (uint64_t)0x7 << 3);
    CHECK_EQ(resident(), before - 3 * OS_PAGE_SIZE);

    /* Purging at once (a zero delay, or pressure: the central layer calls
     * sb_gave then): the last free block of a page sends the page back as
     * it comes in. */
    for (unsigned i = 10 * PER_PAGE; i < 11 * PER_PAGE; i++) {
        CHECK_MSG(!(sb->holes >> 10 & 1), "page 10 purged with block %u still in use", i);
        CHECK(sb_give(sb, block[i]));
        sb_gave(sb, block[i]);
    }
    CHECK_MSG(sb->holes >> 10 & 1, "page 10 not purged when its last block came back");
    CHECK_EQ(resident(), before - 4 * OS_PAGE_SIZE);
}

/* The free blocks at the top of a partly used superblock go back as
 * blocks never carved: carved comes down to the highest block still out,
 * so the pages above are holes that cost the blocks below no fast check;
 * a block up there is in the superblock (a second give is refused), and
 * is carved again, its page counted again, once the free blocks below
 * are taken. */
static void test_free_top(void)
{
    struct superblock *sb = acquire_full();
    const unsigned keep = 40 * PER_PAGE, top_pages = (blocks - keep) / PER_PAGE;
    give_range(sb, keep, blocks - 1);
    CHECK(sb_give(sb, block[5]));
    sb->list = SB_LIST_PARTIAL;
    size_t before = resident();
    CHECK_EQ(sb_purge_holes(sb), top_pages * OS_PAGE_SIZE);
    CHECK_EQ(sb->carved, keep);
    CHECK_EQ(sb->holes, ~(uint64_t)0 << 40);
    CHECK_EQ(resident(), before - top_pages * OS_PAGE_SIZE);
    if (sb->zoned)
        CHECK_EQ(fast_vouched(sb), keep);
    CHECK_EQ(sb_block_state((uintptr_t)block[keep - 1], cls), BLOCK_HANDED_OUT);
    CHECK_EQ(sb_block_state((uintptr_t)block[keep], cls), BLOCK_IN_SUPERBLOCK);
    CHECK_MSG(!sb_give(sb, block[keep + 3]), "a block above carved was given twice");
    CHECK_MSG(!sb_give(sb, block[5]), "a free block below carved was given twice");
    void *p[3];
    CHECK_EQ(sb_take(sb, p, 3), 3);
    CHECK_MSG(p[0] == block[5] && p[1] == block[keep] && p[2] == block[keep + 1], "took %p %p %p", p[0], p[1],
              p[2]);
    CHECK_EQ(sb->carved, keep + 2);
    CHECK_EQ(sb->holes, ~(uint64_t)0 << 41);
    CHECK_EQ(resident(), before - (top_pages - 1) * OS_PAGE_SIZE);
    if (sb->zoned)
        CHECK_EQ(fast_vouched(sb), keep + 2);
    for (unsigned i = 0; i < keep + 2; i++)
        CHECK_MSG(sb_give(sb, block[i]), "give block %u", i);
    CHECK_EQ(sb->used, 0);
    sb->list = SB_LIST_NONE;
    sb_release_empty(sb);
}

/* Gives back every block still out. */
static void empty(struct superblock *sb)
{
    for (unsigned i = 0; i < blocks; i++)
        sb_give(sb, block[i]);
    CHECK_EQ(sb->used, 0);
    sb->list = SB_LIST_NONE; /* unlinked, as the central layer does */
}

static void test_empty(struct superblock *sb, size_t resident_without)
{
    empty(sb);
    size_t retained = sb_bytes_retained();
    sb_release_empty(sb);
    CHECK_EQ(sb->list, SB_LIST_EMPTY);
    CHECK_EQ(sb->holes, 0);
    CHECK_EQ(sb_bytes_retained(), retained + SB_SIZE);
    CHECK_MSG(resident() == resident_without + SB_SIZE, "retained: resident %zu, want %zu", resident(),
              resident_without + SB_SIZE);
    /* Reused first, reformatted. */
    CHECK(acquire_full() == sb);
    CHECK_EQ(sb_bytes_retained(), retained);

    /* Past the retain limit: purged at once, reused again later. */
    empty(sb);
    sb_set_retain_limit(0);
    sb_release_empty(sb);
    sb_set_retain_limit(opt.retain_bytes);
    CHECK_EQ(sb_bytes_retained(), retained);
    CHECK_EQ(sb->residency, SB_PURGED);
    CHECK_EQ(resident(), resident_without);
    CHECK(acquire_full() == sb);
    CHECK_EQ(resident(), resident_without + SB_SIZE);

    /* Purged once it has waited long enough: from its class's list, or
     * from the shared pool of superblocks mapped outside the zones. */
    empty(sb);
    sb_release_empty(sb);
    CHECK_EQ(sb_purge_class_empties(cls, 0, OS_PURGE_DONTNEED) + sb_purge_pool(0, OS_PURGE_DONTNEED),
             0); /* not empty before time 0 */
    size_t released = sb_purge_class_empties(cls, UINT64_MAX, OS_PURGE_DONTNEED) +
                      sb_purge_pool(UINT64_MAX, OS_PURGE_DONTNEED);
    CHECK_EQ(released, SB_SIZE);
    CHECK_EQ(sb_bytes_retained(), retained);
    CHECK_EQ(resident(), resident_without);
}

int main(void)
{
    init_ensure();
    cls = sc_of(SIZE);
    REQUIRE(sc_size(cls) == SIZE);
    blocks = sc_info[cls].blocks;
    REQUIRE(blocks == SB_SIZE / SIZE);
    size_t resident_without = resident();
    struct superblock *sb = acquire_full();
    CHECK_EQ(resident(), resident_without + SB_SIZE);
    if (sb->zoned)
        CHECK_EQ(fast_vouched(sb), blocks);
    test_take_and_give(sb);
    test_holes(sb);
    test_empty(sb, resident_without);
    if (zone_active()) {
        test_fast_check();
        if (!opt.secure)
            test_bitmap_untouched_by_takes();
    }
    if (!opt.secure) {
        test_bitmap_written_on_return();
        test_runs();
        test_run_stops_at_another_superblock();
        test_free_top(); /* secure mode takes blocks at random: carved is no frontier there */
    }
    return check_status();
}
