/* Zones: the class of a small block is the column of its tile;
 * superblock descriptors are found from any interior pointer; foreign
 * addresses, and addresses of the rows no superblock has reached (not
 * mapped), of the columns past the last class and of the areas before the
 * first row, are not ours. The first superblocks of the classes lie in
 * one row, their fast entries in a few pages. With COREALLOC_ZONES=0 (the
 * zones0 variant, and every unit test under an emulator) the same holds
 * through the page map. */
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
    /* The first superblock of each class: in the first row (unless the
     * class had more before this test), at one of seven offsets in its
     * tile, and their fast entries together, a page holding those of many
     * classes. */
    uintptr_t entry_pages[SC_COUNT];
    unsigned firsts = 0, tile_slots = 0;
    for (unsigned c = 0; zone_active() && c < SC_COUNT; c++) {
        void *p = alloc_malloc(sc_size(c));
        REQUIRE(p);
        struct superblock *sb = sb_of((uintptr_t)p);
        REQUIRE(sb && sb->zoned);
        uintptr_t offset = sb->start - zone_region_base;
        CHECK_MSG(offset >> ZONE_ROW_SHIFT >= ZONE_FIRST_ROW, "class %u: a superblock before the first row", c);
        CHECK_MSG(zone_class_at(sb->start) == c, "class %u: in column %u", c, zone_class_at(sb->start));
        if (offset >> ZONE_ROW_SHIFT == ZONE_FIRST_ROW) {
            entry_pages[firsts++] = (uintptr_t)zone_fast_entry_of(sb->start) / OS_PAGE_SIZE;
            tile_slots |= 1u << (offset >> SB_SHIFT) % ZONE_TILE_SUPERBLOCKS;
        }
        alloc_free(p);
    }
    unsigned pages = 0;
    for (unsigned i = 0; i < firsts; i++) {
        bool seen = false;
        for (unsigned j = 0; j < i; j++)
            seen |= entry_pages[j] == entry_pages[i];
        pages += !seen;
    }
    CHECK_MSG(!zone_active() || (firsts >= SC_COUNT / 2 && pages * 16 <= firsts + 15),
              "%u classes with their first superblock in the first row, their fast entries on %u pages", firsts, pages);
    CHECK_MSG(!zone_active() || __builtin_popcount(tile_slots) == ZONE_TILE_SUPERBLOCKS - 1,
              "the first superblocks of the classes at %d offsets in their tiles (slots %#x)",
              __builtin_popcount(tile_slots), tile_slots);
    /* Tiles are mapped as they are used: lookups anywhere in the rows
     * answer without a fault (the last row, a middle one, a column past
     * the classes, the areas before the first row), and nothing is found
     * there. */
    for (unsigned c = 0; zone_active() && c < ZONE_ROW_TILES; c++) {
        uintptr_t column = zone_region_base + ((uintptr_t)c << ZONE_TILE_SHIFT);
        uintptr_t far[] = {column + ((uintptr_t)(ZONE_ROWS - 1) << ZONE_ROW_SHIFT) + ((uintptr_t)1 << ZONE_TILE_SHIFT) - 1,
                           column + ((uintptr_t)(ZONE_ROWS / 2) << ZONE_ROW_SHIFT) + 64,
                           column + ((uintptr_t)(ZONE_FIRST_ROW - 1) << ZONE_ROW_SHIFT), column};
        for (size_t i = 0; i < sizeof far / sizeof far[0]; i++) {
            unsigned cls = SC_COUNT;
            CHECK_MSG(zone_class_of(far[i], &cls) == (c < SC_COUNT), "column %u: zone membership of %#lx", c,
                      (unsigned long)far[i]);
            CHECK_MSG(sb_of(far[i]) == NULL, "column %u: a superblock at %#lx", c, (unsigned long)far[i]);
            CHECK_MSG(!sb_zone_free_fast(far[i]), "column %u: the fast check admits %#lx", c, (unsigned long)far[i]);
            if (c < SC_COUNT)
                CHECK_MSG(sb_block_state(far[i], c) == BLOCK_NO_SUPERBLOCK, "column %u: a block at %#lx", c,
                          (unsigned long)far[i]);
        }
    }
    return check_status();
}
