/* For the unit tests of the caches above the central layer: a cut takes
 * at most a quarter of the blocks the class has out, or a page's worth
 * (central.c), so a test that counts whole batches first takes the class
 * to where every cut is one, by holding what it cuts until a cut comes
 * whole. The blocks stay out for the test's life. */
#ifndef COREALLOC_TEST_CENTRAL_HOLD_H
#define COREALLOC_TEST_CENTRAL_HOLD_H

#include "check.h"
#include "core/central.h"
#include "core/sizeclass.h"

/* Enough for any class: whole batches come by 4 * SC_BATCH_MAX held. */
#define CENTRAL_HOLD_MOST (8 * SC_BATCH_MAX)

static inline void central_hold_until_whole_batches(unsigned cls)
{
    static void *held[CENTRAL_HOLD_MOST];
    unsigned count = 0;
    for (unsigned got = 0; got < sc_info[cls].batch; count += got) {
        REQUIRE(count + sc_info[cls].batch <= CENTRAL_HOLD_MOST);
        got = central_alloc(cls, &held[count], sc_info[cls].batch);
        REQUIRE(got > 0);
    }
}

#endif
