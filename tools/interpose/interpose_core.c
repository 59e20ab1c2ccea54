#define _GNU_SOURCE
#include "interpose_core.h"

#include <errno.h>
#include <pthread.h>
#include <stdatomic.h>
#include <string.h>
#include <unistd.h>

#include "next_alloc.h"
#include "observer.h"
#include "pointer_table.h"
#include "raw_io.h"
#include "thread_index.h"

/* Set while the observer runs, so that anything it calls which allocates
 * (rare: e.g. glibc internals) is forwarded without being observed. */
static __attribute__((tls_model("initial-exec"))) __thread bool in_observer;

static bool should_observe(void)
{
    return !in_observer && observer_enabled();
}

static void remember(const struct pointer_record *record)
{
    static atomic_bool warned;
    if (!pointer_table_insert(record) && !atomic_exchange(&warned, true))
        raw_error("corealloc interposer: out of memory for the pointer table; "
                  "some objects are not tracked");
}

static void observe_allocation(enum trace_kind kind, void *ptr, size_t size, size_t alignment)
{
    in_observer = true;
    uint32_t thread = thread_index_current();
    struct pointer_record record = { (uintptr_t)ptr, size, 0, thread, 0 };
    record.tag = observer_alloc(kind, size, alignment, thread);
    remember(&record);
    in_observer = false;
}

void *observed_malloc(enum trace_kind kind, size_t size)
{
    if (next_alloc_resolving())
        return bootstrap_alloc(size, 16);
    void *ptr = next_alloc_get()->malloc(size);
    if (ptr != NULL && should_observe())
        observe_allocation(kind, ptr, size, 0);
    return ptr;
}

void *observed_calloc(size_t count, size_t size)
{
    size_t total;
    bool overflow = __builtin_mul_overflow(count, size, &total);
    if (next_alloc_resolving())
        return overflow ? NULL : bootstrap_alloc(total, 16); /* static, so zeroed */
    void *ptr = next_alloc_get()->calloc(count, size);
    if (ptr != NULL && should_observe())
        observe_allocation(TRACE_CALLOC, ptr, total, 0);
    return ptr;
}

void *observed_aligned(enum trace_kind kind, size_t alignment, size_t size)
{
    if (next_alloc_resolving())
        return bootstrap_alloc(size, alignment);
    const struct next_alloc *next = next_alloc_get();
    void *ptr = NULL;
    switch (kind) {
    case TRACE_ALIGNED_ALLOC:
        ptr = next->aligned_alloc(alignment, size);
        break;
    case TRACE_MEMALIGN:
        ptr = next->memalign(alignment, size);
        break;
    case TRACE_VALLOC:
        ptr = next->valloc(size);
        break;
    case TRACE_PVALLOC:
        ptr = next->pvalloc(size);
        break;
    default: { /* posix_memalign and the aligned C++ operators */
        int error = next->posix_memalign(&ptr, alignment, size);
        if (error != 0) {
            errno = error;
            ptr = NULL;
        }
        break;
    }
    }
    if (ptr != NULL && should_observe())
        observe_allocation(kind, ptr, size, alignment);
    return ptr;
}

static void *bootstrap_realloc(void *old, size_t size)
{
    void *ptr = next_alloc_resolving() ? bootstrap_alloc(size, 16) : next_alloc_get()->malloc(size);
    if (ptr != NULL) {
        size_t old_size = bootstrap_size(old);
        memcpy(ptr, old, old_size < size ? old_size : size);
    }
    return ptr;
}

void *observed_realloc(enum trace_kind kind, void *old, size_t size)
{
    if (old != NULL && bootstrap_owns(old)) {
        void *ptr = bootstrap_realloc(old, size);
        if (ptr != NULL && !bootstrap_owns(ptr) && should_observe())
            observe_allocation(TRACE_MALLOC, ptr, size, 0);
        return ptr;
    }
    if (next_alloc_resolving())
        return bootstrap_alloc(size, 16);

    bool observing = should_observe();
    struct pointer_record old_record;
    bool known = false;
    /* Take the old object out of the table before the real call: once it
     * returns, another thread may be handed the same address. */
    if (observing && old != NULL) {
        in_observer = true;
        known = pointer_table_remove((uintptr_t)old, &old_record);
        in_observer = false;
    }
    void *ptr = next_alloc_get()->realloc(old, size);
    if (!observing)
        return ptr;

    in_observer = true;
    uint32_t thread = thread_index_current();
    if (ptr == NULL && (size != 0 || old == NULL)) {
        if (known) /* failed: the old object is still live */
            remember(&old_record);
    } else if (ptr == NULL) {
        if (known) /* realloc(p, 0) freed p (glibc) */
            observer_free(kind, &old_record, thread);
    } else {
        struct pointer_record record = { (uintptr_t)ptr, size, 0, thread,
                                         known ? old_record.realloc_count + 1 : 0 };
        record.tag = observer_realloc(kind, known ? &old_record : NULL, ptr != old, size, thread);
        remember(&record);
    }
    in_observer = false;
    return ptr;
}

void observed_free(enum trace_kind kind, void *ptr)
{
    if (ptr == NULL || bootstrap_owns(ptr))
        return;
    if (should_observe()) {
        in_observer = true;
        struct pointer_record record;
        /* Removed before the real free, for the same reason as in realloc. */
        if (pointer_table_remove((uintptr_t)ptr, &record))
            observer_free(kind, &record, thread_index_current());
        in_observer = false;
    }
    next_alloc_get()->free(ptr);
}

static void fork_prepare(void)
{
    observer_fork_prepare();
    pointer_table_lock_all();
}

static void fork_parent(void)
{
    pointer_table_unlock_all();
    observer_fork_parent();
}

static void fork_child(void)
{
    pointer_table_unlock_all();
    thread_index_restart();
    observer_fork_child();
}

/* Starting the observer here, not at the first call, gives even a program
 * that never allocates its (empty) report or trace. */
__attribute__((constructor)) static void interpose_core_init(void)
{
    next_alloc_get();
    pthread_atfork(fork_prepare, fork_parent, fork_child);
    observer_enabled();
}
