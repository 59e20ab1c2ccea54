// Every C++ operator new/delete form, on corealloc. new loops through the
// new_handler and throws std::bad_alloc when there is none; nothrow forms
// return nullptr instead.
#include <cstddef>
#include <new>

#include "corealloc.h"

#define EXPORT __attribute__((visibility("default")))

namespace {

void *allocate(std::size_t size, std::size_t alignment)
{
    for (;;) {
        void *p = alignment <= __STDCPP_DEFAULT_NEW_ALIGNMENT__
                      ? corealloc_malloc(size)
                      : corealloc_aligned_alloc(alignment, size);
        if (p)
            return p;
        std::new_handler handler = std::get_new_handler();
        if (!handler)
            throw std::bad_alloc();
        handler();
    }
}

void *allocate_nothrow(std::size_t size, std::size_t alignment) noexcept
{
    try {
        return allocate(size, alignment);
    } catch (...) {
        return nullptr;
    }
}

} // namespace

using std::align_val_t;
using std::nothrow_t;
using std::size_t;

EXPORT void *operator new(size_t n) { return allocate(n, 0); }
EXPORT void *operator new[](size_t n) { return allocate(n, 0); }
EXPORT void *operator new(size_t n, const nothrow_t &) noexcept { return allocate_nothrow(n, 0); }
EXPORT void *operator new[](size_t n, const nothrow_t &) noexcept { return allocate_nothrow(n, 0); }
EXPORT void *operator new(size_t n, align_val_t a) { return allocate(n, size_t(a)); }
EXPORT void *operator new[](size_t n, align_val_t a) { return allocate(n, size_t(a)); }
EXPORT void *operator new(size_t n, align_val_t a, const nothrow_t &) noexcept
{
    return allocate_nothrow(n, size_t(a));
}
EXPORT void *operator new[](size_t n, align_val_t a, const nothrow_t &) noexcept
{
    return allocate_nothrow(n, size_t(a));
}

EXPORT void operator delete(void *p) noexcept { corealloc_free(p); }
EXPORT void operator delete[](void *p) noexcept { corealloc_free(p); }
EXPORT void operator delete(void *p, const nothrow_t &) noexcept { corealloc_free(p); }
EXPORT void operator delete[](void *p, const nothrow_t &) noexcept { corealloc_free(p); }
EXPORT void operator delete(void *p, size_t n) noexcept { corealloc_free_sized(p, n); }
EXPORT void operator delete[](void *p, size_t n) noexcept { corealloc_free_sized(p, n); }
EXPORT void operator delete(void *p, align_val_t) noexcept { corealloc_free(p); }
EXPORT void operator delete[](void *p, align_val_t) noexcept { corealloc_free(p); }
EXPORT void operator delete(void *p, align_val_t, const nothrow_t &) noexcept { corealloc_free(p); }
EXPORT void operator delete[](void *p, align_val_t, const nothrow_t &) noexcept { corealloc_free(p); }
EXPORT void operator delete(void *p, size_t n, align_val_t) noexcept { corealloc_free_sized(p, n); }
EXPORT void operator delete[](void *p, size_t n, align_val_t) noexcept { corealloc_free_sized(p, n); }
