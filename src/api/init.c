/* Start-up and fork handling: every layer initialised in order on the first
 * call, without allocating; fork handlers registered once the allocator
 * works. */
#include "api/init.h"

#include <pthread.h>
#include <sched.h>

#include "api/profile.h"
#include "api/secure.h"
#include "core/central.h"
#include "core/footprint.h"
#include "core/large.h"
#include "core/meta.h"
#include "core/pagemap.h"
#include "core/sizeclass.h"
#include "core/superblock.h"
#include "core/zone.h"
#include "frontend/frontend.h"
#include "platform/lock.h"
#include "platform/options.h"
#include "platform/os.h"
#include "policy/purger.h"

enum { INIT_NONE, INIT_RUNNING, INIT_DONE };
static int init_state = INIT_NONE;

static void fork_prepare(void) { lock_fork_prepare(); }
static void fork_parent(void) { lock_fork_parent(); }
static void fork_child(void)
{
    lock_fork_child();
    footprint_fork_child();
    frontend_fork_child();
    purger_fork_child();
}

/* Everything here must work without malloc: it runs inside the first call. */
static void init_layers(void)
{
    options_init();
    footprint_init();
    os_set_huge_pages_default(opt.thp == THP_ALWAYS);
    sizeclass_init();
    if (opt.secure)
        secure_init();
    sb_set_retain_limit(opt.retain_bytes);
    zone_init(opt.zones); /* the front end's fast paths read where the zones are */
    frontend_init(); /* chooses the batch size the central layer's limits are in */
    central_init();
    large_init();
    profile_init();
    purger_start_through(profile_unsampled);
    sb_init();
    pagemap_init();
    meta_init();
}

void init_ensure(void)
{
    if (__builtin_expect(__atomic_load_n(&init_state, __ATOMIC_ACQUIRE) == INIT_DONE, 1))
        return;
    int expected = INIT_NONE;
    if (__atomic_compare_exchange_n(&init_state, &expected, INIT_RUNNING, false, __ATOMIC_ACQ_REL,
                                    __ATOMIC_ACQUIRE)) {
        init_layers();
        __atomic_store_n(&init_state, INIT_DONE, __ATOMIC_RELEASE);
        /* May allocate, so only once the allocator works. */
        pthread_atfork(fork_prepare, fork_parent, fork_child);
        profile_start();
        return;
    }
    while (__atomic_load_n(&init_state, __ATOMIC_ACQUIRE) != INIT_DONE)
        sched_yield();
}

/* Initialised when the library is loaded, too: a program that never
 * allocates still gets COREALLOC_OPTIONS=help and its warnings. */
__attribute__((constructor)) static void init_at_load(void)
{
    init_ensure();
}
