/* The page heap: alignment, interior lookups, in-place growth and shrink;
 * freed blocks kept resident and reused with their pages (no new charge,
 * contents still there, so not reported zeroed), coalescing, resident
 * spans taken first, the mremap move of huge blocks into a kept span; the
 * decay and the budget giving kept memory back, purged memory reported
 * zeroed again. */
#include <stdio.h>
#include <string.h>

#include "api/init.h"
#include "core/footprint.h"
#include "core/large.h"
#include "core/sizeclass.h"
#include "core/superblock.h"
#include "core/zone.h"
#include "platform/options.h"
#include "platform/os.h"
#include "check.h"

#define KIB ((size_t)1 << 10)
#define MIB ((size_t)1 << 20)

static void fill(unsigned char *p, size_t n, unsigned seed)
{
    for (size_t i = 0; i < n; i += 512)
        p[i] = (unsigned char)(seed + i / 512);
}

/* Bytes [from, to) of p hold what fill(p, to, seed) wrote there. */
static void verify_range(const unsigned char *p, size_t from, size_t to, unsigned seed)
{
    size_t i = from;
    while (i < to && p[i] == (unsigned char)(seed + i / 512))
        i += 512;
    CHECK_MSG(i >= to, "byte %zu lost", i);
}

static unsigned char *alloc(size_t size, bool *zeroed)
{
    unsigned char *p = large_alloc(size, OS_PAGE_SIZE, zeroed);
    REQUIRE_MSG(p, "large_alloc(%zu)", size);
    return p;
}

static struct span *span_of(const void *p)
{
    struct span *s = large_span_of((uintptr_t)p);
    REQUIRE_MSG(s, "%p is not a block in use", p);
    return s;
}

static void release(void *p) { large_free(span_of(p)); }

static size_t resident_now(void)
{
    struct footprint_stats f;
    footprint_stats(&f);
    return f.resident;
}

static size_t free_resident_now(void)
{
    struct large_stats st;
    large_stats(&st);
    return st.bytes_free_resident;
}

/* A block of size followed by one of follower bytes, placed together: the
 * first block is made larger and shrunk in place, and the resident tail it
 * leaves is the best fit for the follower. */
static unsigned char *alloc_followed(size_t size, size_t follower, unsigned char **next)
{
    bool zeroed;
    unsigned char *p = alloc(size + follower, &zeroed);
    REQUIRE(large_resize(span_of(p), size) == p);
    *next = alloc(follower, &zeroed);
    REQUIRE_MSG(*next == p + size, "the shrunk tail reused: got %p, wanted %p", (void *)*next,
                (void *)(p + size));
    return p;
}

static void test_alignment(void)
{
    bool zeroed;
    for (size_t align = OS_PAGE_SIZE; align <= ((size_t)1 << 22); align <<= 1) {
        unsigned char *p = large_alloc(100000, align, &zeroed);
        REQUIRE_MSG(p && ((uintptr_t)p & (align - 1)) == 0, "alignment %zu", align);
        struct span *s = large_span_of((uintptr_t)p + 99999);
        REQUIRE_MSG(s && large_span_start(s) == (uintptr_t)p, "interior pointer of %p", (void *)p);
        CHECK_MSG(large_span_size(s) >= 100000 && large_span_size(s) < 100000 + OS_PAGE_SIZE,
                  "size %zu at alignment %zu", large_span_size(s), align);
        large_free(s);
        CHECK_MSG(large_span_of((uintptr_t)p) == NULL, "freed span still in use");
    }
}

/* Three neighbours, freed, become one resident span that a block of their
 * combined size (past the huge threshold) reuses: same pages, contents and
 * charge; then shrink in place and grow back into what it gave up. */
static void test_coalesce_and_reuse(void)
{
    size_t third = 6 * MIB;
    large_trim(UINT64_MAX, OS_PURGE_DONTNEED); /* no kept span but the test's */
    bool zeroed;
    unsigned char *b, *c;
    unsigned char *a = alloc_followed(third, 2 * third, &b);
    REQUIRE(large_resize(span_of(b), third) == b);
    c = alloc(third, &zeroed);
    REQUIRE_MSG(c == b + third, "the tail of b reused: got %p, wanted %p", (void *)c, (void *)(b + third));
    fill(a, third, 1);
    fill(b, third, 2);
    fill(c, third, 3);
    size_t resident = resident_now(), kept = free_resident_now();
    release(b);
    release(a);
    release(c);
    CHECK_MSG(free_resident_now() == kept + 3 * third, "freed blocks kept resident: %zu bytes, wanted %zu",
              free_resident_now(), kept + 3 * third);
    unsigned char *abc = alloc(3 * third, &zeroed);
    REQUIRE_MSG(abc == a, "coalesced run reused: got %p, wanted %p", (void *)abc, (void *)a);
    CHECK_MSG(!zeroed, "reused memory reported zeroed: calloc would skip clearing it");
    CHECK_EQ(resident_now(), resident);
    verify_range(abc, 0, third, 1);
    verify_range(abc + third, 0, third, 2);
    verify_range(abc + 2 * third, 0, third, 3);
    /* Shrink in place, then grow back into the space it gave up. */
    CHECK_MSG(large_resize(span_of(abc), 64 * KIB) == abc, "shrink in place");
    CHECK_MSG(large_resize(span_of(abc), 160 * KIB) == abc, "grow in place");
    verify_range(abc, 0, 64 * KIB, 1);
    release(abc);
}

/* Free spans untouched for a delay go back, and read as zero again. */
static void test_decay(void)
{
    bool zeroed;
    size_t size = 8 * MIB;
    unsigned char *p = alloc(size, &zeroed);
    fill(p, size, 4);
    uint64_t before_free = os_monotonic_ns();
    release(p);
    large_trim(before_free, OS_PURGE_DONTNEED);
    CHECK_MSG(free_resident_now() >= size, "a span freed after the horizon was purged");
    size_t released = large_trim(os_monotonic_ns(), OS_PURGE_DONTNEED);
    CHECK_MSG(released >= size, "decay released %zu bytes, wanted at least %zu", released, size);
    CHECK_EQ(free_resident_now(), 0);
    unsigned char *q = alloc(size, &zeroed);
    CHECK_MSG(zeroed, "purged memory not reported zeroed: calloc would clear it for nothing");
    release(q);
}

/* Past RETAIN_BYTES plus the most in use lately, the oldest kept spans go
 * back first. */
static void test_budget(void)
{
    size_t saved = opt.retain_bytes;
    opt.retain_bytes = 0;
    large_trim(UINT64_MAX, OS_PURGE_DONTNEED);
    unsigned char *pin;
    size_t first = 64 * MIB, second = 72 * MIB;
    unsigned char *a = alloc_followed(first, 64 * KIB, &pin);
    release(a);
    CHECK_MSG(free_resident_now() == first, "a block freed within the budget kept: %zu bytes kept",
              free_resident_now());
    bool zeroed;
    unsigned char *b = alloc(second, &zeroed); /* too large for a's span */
    REQUIRE_MSG(b + second != a, "b right before a: they would merge");
    release(b);
    /* Together they pass the peak (b, the pin and a few small blocks). */
    CHECK_MSG(free_resident_now() == second, "kept %zu bytes, wanted b's %zu alone", free_resident_now(),
              second);
    release(pin);
    opt.retain_bytes = saved;
}

/* Size classes growing make kept spans idle for half a purge delay give
 * way (they cannot use them): asked for a superblock's worth, the oldest
 * idle span goes back, one freed just now stays; a superblock taken from
 * fresh memory does the same once that one is idle too. */
static void test_give_way(void)
{
    large_trim(UINT64_MAX, OS_PURGE_DONTNEED);
    long saved_delay = opt.purge_delay_ms;
    opt.purge_delay_ms = 100;
    bool zeroed;
    size_t size = 4 * MIB;
    unsigned char *pin, *old = alloc_followed(size, 64 * KIB, &pin);
    unsigned char *pin2, *young = alloc_followed(size, 64 * KIB, &pin2);
    release(old);
    os_sleep_ns(60 * 1000000u);
    release(young);
    REQUIRE_MSG(free_resident_now() == 2 * size, "kept %zu bytes", free_resident_now());
    CHECK_MSG(large_give_way(SB_SIZE) >= SB_SIZE, "a superblock's worth not given");
    CHECK_MSG(free_resident_now() == size, "kept %zu bytes, wanted the young span's %zu", free_resident_now(),
              size);
    CHECK_MSG(large_give_way(SB_SIZE) == 0, "a span freed just now gave way");
    os_sleep_ns(60 * 1000000u);
    struct superblock *sb = sb_acquire(sc_of(5000));
    REQUIRE(sb != NULL);
    CHECK_MSG(free_resident_now() == 0, "a fresh superblock left %zu bytes of idle spans kept", free_resident_now());
    sb_release_empty(sb);
    unsigned char *again = alloc(size, &zeroed);
    CHECK_MSG(zeroed, "a span that gave way not reported zeroed");
    release(again);
    release(pin);
    release(pin2);
    opt.purge_delay_ms = saved_delay;
}

/* A huge block that cannot grow in place moves by mremap into the kept span
 * that fits it best: its pages move, the span's pages beyond them are used
 * as they are, and nothing new is charged. */
static void test_huge_move(void)
{
    size_t huge = 8 * MIB, grown = 32 * MIB; /* grown: past the huge threshold */
    large_trim(UINT64_MAX, OS_PURGE_DONTNEED);
    unsigned char *roomy_end, *fitting_end, *blocker;
    unsigned char *roomy = alloc_followed(grown + 4 * MIB, 64 * KIB, &roomy_end);
    unsigned char *fitting = alloc_followed(grown, 64 * KIB, &fitting_end);
    fill(fitting, grown, 11);
    unsigned char *h = alloc_followed(huge, 64 * KIB, &blocker);
    fill(h, huge, 7);
    release(roomy);
    release(fitting);
    size_t resident = resident_now();
    struct large_stats before;
    large_stats(&before);
    unsigned char *moved = large_resize(span_of(h), grown);
    REQUIRE_MSG(moved == fitting, "moved to %p, wanted the best fit %p", (void *)moved, (void *)fitting);
    verify_range(moved, 0, huge, 7);
    verify_range(moved, huge, grown, 11);
    struct large_stats after;
    large_stats(&after);
    CHECK_EQ(after.mremap_moves, before.mremap_moves + 1);
    CHECK_EQ(resident_now(), resident - huge);
    release(moved);
    release(blocker);
    release(roomy_end);
    release(fitting_end);
}

int main(void)
{
    init_ensure();
    /* The decay and the budget's window are driven by the test alone. */
    opt.purge_delay_ms = 3600 * 1000;
    test_alignment();
    if (!zone_active()) { /* the rest needs the large zone's adjacent address space */
        puts("placement needs the zones: not checked");
        return check_status();
    }
    test_coalesce_and_reuse();
    test_decay();
    test_budget();
    test_give_way();
    test_huge_move();
    large_trim(UINT64_MAX, OS_PURGE_DONTNEED);
    CHECK_EQ(free_resident_now(), 0);
    return check_status();
}
