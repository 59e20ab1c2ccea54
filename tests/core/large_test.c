/* The page heap: alignment, interior lookups, coalescing (a freed
 * neighbourhood is reused whole), in-place growth and shrink, the mremap
 * move of huge blocks with contents intact, fresh memory reported zeroed. */
#include <stdio.h>
#include <string.h>

#include "api/alloc.h"
#include "api/init.h"
#include "core/large.h"
#include "core/zone.h"
#include "platform/options.h"
#include "platform/os.h"
#include "check.h"

static void fill(unsigned char *p, size_t n, unsigned seed)
{
    for (size_t i = 0; i < n; i += 512)
        p[i] = (unsigned char)(seed + i / 512);
}

static void verify(const unsigned char *p, size_t n, unsigned seed)
{
    size_t i = 0;
    while (i < n && p[i] == (unsigned char)(seed + i / 512))
        i += 512;
    CHECK_MSG(i >= n, "byte %zu lost", i);
}

int main(void)
{
    init_ensure();
    bool zeroed;
    /* Alignment and interior pointers. */
    for (size_t align = OS_PAGE_SIZE; align <= ((size_t)1 << 22); align <<= 1) {
        unsigned char *p = large_alloc(100000, align, &zeroed);
        REQUIRE_MSG(p && ((uintptr_t)p & (align - 1)) == 0, "alignment %zu", align);
        struct span *s = large_span_of((uintptr_t)p + 99999);
        REQUIRE_MSG(s && large_span_start(s) == (uintptr_t)p, "interior pointer of %p", (void *)p);
        CHECK_MSG(large_span_size(s) >= 100000 && large_span_size(s) < 100000 + OS_PAGE_SIZE, "size %zu at alignment %zu", large_span_size(s), align);
        large_free(s);
        CHECK_MSG(large_span_of((uintptr_t)p) == NULL, "freed span still in use");
    }
    /* Coalescing: three neighbours freed become one free run that a block
     * of their combined size reuses. */
    unsigned char *a = large_alloc(64 << 10, OS_PAGE_SIZE, &zeroed);
    unsigned char *b = large_alloc(64 << 10, OS_PAGE_SIZE, &zeroed);
    unsigned char *c = large_alloc(64 << 10, OS_PAGE_SIZE, &zeroed);
    REQUIRE_MSG(b == a + (64 << 10) && c == b + (64 << 10), "consecutive spans");
    large_free(large_span_of((uintptr_t)b));
    large_free(large_span_of((uintptr_t)a));
    large_free(large_span_of((uintptr_t)c));
    unsigned char *abc = large_alloc(192 << 10, OS_PAGE_SIZE, &zeroed);
    REQUIRE_MSG(abc == a, "coalesced run reused: got %p, wanted %p", (void *)abc, (void *)a);
    /* Shrink in place, then grow back into the space it gave up. */
    fill(abc, 192 << 10, 3);
    CHECK_MSG(large_resize(large_span_of((uintptr_t)abc), 64 << 10) == abc, "shrink in place");
    verify(abc, 64 << 10, 3);
    CHECK_MSG(large_resize(large_span_of((uintptr_t)abc), 160 << 10) == abc, "grow in place");
    verify(abc, 64 << 10, 3);
    large_free(large_span_of((uintptr_t)abc));
    if (!zone_active()) { /* the rest needs the large zone's adjacent address space */
        puts("huge moves need the zones: not checked");
        return check_status();
    }
    /* Huge blocks move by mremap when they cannot grow in place. */
    opt.huge_threshold = 1 << 20;
    size_t huge = 8 << 20;
    large_trim(UINT64_MAX, OS_PURGE_DONTNEED); /* every free span is now clean */
    unsigned char *h = large_alloc(huge, OS_PAGE_SIZE, &zeroed);
    REQUIRE_MSG(h && zeroed, "fresh huge block is known zero");
    unsigned char *blocker = large_alloc(64 << 10, OS_PAGE_SIZE, &zeroed);
    REQUIRE_MSG(blocker == h + huge, "a block right behind the huge one");
    fill(h, huge, 7);
    unsigned char *moved = large_resize(large_span_of((uintptr_t)h), 4 * huge);
    REQUIRE_MSG(moved && moved != h, "huge block moved");
    verify(moved, huge, 7);
    struct large_stats st;
    large_stats(&st);
    CHECK_MSG(st.mremap_moves == 1, "one mremap move, saw %lu", (unsigned long)st.mremap_moves);
    large_free(large_span_of((uintptr_t)moved));
    large_free(large_span_of((uintptr_t)blocker));
    large_trim(UINT64_MAX, OS_PURGE_DONTNEED);
    large_stats(&st);
    CHECK_MSG(st.bytes_free_resident == 0, "trim left %lu dirty bytes", (unsigned long)st.bytes_free_resident);
    return check_status();
}
