/* Per-thread caches take the fast paths (COREALLOC_FRONTEND=thread): the
 * sections read the thread's own area, whose id is that of the thread's
 * slab once its first slow-path call gave it one, so a block the slow path
 * freed is what the fast path pops next; another thread pops from a slab
 * of its own. Run with the front end forced to per-thread caches. */
#include <pthread.h>
#include <stdio.h>

#include "api/init.h"
#include "check.h"
#include "frontend/fastpath.h"
#include "frontend/threadcache.h"
#include "platform/rseq.h"

/* A block through the slow paths (which give the thread its slab), then
 * popped by the fast path: the same block, or NULL on a miss. */
static void *freed_then_popped(unsigned cls)
{
    bool refilled;
    void *p = tcache_alloc_slow(cls, &refilled);
    REQUIRE(p != NULL);
    tcache_free_slow(p, cls);
    void *item;
    FRONTEND_POP(item, cls, miss);
    CHECK_MSG(item == p, "the fast path popped %p, not the block just freed (%p)", item, p);
    return item;
miss:
    return NULL;
}

static void *other_thread(void *arg)
{
    void *mine = freed_then_popped(sc_of(48));
    CHECK_MSG(mine != NULL, "a second thread's fast path missed");
    CHECK_MSG(mine != arg, "a second thread popped the first thread's block");
    return NULL;
}

int main(void)
{
    if (!ARCH_HAS_RSEQ_SECTIONS) {
        puts("this architecture has no critical sections: every fast path misses, nothing to check");
        return 0;
    }
    init_ensure();
    CHECK_MSG(frontend_layout.sections.area_off == rseq_thread_area_offset(),
                "the sections read each thread's own area (COREALLOC_FRONTEND=thread)");
    void *first = freed_then_popped(sc_of(48));
    CHECK_MSG(first != NULL, "the fast path missed on the thread's own slab");
    pthread_t t;
    REQUIRE(pthread_create(&t, NULL, other_thread, first) == 0);
    REQUIRE(pthread_join(t, NULL) == 0);
    return check_status();
}
