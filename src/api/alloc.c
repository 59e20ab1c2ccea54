#include "api/alloc.h"

#include <errno.h>
#include <pthread.h>
#include <sched.h>
#include <stdint.h>
#include <string.h>

#include "api/init.h"
#include "api/profile.h"
#include "api/secure.h"
#include "core/block_mark.h"
#include "core/central.h"
#include "core/footprint.h"
#include "core/large.h"
#include "core/meta.h"
#include "core/pagemap.h"
#include "core/superblock.h"
#include "frontend/cache.h"
#include "platform/diag.h"
#include "platform/lock.h"
#include "platform/options.h"
#include "platform/os.h"
#include "policy/purger.h"
#include "policy/trim.h"

/* At a memory limit, free memory held back may make room: returns whether
 * trimming released any, so one more try is worth it. */
static bool make_room(void)
{
    return footprint_limited() && trim_all() > 0;
}

static void *small_alloc(unsigned cls)
{
    void *p;
    FRONTEND_POP(p, cls, miss);
    return p;
miss:;
    bool refilled;
    p = frontend_alloc_slow(cls, &refilled);
    if (refilled) /* the rest cannot have made the process grow (or older: see purger.h) */
        purger_kick();
    if (!p && make_room())
        p = frontend_alloc_slow(cls, &refilled);
    if (!p)
        errno = ENOMEM;
    return p;
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
    purger_kick();
    return p;
}

/* A sampled allocation: a span of its own, whatever its size, so that its
 * free takes the large-block path, the only one that asks the profiler. */
static void *sampled_malloc(size_t size, size_t alignment, bool *zeroed)
{
    void *p = large_malloc(size, alignment, zeroed);
    if (p)
        profile_record(p, size);
    return p;
}

/* Secure mode's blocks: each has room for the trailer; a small one comes
 * from a class whose blocks are aligned as asked, its fill checked; a
 * large one ends at a guard page (large.c). Either is sealed. A sampled
 * one is large (a span of its own, as without secure mode), so it keeps
 * every check but the fill's. */
static void *secure_alloc(size_t size, size_t alignment, bool *zeroed, bool sampled)
{
    if (zeroed)
        *zeroed = false;
    if (size > PTRDIFF_MAX) {
        errno = ENOMEM;
        return NULL;
    }
    size_t need = secure_block_bytes(size);
    size_t class_size = need > alignment ? need : alignment; /* the alignment only picks a class */
    if (class_size > SMALL_MAX || sampled) {
        void *p = large_malloc(need, alignment > OS_PAGE_SIZE ? alignment : OS_PAGE_SIZE, zeroed);
        if (p)
            secure_seal(p, large_span_size(large_span_of((uintptr_t)p)), size);
        if (p && sampled)
            profile_record(p, size);
        return p;
    }
    unsigned cls = sc_of(class_size);
    while (sc_info[cls].size % alignment)
        cls++;
    void *p = small_alloc(cls);
    if (p)
        secure_handing_out(p, cls, size);
    return p;
}

/* malloc's slow path, once the allocation is counted. */
static void *malloc_counted(size_t size, bool sampled)
{
    if (opt.secure)
        return secure_alloc(size, SC_MIN_SIZE, NULL, sampled);
    if (sampled)
        return sampled_malloc(size, OS_PAGE_SIZE, NULL);
    if (size <= SMALL_MAX)
        return small_alloc(sc_of(size));
    return large_malloc(size, OS_PAGE_SIZE, NULL);
}

void *alloc_malloc_slow(size_t size)
{
    init_ensure();
    /* The profiling library's fast path counted it already. */
    return malloc_counted(size, !PROFILE_IN_FAST_PATH && profile_sampling(size));
}

#if PROFILE_IN_FAST_PATH
void *alloc_malloc_sample_point(size_t size)
{
    init_ensure();
    return malloc_counted(size, profile_sample_point(size));
}
#endif

/* Where an address lies: in a small block (cls), in a large block (span),
 * or in nothing corealloc handed out (start 0). The one classification every
 * slow path and query shares. */
struct location {
    uintptr_t start; /* first byte of the block containing the address */
    size_t size;     /* its usable size (secure mode: the trailer's too) */
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

/* What the program may use of the block at loc: in secure mode, what it
 * asked for (a byte more is an overflow). */
static size_t usable_size(struct location loc)
{
    if (opt.secure && loc.start)
        return secure_requested_size((void *)loc.start, loc.size);
    return loc.size;
}

/* Why p, in no block of ours, cannot be freed: a page of a free large
 * span was most likely a block freed already. */
static const char *not_a_block(const void *p)
{
    return large_is_free_page((uintptr_t)p) ? "double free" : "not allocated by corealloc";
}

static void free_elsewhere(void *p, const char *call)
{
    struct location loc = locate((uintptr_t)p);
    if (!loc.start)
        diag_invalid_pointer(call, p, not_a_block(p));
    else if (loc.start != (uintptr_t)p)
        diag_invalid_pointer(call, p, "not the start of a block");
    else if (loc.span) {
        if (opt.secure)
            secure_check_seal(p, loc.size, call);
        profile_forget(p);
        large_free(loc.span);
    } else
        alloc_free_checked(p, loc.cls, call);
}

void alloc_free_checked(void *p, unsigned cls, const char *call)
{
    if (!frontend_verify_free(p, cls, call))
        return;
    if (opt.secure) /* before the mark, which may cover a small block's canary */
        secure_taking_back(p, cls, call);
    block_mark_free(p);
    frontend_take_back(p, cls);
}

void alloc_free_slow(void *p)
{
    if (!p)
        return;
    init_ensure();
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
    init_ensure();
    bool zeroed, sampled = profile_sampling(total);
    void *p = opt.secure ? secure_alloc(total, SC_MIN_SIZE, &zeroed, sampled)
              : sampled  ? sampled_malloc(total, OS_PAGE_SIZE, &zeroed)
                         : large_malloc(total, OS_PAGE_SIZE, &zeroed);
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
        diag_invalid_pointer(call, p, loc.start ? "not the start of a block" : not_a_block(p));
    return (struct location){0};
}

/* Whether p, the start of a small block of cls, is the program's, as free
 * decides it (at once in a zone, alloc_zone_block_held); otherwise
 * reported, naming call. */
static bool held_by_program(void *p, unsigned cls, const char *call)
{
    uintptr_t column;
    const struct zone_fast_entry *entry;
    return (alloc_zone_entry(p, &entry, &column) && alloc_zone_block_held(entry, p)) ||
           frontend_verify_free(p, cls, call);
}

void *alloc_realloc(void *p, size_t size)
{
    if (!p)
        return alloc_malloc(size);
    init_ensure();
    if (size == 0) { /* glibc's behaviour: free and return NULL */
        free_elsewhere(p, "realloc");
        return NULL;
    }
    struct location loc = locate_block(p, "realloc");
    size_t old = usable_size(loc);
    if (!loc.start || (!loc.span && !held_by_program(p, loc.cls, "realloc"))) {
        errno = EINVAL;
        return NULL;
    }
    /* In secure mode every resize moves: the new block is sealed for the
     * new size, a large one with its guard page after it. */
    if (!opt.secure && !loc.span) {
        /* Shrinking a little is not worth a copy. */
        if (size <= old && size >= old / 2)
            return p;
    } else if (!opt.secure && size > SMALL_MAX) {
        void *q = large_resize(loc.span, size);
        purger_kick();
        if (q) {
            profile_resized(p, q, size);
            return q;
        }
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
    init_ensure();
    size_t page_aligned = alignment > OS_PAGE_SIZE ? alignment : OS_PAGE_SIZE;
    bool sampled = profile_sampling(size);
    if (opt.secure)
        return secure_alloc(size, alignment, NULL, sampled);
    if (sampled)
        return sampled_malloc(size, page_aligned, NULL);
    size_t need = size > alignment ? size : alignment;
    if (need <= SMALL_MAX) {
        /* A class whose size is a multiple of the alignment has every block
         * aligned, since superblocks are; a power-of-two class always is. */
        unsigned cls = sc_of(need);
        while (sc_info[cls].size % alignment)
            cls++;
        return small_alloc(cls);
    }
    return large_malloc(size, page_aligned, NULL);
}

size_t alloc_usable_size(const void *p)
{
    if (!p)
        return 0;
    init_ensure();
    return usable_size(locate_block(p, NULL));
}

void *alloc_object_start(const void *p)
{
    init_ensure();
    return (void *)locate((uintptr_t)p).start;
}

size_t alloc_object_size(const void *p)
{
    init_ensure();
    return usable_size(locate((uintptr_t)p));
}

size_t alloc_trim(void)
{
    init_ensure();
    return trim_all();
}

const char *alloc_frontend_name(void)
{
    return frontend_name();
}
