#include "core/large.h"

#include <string.h>

#include "core/counters.h"
#include "core/footprint.h"
#include "core/meta.h"
#include "core/pagemap.h"
#include "core/zone.h"
#include "platform/debug.h"
#include "platform/lock.h"
#include "platform/options.h"
#include "platform/os.h"

#define EXACT_BINS 256 /* free spans of 1..256 pages have a list each */
#define SUB_BINS 8     /* above, 8 bins per power of two, 12.5% apart */
#define BIN_COUNT (EXACT_BINS + (48 - 8) * SUB_BINS)
#define GROW_MIN ((size_t)4 << 20)

struct span {
    struct span *next, *prev; /* free bin list */
    struct span *older, *newer; /* age list, while free and resident */
    uintptr_t start;
    size_t pages;
    /* Of a free span. resident: all of it or none, since only spans alike
     * merge (a block carved from a merged span must not land on purged
     * pages while resident ones idle). dirty: bytes that may not read as
     * zero, an upper bound (where in a span they lie is not known, so a
     * split gives each part as many as it can hold). lazy: bytes freed
     * with MADV_FREE; split so the parts sum to the whole, as the footprint
     * accounting needs. */
    size_t dirty, resident, lazy;
    uint64_t freed_ns; /* when it last entered the heap (freed, merged or cut) */
    uint8_t in_use;
    uint8_t huge_pages; /* in use, with transparent huge pages asked for */
    uint8_t in_bin; /* free and findable: the only spans a neighbour may merge with */
    uint8_t guarded; /* in use, its last page a guard (secure mode) */
};

/* Free spans by size, in two sets: the resident ones, tried first, and the
 * ones given back to the OS (or never touched). Both sets' bitmaps of
 * non-empty bins come first, on one page with the released set's lists of
 * all but the largest bins: the first large block of a process, which
 * looks in both and bins the rest of a new area, touches that page alone. */
enum bin_set { RELEASED, RESIDENT };
static struct {
    uint64_t nonempty[2][(BIN_COUNT + 63) / 64];
    struct span *list[2][BIN_COUNT];
} __attribute__((aligned(OS_PAGE_SIZE))) bins;

static lock_t heap_lock = LOCK_INIT;
/* The resident free spans in the order they entered the heap: the decay
 * and the budget purge from the old end. */
static struct span *oldest, *newest;
/* The most bytes in use during the current window (a purge delay long,
 * from window_start_ns) and the one before: what the program needed
 * lately, which bounds the free memory kept for it (free_budget). */
static size_t peak_in_use[2];
static uint64_t window_start_ns;
/* Blocks this large go back to the OS as they are freed (mallopt). */
static size_t release_threshold = SIZE_MAX;
static struct large_stats st;

void large_init(void)
{
    lock_register_for_fork(&heap_lock, LOCK_RANK_HEAP);
}

static unsigned bin_of(size_t pages)
{
    if (pages <= EXACT_BINS)
        return (unsigned)pages - 1;
    unsigned log = 63u - (unsigned)__builtin_clzl(pages);
    unsigned sub = (unsigned)(pages >> (log - 3)) & (SUB_BINS - 1);
    unsigned b = EXACT_BINS + (log - 8) * SUB_BINS + sub;
    return b < BIN_COUNT ? b : BIN_COUNT - 1;
}

static size_t span_bytes(const struct span *s) { return s->pages << OS_PAGE_SHIFT; }
static uintptr_t span_end(const struct span *s) { return s->start + span_bytes(s); }
static enum bin_set set_of(const struct span *s) { return s->resident ? RESIDENT : RELEASED; }

static void age_link(struct span *s)
{
    s->older = newest;
    s->newer = NULL;
    if (newest)
        newest->newer = s;
    else
        oldest = s;
    newest = s;
}

static void age_unlink(struct span *s)
{
    if (s->older)
        s->older->newer = s->newer;
    else
        oldest = s->newer;
    if (s->newer)
        s->newer->older = s->older;
    else
        newest = s->older;
}

/* Adds (or takes away) free span s's bytes to the heap's totals. */
static void count_free(const struct span *s, bool add)
{
    size_t released = span_bytes(s) - s->resident - s->lazy;
    if (add) {
        st.bytes_free_resident += s->resident;
        st.bytes_free_lazy += s->lazy;
        st.bytes_free_released += released;
    } else {
        st.bytes_free_resident -= s->resident;
        st.bytes_free_lazy -= s->lazy;
        st.bytes_free_released -= released;
    }
}

/* Makes free span s findable; its clock starts now. */
static void bin_insert(struct span *s)
{
    CA_ASSERT(!s->in_use && !s->in_bin && s->pages > 0);
    CA_ASSERT(s->resident == 0 || s->resident == span_bytes(s));
    enum bin_set set = set_of(s);
    unsigned b = bin_of(s->pages);
    s->prev = NULL;
    s->next = bins.list[set][b];
    if (bins.list[set][b])
        bins.list[set][b]->prev = s;
    bins.list[set][b] = s;
    bins.nonempty[set][b / 64] |= (uint64_t)1 << (b % 64);
    s->in_bin = 1;
    s->freed_ns = os_monotonic_ns();
    if (s->resident)
        age_link(s);
    count_free(s, true);
}

static void bin_remove(struct span *s)
{
    CA_ASSERT(s->in_bin);
    enum bin_set set = set_of(s);
    unsigned b = bin_of(s->pages);
    if (s->prev)
        s->prev->next = s->next;
    else
        bins.list[set][b] = s->next;
    if (s->next)
        s->next->prev = s->prev;
    if (!bins.list[set][b])
        bins.nonempty[set][b / 64] &= ~((uint64_t)1 << (b % 64));
    s->in_bin = 0;
    if (s->resident)
        age_unlink(s);
    count_free(s, false);
}

/* Gives the resident pages of free span s (out of its bin) back to the OS;
 * with OS_PURGE_DONTNEED, the lazily freed ones too. Returns bytes. When
 * the OS refuses, the span stays as it was: resident, and dirty (calloc
 * must not take its old contents for zeros). */
static size_t purge_span(struct span *s, enum os_purge_kind kind)
{
    size_t released = s->resident + (kind == OS_PURGE_DONTNEED ? s->lazy : 0);
    if (!released || !os_purge((void *)s->start, span_bytes(s), kind))
        return 0;
    /* Only the first and last pages of a free span are looked up. */
    if (s->pages > 2)
        pagemap_forget_range(s->start + OS_PAGE_SIZE, span_bytes(s) - 2 * OS_PAGE_SIZE);
    counters_add_purged(released);
    footprint_uncharge(s->resident);
    if (kind == OS_PURGE_FREE) {
        footprint_add_lazy((ptrdiff_t)s->resident);
        s->lazy += s->resident; /* contents may survive: dirty stays */
    } else {
        footprint_add_lazy(-(ptrdiff_t)s->lazy);
        s->lazy = 0;
        s->dirty = 0;
    }
    s->resident = 0;
    return released;
}

/* A new window for the recent peak once the current one is a delay old. */
static void roll_peak_window(void)
{
    uint64_t now = os_monotonic_ns();
    if (now - window_start_ns < (uint64_t)opt.purge_delay_ms * 1000000u)
        return;
    peak_in_use[1] = peak_in_use[0];
    peak_in_use[0] = st.bytes_in_use;
    window_start_ns = now;
}

/* Free resident bytes the heap may keep now: RETAIN_BYTES, plus the most
 * the program had in use lately (best fit over blocks of mixed sizes needs
 * free room of the order of the live bytes: see docs/design.md); nothing
 * when memory must go back at once. Without a purge delay there is no
 * "lately": RETAIN_BYTES alone. */
static size_t free_budget(void)
{
    if (footprint_purge_at_once() || os_address_space_short())
        return 0;
    if (opt.purge_delay_ms < 0)
        return opt.retain_bytes;
    roll_peak_window();
    size_t peak = peak_in_use[0] > peak_in_use[1] ? peak_in_use[0] : peak_in_use[1];
    return peak < SIZE_MAX - opt.retain_bytes ? opt.retain_bytes + peak : SIZE_MAX;
}

static size_t purge_free(struct span *s, enum os_purge_kind kind);

/* Purges the oldest free spans until the free resident bytes fit the
 * budget. Returns bytes. */
static size_t keep_within_budget(void)
{
    size_t budget = free_budget(), released = 0;
    /* A purge the kernel refuses leaves the span as it was: try again later. */
    for (size_t r = 1; r && st.bytes_free_resident > budget && oldest; released += r)
        r = purge_free(oldest, opt_purge_kind());
    return released;
}

size_t large_give_way(size_t bytes)
{
    if (opt.purge_delay_ms <= 0 || !__atomic_load_n(&st.bytes_free_resident, __ATOMIC_RELAXED))
        return 0;
    size_t released = 0;
    lock_acquire(&heap_lock);
    uint64_t idle_since = os_monotonic_ns() - (uint64_t)opt.purge_delay_ms * (1000000u / 2);
    for (size_t r = 1; r && released < bytes && oldest && oldest->freed_ns <= idle_since; released += r)
        r = purge_free(oldest, opt_purge_kind());
    lock_release(&heap_lock);
    return released;
}

static void count_in_use(ptrdiff_t bytes)
{
    st.bytes_in_use += (size_t)bytes; /* modular: shrinking subtracts */
    if (st.bytes_in_use > peak_in_use[0])
        peak_in_use[0] = st.bytes_in_use;
    counters_add_held(bytes);
}

/* Shares the accounting of a free span between front (already cut to its
 * size) and rest, both out of the bin. */
static void split_accounting(struct span *front, struct span *rest)
{
    size_t resident = front->resident, lazy = front->lazy;
    front->resident = resident < span_bytes(front) ? resident : span_bytes(front);
    front->lazy = lazy < span_bytes(front) - front->resident ? lazy : span_bytes(front) - front->resident;
    rest->resident = resident - front->resident;
    rest->lazy = lazy - front->lazy;
    rest->dirty = front->dirty < span_bytes(rest) ? front->dirty : span_bytes(rest);
    if (front->dirty > span_bytes(front))
        front->dirty = span_bytes(front);
}

/* Free spans are findable by their first and last pages (for coalescing);
 * spans in use by every page (for interior pointers). */
static bool map_span(struct span *s)
{
    uintptr_t tagged = (uintptr_t)s | PAGEMAP_TAG_SPAN;
    if (s->in_use)
        return pagemap_set_range(s->start, span_bytes(s), tagged);
    return pagemap_set(s->start, tagged) && pagemap_set(span_end(s) - 1, tagged);
}

static struct span *span_at(uintptr_t addr)
{
    uintptr_t e = pagemap_get(addr);
    if (!(e & PAGEMAP_TAG_SPAN))
        return NULL;
    struct span *s = (struct span *)(e & ~PAGEMAP_TAG_SPAN);
    return addr >= s->start && addr < span_end(s) ? s : NULL;
}

static struct span *new_span(uintptr_t start, size_t pages)
{
    struct span *s = meta_alloc(sizeof *s);
    if (s)
        *s = (struct span){.start = start, .pages = pages};
    return s;
}

/* Whether free neighbours a and b may become one span: both resident or
 * both not. */
static bool alike(const struct span *a, const struct span *b)
{
    return a->in_bin && (a->resident == 0) == (b->resident == 0);
}

/* Whether a span may lie at addr, next to s: not outside the zones' large
 * area when s is inside it (no span of the heap is there), so that the
 * first span of the area, and the newest at its end, read no page of the
 * map their neighbours would have (a page fault each, for nothing). */
static bool may_border(const struct span *s, uintptr_t addr)
{
    return !zone_large_taken(s->start) || zone_large_taken(addr);
}

/* Frees s into the heap, merging with free neighbours alike. Heap lock
 * held; the caller keeps the heap within its budget afterwards. */
static void release(struct span *s)
{
    s->in_use = 0;
    struct span *before = s->start && may_border(s, s->start - 1) ? span_at(s->start - 1) : NULL;
    if (before && alike(before, s) && span_end(before) == s->start) {
        bin_remove(before);
        before->pages += s->pages;
        before->dirty += s->dirty;
        before->resident += s->resident;
        before->lazy += s->lazy;
        meta_free(s, sizeof *s);
        s = before;
    }
    struct span *after = may_border(s, span_end(s)) ? span_at(span_end(s)) : NULL;
    if (after && alike(after, s) && after->start == span_end(s)) {
        bin_remove(after);
        s->pages += after->pages;
        s->dirty += after->dirty;
        s->resident += after->resident;
        s->lazy += after->lazy;
        meta_free(after, sizeof *after);
    }
    map_span(s); /* boundary entries of a free span cannot fail: pages were mapped */
    bin_insert(s);
}

/* Unmaps free span s (out of its bin): it leaves the heap, address space
 * and all. False when the kernel refuses (vm.max_map_count): s is then as
 * it was. */
static bool unmap_span(struct span *s)
{
    /* Forgotten first: the kernel may hand the place to the next mapping,
     * whose entries are then set. Its boundary entries are the ones its
     * neighbours look up. */
    pagemap_set(s->start, 0);
    pagemap_set(span_end(s) - 1, 0);
    if (!os_purge((void *)s->start, span_bytes(s), OS_PURGE_UNMAP)) {
        map_span(s);
        return false;
    }
    counters_add_mapped(-(ptrdiff_t)span_bytes(s));
    counters_add_purged(s->resident + s->lazy);
    footprint_uncharge(s->resident);
    footprint_add_lazy(-(ptrdiff_t)s->lazy);
    if (s->pages > 2)
        pagemap_forget_range(s->start + OS_PAGE_SIZE, span_bytes(s) - 2 * OS_PAGE_SIZE);
    meta_free(s, sizeof *s);
    return true;
}

/* Gives free span s (out of its bin) back to the OS; what stays mapped
 * joins its released neighbours. Returns bytes. */
static size_t purge_out_of_bin(struct span *s, enum os_purge_kind kind)
{
    if (kind == OS_PURGE_UNMAP) {
        size_t released = s->resident + s->lazy;
        if (unmap_span(s))
            return released;
        kind = OS_PURGE_DONTNEED;
    }
    size_t released = purge_span(s, kind);
    release(s);
    return released;
}

/* Gives free span s back to the OS. Returns bytes. */
static size_t purge_free(struct span *s, enum os_purge_kind kind)
{
    bin_remove(s);
    return purge_out_of_bin(s, kind);
}

/* Huge pages were asked for a block: undo it on the range leaving it. */
static void drop_huge_pages(struct span *s, uintptr_t start, size_t bytes)
{
    if (s->huge_pages)
        os_advise_huge_pages((void *)start, bytes, false);
}

/* Makes free span s (out of its bin) a block in use: all of it resident.
 * False, with s unchanged, at the memory limit. */
static bool make_resident(struct span *s)
{
    if (!footprint_charge(span_bytes(s) - s->resident))
        return false;
    footprint_add_lazy(-(ptrdiff_t)s->lazy);
    s->resident = span_bytes(s);
    s->lazy = 0;
    return true;
}

/* Cuts pages off the front of free span s (already out of its bin) and
 * returns the front part; the rest goes back to the heap. Without a
 * descriptor for the rest, s stays whole: a block larger than asked. */
static struct span *split_front(struct span *s, size_t pages)
{
    if (s->pages == pages)
        return s;
    struct span *rest = new_span(s->start + (pages << OS_PAGE_SHIFT), s->pages - pages);
    if (!rest)
        return s;
    s->pages = pages;
    split_accounting(s, rest);
    map_span(rest);
    bin_insert(rest);
    return s;
}

/* The smallest span of list with at least pages, lowest address first
 * among equals. */
static struct span *smallest_fit(struct span *list, size_t pages)
{
    struct span *best = NULL;
    for (struct span *s = list; s; s = s->next)
        if (s->pages >= pages &&
            (!best || s->pages < best->pages || (s->pages == best->pages && s->start < best->start)))
            best = s;
    return best;
}

static unsigned next_nonempty_bin(enum bin_set set, unsigned b)
{
    while (b < BIN_COUNT) {
        uint64_t word = bins.nonempty[set][b / 64] >> (b % 64);
        if (word)
            return b + (unsigned)__builtin_ctzl(word);
        b = (b / 64 + 1) * 64;
    }
    return BIN_COUNT;
}

/* Best fit: the smallest span of bins that holds pages. An exact bin holds
 * one size, so its first span is as good as any; a larger bin is searched. */
static struct span *best_fit(enum bin_set set, size_t pages)
{
    unsigned b = bin_of(pages);
    if (b >= EXACT_BINS) { /* its own bin has spans a little smaller too */
        struct span *s = smallest_fit(bins.list[set][b], pages);
        if (s)
            return s;
        b++;
    }
    b = next_nonempty_bin(set, b);
    if (b >= BIN_COUNT)
        return NULL;
    return b < EXACT_BINS ? bins.list[set][b] : smallest_fit(bins.list[set][b], pages);
}

/* Resident memory first: reusing it costs no page fault, and what is left
 * unused goes back on the decay anyway. */
static struct span *find_free(size_t pages)
{
    struct span *s = best_fit(RESIDENT, pages);
    return s ? s : best_fit(RELEASED, pages);
}

/* New address space for the heap, as one free span. Heap lock held. */
static bool grow(size_t bytes)
{
    if (bytes < GROW_MIN)
        bytes = GROW_MIN;
    uintptr_t start;
    if (!zone_take_large(bytes, &start)) {
        void *p = os_map(bytes, 0);
        if (!p)
            return false;
        start = (uintptr_t)p;
    }
    counters_add_mapped(bytes);
    struct span *s = new_span(start, bytes >> OS_PAGE_SHIFT);
    if (!s || !map_span(s))
        return false;
    release(s);
    return true;
}

static struct span *take(size_t pages)
{
    struct span *s = find_free(pages);
    if (!s) {
        if (!grow(pages << OS_PAGE_SHIFT))
            return NULL;
        s = find_free(pages);
        if (!s)
            return NULL;
    }
    bin_remove(s);
    return split_front(s, pages);
}

/* A free span of pages at an alignment of align_pages, out of the heap. */
static struct span *take_aligned(size_t pages, size_t align_pages)
{
    struct span *s = take(pages + align_pages - 1);
    if (!s || align_pages == 1)
        return s;
    size_t align = align_pages << OS_PAGE_SHIFT;
    uintptr_t aligned = (s->start + align - 1) & ~(uintptr_t)(align - 1);
    size_t lead = (aligned - s->start) >> OS_PAGE_SHIFT;
    if (lead) {
        struct span *body = new_span(aligned, s->pages - lead);
        if (!body) {
            release(s);
            return NULL;
        }
        s->pages = lead;
        split_accounting(s, body);
        release(s);
        s = body;
    }
    if (s->pages > pages) {
        struct span *tail = new_span(s->start + (pages << OS_PAGE_SHIFT), s->pages - pages);
        if (tail) {
            s->pages = pages;
            split_accounting(s, tail);
            release(tail);
        }
    }
    return s;
}

void *large_alloc(size_t size, size_t align, bool *zeroed)
{
    if (size > ((size_t)1 << 46) || align > ((size_t)1 << 40))
        return NULL;
    size_t pages = size ? (size + OS_PAGE_SIZE - 1) >> OS_PAGE_SHIFT : 1;
    size_t align_pages = align > OS_PAGE_SIZE ? align >> OS_PAGE_SHIFT : 1;
    /* Secure mode: one page more, a guard, so a run off the end faults. */
    pages += opt.secure;
    lock_acquire(&heap_lock);
    struct span *s = take_aligned(pages, align_pages);
    if (s && !make_resident(s)) {
        release(s);
        s = NULL;
    }
    if (!s || (s->in_use = 1, !map_span(s)) ||
        (opt.secure && !(s->guarded = os_guard((void *)(span_end(s) - OS_PAGE_SIZE), OS_PAGE_SIZE)))) {
        if (s) {
            s->dirty = span_bytes(s);
            release(s);
        }
        keep_within_budget();
        lock_release(&heap_lock);
        return NULL;
    }
    *zeroed = s->dirty == 0;
    s->dirty = 0;
    st.spans_in_use++;
    count_in_use((ptrdiff_t)span_bytes(s));
    if (span_bytes(s) >= opt.huge_threshold && opt.thp == THP_LARGE) {
        s->huge_pages = 1;
        os_advise_huge_pages((void *)s->start, span_bytes(s), true);
    }
    keep_within_budget();
    lock_release(&heap_lock);
    return (void *)s->start;
}

struct span *large_span_of(uintptr_t addr)
{
    struct span *s = span_at(addr);
    return s && s->in_use ? s : NULL;
}

static bool in_free_span(enum bin_set set, uintptr_t addr)
{
    for (unsigned b = 0; b < BIN_COUNT; b++)
        for (const struct span *s = bins.list[set][b]; s; s = s->next)
            if (addr >= s->start && addr < span_end(s))
                return true;
    return false;
}

bool large_is_free_page(uintptr_t addr)
{
    if (addr % OS_PAGE_SIZE)
        return false;
    lock_acquire(&heap_lock);
    bool found = in_free_span(RESIDENT, addr) || in_free_span(RELEASED, addr);
    lock_release(&heap_lock);
    return found;
}

uintptr_t large_span_start(const struct span *s) { return s->start; }
size_t large_span_size(const struct span *s) { return span_bytes(s) - (s->guarded ? OS_PAGE_SIZE : 0); }

void large_free(struct span *s)
{
    /* A guard the kernel will not lift (it would fault whoever reuses the
     * page): the block stays allocated, lost, rather than handed out. */
    if (s->guarded && !os_commit((void *)(span_end(s) - OS_PAGE_SIZE), OS_PAGE_SIZE))
        return;
    s->guarded = 0;
    lock_acquire(&heap_lock);
    /* Back to small pages before the range can be reused for small spans. */
    drop_huge_pages(s, s->start, span_bytes(s));
    s->huge_pages = 0;
    st.spans_in_use--;
    count_in_use(-(ptrdiff_t)span_bytes(s));
    /* All of a block in use is resident (resize does not keep count). */
    s->resident = s->dirty = span_bytes(s);
    if (span_bytes(s) >= release_threshold)
        purge_out_of_bin(s, opt_purge_kind());
    else
        release(s);
    keep_within_budget();
    lock_release(&heap_lock);
    footprint_wake_purger(); /* after the lock: a purger that looked before us sees the span */
}

/* Grows s in place by absorbing the free span right after it. */
static bool grow_in_place(struct span *s, size_t pages)
{
    size_t more_bytes = (pages - s->pages) << OS_PAGE_SHIFT;
    struct span *after = span_at(span_end(s));
    if (!after || !after->in_bin || after->start != span_end(s) || s->pages + after->pages < pages) {
        /* At the end of the large zone's used space: take more right there. */
        uintptr_t more;
        if (after || !footprint_charge(more_bytes))
            return false;
        if (!zone_take_large(more_bytes, &more)) {
            footprint_uncharge(more_bytes);
            return false;
        }
        if (more != span_end(s)) { /* somebody else's space: hand it to the heap */
            footprint_uncharge(more_bytes);
            struct span *other = new_span(more, pages - s->pages);
            if (other && map_span(other))
                release(other);
            return false;
        }
        counters_add_mapped(more_bytes);
        s->pages = pages;
        return true;
    }
    bin_remove(after);
    struct span *front = split_front(after, pages - s->pages);
    if (!make_resident(front)) {
        release(front);
        return false;
    }
    s->pages += front->pages;
    meta_free(front, sizeof *front);
    return true;
}

/* Gives the pages of s past keep_pages back to the heap. Heap lock held. */
static void shrink_to(struct span *s, size_t keep_pages)
{
    if (keep_pages >= s->pages)
        return;
    struct span *tail = new_span(s->start + (keep_pages << OS_PAGE_SHIFT), s->pages - keep_pages);
    if (!tail)
        return; /* the block simply stays larger than asked */
    drop_huge_pages(s, tail->start, span_bytes(tail));
    tail->dirty = span_bytes(tail);
    tail->resident = span_bytes(tail);
    s->pages = keep_pages;
    release(tail);
}

/* Moves the block's pages to a new span without copying; the pages the new
 * span held where they land go back to the OS. Heap lock held. */
static struct span *move_pages(struct span *s, size_t pages)
{
    struct span *dest = take(pages);
    if (!dest)
        return NULL;
    if (!make_resident(dest)) {
        release(dest);
        return NULL;
    }
    dest->in_use = 1;
    if (!map_span(dest) || !os_move_pages((void *)s->start, (void *)dest->start, span_bytes(s))) {
        dest->in_use = 0;
        dest->dirty = span_bytes(dest);
        release(dest);
        return NULL;
    }
    dest->dirty = 0;
    if (opt.thp == THP_LARGE) {
        dest->huge_pages = 1;
        os_advise_huge_pages((void *)dest->start, span_bytes(dest), true);
    }
    /* The move left the old range mapped and empty. */
    drop_huge_pages(s, s->start, span_bytes(s));
    footprint_uncharge(span_bytes(s));
    s->dirty = s->resident = s->lazy = 0;
    s->huge_pages = 0;
    release(s);
    return dest;
}

void *large_resize(struct span *s, size_t size)
{
    CA_ASSERT(!s->guarded); /* secure mode moves every resized block */
    if (size > ((size_t)1 << 46))
        return NULL;
    size_t pages = (size + OS_PAGE_SIZE - 1) >> OS_PAGE_SHIFT;
    size_t old_pages = s->pages, old_bytes = span_bytes(s);
    struct span *result = NULL;
    lock_acquire(&heap_lock);
    if (pages <= s->pages) {
        shrink_to(s, pages);
        result = s;
    } else if (grow_in_place(s, pages)) {
        if (map_span(s)) {
            st.in_place_grows++;
            result = s;
        } else {
            shrink_to(s, old_pages);
        }
    } else if (size >= opt.huge_threshold) {
        result = move_pages(s, pages);
        if (result)
            st.mremap_moves++;
    }
    if (result)
        count_in_use((ptrdiff_t)span_bytes(result) - (ptrdiff_t)old_bytes);
    keep_within_budget();
    lock_release(&heap_lock);
    return result ? (void *)result->start : NULL;
}

size_t large_trim(uint64_t older_than_ns, enum os_purge_kind kind)
{
    size_t released = 0;
    lock_acquire(&heap_lock);
    /* A purge the kernel refuses (r == 0) leaves the span as it was: the
     * rest waits for the next pass. */
    size_t r = 1;
    for (; r && oldest && oldest->freed_ns <= older_than_ns; released += r)
        r = purge_free(oldest, kind);
    /* Spans freed lazily are released already, as far as the decay is
     * concerned; a final purge makes it so for the kernel too. */
    for (unsigned b = 0; r && kind == OS_PURGE_DONTNEED && st.bytes_free_lazy && b < BIN_COUNT; b++)
        for (struct span *s = bins.list[RELEASED][b]; s && r;)
            if (s->lazy) {
                r = purge_free(s, kind);
                released += r;
                s = bins.list[RELEASED][b]; /* the bin changed: from its start again */
            } else {
                s = s->next;
            }
    released += keep_within_budget();
    lock_release(&heap_lock);
    return released;
}

void large_set_release_threshold(size_t bytes)
{
    lock_acquire(&heap_lock);
    release_threshold = bytes;
    lock_release(&heap_lock);
}

void large_stats(struct large_stats *out)
{
    lock_acquire(&heap_lock);
    *out = st;
    lock_release(&heap_lock);
}
