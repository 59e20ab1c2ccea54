/* Zones: the class of a small block is its zone; superblock descriptors are
 * found from any interior pointer; foreign addresses are not ours. With
 * --expect-pagemap (run with COREALLOC_ZONES=0) the same holds through the
 * page map. */
#include <string.h>

#include "api/alloc.h"
#include "api/init.h"
#include "core/superblock.h"
#include "unit.h"
#include "core/zone.h"

int main(int argc, char **argv)
{
    bool expect_pagemap = argc > 1 && !strcmp(argv[1], "--expect-pagemap");
    init_ensure();
    CHECK(zone_active() == !expect_pagemap, "zones %s", zone_active() ? "on" : "off");
    int on_stack;
    CHECK(sb_of((uintptr_t)&on_stack) == NULL, "stack is not ours");
    CHECK(sb_of((uintptr_t)&expect_pagemap) == NULL, "globals are not ours");
    for (size_t n = 1; n <= SMALL_MAX; n = n * 3 / 2 + 1) {
        unsigned char *p = alloc_malloc(n);
        unsigned want = sc_of(n);
        unsigned cls;
        CHECK(zone_class_of((uintptr_t)p, &cls) == !expect_pagemap, "zone membership of %p", (void *)p);
        if (!expect_pagemap)
            CHECK(cls == want, "size %zu: zone says class %u, wanted %u", n, cls, want);
        for (size_t k = 0; k < n; k += n / 7 + 1) {
            struct superblock *sb = sb_of((uintptr_t)p + k);
            CHECK(sb && sb->cls == want, "descriptor of %p+%zu", (void *)p, k);
            CHECK(sb_block_start(sb, (uintptr_t)p + k) == (uintptr_t)p, "block start of %p+%zu", (void *)p, k);
        }
        alloc_free(p);
    }
    puts("zones ok");
    return 0;
}
