/* Zones: the class of a small block is its zone; superblock descriptors are
 * found from any interior pointer; foreign addresses, and addresses of the
 * zones no superblock has reached (not mapped), are not ours. A class's
 * first descriptors share the page of its first fast entry, over the
 * entries of the slots before its first superblock: those slots still
 * fail the free fast path's check and hold no superblock. With
 * COREALLOC_ZONES=0 (the zones0 variant, and every unit test under an
 * emulator) the same holds through the page map. */
#include <stdlib.h>
#include <string.h>

#include "api/alloc.h"
#include "api/init.h"
#include "check.h"
#include "core/superblock.h"
#include "core/zone.h"

static int a_global;

int main(void)
{
    const char *zones = getenv("COREALLOC_ZONES");
    bool expect_pagemap = zones && !strcmp(zones, "0");
    init_ensure();
    CHECK_MSG(zone_active() == !expect_pagemap, "zones %s", zone_active() ? "on" : "off");
    int on_stack;
    CHECK_MSG(sb_of((uintptr_t)&on_stack) == NULL, "stack is not ours");
    CHECK_MSG(sb_of((uintptr_t)&a_global) == NULL, "globals are not ours");
    for (size_t n = 1; n <= SMALL_MAX; n = n * 3 / 2 + 1) {
        unsigned char *p = alloc_malloc(n);
        REQUIRE_MSG(p, "malloc(%zu)", n);
        unsigned want = sc_of(n);
        unsigned cls = SC_COUNT;
        bool in_zone = zone_class_of((uintptr_t)p, &cls);
        CHECK_MSG(in_zone == !expect_pagemap, "zone membership of %p", (void *)p);
        if (in_zone)
            CHECK_MSG(cls == want, "size %zu: zone says class %u, wanted %u", n, cls, want);
        for (size_t k = 0; k < n; k += n / 7 + 1) {
            struct superblock *sb = sb_of((uintptr_t)p + k);
            REQUIRE_MSG(sb && sb->cls == want, "descriptor of %p+%zu", (void *)p, k);
            CHECK_MSG(sb_block_start(sb, (uintptr_t)p + k) == (uintptr_t)p, "block start of %p+%zu", (void *)p, k);
        }
        alloc_free(p);
    }
    /* The first superblock of each class: its descriptor is in the page of
     * its fast entry, and the slots whose entries that page gave up read
     * as no superblock. */
    for (unsigned c = 0; zone_active() && c < SC_COUNT; c++) {
        void *p = alloc_malloc(sc_size(c));
        REQUIRE(p);
        struct superblock *sb = sb_of((uintptr_t)p);
        REQUIRE(sb);
        uintptr_t entry_page = (uintptr_t)zone_fast_entry_of(sb->start) & ~(uintptr_t)(OS_PAGE_SIZE - 1);
        uintptr_t first = (sb->start - zone_base(c)) >> SB_SHIFT;
        if ((uintptr_t)sb - entry_page >= OS_PAGE_SIZE)
            continue; /* not the class's first superblock (taken before this test) */
        CHECK_MSG(first % 256 >= 32, "class %u: first slot %lu leaves room for descriptors", c, (unsigned long)first);
        for (uintptr_t slot = first - first % 256; slot < first; slot++) {
            uintptr_t at = zone_base(c) + (slot << SB_SHIFT);
            for (uintptr_t off = 0; off < SB_SIZE; off += SB_SIZE / 4 + sc_size(c))
                CHECK_MSG(!sb_zone_free_fast(at + off), "class %u: the fast check admits slot %lu", c,
                          (unsigned long)slot);
            CHECK_MSG(sb_of(at) == NULL && sb_block_state(at, c) == BLOCK_NO_SUPERBLOCK,
                      "class %u: a superblock at slot %lu", c, (unsigned long)slot);
        }
        alloc_free(p);
    }
    /* Zones are mapped as they are used: lookups anywhere in them answer
     * without a fault (the far end, the middle, where descriptors would
     * be), and nothing is found there. */
    for (unsigned c = 0; zone_active() && c < SC_COUNT; c++) {
        uintptr_t far[] = {zone_base(c) + ZONE_SIZE - 1, zone_base(c) + ZONE_SIZE / 2, zone_base(c) + ZONE_SIZE / 2 + 64,
                           zone_base(c)};
        for (size_t i = 0; i < sizeof far / sizeof far[0]; i++) {
            CHECK_MSG(sb_of(far[i]) == NULL, "class %u: a superblock at %#lx", c, (unsigned long)far[i]);
            CHECK_MSG(sb_block_state(far[i], c) == BLOCK_NO_SUPERBLOCK, "class %u: a block at %#lx", c,
                      (unsigned long)far[i]);
        }
    }
    return check_status();
}
