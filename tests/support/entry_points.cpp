// The entry points of entry_points.h.
#include "entry_points.h"

#include "check.h"
#include "pattern.h"
#include "probe.h"

#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <iterator>
#include <malloc.h>
#include <mutex>
#include <new>
#include <unistd.h>

namespace entry {
namespace {

// The functions only some processes have, found at run time: the prefixed
// API where corealloc is loaded, C23's sized frees and cfree where exported.
struct Optional {
    void *(*malloc)(std::size_t);
    void *(*calloc)(std::size_t, std::size_t);
    void *(*realloc)(void *, std::size_t);
    void *(*reallocarray)(void *, std::size_t, std::size_t);
    void *(*aligned_alloc)(std::size_t, std::size_t);
    int (*posix_memalign)(void **, std::size_t, std::size_t);
    void *(*memalign)(std::size_t, std::size_t);
    void *(*valloc)(std::size_t);
    void *(*pvalloc)(std::size_t);
    void (*free)(void *);
    void (*free_sized)(void *, std::size_t);
    void (*free_aligned_sized)(void *, std::size_t, std::size_t);
    std::size_t (*usable_size)(const void *);
    void (*std_free_sized)(void *, std::size_t);
    void (*std_free_aligned_sized)(void *, std::size_t, std::size_t);
    void (*cfree)(void *);
} opt;

template <typename F> void find(F &slot, const char *name)
{
    slot = reinterpret_cast<F>(corealloc_symbol(name));
}

void find_optional()
{
    find(opt.malloc, "corealloc_malloc");
    find(opt.calloc, "corealloc_calloc");
    find(opt.realloc, "corealloc_realloc");
    find(opt.reallocarray, "corealloc_reallocarray");
    find(opt.aligned_alloc, "corealloc_aligned_alloc");
    find(opt.posix_memalign, "corealloc_posix_memalign");
    find(opt.memalign, "corealloc_memalign");
    find(opt.valloc, "corealloc_valloc");
    find(opt.pvalloc, "corealloc_pvalloc");
    find(opt.free, "corealloc_free");
    find(opt.free_sized, "corealloc_free_sized");
    find(opt.free_aligned_sized, "corealloc_free_aligned_sized");
    find(opt.usable_size, "corealloc_usable_size");
    find(opt.std_free_sized, "free_sized");
    find(opt.std_free_aligned_sized, "free_aligned_sized");
    find(opt.cfree, "cfree");
}

std::size_t malloc_align(std::size_t size) { return MALLOC_ALIGNMENT_OF(size); }
std::size_t page() { return static_cast<std::size_t>(sysconf(_SC_PAGESIZE)); }
std::size_t power_of_two_above(std::size_t v)
{
    std::size_t a = 1;
    while (a < v && a)
        a <<= 1;
    return a ? a : v;
}

// A result: the pointer, and errno read right after the call.
Result with_errno(void *p, std::size_t size, std::size_t align, bool zeroed = false)
{
    return Result{p, p ? 0 : errno, size, align, zeroed};
}

// Two-argument forms: count * each, with the count drawn from the size.
struct Split {
    std::size_t count, each;
};
Split split(std::size_t size)
{
    std::size_t count = 1 + size % 4;
    return Split{count, size / count};
}

Result plain(void *(*f)(std::size_t), std::size_t size) { return with_errno(f(size), size, malloc_align(size)); }
Result zeroed(void *(*f)(std::size_t, std::size_t), std::size_t size)
{
    Split s = split(size);
    return with_errno(f(s.count, s.each), s.count * s.each, malloc_align(s.count * s.each), true);
}
Result array(void *(*f)(void *, std::size_t, std::size_t), void *old, std::size_t size)
{
    Split s = split(size);
    return with_errno(f(old, s.count, s.each), s.count * s.each, malloc_align(s.count * s.each));
}
Result aligned(void *(*f)(std::size_t, std::size_t), std::size_t size, std::size_t align)
{
    return with_errno(f(align, size), size, power_of_two_above(align));
}
Result posix(int (*f)(void **, std::size_t, std::size_t), std::size_t size, std::size_t align)
{
    void *p = nullptr;
    int error = f(&p, align, size);
    return Result{error ? nullptr : p, error, size, align, false};
}
Result paged(void *(*f)(std::size_t), std::size_t size, bool whole_pages)
{
    std::size_t rounded = (size + page() - 1) & ~(page() - 1);
    if (whole_pages && rounded < size)
        rounded = size; // overflow: the call must fail anyway
    std::size_t usable = whole_pages ? rounded : size; // pvalloc(0): glibc gives less than a page
    return with_errno(f(size), usable, page());
}

// operator new in its forms; bad_alloc becomes ENOMEM.
template <typename F> Result thrown(F allocate, std::size_t size, std::size_t align)
{
    try {
        return Result{allocate(), 0, size, align, false};
    } catch (const std::bad_alloc &) {
        return Result{nullptr, ENOMEM, size, align, false};
    }
}
Result nothrow(void *p, std::size_t size, std::size_t align) { return Result{p, 0, size, align, false}; }
std::align_val_t al(std::size_t align) { return std::align_val_t{align}; }

using F = Family;
using X = Failure;
using std::size_t;

const Allocator all_allocators[] = {
    {"malloc", F::Malloc, X::Errno, false, [](size_t n, size_t) { return plain(malloc, n); }},
    {"calloc", F::Malloc, X::Errno, false, [](size_t n, size_t) { return zeroed(calloc, n); }},
    {"realloc(NULL)", F::Malloc, X::Errno, false,
     [](size_t n, size_t) { return with_errno(realloc(nullptr, n), n, malloc_align(n)); }},
    {"reallocarray(NULL)", F::Malloc, X::Errno, false, [](size_t n, size_t) { return array(reallocarray, nullptr, n); }},
    {"aligned_alloc", F::AlignedAlloc, X::Errno, true, [](size_t n, size_t a) { return aligned(aligned_alloc, n, a); }},
    {"posix_memalign", F::Memalign, X::Returned, true, [](size_t n, size_t a) { return posix(posix_memalign, n, a); }},
    {"memalign", F::Memalign, X::Errno, true, [](size_t n, size_t a) { return aligned(memalign, n, a); }},
    {"valloc", F::Memalign, X::Errno, false, [](size_t n, size_t) { return paged(valloc, n, false); }},
    {"pvalloc", F::Memalign, X::Errno, false, [](size_t n, size_t) { return paged(pvalloc, n, true); }},
    {"corealloc_malloc", F::Malloc, X::Errno, false, [](size_t n, size_t) { return plain(opt.malloc, n); }},
    {"corealloc_calloc", F::Malloc, X::Errno, false, [](size_t n, size_t) { return zeroed(opt.calloc, n); }},
    {"corealloc_realloc(NULL)", F::Malloc, X::Errno, false,
     [](size_t n, size_t) { return with_errno(opt.realloc(nullptr, n), n, malloc_align(n)); }},
    {"corealloc_reallocarray(NULL)", F::Malloc, X::Errno, false,
     [](size_t n, size_t) { return array(opt.reallocarray, nullptr, n); }},
    {"corealloc_aligned_alloc", F::AlignedAlloc, X::Errno, true,
     [](size_t n, size_t a) { return aligned(opt.aligned_alloc, n, a); }},
    {"corealloc_posix_memalign", F::Memalign, X::Returned, true,
     [](size_t n, size_t a) { return posix(opt.posix_memalign, n, a); }},
    {"corealloc_memalign", F::Memalign, X::Errno, true, [](size_t n, size_t a) { return aligned(opt.memalign, n, a); }},
    {"corealloc_valloc", F::Memalign, X::Errno, false, [](size_t n, size_t) { return paged(opt.valloc, n, false); }},
    {"corealloc_pvalloc", F::Memalign, X::Errno, false, [](size_t n, size_t) { return paged(opt.pvalloc, n, true); }},
    {"operator new", F::New, X::Thrown, false,
     [](size_t n, size_t) { return thrown([n] { return ::operator new(n); }, n, malloc_align(n)); }},
    {"operator new[]", F::NewArray, X::Thrown, false,
     [](size_t n, size_t) { return thrown([n] { return ::operator new[](n); }, n, malloc_align(n)); }},
    {"operator new(nothrow)", F::New, X::Null, false,
     [](size_t n, size_t) { return nothrow(::operator new(n, std::nothrow), n, malloc_align(n)); }},
    {"operator new[](nothrow)", F::NewArray, X::Null, false,
     [](size_t n, size_t) { return nothrow(::operator new[](n, std::nothrow), n, malloc_align(n)); }},
    {"operator new(align)", F::NewAligned, X::Thrown, true,
     [](size_t n, size_t a) { return thrown([n, a] { return ::operator new(n, al(a)); }, n, a); }},
    {"operator new[](align)", F::NewArrayAligned, X::Thrown, true,
     [](size_t n, size_t a) { return thrown([n, a] { return ::operator new[](n, al(a)); }, n, a); }},
    {"operator new(align, nothrow)", F::NewAligned, X::Null, true,
     [](size_t n, size_t a) { return nothrow(::operator new(n, al(a), std::nothrow), n, a); }},
    {"operator new[](align, nothrow)", F::NewArrayAligned, X::Null, true,
     [](size_t n, size_t a) { return nothrow(::operator new[](n, al(a), std::nothrow), n, a); }},
};

const Releaser all_releasers[] = {
    {"free", F::Malloc, [](void *p, size_t, size_t) { free(p); }},
    {"cfree", F::Malloc, [](void *p, size_t, size_t) { opt.cfree(p); }},
    {"free_sized", F::Malloc, [](void *p, size_t n, size_t) { opt.std_free_sized(p, n); }},
    {"corealloc_free", F::Malloc, [](void *p, size_t, size_t) { opt.free(p); }},
    {"corealloc_free_sized", F::Malloc, [](void *p, size_t n, size_t) { opt.free_sized(p, n); }},
    {"free", F::AlignedAlloc, [](void *p, size_t, size_t) { free(p); }},
    {"free_aligned_sized", F::AlignedAlloc, [](void *p, size_t n, size_t a) { opt.std_free_aligned_sized(p, a, n); }},
    {"corealloc_free", F::AlignedAlloc, [](void *p, size_t, size_t) { opt.free(p); }},
    {"corealloc_free_aligned_sized", F::AlignedAlloc,
     [](void *p, size_t n, size_t a) { opt.free_aligned_sized(p, a, n); }},
    {"free", F::Memalign, [](void *p, size_t, size_t) { free(p); }},
    {"cfree", F::Memalign, [](void *p, size_t, size_t) { opt.cfree(p); }},
    {"corealloc_free", F::Memalign, [](void *p, size_t, size_t) { opt.free(p); }},
    {"operator delete", F::New, [](void *p, size_t, size_t) { ::operator delete(p); }},
    {"operator delete(size)", F::New, [](void *p, size_t n, size_t) { ::operator delete(p, n); }},
    {"operator delete(nothrow)", F::New, [](void *p, size_t, size_t) { ::operator delete(p, std::nothrow); }},
    {"operator delete[]", F::NewArray, [](void *p, size_t, size_t) { ::operator delete[](p); }},
    {"operator delete[](size)", F::NewArray, [](void *p, size_t n, size_t) { ::operator delete[](p, n); }},
    {"operator delete[](nothrow)", F::NewArray,
     [](void *p, size_t, size_t) { ::operator delete[](p, std::nothrow); }},
    {"operator delete(align)", F::NewAligned, [](void *p, size_t, size_t a) { ::operator delete(p, al(a)); }},
    {"operator delete(size, align)", F::NewAligned,
     [](void *p, size_t n, size_t a) { ::operator delete(p, n, al(a)); }},
    {"operator delete(align, nothrow)", F::NewAligned,
     [](void *p, size_t, size_t a) { ::operator delete(p, al(a), std::nothrow); }},
    {"operator delete[](align)", F::NewArrayAligned,
     [](void *p, size_t, size_t a) { ::operator delete[](p, al(a)); }},
    {"operator delete[](size, align)", F::NewArrayAligned,
     [](void *p, size_t n, size_t a) { ::operator delete[](p, n, al(a)); }},
    {"operator delete[](align, nothrow)", F::NewArrayAligned,
     [](void *p, size_t, size_t a) { ::operator delete[](p, al(a), std::nothrow); }},
};

const Resizer all_resizers[] = {
    {"realloc", [](void *p, size_t n) { return with_errno(realloc(p, n), n, malloc_align(n)); }},
    {"reallocarray", [](void *p, size_t n) { return array(reallocarray, p, n); }},
    {"corealloc_realloc", [](void *p, size_t n) { return with_errno(opt.realloc(p, n), n, malloc_align(n)); }},
    {"corealloc_reallocarray", [](void *p, size_t n) { return array(opt.reallocarray, p, n); }},
};

// The entries whose functions this process has, in table order.
struct Available {
    Allocator allocator_list[std::size(all_allocators)];
    Releaser releaser_list[std::size(all_releasers)];
    Resizer resizer_list[std::size(all_resizers)];
    size_t allocator_count, releaser_count, resizer_count;
} available;

bool has(const char *name)
{
    return std::strncmp(name, "corealloc_", 10) != 0 || opt.malloc;
}

void find_available()
{
    find_optional();
    for (const Allocator &a : all_allocators)
        if (has(a.name))
            available.allocator_list[available.allocator_count++] = a;
    for (const Releaser &r : all_releasers) {
        bool here = has(r.name) && (std::strcmp(r.name, "cfree") || opt.cfree) &&
                    (std::strcmp(r.name, "free_sized") || opt.std_free_sized) &&
                    (std::strcmp(r.name, "free_aligned_sized") || opt.std_free_aligned_sized);
        if (here)
            available.releaser_list[available.releaser_count++] = r;
    }
    for (const Resizer &r : all_resizers)
        if (has(r.name))
            available.resizer_list[available.resizer_count++] = r;
}

std::once_flag found;
void ensure_found() { std::call_once(found, find_available); }

} // namespace

const Allocator *allocators(std::size_t *count)
{
    ensure_found();
    *count = available.allocator_count;
    return available.allocator_list;
}

const Releaser *releasers(std::size_t *count)
{
    ensure_found();
    *count = available.releaser_count;
    return available.releaser_list;
}

const Resizer *resizers(std::size_t *count)
{
    ensure_found();
    *count = available.resizer_count;
    return available.resizer_list;
}

const Releaser &releaser_for(Family family, std::uint64_t n)
{
    ensure_found();
    size_t of_family = 0;
    for (size_t i = 0; i < available.releaser_count; i++)
        of_family += available.releaser_list[i].family == family;
    REQUIRE(of_family > 0);
    n %= of_family;
    for (size_t i = 0;; i++)
        if (available.releaser_list[i].family == family && n-- == 0)
            return available.releaser_list[i];
}

bool block_keeps_promises(const Result &r, const char *what)
{
    auto *p = static_cast<unsigned char *>(r.ptr);
    bool aligned = reinterpret_cast<std::uintptr_t>(p) % r.align == 0;
    CHECK_MSG(aligned, "%s: %p (size %zu) is not %zu-aligned", what, r.ptr, r.size, r.align);
    std::size_t usable = malloc_usable_size(p);
    bool covered = usable >= r.size;
    CHECK_MSG(covered, "%s: %p: malloc_usable_size %zu < size %zu", what, r.ptr, usable, r.size);
    bool known = true;
    if (corealloc_active()) {
        const unsigned char *last = p + (r.size ? r.size - 1 : 0);
        std::size_t prefixed = opt.usable_size(p), object_size = probe_object_size(last);
        const void *start = probe_object_start(last);
        known = prefixed == usable && start == p && object_size == usable;
        CHECK_MSG(known,
                  "%s: %p (size %zu, usable %zu): corealloc_usable_size %zu; of its last byte, "
                  "corealloc_object_start %p and corealloc_object_size %zu",
                  what, r.ptr, r.size, usable, prefixed, start, object_size);
    }
    bool zeroes = !r.zeroed || block_filled_with(p, r.size, 0);
    CHECK_MSG(zeroes, "%s: %p (size %zu): not all zeros", what, r.ptr, r.size);
    return aligned && covered && known && zeroes;
}

bool failed_for_memory(const Result &r, Failure failure)
{
    switch (failure) {
    case Failure::Errno:
    case Failure::Returned:
    case Failure::Thrown:
        return !r.ptr && r.error == ENOMEM;
    case Failure::Null:
        return !r.ptr;
    }
    return false;
}

} // namespace entry
