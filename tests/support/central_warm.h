/* For the unit tests of the central layer and the caches above it: takes a
 * class past the central layer's slow start (its first cuts are short), so
 * every later cut is a whole batch. The blocks go back to their
 * superblocks, one at a time: no batch is left parked. */
#ifndef COREALLOC_TEST_CENTRAL_WARM_H
#define COREALLOC_TEST_CENTRAL_WARM_H

#include "check.h"
#include "core/central.h"
#include "core/sizeclass.h"

static inline void central_warm(unsigned cls)
{
    void *objs[SC_BATCH_MAX];
    for (unsigned got = 0; got < sc_info[cls].batch;) {
        got = central_alloc(cls, objs, sc_info[cls].batch);
        REQUIRE(got > 0);
        for (unsigned i = 0; i < got; i++)
            central_free(cls, &objs[i], 1);
    }
}

#endif
