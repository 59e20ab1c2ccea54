#include "alloc.h"

#include <errno.h>
#include <pthread.h>
#include <sched.h>
#include <stdint.h>
#include <string.h>

#include "cache.h"
#include "central.h"
#include "diag.h"
#include "footprint.h"
#include "large.h"
#include "lock.h"
#include "meta.h"
#include "options.h"
#include "os.h"
#include "pagemap.h"
#include "purger.h"
#include "superblock.h"

enum { INIT_NONE, INIT_RUNNING, INIT_DONE };
static int init_state = INIT_NONE;

static void fork_prepare(void) { lock_fork_prepare(); }
static void fork_parent(void) { lock_fork_parent(); }
static void fork_child(void)
{
    lock_fork_child();
#if !defined(COREALLOC_ABLATION)
    tcache_fork_child();
#endif
    purger_fork_child();
}

/* Everything here must work without malloc: it runs inside the first call. */
static void init_layers(void)
{
    options_init();
    footprint_init();
    os_set_huge_pages_default(opt.thp == THP_ALWAYS);
    sizeclass_init();
    cache_layout_init();
    sb_set_retain_limit(opt.retain_bytes);
    /* Locks register in the order they nest, outermost first (fork safety). */
    central_init();
    large_init();
    frontend_init();
    sb_init();
    zone_init(opt.zones);
    pagemap_init();
    meta_init();
}

void alloc_ensure_init(void)
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
        return;
    }
    while (__atomic_load_n(&init_state, __ATOMIC_ACQUIRE) != INIT_DONE)
        sched_yield();
}

/* At a memory limit, free memory held back may make room: returns whether
 * trimming released any, so one more try is worth it. */
static bool make_room(void)
{
    return footprint_limited() && alloc_trim() > 0;
}

static void *small_alloc(unsigned cls)
{
    void *p = frontend_try_alloc(cls);
    if (!p)
        p = frontend_alloc_slow(cls);
    if (!p && make_room())
        p = frontend_alloc_slow(cls);
    if (!p)
        errno = ENOMEM;
    return p;
}

static void small_free(void *p, unsigned cls)
{
    if (!frontend_try_free(p, cls))
        frontend_free_slow(p, cls);
}

static void *large_malloc(size_t size, size_t alignment, bool *zeroed)
{
    bool fresh = false;
    void *p = size <= PTRDIFF_MAX ? large_alloc(size, alignment, &fresh) : NULL;
    if (!p && size <= PTRDIFF_MAX && make_room())
        p = large_alloc(size, alignment, &fresh);
    if (!p)
        errno = ENOMEM;
    if (zeroed)
        *zeroed = fresh;
    return p;
}

void *alloc_malloc_slow(size_t size)
{
    alloc_ensure_init();
    if (size <= SMALL_MAX)
        return small_alloc(sc_of(size));
    return large_malloc(size, OS_PAGE_SIZE, NULL);
}

/* Where an address lies: in a small block (cls), in a large block (span),
 * or in nothing corealloc handed out (start 0). The one classification every
 * slow path and query shares. */
struct location {
    uintptr_t start; /* first byte of the block containing the address */
    size_t size;     /* its usable size */
    struct span *span;
    unsigned cls;
};

static struct location locate(uintptr_t addr)
{
    struct location loc = {0};
    struct superblock *sb = sb_of(addr);
    if (sb) {
        uint64_t index = sc_block_index(sb->cls, addr - sb->start);
        if (index < sb->carved && index < sc_info[sb->cls].blocks) {
            loc.cls = sb->cls;
            loc.size = sc_info[sb->cls].size;
            loc.start = sb->start + index * loc.size;
        }
        return loc;
    }
    loc.span = large_span_of(addr);
    if (loc.span) {
        loc.start = large_span_start(loc.span);
        loc.size = large_span_size(loc.span);
    }
    return loc;
}

static void free_elsewhere(void *p, const char *call)
{
    struct location loc = locate((uintptr_t)p);
    if (!loc.start)
        diag_invalid_pointer(call, p, "not allocated by corealloc");
    else if (loc.start != (uintptr_t)p)
        diag_invalid_pointer(call, p, "not the start of a block");
    else if (loc.span)
        large_free(loc.span);
    else
        small_free(p, loc.cls);
}

void alloc_free_slow(void *p)
{
    if (!p)
        return;
    alloc_ensure_init();
    free_elsewhere(p, "free");
}

void *alloc_calloc(size_t count, size_t size)
{
    size_t total;
    if (__builtin_mul_overflow(count, size, &total)) {
        errno = ENOMEM;
        return NULL;
    }
    if (total <= SMALL_MAX) {
        void *p = alloc_malloc(total);
        if (p)
            memset(p, 0, total);
        return p;
    }
    alloc_ensure_init();
    bool zeroed;
    void *p = large_malloc(total, OS_PAGE_SIZE, &zeroed);
    if (p && !zeroed)
        memset(p, 0, total);
    return p;
}

/* The block p starts; a location with start 0 (after a report naming
 * `call`, when given) when p is not the start of a block of ours. */
static struct location locate_block(const void *p, const char *call)
{
    struct location loc = locate((uintptr_t)p);
    if (loc.start == (uintptr_t)p)
        return loc;
    if (call)
        diag_invalid_pointer(call, p, "not the start of a block allocated by corealloc");
    return (struct location){0};
}

void *alloc_realloc(void *p, size_t size)
{
    if (!p)
        return alloc_malloc(size);
    if (size == 0) { /* glibc's behaviour: free and return NULL */
        alloc_free(p);
        return NULL;
    }
    alloc_ensure_init();
    struct location loc = locate_block(p, "realloc");
    size_t old = loc.size;
    if (!loc.start) {
        errno = EINVAL;
        return NULL;
    }
    if (!loc.span) {
        if (size <= old && size >= old / 2)
            return p; /* shrinking a little is not worth a copy */
    } else if (size > SMALL_MAX) {
        void *q = large_resize(loc.span, size);
        if (q)
            return q;
    }
    void *q = alloc_malloc(size);
    if (!q)
        return NULL; /* errno is ENOMEM; p is untouched */
    memcpy(q, p, old < size ? old : size);
    alloc_free(p);
    return q;
}

void *alloc_aligned(size_t alignment, size_t size)
{
    if (alignment <= SC_MIN_SIZE || (alignment <= SC_ALIGN && size > SC_MIN_SIZE))
        return alloc_malloc(size);
    alloc_ensure_init();
    size_t need = size > alignment ? size : alignment;
    if (need <= SMALL_MAX) {
        /* A class whose size is a multiple of the alignment has every block
         * aligned, since superblocks are; a power-of-two class always is. */
        unsigned cls = sc_of(need);
        while (sc_info[cls].size % alignment)
            cls++;
        return small_alloc(cls);
    }
    return large_malloc(size, alignment > OS_PAGE_SIZE ? alignment : OS_PAGE_SIZE, NULL);
}

size_t alloc_usable_size(const void *p)
{
    if (!p)
        return 0;
    alloc_ensure_init();
    return locate_block(p, NULL).size;
}

void *alloc_object_start(const void *p)
{
    alloc_ensure_init();
    return (void *)locate((uintptr_t)p).start;
}

size_t alloc_object_size(const void *p)
{
    alloc_ensure_init();
    return locate((uintptr_t)p).size;
}

size_t alloc_trim(void)
{
    alloc_ensure_init();
    frontend_drain();
    /* Superblocks emptied by this very trim count too: no age limit. */
    return central_trim() + large_trim(UINT64_MAX, OS_PURGE_DONTNEED);
}

const char *alloc_frontend_name(void)
{
    return frontend_name();
}
